"""The Magnum cluster template catalog (the seed's Figure 4)."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from fleet.clouds.magnum.drivers import (
    DriverDecision,
    MagnumDriver,
    MagnumDriverName,
    check_driver,
    decide,
)
from fleet.clouds.magnum.names import check_template_name
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import option, options_of, value_type
from fleet.core.secrets import credential_in
from fleet.core.validators import check_label_values
from fleet.core.values import caller_location

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet

_KUBE_VERSION = re.compile(r"^v?\d+\.\d+(\.\d+)?$")
UUID_PATTERN = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
"""A Magnum UUID as Magnum prints it (``openstack coe cluster template show``)."""


PLACEHOLDER = re.compile(r"<[^<>]+>")
"""A value that still holds a placeholder (``<container_infra_prefix>``): a redaction or a
documentation stub, never a Magnum setting."""
PREFIX_LABEL = "container_infra_prefix"
_PORT_MAX = 65535


def label_value_errors(
    labels: Mapping[str, object], *, where: str, field: str
) -> list[DefinitionError]:
    """One error per Magnum label whose value Magnum would apply literally and fail on.

    Magnum copies label values into the Heat stack's parameters as they are
    (openstack/magnum stable/2025.1 ``magnum/drivers/heat/k8s_fedora_template_def.py``
    ``get_params``), so a placeholder left in (``<container_infra_prefix>``) reaches the
    nodes: ``container_infra_prefix`` must be empty or end in ``/`` (the Heat parameter's
    ``allowed_pattern: "^$|.*/"``, ``magnum/drivers/k8s_fedora_coreos_v1/templates/
    kubecluster.yaml``; anything else fails the stack's validation), and a placeholder URL
    or checksum breaks the node bootstrap (``fragments/install-cri.sh``).
    """
    errors: list[DefinitionError] = []
    for key, value in labels.items():
        if not isinstance(value, str):
            continue
        if PLACEHOLDER.search(value):
            errors.append(
                DefinitionError(
                    f"label {key!r} holds the placeholder {value!r}: Magnum applies label "
                    "values as they are; set the real value, or leave the label out for "
                    "Magnum's default",
                    where=where,
                    field=field,
                )
            )
        elif key == PREFIX_LABEL and value and not value.endswith("/"):
            errors.append(
                DefinitionError(
                    f"label {key!r} is {value!r}: Magnum's Heat template accepts only a "
                    "registry prefix ending in '/' (allowed_pattern '^$|.*/'), else the "
                    f"cluster's stack fails to validate; write {value + '/'!r}",
                    where=where,
                    field=field,
                )
            )
    return errors


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a lower-case, dashed UUID string."""
    return isinstance(value, str) and bool(UUID_PATTERN.match(value))


@value_type
class ClusterTemplate:
    """A Magnum cluster template, as the cloud's Kubernetes team publishes it.

    ``base_labels`` are the labels every cluster of the template carries (a cluster
    may override their values); ``changing_labels`` are the base labels whose value
    commonly differs between clusters; ``optional_labels`` may be added by a cluster
    but are not in the base. A cluster label that is none of these is a typo unless
    the cluster allows extra labels.

    ``uuid`` is the template's Magnum UUID, which clusters render as
    ``clusterTemplateId``: Magnum stores a cluster's template as its UUID and the
    provider reads it back, so a name there is a difference on every poll (and an
    upgrade call). A string is the UUID in every region; a mapping gives it per OpenStack
    region (the region of the cluster's :class:`OpenStackProject`). Find it with
    ``openstack coe cluster template show <name> -f value -c uuid`` or
    ``fleet import tfstate``. A cluster whose template has no UUID for its region fails.

    ``driver`` is the Magnum driver of the template's clusters (Magnum's own ``driver``
    attribute). It decides what a change of a live cluster's template to another one does
    (:mod:`fleet.clouds.magnum.drivers`): with a Cluster API driver (``k8s_capi_helm_v1``,
    ``k8s_cluster_api_<os>``) an in-place upgrade, and the cluster's labels are then rendered
    create-only; with a Heat driver a refusal (blue/green). Left out, the fleet infers it from
    ``cluster_distro`` where exactly one driver provides that distro, else applies the Heat
    rules and says so (``driver_decision``).

    The other fields are the template's attributes in Magnum, as terraform-provider-openstack
    v3.4.0 holds them (``openstack/resource_openstack_containerinfra_clustertemplate_v1.go``,
    the schema of ``openstack_containerinfra_clustertemplate_v1``; each field names its
    Terraform attribute): what the template is, declared, never rendered (the fleet does not
    create templates; its clusters name one by UUID). Each is optional (None: not declared).
    They matter where a cluster leaves a value to its template: Magnum copies ``flavor``,
    ``master_flavor``, ``keypair`` (``keypair_id``), ``docker_volume_size``,
    ``fixed_network``, ``fixed_subnet``, ``floating_ip_enabled`` and ``master_lb_enabled``
    into a cluster that sets none (magnum 22.0.0 ``api/controllers/v1/cluster.py``
    ``ClustersController._post``), so ``fleet ls`` shows the template's flavor for such a
    cluster's workers, a cluster with several masters is refused where the template turns
    the master load balancer off (Magnum's ``validate_master_count``), and
    ``fleet import tfstate`` reads them to tell inherited values from the cluster's own.
    A value with credential material (a proxy URL with a password) is refused: templates
    are written into the repository.

    Example::

        MULTI_125 = ClusterTemplate(
            name="kubernetes-1.25.3-3-multi",
            kubernetes_version="v1.25.3",
            base_labels={"kube_tag": "v1.25.3-cern.0"},
            uuid={"cern": "6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b"},
            image="fedora-coreos-35",
            flavor="m2.large",
            keypair="shared-key",
        )
    """

    argument_noun: ClassVar[str] = "template"
    """How locations name it: ``file:line (template <name>)``."""

    name: str = option(
        terraform="name", doc="The template's name in Magnum (any 1..255 characters)."
    )
    kubernetes_version: str = option(doc="The Kubernetes version its clusters run (``v1.25.3``).")
    base_labels: Mapping[str, str] = option(
        factory=dict,
        terraform="labels",
        doc="The labels every cluster of the template carries (Magnum's template labels).",
    )
    optional_labels: Sequence[str] = option(
        default=(), doc="Labels a cluster may add that are not in the base."
    )
    changing_labels: Sequence[str] = option(
        default=(), doc="Base labels whose value commonly differs between clusters."
    )
    uuid: str | Mapping[str, str] | None = option(
        default=None, doc="The Magnum UUID, or region -> UUID (``clusterTemplateId``)."
    )
    where: str = option(default="", compare=False, doc="Where it was declared.")
    driver: MagnumDriver | MagnumDriverName | None = option(
        default=None,
        doc="Magnum's driver of its clusters (``k8s_capi_helm_v1``, ``k8s_cluster_api_ubuntu``, "
        "``k8s_fedora_coreos_v1``, ...); decides what a change of template does (default: "
        "inferred from cluster_distro where one driver provides it, else Heat rules).",
    )
    coe: str | None = option(
        default=None, terraform="coe", nonempty=True, doc="The container orchestration engine."
    )
    image: str | None = option(
        default=None, terraform="image", nonempty=True, doc="The nodes' Glance image."
    )
    cluster_distro: str | None = option(
        default=None,
        terraform="cluster_distro",
        nonempty=True,
        doc="The distro (Magnum reads it from the image's os_distro).",
    )
    flavor: str | None = option(
        default=None,
        terraform="flavor",
        nonempty=True,
        doc="The workers' flavor of a cluster that sets none.",
    )
    master_flavor: str | None = option(
        default=None,
        terraform="master_flavor",
        nonempty=True,
        doc="The masters' flavor of a cluster that sets none.",
    )
    keypair: str | None = option(
        default=None,
        terraform="keypair_id",
        nonempty=True,
        doc="The Nova keypair of a cluster that sets none.",
    )
    docker_volume_size_gb: int | None = option(
        default=None,
        terraform="docker_volume_size",
        minimum=1,
        doc="The Docker volume size in GB of a cluster that sets none.",
    )
    docker_storage_driver: str | None = option(
        default=None,
        terraform="docker_storage_driver",
        nonempty=True,
        doc="Docker's storage driver.",
    )
    network_driver: str | None = option(
        default=None,
        terraform="network_driver",
        nonempty=True,
        doc="The container network driver (``calico``, ``flannel``).",
    )
    volume_driver: str | None = option(
        default=None, terraform="volume_driver", nonempty=True, doc="The volume driver."
    )
    external_network_id: str | None = option(
        default=None,
        terraform="external_network_id",
        nonempty=True,
        doc="The external network of the clusters.",
    )
    fixed_network: str | None = option(
        default=None,
        terraform="fixed_network",
        nonempty=True,
        doc="The nodes' network of a cluster that sets none.",
    )
    fixed_subnet: str | None = option(
        default=None,
        terraform="fixed_subnet",
        nonempty=True,
        doc="The nodes' subnet of a cluster that sets none.",
    )
    dns_nameserver: str | None = option(
        default=None, terraform="dns_nameserver", nonempty=True, doc="The nodes' DNS server."
    )
    floating_ip_enabled: bool | None = option(
        default=None,
        terraform="floating_ip_enabled",
        doc="Whether nodes get floating IPs (a cluster that sets nothing).",
    )
    master_lb_enabled: bool | None = option(
        default=None,
        terraform="master_lb_enabled",
        doc="Whether the API gets a load balancer (a cluster that sets nothing).",
    )
    apiserver_port: int | None = option(
        default=None,
        terraform="apiserver_port",
        minimum=1024,
        doc="The API server's port (1024 to 65535).",
    )
    server_type: str | None = option(
        default=None, terraform="server_type", nonempty=True, doc="``vm`` or ``bm``."
    )
    http_proxy: str | None = option(
        default=None, terraform="http_proxy", nonempty=True, doc="The nodes' HTTP proxy."
    )
    https_proxy: str | None = option(
        default=None, terraform="https_proxy", nonempty=True, doc="The nodes' HTTPS proxy."
    )
    no_proxy: str | None = option(
        default=None, terraform="no_proxy", nonempty=True, doc="Hosts reached without proxy."
    )
    insecure_registry: str | None = option(
        default=None,
        terraform="insecure_registry",
        nonempty=True,
        doc="An insecure registry's URL.",
    )
    registry_enabled: bool | None = option(
        default=None, terraform="registry_enabled", doc="Whether the Docker registry is on."
    )
    tls_disabled: bool | None = option(
        default=None, terraform="tls_disabled", doc="Whether TLS is off in the clusters."
    )
    public: bool | None = option(
        default=None, terraform="public", doc="Whether every project sees the template."
    )
    hidden: bool | None = option(
        default=None, terraform="hidden", doc="Whether the template is hidden."
    )

    def __post_init__(self) -> None:
        where = self.where or caller_location()
        object.__setattr__(self, "where", where)
        ctx = f"{where} (template {self.name})"
        check_template_name(self.name, where=ctx)
        if not _KUBE_VERSION.match(self.kubernetes_version):
            raise DefinitionError(
                f"must look like v1.25.3, got {self.kubernetes_version!r}",
                where=ctx,
                field="kubernetes_version",
            )
        check_label_values(self.base_labels, where=ctx, field="base_labels")
        wrong = label_value_errors(self.base_labels, where=ctx, field="base_labels")
        if wrong:
            raise wrong[0] if len(wrong) == 1 else DefinitionErrors(wrong)
        missing = sorted(set(self.changing_labels) - set(self.base_labels))
        if missing:
            raise DefinitionError(
                f"changing labels must be base labels: {', '.join(missing)}",
                where=ctx,
                field="changing_labels",
            )
        both = sorted(set(self.optional_labels) & set(self.base_labels))
        if both:
            raise DefinitionError(
                f"a label is either base or optional, not both: {', '.join(both)}",
                where=ctx,
                field="optional_labels",
            )
        if self.apiserver_port is not None and self.apiserver_port > _PORT_MAX:
            raise DefinitionError(
                f"must be 1024 to {_PORT_MAX}, got {self.apiserver_port} (the provider's "
                "IntBetween(1024, 65535))",
                where=ctx,
                field="apiserver_port",
            )
        for keyword, value in self.magnum_attributes().items():
            problem = credential_in(value) if isinstance(value, str) else None
            if problem:
                raise DefinitionError(
                    f"holds a {problem.split(';')[0]}: a template is written into the "
                    "repository; leave it out (the template's value in Magnum stays as it is)",
                    where=ctx,
                    field=_ATTRIBUTES[keyword],
                )
        object.__setattr__(self, "uuid", _check_uuid(self.uuid, where=ctx))
        object.__setattr__(self, "driver", check_driver(self.driver, where=ctx))
        object.__setattr__(self, "base_labels", MappingProxyType(dict(self.base_labels)))
        object.__setattr__(self, "optional_labels", tuple(self.optional_labels))
        object.__setattr__(self, "changing_labels", tuple(self.changing_labels))

    def magnum_attributes(self) -> dict[str, str | int | bool]:
        """The template's attributes declared (not None), by Terraform attribute
        (``keypair_id``, ``docker_volume_size``, ...), ``name`` and ``labels`` apart."""
        out: dict[str, str | int | bool] = {}
        for terraform, name in _ATTRIBUTES.items():
            value = getattr(self, name)
            if value is not None:
                out[terraform] = value
        return out

    @functools.cached_property
    def driver_decision(self) -> DriverDecision:
        """Which Magnum driver the template's clusters use, and how the fleet decided:
        ``driver=``, else the one driver registered for ``cluster_distro`` (with
        ``server_type`` and ``coe``), else unknown (Heat rules, with a note asking for
        ``driver=``): :func:`fleet.clouds.magnum.drivers.decide`."""
        return decide(
            name=self.name,
            driver=MagnumDriver(self.driver) if self.driver is not None else None,
            cluster_distro=self.cluster_distro,
            server_type=self.server_type,
            coe=self.coe,
        )

    @property
    def known_labels(self) -> frozenset[str]:
        """Every label a cluster of this template may set without opting out of typo checks."""
        return frozenset(self.base_labels) | frozenset(self.optional_labels)

    def uuid_for(self, region: str) -> str | None:
        """The template's UUID in ``region`` (None where it is not known)."""
        if self.uuid is None or isinstance(self.uuid, str):
            return self.uuid
        return self.uuid.get(region)

    def missing_uuid_error(self, region: str, *, where: str) -> DefinitionError:
        """The error for a cluster in ``region`` whose template has no UUID there."""
        known = (
            ""
            if isinstance(self.uuid, str) or not self.uuid
            else (f" (it has one for {', '.join(sorted(self.uuid))})")
        )
        shown = f"region {region!r}" if region else "the project's region (none set)"
        return DefinitionError(
            f"template {self.name!r} has no UUID for {shown}{known}; Magnum stores the "
            "template's UUID, so a cluster must name it: set ClusterTemplate(uuid=...) from "
            f"`openstack coe cluster template show {self.name} -f value -c uuid` "
            "or `fleet import tfstate`",
            where=where,
            field="template",
        )

    def unknown_label_error(self, key: str, *, where: str) -> DefinitionError:
        """The error for a label the template does not know, with a "did you mean" hint."""
        hint = difflib.get_close_matches(key, sorted(self.known_labels), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        return DefinitionError(
            f"label {key!r} is neither a base nor an optional label of template "
            f"{self.name!r}{suggestion} (set allow_extra_labels=True to allow it)",
            where=where,
            field="labels",
        )


_ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {
        o.terraform: o.name
        for o in options_of(ClusterTemplate).values()
        if o.terraform not in ("", "name", "labels")
    }
)
"""The template's Magnum attributes: Terraform attribute -> field of :class:`ClusterTemplate`."""


def attribute_keywords(
    attributes: Mapping[str, str | int | bool],
) -> list[tuple[str, str | int | bool]]:
    """``attributes`` (by Terraform attribute, as :meth:`ClusterTemplate.magnum_attributes`
    gives them) as ``ClusterTemplate`` keywords, in the table's order: for code that writes
    a template. An attribute the table does not hold is left out."""
    order = list(_ATTRIBUTES)
    known = sorted((t for t in attributes if t in _ATTRIBUTES), key=order.index)
    return [(_ATTRIBUTES[t], attributes[t]) for t in known]


def template_attribute(terraform: str) -> str | None:
    """The :class:`ClusterTemplate` field of a Terraform attribute of
    ``openstack_containerinfra_clustertemplate_v1`` (``keypair_id`` -> ``keypair``), None for
    one it does not hold (``name`` and ``labels`` are ``name`` and ``base_labels``)."""
    return _ATTRIBUTES.get(terraform)


class TemplateCatalog:
    """The cluster templates one fleet knows, by name: those its clusters use, and those
    added with ``TemplateCatalog.of(fleet).add(...)``.

    A cluster's ``template="name"`` is looked up here in the prepare phase, once every
    ``define()`` has run, so the template may come from any module. Two fleets never see
    each other's templates. Example::

        def define(fleet):
            TemplateCatalog.of(fleet).add(MULTI_1_25_3, SINGLE_1_25_3)
            MagnumCluster(fleet, "web", template="kubernetes-1.25.3-3-multi", ...)
    """

    def __init__(self) -> None:
        self._by_name: dict[str, ClusterTemplate] = {}

    @classmethod
    def of(cls, fleet: Fleet) -> TemplateCatalog:
        """The templates of ``fleet``."""
        return fleet.catalog(cls)

    def add(self, *templates: ClusterTemplate) -> None:
        """Make ``templates`` known by name; another template with a name already known
        and different content is an error (naming both)."""
        for template in templates:
            if not isinstance(template, ClusterTemplate):
                raise DefinitionError(
                    f"must be ClusterTemplate objects, got {type(template).__name__}",
                    where=caller_location(),
                    field="templates",
                )
            existing = self._by_name.get(template.name)
            if existing is None:
                self._by_name[template.name] = template
            elif existing is not template and _content(existing) != _content(template):
                raise DefinitionError(
                    f"template {template.name!r} is declared twice with different content "
                    f"(first at {existing.where})",
                    where=template.where,
                    field="name",
                )

    def use(self, template: ClusterTemplate | str, *, where: str) -> ClusterTemplate | str:
        """What a cluster passed as ``template``, checked: a template (now known by name)
        or a name (looked up with :meth:`get` in the prepare phase)."""
        if isinstance(template, ClusterTemplate):
            self.add(template)
        elif not isinstance(template, str) or not template:
            raise DefinitionError(
                f"must be a ClusterTemplate or a template's name, got {template!r}",
                where=where,
                field="template",
            )
        return template

    def get(self, name: str, *, where: str) -> ClusterTemplate:
        """The template called ``name``, or an error naming it (with a hint)."""
        try:
            return self._by_name[name]
        except KeyError:
            hint = difflib.get_close_matches(name, sorted(self._by_name), n=1)
            suggestion = (
                f"; did you mean {hint[0]!r}?"
                if hint
                else " (the fleet knows the templates its clusters use and those added "
                "with TemplateCatalog.of(fleet).add(...))"
            )
            raise DefinitionError(
                f"unknown cluster template {name!r}{suggestion}", where=where, field="template"
            ) from None

    @staticmethod
    def unresolved(name: str, *, path: str) -> DefinitionError:
        """The error for reading the template of cluster ``path``, given by name, before
        the prepare phase."""
        return DefinitionError(
            f"template {name!r} is looked up once every define() has run; read it in an "
            "Aspect or prepare()",
            where=f"{caller_location()} ({path})",
            field="template",
        )

    def names(self) -> list[str]:
        """The names of every template, sorted."""
        return sorted(self._by_name)


def _check_uuid(
    value: str | Mapping[str, str] | None, *, where: str
) -> str | Mapping[str, str] | None:
    """``value`` checked (a UUID, or region -> UUID), mappings made read-only."""
    if value is None:
        return None
    if isinstance(value, str):
        if not is_uuid(value):
            raise DefinitionError(
                f"must be a Magnum UUID like 6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b, got {value!r}",
                where=where,
                field="uuid",
            )
        return value
    if not isinstance(value, Mapping):
        raise DefinitionError(
            f"must be a UUID or a mapping of region to UUID, got {type(value).__name__}",
            where=where,
            field="uuid",
        )
    for region, uuid in value.items():
        if not isinstance(region, str) or not is_uuid(uuid):
            raise DefinitionError(
                f"region {region!r}: must be a Magnum UUID like "
                f"6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b, got {uuid!r}",
                where=where,
                field="uuid",
            )
    return MappingProxyType(dict(value))


def same_content(a: ClusterTemplate, b: ClusterTemplate) -> bool:
    """Whether two templates declare the same (what :meth:`TemplateCatalog.add` compares)."""
    return _content(a) == _content(b)


def _content(t: ClusterTemplate) -> tuple[object, ...]:
    uuid = t.uuid if t.uuid is None or isinstance(t.uuid, str) else sorted(t.uuid.items())
    return (
        uuid,
        t.kubernetes_version,
        sorted(t.base_labels.items()),
        sorted(t.optional_labels),
        sorted(t.changing_labels),
        sorted(t.magnum_attributes().items()),
        t.driver,
    )
