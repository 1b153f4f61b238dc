"""What every fleet cluster has, whatever its cloud: the hybrid API.

``FleetCluster`` is the common base of :class:`~fleet.MagnumCluster` and
:class:`~fleet.OciManagedCluster`: fleet-wide code (registration, inventory,
packages) works with it and never needs to know the cloud.
"""

from __future__ import annotations

import importlib
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict, TypeVar, runtime_checkable

from fleet.core import layout
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.layout import sync_options
from fleet.core.manifest import Manifest
from fleet.core.names import object_name_for
from fleet.core.options import Option, option, rendered, value_types_in
from fleet.core.validators import check_dns_label
from fleet.core.values import PerEnv, SecretKeyRef, resolve
from fleet.platform.changes import ChangeRule
from fleet.platform.component import PlatformComponent
from fleet.platform.live import LiveStatus
from fleet.platform.plugins import Plugin, PluginSet
from fleet.platform.references import ReferenceRules
from fleet.platform.upjet import ForceNewRules

if TYPE_CHECKING:
    from fleet.clouds.importer import CloudImporter

FLEET_LABEL_PREFIX = "fleet/"
"""The prefix of the labels registration sets from the declaration (argocd/registration.py)."""

PROTECT = layout.PROTECT
"""ArgoCD sync options that keep a cluster alive when its definition disappears."""


# === Cloud plug-ins ==========================================================================
# What a cluster kind contributes to the fleet's platform, in ONE place: the platform
# components the bootstrap installs for it (as values: fleet.platform.component), how ArgoCD
# must apply and diff its objects, the reference rules the checks apply to its objects, the
# kinds whose deletion would cut clusters off, and what ``fleet diff`` must refuse to change.
# Each FleetCluster subclass names its plug-in (``plugin: ClassVar[CloudPlugin]``); a fleet's
# are those of its declarations' classes (``Platform.of(fleet).plugins``), and consumers (the
# bootstrap, checks/references.py, checks/waves.py, the diff guards) read them through
# :func:`cloud_plugins` and never name a cloud.


@dataclass(frozen=True, kw_only=True)
class ShortLivedCredential:
    """A credential in a cluster's kubeconfig Secret that expires on its own: its
    controller rewrites it every ``refresh_seconds``, and a copy is dead
    ``lifetime_seconds`` after it was made. A copy (ArgoCD's, read every poll) is alive
    only if it is at most ``lifetime_seconds - refresh_seconds`` older than the Secret."""

    lifetime_seconds: int
    refresh_seconds: int
    what: str
    """For messages: what the credential is and who refreshes it."""

    @property
    def longest_copy_delay(self) -> int:
        """The longest a copy may lag the Secret and still be alive when used."""
        return self.lifetime_seconds - self.refresh_seconds


@dataclass(frozen=True, kw_only=True)
class ImportHelp:
    """What ``fleet import`` says about a cloud's importer (its command help)."""

    tfstate: str
    """One line: what ``fleet import tfstate`` imports."""
    tfstate_description: str
    tfvars: str = ""
    """One line: what ``fleet import tfvars`` imports ("": the importer reads no tfvars)."""
    tfvars_description: str = ""
    tfvars_state: str = ""
    """``fleet import tfvars --state``: what the state gives."""
    template_uuid: str = ""
    """``--template-uuid NAME=UUID``."""


@dataclass(frozen=True, kw_only=True)
class ImportOption:
    """An option of ``fleet import tfstate`` that a cloud's importer declares (``--project
    NAME``): repeatable, each value a string the importer reads
    (:attr:`fleet.clouds.importer.StateRequest.options`); the command line names no cloud."""

    flag: str
    """``--project``."""
    metavar: str
    help: str


CLOUDS_GROUP = "fleet.clouds"
"""The entry-point group under which an installed cloud distribution names its cluster class
(a :class:`FleetCluster` subclass) or its :class:`CloudPlugin`, so that ``fleet import``
finds its importer (``CloudPlugin.importer``)::

    [project.entry-points."fleet.clouds"]
    capo = "capo.cluster:CapoCluster"
"""


