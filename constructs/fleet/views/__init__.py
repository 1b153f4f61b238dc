"""Read-only views of a fleet: inventory, graph, diff report."""
