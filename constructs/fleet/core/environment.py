"""One environment of the fleet: a cdk8s Chart whose output lands in ``dist/<env>/``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import cdk8s

from fleet.core.manifest import Identity

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet


class Environment(cdk8s.Chart):
    """The cdk8s Chart of one environment (``dev``, ``test``, ``prod``, ...).

    Fleet declarations render beside it; any cdk8s construct a user adds to it
    (``cdk8s.ApiObject(fleet.environment("dev"), "x", ...)``) lands in
    ``dist/<env>/extra/``. A fleet declaration created inside it (directly or in a
    ``Construct`` of the user's) joins the fleet, placed in this environment.
    """

    def __init__(self, scope: cdk8s.App, name: str, *, fleet: Fleet | None = None) -> None:
        super().__init__(scope, name, disable_resource_name_hashes=True)
        self.env_name = name
        self.fleet = fleet

    def user_objects(self) -> list[dict[str, Any]]:
        """The objects of cdk8s constructs a user added to this chart (one bridge call)."""
        if not self.node.children:
            return []
        return list(self.to_json())

    def paths_of(self, identities: set[Identity]) -> dict[Identity, list[str]]:
        """The construct paths of the chart's ApiObjects with these identities, in tree
        order (a bridge call per object: only asked when two objects share an identity)."""
        found: dict[Identity, list[str]] = {}
        for construct in self.node.find_all():
            if not isinstance(construct, cdk8s.ApiObject):
                continue
            group = construct.api_group or "core"
            identity = (group, construct.kind, construct.metadata.namespace or "", construct.name)
            if identity in identities:
                found.setdefault(identity, []).append(construct.node.path)
        return found
