"""The OpenStack projects of imported clusters: those the fleet declares already (reused,
looked up by construct id), matched by project id, else by name and region."""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.importer import ExistingFleet
from fleet.clouds.magnum.importer.model import StateCluster
from fleet.clouds.magnum.importer.tfvars import Connection
from fleet.clouds.magnum.project import OpenStackProject
from fleet.core.errors import DefinitionError
from fleet.terraform.hcl import Configuration

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


# --- a cluster's project and region, when its state does not hold them ----------------------

PROVIDER_KEYS = (
    ("name", ("tenant_name", "project_name")),
    ("id", ("tenant_id", "project_id")),
    ("region", ("region",)),
)
"""What a ``provider "openstack"`` block gives, by the arguments that give it (first wins)."""


def provider_values(configuration: Configuration | None) -> dict[str, str]:
    """The project's name, id and region from the root module's ``provider "openstack"``
    block, where each is a literal (nothing else of the block is read: it may hold
    credentials)."""
    root = configuration.modules.get(()) if configuration is not None else None
    block = root.find("provider", "openstack") if root is not None else None
    found: dict[str, str] = {}
    for key, arguments in PROVIDER_KEYS:
        for argument in arguments:
            value = block.arguments.get(argument) if block is not None else None
            if isinstance(value, str) and value.startswith('"') and "${" not in value:
                found[key] = value[1:-1]
                break
    return found


@dataclass(frozen=True, kw_only=True)
class ClusterProject:
    """Where a cluster's project and region come from: its state, its template in the same
    state, ``--source``'s provider block, ``--project`` / ``--region``."""

    name: str | None
    project_id: str | None
    region: str | None
    notes: tuple[str, ...] = ()
    """Said in the report: each value not from the cluster's own state, and where from."""


def cluster_project(
    cluster: StateCluster,
    configuration: Configuration | None,
    given_project: str | None,
    given_region: str | None,
) -> ClusterProject:
    """The project and region of ``cluster``: the state's, else its template's in the same
    state (the region always; the project id of a template the configuration created, or
    of one only its project sees: a public template may be another project's), else
    ``--source``'s provider block, else the options."""
    template = cluster.template
    in_state = template.known_from in ("resource", "data-source")
    own = template.known_from == "resource" or not template.public
    provider = provider_values(configuration)
    notes: list[str] = []
    state = Path(cluster.state.source).name

    def pick(attribute: str, choices: Sequence[tuple[str | None, str]]) -> str | None:
        for value, where in choices:
            if value:
                if where:
                    notes.append(f"{attribute} {value!r}: {where}")
                return value
        return None

    project_id = pick(
        "project_id",
        [
            (cluster.project_id, ""),
            (
                template.project_id if in_state and own else None,
                f"its template's ({template.where})",
            ),
            (provider.get("id"), f"--source's provider block ({state})"),
        ],
    )
    region = pick(
        "region",
        [
            (cluster.region, ""),
            (template.region if in_state else None, f"its template's ({template.where})"),
            (provider.get("region"), f"--source's provider block ({state})"),
            (given_region, "--region"),
        ],
    )
    name = pick(
        "project name",
        [
            (provider.get("name"), f"--source's provider block ({state})"),
            (given_project, "--project"),
        ],
    )
    return ClusterProject(name=name, project_id=project_id, region=region, notes=tuple(notes))


def missing_project(cluster: StateCluster) -> DefinitionError:
    """The refusal of a cluster whose project nothing names."""
    template = cluster.template
    why = (
        f"its template {template.magnum_name!r} is public (it may be another project's)"
        if template.known_from in ("resource", "data-source")
        else "its template is not in the state"
    )
    return DefinitionError(
        "not in the state (terraform-provider-openstack 1.x never stored a cluster's project), "
        f"{why}, and no --source provider block names it (tenant_name, tenant_id): pass "
        "--project NAME, or --project ENV=NAME for each environment; the import writes nothing",
        where=cluster.where,
        field="project_id",
    )