@dataclass(frozen=True, kw_only=True)
class ImporterEntry:
    """A cloud plug-in's importer (``CloudPlugin.importer``): its help and its options,
    read when the command line is built, and how to load the importer itself
    (:class:`fleet.clouds.importer.CloudImporter`), only when ``fleet import`` runs."""

    help: ImportHelp
    load: Callable[[], CloudImporter]
    options: tuple[ImportOption, ...] = ()
    """Options of ``fleet import tfstate`` only this cloud reads."""


@dataclass(frozen=True, kw_only=True)
class CloudPlugin(Plugin):
    """What one cluster kind contributes to the platform (see the block comment above).

    ``components`` (:class:`~fleet.platform.plugins.Plugin`) are installed wherever such a
    cluster is placed (retired ones too: their ProviderConfig or identity still renders).
    """

    protected_kinds: tuple[tuple[str, str], ...] = ()
    """(group, kind) patterns besides the class's bearing kinds whose deletion cuts
    clusters off (credentials, identities)."""
    references: ReferenceRules = field(default_factory=ReferenceRules)
    application_sync_options: tuple[str, ...] = ()
    """Sync options of the cluster's Application (how ArgoCD applies its objects)."""
    application_compare_options: tuple[str, ...] = ()
    """Compare options of the cluster's Application (how ArgoCD diffs its objects)."""
    force_new: ForceNewRules | None = None
    """What ``fleet diff`` refuses to change on the cloud's Crossplane managed resources
    (their upjet provider's ForceNew arguments)."""
    change_rules: tuple[ChangeRule, ...] = ()
    """What else ``fleet diff`` judges on existing objects of the cloud: changes its
    controllers refuse, or turn into a second resource (:mod:`fleet.platform.changes`)."""
    short_account: Callable[[str], str] | None = None
    """How a narrow table (``fleet ls``) shows an account of the cloud: a long id by its
    unique end, say. None: as it is."""
    ignore_differences: tuple[IgnoreDifference, ...] = ()
    """What the cloud's controllers write into rendered objects of every cluster of the
    kind: its clusters' Applications ignore it (with the class's own
    ``ignore_differences``)."""
    importer: ImporterEntry | None = None
    """How ``fleet import`` reads the cloud's clusters from Terraform
    (:mod:`fleet.clouds.importer`); None: it does not."""
    status: LiveStatus = field(default_factory=LiveStatus)
    """What ``fleet status`` reads of its clusters on the management cluster: the kinds
    and how their conditions read, and which field holds the live Kubernetes version
    (:mod:`fleet.platform.live`). Empty: its clusters show ArgoCD's view only."""
    kubeconfig_credential: ShortLivedCredential | None = None
    """The credential in the clusters' kubeconfig Secret, when it expires on its own: what
    copies it (provider-argocd, every poll) must copy it often enough. None: it does not."""


BUILTIN_CLUSTERS = (
    "fleet.clouds.magnum.cluster:MagnumCluster",
    "fleet.clouds.oci.cluster:OciManagedCluster",
)
"""The cluster classes of the clouds the tool ships (``module:class``), imported on demand."""


def builtin_clusters() -> tuple[type[FleetCluster], ...]:
    """The classes of :data:`BUILTIN_CLUSTERS` (importing their modules)."""
    out = []
    for path in BUILTIN_CLUSTERS:
        module, _, name = path.partition(":")
        out.append(getattr(importlib.import_module(module), name))
    return tuple(out)


def guard_plugins(*fleets: PluginSet) -> PluginSet:
    """What ``fleet diff``'s guards know: the plug-ins of the fleets compared (the head's, a
    :class:`~fleet.pipeline.synth.Synth`'s; the base's too when it was loaded) and always the
    built-in clouds', so that a change that removes the last cluster of a built-in cloud is
    still guarded. Never what else the process imported."""
    return PluginSet.of(
        [*builtin_clusters(), *(cls for found in fleets for cls, _ in found.plugins)],
        tuple(dict.fromkeys(c for found in fleets for c in found.fleet_wide)),
    )


