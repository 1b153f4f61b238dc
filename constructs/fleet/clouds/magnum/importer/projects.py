"""The OpenStack projects of imported clusters: those the fleet declares already (reused,
looked up by construct id), matched by project id, else by name and region."""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.importer import ExistingFleet
from fleet.clouds.magnum.importer.tfvars import Connection
from fleet.clouds.magnum.project import OpenStackProject

PROJECT_CLASS = OpenStackProject.__name__


@dataclass(frozen=True, kw_only=True)
class ExistingProject:
    """An OpenStackProject the fleet declares outside the modules this import replaces."""

    construct_id: str
    where: str
    file: Path
    details: Mapping[str, str | None]


def projects_of(existing: ExistingFleet) -> list[ExistingProject]:
    """The projects the fleet declares outside the modules an import replaces."""
    return [
        ExistingProject(
            construct_id=decl.construct_id, where=decl.where, file=file, details=decl.details
        )
        for decl, file in existing.declarations
        if isinstance(decl, OpenStackProject)
    ]


DETAILS = (
    ("project_id", "project-id", "project_id"),
    ("auth_url", "auth-url", "auth_url"),
    ("region", "region", "region_name"),
    ("interface", "interface", "interface"),
    ("identity_api_version", "identity-api-version", "identity_api_version"),
)
"""Connection field, OpenStackProject detail, tfvars key."""


def match_project(
    connection: Connection, projects: Sequence[ExistingProject]
) -> tuple[ExistingProject, str] | None:
    """The declared project ``connection`` is, and how it matched: by project id, else by
    project name and region."""
    if connection.project_id is not None:
        for project in projects:
            if project.details.get("project-id") == connection.project_id:
                return project, "project id"
    for project in projects:
        same_name = project.details.get("project-name") == connection.project_name
        if same_name and (project.details.get("region") or None) == connection.region:
            return project, "project name and region"
    return None


def project_variable(connection: Connection) -> str:
    """The local name of a project in ``define``: ``JEEDY AIS`` -> ``jeedy_ais``."""
    name = connection.provider_config_name.replace("-", "_")
    if not name[:1].isalpha() or keyword.iskeyword(name) or name in _TAKEN:
        name = f"project_{name}"
    return name


_TAKEN = frozenset({"fleet", "per_env", *dir(builtins)})
"""Names a project's variable must not shadow: ``define``'s argument, what a generated
module imports in lower case, Python's builtins (``all``, ``list``)."""
