"""Checks of rendered objects: CRD schemas, references, secrets, the diff guards."""