def cloud_plugins(plugins: PluginSet | None = None) -> list[tuple[type[FleetCluster], CloudPlugin]]:
    """The cluster classes among ``plugins`` (a fleet's: ``Platform.of(fleet).plugins``),
    with their plug-ins, in its order. ``None``: those of the built-in clouds
    (:func:`guard_plugins` of no fleet)."""
    found = guard_plugins() if plugins is None else plugins
    return [
        (cls, plugin)
        for cls, plugin in found.plugins
        if issubclass(cls, FleetCluster) and isinstance(plugin, CloudPlugin)
    ]


def ignore_differences(cls: type[FleetCluster]) -> tuple[dict[str, Any], ...]:
    """ArgoCD ``ignoreDifferences`` entries of a cluster class: its plug-in's, then its own
    ``ignore_differences`` ClassVar (fields the cloud's controllers write), () if none."""
    return tuple(d.to_dict() for d in (*cls.plugin.ignore_differences, *cls.ignore_differences))


@dataclass(frozen=True)
class DeclaredField:
    """An option of a cluster kind's table (or of a value type it holds), where it renders."""

    cluster: type[FleetCluster]
    table: type
    """The class whose body declares it (the cluster class, ``NodeGroup``, ...)."""
    option: Option
    kind: str
    """The kind of the object it renders into."""


def declared_fields(
    plugins: PluginSet | None = None,
) -> dict[tuple[str, tuple[str, ...]], DeclaredField]:
    """(kind, render path) -> the option that renders there, over every cloud's cluster
    class in ``plugins`` and the value types its options hold: which argument of a
    declaration a field of a rendered object comes from (for ``fleet diff``'s messages)."""
    out: dict[tuple[str, tuple[str, ...]], DeclaredField] = {}
    for cluster, _ in cloud_plugins(plugins):
        for table in (cluster, *value_types_in(cluster)):
            for o in rendered(table):
                kind = o.rendered_kind(table)
                out.setdefault((kind, o.render), DeclaredField(cluster, table, o, kind))
    return out


def force_new(cluster: type[FleetCluster], table: type, option: Option) -> bool | None:
    """Whether the cloud's provider refuses to change ``option`` (of ``table``, held by
    ``cluster``) on an existing object: its Terraform attribute is ForceNew in the vendored
    provider data of the cluster's plug-in (``CloudPlugin.force_new``). None where there is
    no such data, or the option has no Terraform attribute."""
    rules = cluster.plugin.force_new
    if rules is None or not option.terraform:
        return None
    kind = option.rendered_kind(table)
    data = rules.table()
    for (_, table_kind), fields in data.kinds.items():
        if table_kind == kind:
            return any(f.terraform == option.terraform for f in fields.values())
    return None


@runtime_checkable
class NeedsSecrets(Protocol):
    """A declaration that reads Secrets a person creates (credentials): the bootstrap
    renders their namespaces first, and the disaster-recovery list names them."""

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """(the Secret key, what must be in it) read in ``environment``."""
        ...


# === end of cloud plug-ins ===================================================================


IntPerEnv = int | PerEnv[int]


@dataclass(frozen=True)
class NodeCounts:
    """A node pool's size in one environment; min/max are set when it is autoscaled."""

    node_count: int | None
    min_node_count: int | None
    max_node_count: int | None


def resolve_counts(
    ctx: str,
    prefix: str,
    environment: str,
    node_count: IntPerEnv | None,
    min_count: IntPerEnv | None,
    max_count: IntPerEnv | None,
) -> NodeCounts:
    """The counts for ``environment``, checked: integers, 0 or more, min <= count <= max.

    ``prefix`` goes before each field name in errors (``node_pools[web].``).
    """

    def one(value: IntPerEnv | None, name: str) -> int | None:
        if value is None:
            return None
        v = resolve(value, environment, where=ctx, field=prefix + name)
        if isinstance(v, bool) or not isinstance(v, int):
            raise DefinitionError(f"must be an integer, got {v!r}", where=ctx, field=prefix + name)
        if v < 0:
            raise DefinitionError(
                f"must be 0 or more, got {v} ({environment})", where=ctx, field=prefix + name
            )
        return v

    count = one(node_count, "node_count")
    low, high = one(min_count, "min_node_count"), one(max_count, "max_node_count")
    if low is not None and high is not None and low > high:
        raise DefinitionError(
            f"min_node_count {low} is above max_node_count {high} ({environment})",
            where=ctx,
            field=prefix + "min_node_count",
        )
    if count is not None and (
        (low is not None and count < low) or (high is not None and count > high)
    ):
        raise DefinitionError(
            f"node_count {count} is outside [{low}, {high}] ({environment})",
            where=ctx,
            field=prefix + "node_count",
        )
    return NodeCounts(count, low, high)


