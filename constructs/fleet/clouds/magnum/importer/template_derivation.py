"""Cluster templates from the clusters that use them: the seed's manual ``diff`` work.

Pure functions: label sets in, template descriptions out. The base labels of a template
are those every one of its clusters carries, each with its most common value; the
changing labels are base labels whose value differs in some cluster; the optional labels
are carried by some clusters only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fleet.clouds.magnum.template import ClusterTemplate
from fleet.core.errors import DefinitionError

_KUBE_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)")
_NAME_VERSION = re.compile(r"(\d+\.\d+\.\d+)")


@dataclass(frozen=True, kw_only=True)
class TemplateSpec:
    """What a :class:`ClusterTemplate` declares, as plain sorted data."""

    name: str
    kubernetes_version: str
    base_labels: Mapping[str, str] = field(default_factory=dict)
    optional_labels: tuple[str, ...] = ()
    changing_labels: tuple[str, ...] = ()
    uuid: str | Mapping[str, str] | None = None
    """The template's Magnum UUID (per region): tfvars do not carry it; ``--template-uuid``
    or Terraform state does."""
    attributes: Mapping[str, str | int | bool] = field(default_factory=dict)
    """Its Magnum attributes declared (image, flavor, ...), by Terraform attribute
    (:meth:`ClusterTemplate.magnum_attributes`): kept when an import rewrites it."""
    driver: str | None = None
    """Its ``driver=``, when declared (kept when an import rewrites it)."""

    @classmethod
    def of(cls, template: ClusterTemplate) -> TemplateSpec:
        """The spec of a declared template."""
        return cls(
            name=template.name,
            kubernetes_version=template.kubernetes_version,
            base_labels=dict(sorted(template.base_labels.items())),
            optional_labels=tuple(sorted(template.optional_labels)),
            changing_labels=tuple(sorted(template.changing_labels)),
            uuid=template.uuid,
            attributes=template.magnum_attributes(),
            driver=None if template.driver is None else str(template.driver),
        )


def kubernetes_version(name: str, base_labels: Mapping[str, str]) -> str:
    """From the ``kube_tag`` label (``v1.25.3-cern.0`` -> ``v1.25.3``), else from the
    template name (``kubernetes-1.25.3-3-multi``); an error naming the template if neither."""
    match = _KUBE_TAG.match(base_labels.get("kube_tag", ""))
    if match is None:
        match = _NAME_VERSION.search(name)
    if match is None:
        raise DefinitionError(
            f"cannot tell the Kubernetes version of template {name!r}: no kube_tag label "
            "common to its clusters and no version in its name",
            field="cluster_template_name",
        )
    return "v" + match.group(1)


def derive_template(name: str, label_sets: Sequence[Mapping[str, str]]) -> TemplateSpec:
    """The template ``name`` as its clusters' labels describe it (at least one cluster)."""
    if not label_sets:
        raise ValueError("a template is derived from at least one cluster")
    keys = [set(labels) for labels in label_sets]
    base_keys = set.intersection(*keys)
    base: dict[str, str] = {}
    changing: list[str] = []
    for key in sorted(base_keys):
        counts = Counter(labels[key] for labels in label_sets)
        # Most common value; ties go to the smallest value, so input order never matters.
        base[key] = min(counts, key=lambda value: (-counts[value], value))
        if len(counts) > 1:
            changing.append(key)
    optional = sorted(set.union(*keys) - base_keys)
    return TemplateSpec(
        name=name,
        kubernetes_version=kubernetes_version(name, base),
        base_labels=base,
        optional_labels=tuple(optional),
        changing_labels=tuple(changing),
    )


def extend_template(
    template: TemplateSpec, label_sets: Iterable[Mapping[str, str]]
) -> TemplateSpec:
    """``template`` grown to cover more clusters without changing its base.

    Clusters declared against the base stay valid: a new label becomes optional, a base
    label with another value becomes changing. A cluster lacking a base label cannot be
    expressed against this template; :func:`missing_base_labels` finds it.
    """
    optional = set(template.optional_labels)
    changing = set(template.changing_labels)
    for labels in label_sets:
        for key, value in labels.items():
            if key not in template.base_labels:
                optional.add(key)
            elif template.base_labels[key] != value:
                changing.add(key)
    return TemplateSpec(
        name=template.name,
        kubernetes_version=template.kubernetes_version,
        base_labels=dict(sorted(template.base_labels.items())),
        optional_labels=tuple(sorted(optional)),
        changing_labels=tuple(sorted(changing)),
        uuid=template.uuid,
    )


def missing_base_labels(template: TemplateSpec, labels: Mapping[str, str]) -> list[str]:
    """Base labels of ``template`` that ``labels`` lacks, sorted."""
    return sorted(set(template.base_labels) - set(labels))


def own_labels(template: TemplateSpec, labels: Mapping[str, str]) -> dict[str, str]:
    """What a cluster declares beyond its template: labels not in the base or with
    another value, sorted by key."""
    return {
        key: value
        for key, value in sorted(labels.items())
        if template.base_labels.get(key) != value or key not in template.base_labels
    }
