"""The fleet's configuration: ``[tool.fleet]`` in the project's ``pyproject.toml``."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fleet.core.errors import DefinitionError
from fleet.core.secrets import credential_in
from fleet.core.validators import check_dns_label

DEFAULT_ENVIRONMENTS = ("dev", "test", "prod")


@dataclass(frozen=True, kw_only=True)
class FleetConfig:
    """Where the fleet lives and which environments it has.

    ``repo_url`` and ``revision`` are what ArgoCD Applications point at; ``dist`` is the
    output folder relative to ``root``; ``clusters`` the folder of declarations.
    """

    root: Path
    environments: tuple[str, ...] = DEFAULT_ENVIRONMENTS
    repo_url: str = "https://gitlab.example.org/platform/fleet.git"
    revision: str = "main"
    dist: str = "dist"
    clusters: str = "clusters"
    contexts: tuple[tuple[str, str], ...] = ()
    """(environment, kubeconfig context of its management cluster) from
    ``[tool.fleet.contexts]``: what ``fleet status`` reads each environment through."""

    @property
    def dist_dir(self) -> Path:
        """Absolute path of the output folder."""
        return self.root / self.dist

    @property
    def clusters_dir(self) -> Path:
        """Absolute path of the declarations folder."""
        return self.root / self.clusters

    def context_for(self, environment: str) -> str | None:
        """The kubeconfig context of ``environment``'s management cluster, None when
        ``[tool.fleet.contexts]`` names none (the kubeconfig's current context is used)."""
        return dict(self.contexts).get(environment)

    def check_environment(self, name: str, *, where: str = "", field: str = "environment") -> None:
        """Raise the "unknown environment" DefinitionError unless ``name`` is configured."""
        if name not in self.environments:
            raise DefinitionError(
                f"unknown environment {name!r} (configured: {', '.join(self.environments)})",
                where=where,
                field=field,
            )

    @classmethod
    def load(cls, root: Path) -> FleetConfig:
        """Read ``[tool.fleet]`` from ``root/pyproject.toml``; defaults where it is silent."""
        root = root.resolve()
        pyproject = root / "pyproject.toml"
        table: dict[str, object] = {}
        if pyproject.exists():
            with pyproject.open("rb") as f:
                try:
                    document = tomllib.load(f)
                except tomllib.TOMLDecodeError as e:
                    raise _toml_error(_shown(pyproject), e) from None
            table = document.get("tool", {}).get("fleet", {})
        where = f"{_shown(pyproject)}: [tool.fleet]"
        if not isinstance(table, dict):
            raise DefinitionError("must be a table", where=_shown(pyproject), field="tool.fleet")
        known = {"environments", "repo_url", "revision", "dist", "clusters", "contexts"}
        for key in table:
            if key not in known:
                raise DefinitionError(
                    f"unknown setting (known: {', '.join(sorted(known))})", where=where, field=key
                )
        envs = table.get("environments", list(DEFAULT_ENVIRONMENTS))
        if not isinstance(envs, list) or not envs or not all(isinstance(e, str) for e in envs):
            raise DefinitionError(
                "must be a non-empty list of names", where=where, field="environments"
            )
        if len(set(envs)) != len(envs):
            raise DefinitionError("names must be unique", where=where, field="environments")
        for env in envs:
            # an environment names a folder of dist/, ArgoCD's fleet-<env> Applications and
            # AppProjects, and a cdk8s Chart: a DNS label (with "fleet-" in front, 63 at most)
            check_dns_label(env, where=where, field="environments", max_length=57)
        for key in ("repo_url", "revision", "dist", "clusters"):
            value = table.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                raise DefinitionError(
                    f"must be a non-empty string, got {value!r}", where=where, field=key
                )
        _check_dist(
            str(table.get("dist", cls.dist)), str(table.get("clusters", cls.clusters)), where
        )
        for key in ("repo_url", "revision"):
            problem = credential_in(str(table.get(key, "")))
            if problem:  # every Application would quote it: once here, and not shown
                raise DefinitionError(problem, where=where, field=key)
        contexts = _contexts(table.get("contexts", {}), envs, where)
        if "repo_url" in table:
            check_repo_url(str(table["repo_url"]), where=where, field="repo_url")
        return cls(
            root=root,
            contexts=contexts,
            environments=tuple(envs),
            repo_url=str(table.get("repo_url", cls.repo_url)),
            revision=str(table.get("revision", cls.revision)),
            dist=str(table.get("dist", cls.dist)),
            clusters=str(table.get("clusters", cls.clusters)),
        )


def _contexts(value: object, environments: list[str], where: str) -> tuple[tuple[str, str], ...]:
    """``[tool.fleet.contexts]``: a table from configured environments to kubeconfig
    context names (non-empty strings), in the environments' order."""
    field = "contexts"
    if not isinstance(value, dict):
        raise DefinitionError(
            'must be a table of environment = "kubeconfig context" '
            "([tool.fleet.contexts], one line per environment)",
            where=where,
            field=field,
        )
    for env, context in value.items():
        if env not in environments:
            raise DefinitionError(
                f"unknown environment {env!r} (configured: {', '.join(environments)})",
                where=where,
                field=f"{field}.{env}",
            )
        if not isinstance(context, str) or not context.strip():
            raise DefinitionError(
                f"must be the name of a kubeconfig context, got {context!r}",
                where=where,
                field=f"{field}.{env}",
            )
    return tuple((env, str(value[env])) for env in environments if env in value)


_SCP_LIKE = re.compile(r"[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:[^\s]+")
REPO_SCHEMES = ("https", "http", "ssh", "git")


def check_repo_url(url: str, *, where: str, field: str) -> str:
    """``url`` if ArgoCD reads it as a remote Git repository, else the error.

    ArgoCD hands the URL to git and picks credentials by its form (argo-cd v3.5.1
    ``util/git/git.go``: ``IsHTTPSURL`` ``^https://``, ``IsHTTPURL``, ``IsSSHURL``
    ``^(ssh://)?([^/:]*?)@[^@]+$``). Accepted: ``https://``, ``http://``, ``ssh://`` and
    ``git://`` URLs with a host, and git's scp-like ``user@host:path``. Without a scheme
    (``gitlab.example.org/platform/fleet``), git reads a local path (git-clone, "GIT URLS":
    the scp-like form needs a ``:`` before the first ``/``), so every Application would
    point at a folder of ArgoCD's repo server; ``file://`` is such a path too.
    """
    scheme, sep, rest = url.partition("://")
    if sep:
        host = rest.split("/", 1)[0].rpartition("@")[2]
        if scheme in REPO_SCHEMES and host and "/" in rest and not any(c.isspace() for c in url):
            return url
        problem = (
            f"scheme {scheme!r} is not one ArgoCD clones over ({', '.join(REPO_SCHEMES)})"
            if scheme not in REPO_SCHEMES
            else "needs a host and a repository path, without spaces"
        )
    elif _SCP_LIKE.fullmatch(url):
        return url
    else:
        problem = (
            "has no scheme: git, and so ArgoCD, would read it as a folder on ArgoCD's repo server"
        )
    shown = "the URL (it holds a credential: not shown)" if credential_in(url) else repr(url)
    raise DefinitionError(
        f"{shown} {problem}; write https://HOST/PATH, ssh://git@HOST/PATH or git@HOST:PATH",
        where=where,
        field=field,
    )


def _check_dist(dist: str, clusters: str, where: str) -> None:
    """``dist`` names a folder inside the project, and not one holding the declarations.

    A synth deletes every folder of ``dist/`` that is not a configured environment, and
    ArgoCD Applications name ``<dist>/<env>/...`` as their path in the repository: ``"."``,
    ``".."`` or an absolute path would make a synth delete folders of the project or
    beyond it (``clusters/`` among them).
    """
    parts = dist.split("/")
    if dist.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise DefinitionError(
            "must be a folder inside the project as a plain relative path (such as 'dist' or "
            f"'deploy/dist': no '/' at either end, no '.' or '..'), got {dist!r}",
            where=where,
            field="dist",
        )
    declarations = os.path.normpath(clusters).split("/")
    if declarations[: len(parts)] == parts:
        raise DefinitionError(
            f"{dist!r} holds the declarations ({clusters!r}): a synth deletes every folder "
            "in it that is not an environment",
            where=where,
            field="dist",
        )


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when inside it (as messages show files)."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def _toml_error(path: str, error: tomllib.TOMLDecodeError) -> DefinitionError:
    """``pyproject.toml:LINE: TOML syntax error: ...`` from tomllib's message."""
    message = str(error)
    line = getattr(error, "lineno", None)  # Python 3.14+
    match = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if match:
        line = line or int(match.group(1))
        message = f"{message[: match.start()]} (column {match.group(2)})"
    elif message.endswith(" (at end of document)"):
        message = message.removesuffix(" (at end of document)") + " (at the end of the file)"
        line = line or len(Path(path).read_text().splitlines()) or None
    where = f"{path}:{line}" if line else str(path)
    return DefinitionError(f"TOML syntax error: {message}", where=where)