PoolT = TypeVar("PoolT")


def unique_pools(
    pools: Sequence[object], kind: type[PoolT], *, where: str, field: str, noun: str
) -> tuple[PoolT, ...]:
    """``pools`` if each is a ``kind`` and their names are unique, else the error naming it."""
    seen: set[str] = set()
    out: list[PoolT] = []
    for pool in pools:
        if not isinstance(pool, kind):
            raise DefinitionError(
                f"must hold {kind.__name__} objects, got {type(pool).__name__}",
                where=where,
                field=field,
            )
        name = str(getattr(pool, "name", ""))
        if name in seen:
            raise DefinitionError(f"duplicate {noun} name {name!r}", where=where, field=field)
        seen.add(name)
        out.append(pool)
    return tuple(out)


@dataclass(frozen=True)
class IgnoreDifference:
    """One entry of an ArgoCD Application's ``spec.ignoreDifferences``: fields a controller
    writes that the render cannot know, as jq paths (removed with ``del(<path>)``) or JSON
    pointers (removed with a JSON Patch ``remove``; argo-cd
    ``util/argo/normalizers/diff_normalizer.go``)."""

    group: str
    kind: str
    jq_path_expressions: tuple[str, ...] = ()
    json_pointers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The Application form: ``{group, kind, jqPathExpressions?, jsonPointers?}``."""
        out: dict[str, Any] = {"group": self.group}
        if self.jq_path_expressions:
            out["jqPathExpressions"] = list(self.jq_path_expressions)
        if self.json_pointers:
            out["jsonPointers"] = list(self.json_pointers)
        out["kind"] = self.kind
        return out


@dataclass(frozen=True)
class CreateOnlyField:
    """A field of a cluster object whose change on a live cluster its controller refuses
    or never applies; ``fleet diff`` fails on it.

    ``path`` starts at the body (``("spec", "region")``); ``[]`` stands for every item of
    a list, matched by the items' ``name`` on both sides. ``why`` ends the error.
    """

    api_version: str
    kind: str
    path: tuple[str, ...]
    why: str


@dataclass(frozen=True, kw_only=True)
class NodePoolSummary:
    """A node pool as fleet-wide code sees it, whatever the cloud calls it."""

    name: str
    machine_size: str | None
    """The machine's size (a flavor, a shape); None: not known (the cloud's default, or a
    Magnum template's that its declaration does not state)."""
    size_inherited: bool = False
    """Whether :attr:`machine_size` is not the pool's own but what it inherits (a Magnum
    cluster's workers without ``flavor`` get the template's)."""
    node_count: int | None
    min_node_count: int | None
    max_node_count: int | None
    placement: tuple[str, ...]


class Lifecycle(TypedDict, total=False):
    """The lifecycle keywords of every cluster (the fields :class:`FleetCluster` declares),
    for a wrapper that passes them on: ``def __init__(self, scope, id, *, size: int,
    **lifecycle: Unpack[Lifecycle])``. The table is FleetCluster's; a test keeps this in step.
    """

    fleet_labels: Mapping[str, str]
    deletion_protection: bool
    register_in_argocd: bool
    retired: bool | Sequence[str]
    paused: bool | Sequence[str]


