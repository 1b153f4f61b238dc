"""The fleet as a diagram: bootstrap order and structure, in Mermaid or Graphviz DOT.

Pure: a :class:`Graph` is built from the rendered manifests (and, when given, the loaded
:class:`~fleet.Fleet` for cluster details), then written as text. The bootstrap order comes
from the ArgoCD ``Application`` objects in the manifests, their sync-wave annotations and the
folders their sources point at, so it is true to ``dist/`` whatever the bootstrap constructs
choose to render.

One module per concern: :mod:`.model` (boxes, arrows, groups), :mod:`.argo` (reading the
rendered ArgoCD objects), :mod:`.bootstrap` (root -> waves -> Applications),
:mod:`.structure` (the whole fleet), :mod:`.summary` (a large fleet within Mermaid's
limits: :func:`fitted_mermaid` draws :func:`summary_graph` past :data:`MERMAID_MAX_EDGES`
arrows or :data:`MERMAID_MAX_TEXT` characters), :mod:`.touched` (what a change touches),
:mod:`.write` (Mermaid, DOT). This module only re-exports them.
"""

from fleet.views.graph.argo import (
    Appliers,
    package_targets,
    registered_cluster,
    source_paths,
    sync_wave,
    syncs,
)
from fleet.views.graph.model import Edge, Graph, Group, Node
from fleet.views.graph.structure import fleet_graph
from fleet.views.graph.summary import (
    GROUPINGS,
    MERMAID_MAX_EDGES,
    MERMAID_MAX_TEXT,
    FittedMermaid,
    fitted_mermaid,
    summary_graph,
)
from fleet.views.graph.touched import touched_graph, touched_subgraph
from fleet.views.graph.write import FORMATS, render, to_dot, to_mermaid

__all__ = [
    "FORMATS",
    "GROUPINGS",
    "MERMAID_MAX_EDGES",
    "MERMAID_MAX_TEXT",
    "Appliers",
    "Edge",
    "FittedMermaid",
    "Graph",
    "Group",
    "Node",
    "fitted_mermaid",
    "fleet_graph",
    "package_targets",
    "registered_cluster",
    "render",
    "source_paths",
    "summary_graph",
    "sync_wave",
    "syncs",
    "to_dot",
    "to_mermaid",
    "touched_graph",
    "touched_subgraph",
]
