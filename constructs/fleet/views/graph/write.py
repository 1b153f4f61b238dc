"""Writing a :class:`~fleet.views.graph.model.Graph` as Mermaid or Graphviz DOT text."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.views.graph.model import SHAPES, Graph, Group, Node

FORMATS = ("mermaid", "dot")


def _mermaid_text(lines: Sequence[str]) -> str:
    def one(line: str) -> str:
        return (
            line.replace("&", "#amp;")
            .replace('"', "#quot;")
            .replace("<", "#lt;")
            .replace(">", "#gt;")
        )

    return "<br/>".join(one(line) for line in lines)


def to_mermaid(graph: Graph) -> str:
    """A Mermaid flowchart (GitHub and GitLab render it in a ```mermaid block)."""
    out = ["flowchart LR", *(f"%% {note}" for note in graph.notes)]
    dashed: list[str] = []

    def node(n: Node, indent: str) -> None:
        opening, closing, _ = SHAPES[n.shape]
        out.append(f'{indent}{n.id}{opening}"{_mermaid_text(n.lines)}"{closing}')
        if n.dashed:
            dashed.append(n.id)

    def group(g: Group, indent: str) -> None:
        if g.is_empty():
            return
        out.append(f'{indent}subgraph {g.id}["{_mermaid_text([g.label])}"]')
        out.append(f"{indent}  direction TB")
        for n in g.nodes:
            node(n, indent + "  ")
        for inner in g.groups:
            group(inner, indent + "  ")
        out.append(f"{indent}end")

    for g in graph.groups:
        group(g, "  ")
    for n in graph.nodes:
        node(n, "  ")
    for e in graph.edges:
        arrow = "-.->" if e.dashed else "-->"
        label = f'|"{_mermaid_text([e.label])}"|' if e.label else ""
        out.append(f"  {e.source} {arrow}{label} {e.target}")
    if dashed:
        out.append("  classDef retired stroke-dasharray: 5 5")
        out.append(f"  class {','.join(dashed)} retired")
    return "\n".join(out) + "\n"


def _dot_text(lines: Sequence[str]) -> str:
    return "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)


def to_dot(graph: Graph) -> str:
    """A Graphviz digraph (``dot -Tsvg``); groups become clusters."""
    out = [
        "digraph fleet {",
        *(f"  // {note}" for note in graph.notes),
        "  rankdir=LR;",
        '  node [shape=box, fontname="Helvetica"];',
        '  edge [fontname="Helvetica"];',
    ]

    def node(n: Node, indent: str) -> None:
        style = ', style="dashed"' if n.dashed else ""
        rounded = ', style="rounded"' if n.shape in ("round", "app") and not n.dashed else ""
        out.append(
            f'{indent}{n.id} [label="{_dot_text(n.lines)}", shape={SHAPES[n.shape][2]}'
            f"{style}{rounded}];"
        )

    def group(g: Group, indent: str) -> None:
        if g.is_empty():
            return
        out.append(f"{indent}subgraph cluster_{g.id} {{")
        out.append(f'{indent}  label="{_dot_text([g.label])}";')
        for n in g.nodes:
            node(n, indent + "  ")
        for inner in g.groups:
            group(inner, indent + "  ")
        out.append(f"{indent}}}")

    for g in graph.groups:
        group(g, "  ")
    for n in graph.nodes:
        node(n, "  ")
    for e in graph.edges:
        attrs = []
        if e.label:
            attrs.append(f'label="{_dot_text([e.label])}"')
        if e.dashed:
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"  {e.source} -> {e.target}{suffix};")
    out.append("}")
    return "\n".join(out) + "\n"


def render(graph: Graph, fmt: str) -> str:
    """``graph`` as ``mermaid`` or ``dot`` text."""
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "mermaid":
        return to_mermaid(graph)
    raise ValueError(f"unknown graph format {fmt!r} (known: {', '.join(FORMATS)})")
