"""One rendered Kubernetes object, with where it goes and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Identity = tuple[str, str, str, str]
"""(group, kind, namespace, name); namespace is "" for cluster-scoped objects."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """A Kubernetes object placed in one environment.

    ``folder`` is the object's folder inside ``dist/<environment>/`` (for example
    ``clusters/k8s-ais-batch-dev-multi-v25``); ``source`` names the definition that
    produced it (``clusters/jeedy_ais.py:12`` or a construct path) for error messages.
    """

    environment: str
    body: dict[str, Any]
    folder: str
    source: str

    @property
    def api_version(self) -> str:
        """The object's apiVersion."""
        return str(self.body.get("apiVersion", ""))

    @property
    def group(self) -> str:
        """The API group; "core" for the core group (apiVersion without a slash)."""
        api_version = self.api_version
        return api_version.split("/", 1)[0] if "/" in api_version else "core"

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        """metadata.name."""
        return str(self.body.get("metadata", {}).get("name", ""))

    @property
    def namespace(self) -> str:
        """metadata.namespace, or "" for cluster-scoped objects."""
        return str(self.body.get("metadata", {}).get("namespace", "") or "")

    @property
    def identity(self) -> Identity:
        """What the API server keys the object by."""
        return (self.group, self.kind, self.namespace, self.name)

    @property
    def filename(self) -> str:
        """``<kind>_<group>[_<namespace>]_<name>.yaml``.

        Kubernetes names, namespaces, groups and kinds never contain ``_``, so the
        name is injective: two objects share a file only if they share an identity.
        """
        parts = [self.kind.lower(), self.group]
        if self.namespace:
            parts.append(self.namespace)
        parts.append(self.name)
        return "_".join(parts) + ".yaml"

    @property
    def relpath(self) -> str:
        """Path of the object's file inside ``dist/<environment>/``."""
        return f"{self.folder}/{self.filename}" if self.folder else self.filename

    def describe(self) -> str:
        """``<env>: <Kind> <namespace/>name`` for messages."""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.environment}: {self.kind} {ns}{self.name}"
