"""Paths and helpers the tests share (importable as ``support``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The repository: its tool, docs and CI examples. Its ``clusters/`` and ``dist/`` are the
user's fleet: only the generic invariants (tests/test_fleet_invariants.py) look at them."""
FIXTURE_FLEETS = REPO / "tests" / "fixtures" / "fleets"
HYBRID = FIXTURE_FLEETS / "hybrid"
"""The tool's own fixture fleet (Magnum and OKE, retirements, ArgoCD), without a dist/."""


def tree_hash(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (hidden ones included), by relative path."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def site_packages(venv: Path) -> list[Path]:
    """The ``site-packages`` folders of the virtualenv ``venv``."""
    return sorted(venv.glob("lib/python*/site-packages"))


def installed_distributions(venv: Path) -> dict[str, str]:
    """Every distribution installed in the virtualenv ``venv``: normalised name -> version."""
    from importlib import metadata

    found = metadata.distributions(path=[str(p) for p in site_packages(venv)])
    return {normalise(d.metadata["Name"]): d.version for d in found}


def locked_versions(lock: Path) -> dict[str, str]:
    """What a ``uv.lock`` pins: normalised name -> version."""
    import tomllib

    packages = tomllib.loads(lock.read_text())["package"]
    return {normalise(p["name"]): p["version"] for p in packages}


def normalise(name: str) -> str:
    """A distribution name as package indexes compare them (PEP 503)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()
