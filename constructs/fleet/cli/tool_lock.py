"""The lock of a repository ``fleet init`` starts: ``uv lock`` writes ``uv.lock``, which pins
the fleet tool and everything under it, each distribution with its sha256.

The tool (``fleet-as-code``) comes from one of three places, each written into the new
``pyproject.toml`` so that every later ``make lock`` and CI run reads it from there too:

* the public package index (a version pin, the default);
* a team's own package index (``--index-url``): an *explicit* uv index, which uv asks for
  ``fleet-as-code`` only and is the only place it asks for that name (dependency confusion:
  whoever uploads ``fleet-as-code`` to the public index first owns that name there);
* a wheel on a web server (``--tool-source https://.../fleet_as_code-X.Y.Z-py3-none-any.whl``),
  whose sha256 uv computes while locking.

uv is a dependency of ``fleet-as-code`` (pinned), so the uv that locks is the one the tool
was installed with. It reads the environment as the repository's Makefile does:
``UV_DEFAULT_INDEX``/``UV_INDEX`` (or ``PIP_INDEX_URL``/``PIP_EXTRA_INDEX_URL``, passed on to
uv unless those are set) for a team that reaches packages through a mirror, and
``UV_INDEX_FLEET_USERNAME``/``UV_INDEX_FLEET_PASSWORD`` for a private index.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from fleet.cli.distribution import DIST_NAME
from fleet.core.errors import FleetError
from fleet.core.secrets import credential_in, redact

LOCK_FILE = "uv.lock"
INDEX_NAME = "fleet"
"""The name of the team index in ``pyproject.toml`` (``[[tool.uv.index]]``); uv reads its
credentials from ``UV_INDEX_FLEET_USERNAME`` and ``UV_INDEX_FLEET_PASSWORD``."""
PUBLIC_INDEX = "https://pypi.org/simple"
TIMEOUT_SECONDS = 900

TWO_WAYS = (
    "publish the wheel (`make wheel` in the fleet tool repository builds it) to a package "
    "index of your team and name that index (`fleet init --index-url URL` writes it into "
    "pyproject.toml as [[tool.uv.index]] `fleet`; a private one reads "
    "UV_INDEX_FLEET_USERNAME and UV_INDEX_FLEET_PASSWORD), or put the wheel on a web server "
    "and pin its URL (`fleet init --tool-source "
    "https://.../fleet_as_code-X.Y.Z-py3-none-any.whl`)"
)
"""The two ways to give a repository a tool release its CI can download. The scaffold's
Makefile prints it too: no quote, dollar or hash sign (it sits in a Make variable, echoed in
single quotes)."""

MAKE_HELP = (
    f"{DIST_NAME}, the fleet tool pinned in pyproject.toml, cannot be downloaded from where it "
    f"is pinned (uv says why below). This repository needs that release where its CI can "
    f"download it, one of two ways: {TWO_WAYS}; then `make lock`"
)
"""What the scaffold's ``make setup`` and ``make lock`` say first when the pin cannot be
installed (``fleet init`` writes it into the Makefile)."""

TOOL_FAILURE = (
    f"{DIST_NAME} was not found|no version of {DIST_NAME}|"
    f"Failed to (download|fetch|build|read).*({DIST_NAME}|fleet_as_code)"
)
"""uv's words, on one line, for "the tool itself cannot be had" (not one of its
dependencies): a POSIX extended regular expression, which the scaffold's Makefile greps for
too (``fleet init`` writes it there)."""

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


def check_url(option: str, url: str) -> str:
    """``url`` if a CI runner can fetch the tool from it safely: ``https://``, or plain
    ``http://`` on a loopback host only (a mirror or index service that the CI job itself
    starts); never with credentials in it. Raises FleetError otherwise."""
    if credential_in(url) or "@" in urlsplit(url).netloc:
        raise FleetError(
            f"{option} {redact(url)}: credentials in the URL would be written into "
            "pyproject.toml and uv.lock; give them to uv instead: UV_INDEX_FLEET_USERNAME and "
            "UV_INDEX_FLEET_PASSWORD for --index-url, a ~/.netrc entry for a wheel URL"
        )
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and _is_loopback(parts.hostname):
        return url
    raise FleetError(
        f"{option} {url}: give an https:// URL (plain http:// only on this machine's loopback, "
        "for an index the CI job starts itself); a path or a file:// URL only this machine "
        "could read, and plain http elsewhere lets anyone on the way swap the tool"
    )


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's for what a URL holds)."""
    return json.dumps(value, ensure_ascii=True)


def index_table(index_url: str | None) -> str:
    """The ``pyproject.toml`` lines that take ``fleet-as-code`` from ``index_url`` only
    (nothing without one: the default index)."""
    if index_url is None:
        return ""
    return (
        "\n# Where the fleet tool comes from (`fleet init --index-url`): from this index only\n"
        "# (explicit: uv asks it for nothing else), so no upload of that name to another\n"
        "# index is ever taken (dependency confusion); uv.lock holds the sha256 of the wheel it\n"
        "# served. A private index reads UV_INDEX_FLEET_USERNAME and UV_INDEX_FLEET_PASSWORD.\n"
        "[[tool.uv.index]]\n"
        f"name = {toml_string(INDEX_NAME)}\n"
        f"url = {toml_string(index_url)}\n"
        "explicit = true\n"
        "\n"
        "[tool.uv.sources]\n"
        f'{DIST_NAME} = {{ index = "{INDEX_NAME}" }}\n'
    )


