"""The base of every fleet declaration: placed in environments, rendered per environment."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import jsonpatch

from fleet.core import layout
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.values import JsonPatch, caller_location


class FleetConstruct:
    """A declaration in the fleet (a cluster, a project, a package).

    A construct in the cdk8s sense (``(scope, id, *, props)``, checked at construction,
    one id per fleet) that lives on the Python side only: it is registered in its
    :class:`Fleet` rather than created as a jsii object in Node.js, which cost about
    1 ms per declaration, a second at 1,000 clusters (docs/performance.md). Subclasses
    render plain dicts in :meth:`render`; ``add_json_patch`` is the escape hatch for what
    a construct does not model. cdk8s constructs of your own go into
    ``fleet.environment(name)``.
    """

    def __init__(self, scope: Fleet, construct_id: str, *, environments: Sequence[str]) -> None:
        where = caller_location()
        if not isinstance(scope, Fleet):
            raise DefinitionError(
                f"the scope of a fleet declaration is the Fleet, got {type(scope).__name__}",
                where=where,
                field="scope",
            )
        scope.register(self, construct_id, where)
        self.fleet = scope
        self.construct_id = construct_id
        self.where = where
        self._patches: list[tuple[str | None, str | None, tuple[JsonPatch, ...]]] = []
        if isinstance(environments, str):
            environments = [environments]
        envs = tuple(environments)
        for env in envs:
            scope.config.check_environment(env, where=self.context, field="environments")
        if len(set(envs)) != len(envs):
            raise DefinitionError(
                "an environment is listed twice", where=self.context, field="environments"
            )
        self.environments: tuple[str, ...] = envs

    @property
    def context(self) -> str:
        """``file:line (id)``: where the declaration is, for messages."""
        return f"{self.where} ({self.construct_id})"

    def add_json_patch(
        self, *ops: JsonPatch, kind: str | None = None, environment: str | None = None
    ) -> None:
        """Patch the rendered objects (all, or those of ``kind`` in ``environment``).

        Example: ``cluster.add_json_patch(JsonPatch.add("/spec/forProvider/region",
        "cern"), kind="ClusterV1")``.
        """
        self._patches.append((kind, environment, ops))

    def manifests(self, environment: str) -> list[Manifest]:
        """The rendered objects of this declaration in ``environment``, patches applied."""
        if environment not in self.environments:
            return []
        out = self.render(environment)
        if not self._patches:
            return out
        return [self._patched(m) for m in out]

    def _patched(self, manifest: Manifest) -> Manifest:
        body: dict[str, Any] = manifest.body
        for kind, env, ops in self._patches:
            if (kind is None or kind == manifest.kind) and (
                env is None or env == manifest.environment
            ):
                try:
                    body = jsonpatch.apply_patch(body, [op.to_dict() for op in ops])
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                    raise DefinitionError(
                        f"json patch does not apply to {manifest.kind} {manifest.name}: {e}",
                        where=self.context,
                        field="add_json_patch",
                    ) from None
        return Manifest(manifest.environment, body, manifest.folder, manifest.source)

    def render(self, environment: str) -> list[Manifest]:
        """The objects of this declaration in ``environment`` (no patches)."""
        raise NotImplementedError

    def _manifest(self, environment: str, folder: str, body: dict[str, Any]) -> Manifest:
        return Manifest(environment, body, folder, self.context)


def sync_options(options: Iterable[str]) -> dict[str, str]:
    """The ArgoCD sync-options annotation for ``options`` (empty dict when none)."""
    return layout.sync_options(options)