class FleetCluster(FleetConstruct):
    """A Kubernetes cluster of the fleet, placed in one or more environments.

    An abstract base: a cloud's class implements the methods marked abstract (what the
    fleet calls: render, version, region, account, node pools, kubeconfig) and names its
    :class:`CloudPlugin`; a class that does not cannot be declared.

    ``name`` may differ per environment (a :class:`PerEnv`, or a string with an
    ``{env}`` placeholder such as ``"k8s-ais-batch-{env}-multi-v25"``); it names every
    object of the cluster and must never change once the cluster exists.

    How a cluster lives, apart from what it is, are the lifecycle fields below, the same
    for every cloud. ``retired=True`` retires the cluster in every environment it is placed
    in; a list (``retired=["dev"]``) only in those. Where retired, it renders nothing and
    nothing registers it; its project's ProviderConfig (OKE: its identity) still renders
    while the definition is kept, so that goes last. ``paused`` takes the same forms: where
    paused, the cluster's controller leaves the real cluster alone (Crossplane's
    ``crossplane.io/paused``, Cluster API's ``spec.paused``).
    """

    name: str | PerEnv[str] = option(
        doc="The cluster's name in its cloud (``{env}`` is replaced by the environment); "
        "never changes."
    )
    fleet_labels: Mapping[str, str] = option(
        factory=dict, doc="Labels of the cluster's ArgoCD registration (FleetPackage selects)."
    )
    deletion_protection: bool = option(
        default=True, doc="Keep the cloud objects when the definition disappears."
    )
    register_in_argocd: bool = option(
        default=True, doc="Register the cluster in its environment's ArgoCd."
    )
    retired: bool | Sequence[str] = option(
        default=False, doc="Retired everywhere (True) or in the listed environments."
    )
    paused: bool | Sequence[str] = option(
        default=False,
        doc="Its controllers leave the real cluster alone everywhere (True) or in the list.",
    )

    environments_required = True

    cloud: ClassVar[str] = ""
    bearing_kinds: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(apiVersion, kind) of the objects whose deletion would delete the real cluster."""
    plugin: ClassVar[CloudPlugin]
    """What the cluster kind contributes to the platform (see :class:`CloudPlugin`); every
    concrete cluster class names one."""
    kubeconfig_export_refused: ClassVar[str] = ""
    """Why the cluster's kubeconfig must not be exported to a secret store ("": it may)."""
    force_new_fields: ClassVar[tuple[CreateOnlyField, ...]] = ()
    """Fields ``fleet diff`` refuses to change on an existing cluster."""
    ignore_differences: ClassVar[tuple[IgnoreDifference, ...]] = ()
    """Fields controllers write into the ``spec`` of rendered objects: the cluster's
    Application ignores them (``spec.ignoreDifferences``, ``RespectIgnoreDifferences``)."""
    rendered_kind: ClassVar[str] = ""
    """The kind of the object an option's ``render`` path is in, unless it names another."""

    def __post_init__(self) -> None:
        """The names per environment and the lifecycle fields, checked."""
        super().__post_init__()
        if not isinstance(getattr(type(self), "plugin", None), CloudPlugin):
            raise DefinitionError(
                f"{type(self).__name__} names no CloudPlugin: a cluster class says what it "
                "contributes to the platform (plugin: ClassVar[CloudPlugin] = CloudPlugin(...))",
                where=self.context,
                field="plugin",
            )
        self._cloud_names: dict[str, str] = {}
        self._object_names: dict[str, str] = {}
        for env in self.environments:
            value = resolve(self.name, env, where=self.context, field="name").replace("{env}", env)
            self._cloud_names[env] = self.check_cloud_name(value, env)
            self._object_names[env] = object_name_for(
                value, self.pinned_object_name(env), where=self.context
            )
        self.fleet_labels = MappingProxyType(dict(self.fleet_labels))
        for key in self.fleet_labels:
            if key.startswith(FLEET_LABEL_PREFIX):
                raise DefinitionError(
                    f"{key!r}: labels under {FLEET_LABEL_PREFIX} are the fleet's own "
                    "(environment, cloud, region, ...), set from the declaration",
                    where=self.context,
                    field="fleet_labels",
                )
        if self.fleet_labels and not self.register_in_argocd:
            raise DefinitionError(
                "fleet_labels label the cluster's ArgoCD registration, and "
                "register_in_argocd=False renders none: no FleetPackage could select the "
                "cluster by them; give one or the other",
                where=self.context,
                field="fleet_labels",
            )
        self.retired_environments = self._some_environments(self.retired, "retired")
        """The environments the cluster is declared retired in (whether or not the fleet
        is reviving; ask :meth:`is_retired` what renders)."""
        self.paused_environments = self._some_environments(self.paused, "paused")
        """The environments where the cluster's controllers must leave it alone (each
        cloud renders its controller's pause switch; see :meth:`is_paused`)."""

    def _some_environments(self, value: bool | Sequence[str], field: str) -> frozenset[str]:
        """``True``: all the cluster's environments; ``False``: none; a list: those."""
        if value is True:
            return frozenset(self.environments)
        if value is False:
            return frozenset()
        for env in value:
            if env not in self.environments:
                raise DefinitionError(
                    f"{env!r} is not one of the cluster's environments "
                    f"({', '.join(self.environments)})",
                    where=self.context,
                    field=field,
                )
        return frozenset(value)

    def is_paused(self, environment: str) -> bool:
        """Whether the cluster is declared paused in ``environment``."""
        return environment in self.paused_environments

    @property
    def reviving(self) -> bool:
        """Whether the fleet renders retired clusters and node pools as if they were not."""
        return self.fleet.revive_retired

    def is_retired(self, environment: str) -> bool:
        """Whether the cluster renders nothing in ``environment`` (retired there, and the
        fleet is not reviving); False for an environment the cluster is not placed in."""
        return environment in self.retired_environments and not self.reviving

    def retired_pool_names(self) -> tuple[str, ...]:
        """The node pools (Magnum node groups, OKE node pools) declared retired."""
        return ()

    def retires_anything(self) -> bool:
        """Whether the cluster, in some environment, or one of its node pools is retired."""
        return bool(self.retired_environments or self.retired_pool_names())

    # --- names ---------------------------------------------------------------------------

    def check_cloud_name(self, name: str, environment: str) -> str:
        """``name`` if the cloud takes it as the cluster's name in ``environment``, else the
        error naming the cloud's rule. Default: a DNS-1123 label, for clouds whose
        controller names the cloud's cluster after its Kubernetes object (CAPOCI names the
        OKE cluster after the OCIManagedControlPlane)."""
        return check_dns_label(name, where=self.context, field="name")

    def pinned_object_name(self, environment: str) -> str | None:
        """The object name the declaration pins in ``environment`` (None: derived from the
        cloud's name). Clouds whose names need not be Kubernetes names offer a pin."""
        return None

    def cloud_name(self, environment: str) -> str:
        """The cluster's name in its cloud in ``environment``, byte for byte as declared
        (``{env}`` replaced): Magnum's ``Cluster``, ``cluster_1``. Only what the cloud
        reads takes it; every Kubernetes object and folder uses :meth:`object_name`."""
        return self._cloud_names[environment]

    def object_name(self, environment: str) -> str:
        """The cluster's Kubernetes name in ``environment``: the ``metadata.name`` of its
        objects, its folder, its ArgoCD registration and Application, its connection
        Secret, the ``fleet/cluster`` label. The pinned one, else derived from
        :meth:`cloud_name` (:func:`fleet.core.names.object_name_from`: ``Cluster`` ->
        ``cluster``, ``cluster_1`` -> ``cluster-1``; a DNS-1123 label is its own)."""
        return self._object_names[environment]

    def cluster_name(self, environment: str) -> str:
        """:meth:`object_name` (its older name, kept for existing callers)."""
        return self._object_names[environment]

    def folder(self, environment: str) -> str:
        """The cluster's folder inside ``dist/<environment>/``."""
        return layout.cluster_folder(self.object_name(environment))

    def prepare(self) -> None:
        """Check that no other cluster of the fleet has the same object name in one of
        this cluster's environments (once every ``define()`` has run)."""
        self.fleet.catalog(_ObjectNames).check(self)

    @abstractmethod
    def kubernetes_version(self, environment: str) -> str:
        """The Kubernetes version the cluster runs in ``environment`` (``v1.30.1``)."""

    @abstractmethod
    def region(self, environment: str) -> str:
        """The cloud region (Magnum: the OpenStack region; OKE: the OCI region)."""

    def template_name(self, environment: str) -> str | None:
        """The Magnum template, or None where the cloud has no templates."""
        return None

    @abstractmethod
    def account(self, environment: str) -> str:
        """The OpenStack project or OCI compartment the cluster is billed to."""

    def account_label(self, environment: str) -> str:
        """:meth:`account` as a narrow table shows it (the plug-in's ``short_account``)."""
        account = self.account(environment)
        shorten = type(self).plugin.short_account
        return shorten(account) if shorten is not None else account

    @abstractmethod
    def node_pools(self, environment: str) -> list[NodePoolSummary]:
        """The node pools (Magnum node groups, OKE node pools) in ``environment``."""

    @abstractmethod
    def kubeconfig_secret(self, environment: str) -> SecretKeyRef:
        """Where the cluster's kubeconfig appears once the cluster exists."""

    @abstractmethod
    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        """(apiVersion, kind, namespace, name) of the object that writes the kubeconfig."""

    def warnings(self) -> list[str]:
        """What ``fleet validate`` warns about (valid, but not safe yet); none by default."""
        return []

    def platform_components(self, environment: str) -> tuple[PlatformComponent, ...]:
        """The components the bootstrap installs for the cluster in ``environment``: its
        plug-in's, and what its declaration needs besides (an OKE cluster whose pools
        autoscale: External Secrets)."""
        return type(self).plugin.components

    def workload_folders(self, environment: str) -> tuple[str, ...]:
        """Folders of ``dist/<environment>/`` whose objects go into the cluster itself, not
        into the management cluster (an OKE cluster's autoscaler). Each is synced by an
        Application to the registered cluster, in the registration's wave (the ArgoCd renders
        it); () when there are none."""
        return ()

    def protection_annotations(self) -> dict[str, str]:
        """The sync-options annotation every cluster-bearing object carries."""
        return sync_options(PROTECT if self.deletion_protection else ())

    def manifests(self, environment: str) -> list[Manifest]:
        """Rendered objects; nothing where the cluster is retired (see docs: retiring)."""
        if self.is_retired(environment):
            return []
        return super().manifests(environment)