def uv_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment uv runs in, as the scaffold's Makefile sets it: a team's
    ``PIP_INDEX_URL``/``PIP_EXTRA_INDEX_URL`` passed on as ``UV_DEFAULT_INDEX``/``UV_INDEX``
    unless those are set; no ``VIRTUAL_ENV`` of the shell that runs ``fleet init``."""
    env = {k: v for k, v in environ.items() if k != "VIRTUAL_ENV"}
    for pip_name, uv_name in (
        ("PIP_INDEX_URL", "UV_DEFAULT_INDEX"),
        ("PIP_EXTRA_INDEX_URL", "UV_INDEX"),
    ):
        if env.get(pip_name) and uv_name not in env:
            env[uv_name] = env[pip_name]
    return env


@dataclass(frozen=True)
class LockedTool:
    """What ``uv.lock`` says of the fleet tool."""

    version: str
    source: str
    """Where it is downloaded from: an index URL, a wheel URL or a git URL."""
    sha256: str | None
    """The hash of its wheel (or sdist); None where uv can know none (a git source, an index
    that serves no hashes)."""
    packages: int
    """How many distributions the lock holds in all (the repository itself not counted)."""


def locked_tool(lock: Path) -> LockedTool:
    """The fleet tool's entry in ``lock``. Raises FleetError when it has none."""
    data = tomllib.loads(lock.read_text())
    packages = [
        p
        for p in data.get("package", [])
        if isinstance(p, dict) and not {"virtual", "editable"} & set(p.get("source", {}))
    ]
    for package in packages:
        if package.get("name") == DIST_NAME:
            source = package.get("source", {})
            where = next((str(v) for v in source.values()), "") if isinstance(source, dict) else ""
            files = [*package.get("wheels", []), package.get("sdist") or {}]
            hashes = [str(f["hash"]) for f in files if isinstance(f, dict) and "hash" in f]
            sha = hashes[0].removeprefix("sha256:") if hashes else None
            return LockedTool(str(package.get("version", "")), where, sha, len(packages))
    raise FleetError(f"{lock}: no {DIST_NAME} in the lock")


def _what(requirement: str, index_url: str | None) -> str:
    """The tool pin and where uv looked for it."""
    if " @ " in requirement:
        return requirement.split(" @ ", 1)[1]
    env = uv_environment(os.environ)
    return f"{requirement} from {index_url or env.get('UV_DEFAULT_INDEX') or PUBLIC_INDEX}"


_SHORT = (
    (re.compile(r"\b(\S+) was not found in the package registry"), "no {0} there"),
    (re.compile(r"there is no version of (\S+?),? and"), "no {0} there"),
)
"""uv's resolver sentences (``Because X was not found ... we can conclude ...``), said short."""


def _cause(stderr: str) -> str:
    """uv's own reason, in a few words: its last ``cause:`` line, else its ``error:`` line."""
    for pattern, short in _SHORT:
        said = pattern.search(stderr)
        if said:
            return short.format(said.group(1))
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    causes = [line.removeprefix("cause:").strip() for line in lines if line.startswith("cause:")]
    errors = [line.removeprefix("error:").strip() for line in lines if line.startswith("error:")]
    found = causes[-1] if causes else errors[0] if errors else "uv lock failed"
    return redact(found.rstrip("."))


def failure(stderr: str, requirement: str, index_url: str | None) -> FleetError:
    """The one line ``fleet init`` says when ``uv lock`` fails: for the tool itself, what
    the repository needs and the two ways to give it; else uv's reason."""
    cause = _cause(stderr)
    if re.search(TOOL_FAILURE, stderr):
        return FleetError(
            f"cannot lock {_what(requirement, index_url)} ({cause}): the new repository "
            f"needs that release where its CI can download it; {TWO_WAYS}"
        )
    return FleetError(f"uv lock failed in the new repository: {cause}")


def lock_project(target: Path, requirement: str, index_url: str | None) -> LockedTool:
    """``uv lock`` in ``target`` (network: the index and the tool's source); what it locked.

    Raises FleetError, with one line saying what to do, when it fails.
    """
    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError):
        raise FleetError(
            f"uv, which {DIST_NAME} depends on, is not installed beside it: reinstall the tool "
            f"({DIST_NAME} and its dependencies)"
        ) from None
    argv = [uv, "lock", "--no-progress", "--python", sys.executable, "--no-python-downloads"]
    try:
        result = subprocess.run(
            argv,
            cwd=target,
            env=uv_environment(os.environ),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FleetError(
            f"uv lock found no answer in {int(TIMEOUT_SECONDS // 60)} minutes: is the package "
            f"index ({_what(requirement, index_url)}) reachable from here?"
        ) from None
    if result.returncode != 0:
        raise failure(result.stderr, requirement, index_url)
    return locked_tool(target / LOCK_FILE)
