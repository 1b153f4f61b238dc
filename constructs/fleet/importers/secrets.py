"""Credentials in what an import would write, found before anything is written.

The secret guard of ``fleet synth`` (the ``secret-guard`` check of the registry,
:mod:`fleet.checks.secret_guard`: PEM keys, kubeconfigs with credentials, passwords in URLs,
literal values in fields named like credentials), run on the values an import takes from
its input, including those that never render (a template's attributes). A finding names
the place, never the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fleet.checks.registry import BUILTIN_CHECKS, CheckContext, run_checks
from fleet.core.config import FleetConfig
from fleet.core.manifest import Manifest
from fleet.platform.plugins import PluginSet

_GUARD = next(c for c in BUILTIN_CHECKS if c.name == "secret-guard")


def credential_paths(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(path, what)`` for each value of ``values`` (nested maps and lists) that holds
    credential material: ``labels.password`` -> "literal value in credential field ..."."""
    probe = Manifest(
        environment="",
        body={"apiVersion": "fleet.import/v1", "kind": "Input", "metadata": {}, "values": values},
        folder="",
        source="",
    )
    found = []
    # The guard reads nothing of its context: no configuration, CRDs or plug-ins.
    context = CheckContext(FleetConfig(root=Path(".")), None, PluginSet())
    for problem in run_checks([_GUARD], [probe], context)[_GUARD.name]:
        path = problem.field_path.removeprefix("values").lstrip(".")
        found.append((path, problem.message.split(";")[0]))
    return found


HIDDEN = "a value that looks like a credential (not shown)"


def shown(value: Any, field: str = "value") -> str:
    """``repr(value)`` for a message, unless it holds credential material (by its content,
    or because ``field`` is named like a credential): then :data:`HIDDEN`."""
    if isinstance(value, str | Mapping | list) and credential_paths({field or "value": value}):
        return HIDDEN
    return repr(value)