class _ObjectNames:
    """The object names of a fleet's clusters per environment, found once (prepare phase):
    two clusters with one object name would share their objects and folder."""

    def __init__(self) -> None:
        self._by_name: dict[tuple[str, str], list[FleetCluster]] | None = None

    def check(self, cluster: FleetCluster) -> None:
        """The error for ``cluster`` when an earlier-declared cluster (by file and line,
        so in any module order) has one of its object names."""
        if self._by_name is None:
            found: dict[tuple[str, str], list[FleetCluster]] = {}
            for declaration in cluster.fleet.declarations():
                if isinstance(declaration, FleetCluster):
                    for env in declaration.environments:
                        key = (env, declaration.object_name(env))
                        found.setdefault(key, []).append(declaration)
            self._by_name = {
                key: sorted(members, key=lambda c: (c.where, c.node.path))
                for key, members in found.items()
                if len(members) > 1
            }
        for env in cluster.environments:
            members = self._by_name.get((env, cluster.object_name(env)), [])
            if members and members[0] is not cluster:
                raise _collision(members[0], cluster, env)


def _collision(first: FleetCluster, second: FleetCluster, environment: str) -> DefinitionError:
    """Two clusters with one object name in ``environment``: the error at the second."""
    name = second.object_name(environment)
    pins = any(
        type(c).pinned_object_name is not FleetCluster.pinned_object_name for c in (first, second)
    )
    pin = "pin another with object_name= on one of them" if pins else "rename one of them"

    def origin(c: FleetCluster) -> str:
        if c.pinned_object_name(environment) is not None:
            return " (pinned)"
        cloud = c.cloud_name(environment)
        return f" (derived from {cloud!r})" if cloud != name else ""

    if first.cloud_name(environment) == second.cloud_name(environment):
        what = f"cluster name {name!r} in {environment} is also that of cluster"
    else:
        what = f"object name {name!r} in {environment}{origin(second)} is also that of cluster"
    return DefinitionError(
        f"{what} {first.node.path!r}{origin(first)} at {first.where}: their objects and "
        f"folder would be one; {pin}",
        where=second.context,
        field="name",
    )
