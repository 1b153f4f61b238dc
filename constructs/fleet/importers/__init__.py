"""Importers from Terraform: tfvars and state into Python declarations."""
