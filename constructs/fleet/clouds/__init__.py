"""Cluster declarations, one subpackage per cloud, on a shared FleetCluster base."""
