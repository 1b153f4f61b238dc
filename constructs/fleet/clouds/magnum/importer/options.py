"""The options of ``fleet import tfstate`` only Magnum's importer reads
(:class:`fleet.clouds.base.ImportOption`): the project and region of clusters whose state
does not hold them, and the cluster labels to leave out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fleet.clouds.base import ImportOption
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError

PROJECT = ImportOption(
    flag="--project",
    metavar="NAME|ENV=NAME",
    help="the OpenStack project of clusters whose state does not name it (terraform-provider-"
    "openstack 1.x never stored a cluster's project_id) and whose template and --source "
    "provider block do not either: NAME for every environment, ENV=NAME for one (repeatable)",
)
REGION = ImportOption(
    flag="--region",
    metavar="NAME|ENV=NAME",
    help="the OpenStack region of clusters whose state, template and --source provider block "
    "do not name it: NAME for every environment, ENV=NAME for one (repeatable)",
)
OMIT_LABEL = ImportOption(
    flag="--omit-label",
    metavar="KEY",
    help="a cluster label holding credential material (grafana_admin_passwd): left out, and "
    "the cluster's labels become create-only (spec.initProvider), so the live cluster keeps "
    "it (repeatable)",
)
OPTIONS = (PROJECT, REGION, OMIT_LABEL)


def per_environment(
    options: Mapping[str, Sequence[str]], option: ImportOption, config: FleetConfig
) -> dict[str | None, str]:
    """``NAME`` (key None: every environment) and ``ENV=NAME`` values of ``option``, ENV one
    of the fleet's environments (text before a ``=`` that names none is part of NAME); a
    second value for the same key is refused."""
    found: dict[str | None, str] = {}
    for value in options.get(option.flag, ()):
        env, sep, name = value.partition("=")
        key: str | None = env if sep and env in config.environments else None
        text = name if key is not None else value
        if not text.strip():
            raise DefinitionError(
                f"expected {option.metavar}, got an empty name", where=option.flag
            )
        if key in found and found[key] != text:
            which = f"environment {key}" if key is not None else "every environment"
            raise DefinitionError(
                f"given twice for {which} ({found[key]!r} and {text!r})", where=option.flag
            )
        found[key] = text
    return found


def for_environment(given: Mapping[str | None, str], environment: str) -> str | None:
    """The value of an option for ``environment`` (its own, else the one for all)."""
    return given.get(environment, given.get(None))
