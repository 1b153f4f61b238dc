"""The Magnum cluster template catalog (the seed's Figure 4)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from fleet.clouds.magnum.names import check_template_name
from fleet.core.errors import DefinitionError
from fleet.core.validators import check_label_values, checked_arguments
from fleet.core.values import caller_location

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet

_KUBE_VERSION = re.compile(r"^v?\d+\.\d+(\.\d+)?$")
UUID_PATTERN = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
"""A Magnum UUID as Magnum prints it (``openstack coe cluster template show``)."""


def is_uuid(value: object) -> bool:
    """Whether ``value`` is a lower-case, dashed UUID string."""
    return isinstance(value, str) and bool(UUID_PATTERN.match(value))


@checked_arguments
@dataclass(frozen=True, kw_only=True, eq=False)
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

    Example::

        MULTI_125 = ClusterTemplate(
            name="kubernetes-1.25.3-3-multi",
            kubernetes_version="v1.25.3",
            base_labels={"kube_tag": "v1.25.3-cern.0"},
            uuid={"cern": "6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b"},
        )
    """

    argument_noun: ClassVar[str] = "template"
    """How locations name it: ``file:line (template <name>)``."""

    name: str
    kubernetes_version: str
    base_labels: Mapping[str, str] = field(default_factory=dict)
    optional_labels: Sequence[str] = ()
    changing_labels: Sequence[str] = ()
    uuid: str | Mapping[str, str] | None = None
    where: str = field(default="", compare=False)

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
        object.__setattr__(self, "uuid", _check_uuid(self.uuid, where=ctx))
        object.__setattr__(self, "base_labels", MappingProxyType(dict(self.base_labels)))
        object.__setattr__(self, "optional_labels", tuple(self.optional_labels))
        object.__setattr__(self, "changing_labels", tuple(self.changing_labels))

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


def _content(t: ClusterTemplate) -> tuple[object, ...]:
    uuid = t.uuid if t.uuid is None or isinstance(t.uuid, str) else sorted(t.uuid.items())
    return (
        uuid,
        t.kubernetes_version,
        sorted(t.base_labels.items()),
        sorted(t.optional_labels),
        sorted(t.changing_labels),
    )
