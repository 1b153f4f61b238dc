"""Checks of rendered objects: CRD schemas and CEL rules, references, waves, secrets, and
the registry that runs them (the diff guards are in :mod:`fleet.guards`)."""
