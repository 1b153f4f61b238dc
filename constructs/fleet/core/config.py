"""The fleet's configuration: ``[tool.fleet]`` in the project's ``pyproject.toml``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from fleet.core.errors import DefinitionError

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

    @property
    def dist_dir(self) -> Path:
        """Absolute path of the output folder."""
        return self.root / self.dist

    @property
    def clusters_dir(self) -> Path:
        """Absolute path of the declarations folder."""
        return self.root / self.clusters

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
                table = tomllib.load(f).get("tool", {}).get("fleet", {})
        where = f"{pyproject}: [tool.fleet]"
        known = {"environments", "repo_url", "revision", "dist", "clusters"}
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
        return cls(
            root=root,
            environments=tuple(envs),
            repo_url=str(table.get("repo_url", cls.repo_url)),
            revision=str(table.get("revision", cls.revision)),
            dist=str(table.get("dist", cls.dist)),
            clusters=str(table.get("clusters", cls.clusters)),
        )
