"""The tool as an installed distribution: its name on the package index and its version.

The command and the import name are ``fleet``; the distribution is ``fleet-as-code``
(``fleet`` on PyPI is another project). ``fleet --version`` and ``fleet init``'s pin read
the installed distribution's metadata, so they say what is really installed.
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any

DIST_NAME = "fleet-as-code"


def installed_version() -> str | None:
    """The installed version of :data:`DIST_NAME`, or None when it is not installed
    (the package imported from a source folder on ``sys.path``)."""
    try:
        return metadata.version(DIST_NAME)
    except metadata.PackageNotFoundError:
        return None


def direct_url() -> dict[str, Any] | None:
    """pip's record of where the distribution was installed from (PEP 610
    ``direct_url.json``), or None when it came from a package index (or is not installed)."""
    try:
        recorded = metadata.distribution(DIST_NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not recorded:
        return None
    data = json.loads(recorded)
    return data if isinstance(data, dict) else None


def declared_requirements(extra: str) -> list[str]:
    """The distribution's own requirements of ``extra`` (``dev``), as pinned in its metadata."""
    try:
        requires = metadata.requires(DIST_NAME) or []
    except metadata.PackageNotFoundError:
        return []
    out: list[str] = []
    for line in requires:
        spec, _, marker = line.partition(";")
        if marker.replace(" ", "").replace("'", '"') == f'extra=="{extra}"':
            out.append(spec.strip())
    return out


def version_line() -> str:
    """What ``fleet --version`` prints: ``fleet <version> (fleet-as-code)``."""
    return f"fleet {installed_version() or '(not installed)'} ({DIST_NAME})"
