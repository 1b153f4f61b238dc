"""ArgoCD: the bootstrap, cluster registrations and packages."""
