"""The guards of ``fleet diff``: the model of a change between two renders, and what a
pull request may not do to it (delete what bears a cluster, change a ForceNew or immutable
field or an external name, break a plug-in's change rule)."""
