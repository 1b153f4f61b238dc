"""Platform components as values, and the plug-ins that list them (docs/construct-tree.md,
"Adding a cloud")."""
