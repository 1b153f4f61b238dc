"""One environment of the fleet: a cdk8s Chart whose output lands in ``dist/<env>/``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import cdk8s

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
