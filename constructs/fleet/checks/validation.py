"""Every check on rendered objects, in one place: schemas, references, secret material."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fleet.checks.crds import ENV_VAR, PACKAGED_CRDS, resolve_crds_dir
from fleet.checks.references import check_references
from fleet.checks.schema import Problem, validate_manifests
from fleet.checks.secret_guard import find_secret_material
from fleet.core.errors import FleetError
from fleet.core.manifest import Manifest


class InvalidObjects(FleetError):
    """Rendered objects that the API server would refuse, or that must not be written."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(p.line() for p in self.problems))


def available_crds_dir() -> Path | None:
    """The CRD folder synth validates against: ``$FLEET_CRDS_DIR``, else the packaged CRDs.

    None when neither exists (a package stripped of its data: synth then runs the other
    checks and says it skipped the schemas); an explicitly set ``$FLEET_CRDS_DIR`` that
    does not exist is an error.
    """
    if os.environ.get(ENV_VAR) or PACKAGED_CRDS.is_dir():
        return resolve_crds_dir()
    return None


def check_all(manifests: Sequence[Manifest], *, crds_dir: Path | None) -> list[Problem]:
    """Schema (when ``crds_dir`` is given), reference and secret checks, in that order."""
    schema_problems = validate_manifests(manifests, crds_dir=crds_dir) if crds_dir else []
    return [
        *schema_problems,
        *check_references(manifests),
        *find_secret_material(manifests),
    ]
