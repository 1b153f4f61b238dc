"""The diagram's data model: boxes, arrows and groups, with readable unique ids."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# shape name -> (Mermaid opening, closing), Graphviz shape
SHAPES: dict[str, tuple[str, str, str]] = {
    "box": ("[", "]", "box"),
    "round": ("(", ")", "box"),
    "app": ("([", "])", "box"),
    "wave": ("((", "))", "circle"),
    "registration": ("{{", "}}", "hexagon"),
    "package": ("[[", "]]", "component"),
    "object": ("[", "]", "note"),
}


@dataclass(frozen=True)
class Node:
    """A box in the diagram; ``lines`` are shown one under the other."""

    id: str
    lines: tuple[str, ...]
    shape: str = "box"
    dashed: bool = False


@dataclass(frozen=True)
class Edge:
    """An arrow; dashed arrows are relations rather than steps."""

    source: str
    target: str
    label: str = ""
    dashed: bool = False


@dataclass
class Group:
    """A labelled box around nodes and nested groups (a Mermaid subgraph, a DOT cluster)."""

    id: str
    label: str
    nodes: list[Node] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    def is_empty(self) -> bool:
        """No node here or below."""
        return not self.nodes and all(g.is_empty() for g in self.groups)


@dataclass
class Graph:
    """Groups, loose nodes and edges, in the order they are written; ``notes`` become
    comments at the top (one line each)."""

    groups: list[Group] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Ids:
    """Readable, unique, deterministic ids (``[A-Za-z0-9_]``) for arbitrary keys."""

    def __init__(self) -> None:
        self._by_key: dict[str, str] = {}
        self._used: set[str] = set()

    def __call__(self, *parts: str) -> str:
        key = "\0".join(parts)
        found = self._by_key.get(key)
        if found is not None:
            return found
        base = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_") or "n"
        if base[0].isdigit():
            base = "n" + base
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}_{n}", n + 1
        self._used.add(candidate)
        self._by_key[key] = candidate
        return candidate
