"""Create-only arguments (Terraform's ``ignore_changes``): which arguments of a Magnum
declaration may be create-only, and moving them to ``spec.initProvider``."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from fleet.core.errors import DefinitionError
from fleet.core.options import options_of, rendered
from fleet.core.tree import did_you_mean

CREATE_ONLY_COMPUTED: Mapping[str, Mapping[str, str]] = {
    "ClusterV1": {
        "template": "clusterTemplateId",
        "node_count": "nodeCount",
        "master_flavor": "masterFlavor",
        "labels": "labels",
    },
    "NodegroupV1": {
        "node_count": "nodeCount",
        "min_node_count": "minNodeCount",
        "max_node_count": "maxNodeCount",
        "labels": "labels",
    },
}
"""The arguments rendered by code (not as they are) that may be create-only, by kind:
keyword -> their ``spec.forProvider`` field."""


@functools.cache
def create_only_fields(cls: type) -> Mapping[str, str]:
    """Every argument of ``cls`` (MagnumCluster, NodeGroup) that may be create-only,
    keyword -> its ``spec.forProvider``/``spec.initProvider`` field: those rendered into
    ``spec.forProvider`` (from the table, and :data:`CREATE_ONLY_COMPUTED`), the name
    excepted.

    upjet v2.2.0 merges ``spec.initProvider`` into the parameters and, once the resource
    exists, drops the diff of every field set there and not in ``spec.forProvider``
    (``pkg/controller/external_tfpluginsdk.go`` ``filterInitExclusiveDiffs``,
    ``ignored_tfpluginsdk.go``): what Terraform's ``ignore_changes`` does. The CRDs of
    provider-openstack v0.9.0 have every ``forProvider`` field in ``initProvider``.
    """
    kind = str(getattr(cls, "rendered_kind"))  # noqa: B009
    out = dict(CREATE_ONLY_COMPUTED[kind])
    for o in rendered(cls):
        if o.render[:2] == ("spec", "forProvider") and len(o.render) == 3 and o.keyword != "name":
            out[o.keyword] = o.render[2]
    return MappingProxyType(out)


def check_create_only(given: Sequence[str], cls: type, *, where: str) -> tuple[str, ...]:
    """``given`` (argument names of ``cls``) if each may be create-only, else the error
    saying why not."""
    fields = create_only_fields(cls)
    for keyword in given:
        if keyword in fields:
            continue
        if keyword == "name":
            why = (
                "the name is how Magnum and the provider know it (ForceNew), and it never "
                "changes in the fleet"
            )
        elif keyword == "availability_zone":
            why = "it renders as the availability_zone label: name 'labels'"
        elif keyword in options_of(cls):
            why = "it is not an argument Magnum receives (nothing renders it in forProvider)"
        else:
            why = f"not an argument of {cls.__name__}" + did_you_mean(keyword, sorted(fields))
        raise DefinitionError(
            f"{keyword!r} cannot be create-only: {why}", where=where, field="create_only"
        )
    return tuple(dict.fromkeys(given))


def move_create_only(spec: dict[str, Any], fields: Sequence[str]) -> None:
    """Move ``fields`` of ``spec.forProvider`` (where rendered) to ``spec.initProvider``."""
    for key in fields:
        if key in spec["forProvider"]:
            spec.setdefault("initProvider", {})[key] = spec["forProvider"].pop(key)
