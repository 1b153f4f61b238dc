"""One rendered Kubernetes object, with where it goes and where it came from."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_FILE_NAME = 200
"""The longest file name in ``dist/`` (bytes): under the 255 that Linux, macOS and Windows
file systems allow, with room for what editors and merge tools add (``.orig``, ``.swp``).
A ``metadata.name`` may be 253 characters long, so a file name can be longer than that."""

Identity = tuple[str, str, str, str]
"""(group, kind, namespace, name); namespace is "" for cluster-scoped objects."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """A Kubernetes object placed in one environment.

    ``folder`` is the object's folder inside ``dist/<environment>/`` (for example
    ``clusters/k8s-ais-batch-dev-multi-v25``); ``source`` names the definition that
    produced it (``clusters/jeedy_ais.py:12`` or a construct path) for error messages.
    The body is not changed once the manifest exists: its identity is read from it once.
    """

    environment: str
    body: dict[str, Any]
    folder: str
    source: str
    # Read from ``body`` once: the checks ask for them about 15 times per object.
    api_version: str = field(init=False, compare=False, repr=False)
    """The object's apiVersion."""
    group: str = field(init=False, compare=False, repr=False)
    """The API group; "core" for the core group (apiVersion without a slash)."""
    kind: str = field(init=False, compare=False, repr=False)
    """The object's kind."""
    name: str = field(init=False, compare=False, repr=False)
    """metadata.name."""
    namespace: str = field(init=False, compare=False, repr=False)
    """metadata.namespace, or "" for cluster-scoped objects."""
    relpath: str = field(init=False, compare=False, repr=False)
    """Path of the object's file inside ``dist/<environment>/``."""

    def __post_init__(self) -> None:
        body = self.body
        metadata = body.get("metadata", {})
        api_version = str(body.get("apiVersion", ""))
        put = object.__setattr__
        put(self, "api_version", api_version)
        put(self, "group", api_version.split("/", 1)[0] if "/" in api_version else "core")
        put(self, "kind", str(body.get("kind", "")))
        put(self, "name", str(metadata.get("name", "")))
        put(self, "namespace", str(metadata.get("namespace", "") or ""))
        put(self, "relpath", f"{self.folder}/{self.filename}" if self.folder else self.filename)

    @property
    def identity(self) -> Identity:
        """What the API server keys the object by."""
        return (self.group, self.kind, self.namespace, self.name)

    @property
    def filename(self) -> str:
        """``<kind>_<group>[_<namespace>]_<name>.yaml``.

        Kubernetes names, namespaces, groups and kinds never contain ``_``, so the
        name is injective: two objects share a file only if they share an identity.
        Longer than :data:`MAX_FILE_NAME`, it is cut there, ending in ``_`` and the first 12
        hex digits of the sha256 of the identity (``group``, ``kind``, ``namespace``,
        ``name`` joined by NUL): the same object, the same file name, on every machine.
        """
        parts = [self.kind.lower(), self.group]
        if self.namespace:
            parts.append(self.namespace)
        parts.append(self.name)
        name = "_".join(parts)
        if len(name.encode("utf-8")) + len(".yaml") <= MAX_FILE_NAME:
            return name + ".yaml"
        digest = hashlib.sha256("\0".join(self.identity).encode("utf-8")).hexdigest()[:12]
        keep = MAX_FILE_NAME - len(".yaml") - len(digest) - 1
        cut = name.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
        return f"{cut}_{digest}.yaml"

    def describe(self) -> str:
        """``<env>: <Kind> <namespace/>name`` for messages."""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.environment}: {self.kind} {ns}{self.name}"


def dig(body: Any, *path: str) -> Any:
    """The value at ``path`` in ``body``, None where a step is missing or not a mapping."""
    value = body
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def format_path(parts: Sequence[str | int]) -> str:
    """``["spec", "items", 0, "name"]`` -> ``spec.items[0].name``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
