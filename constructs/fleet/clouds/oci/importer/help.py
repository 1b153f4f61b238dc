"""What ``fleet import`` says about the OKE importer (read when the command line is built:
nothing heavy is imported here)."""

from __future__ import annotations

from fleet.clouds.base import ImportHelp

OKE_IMPORT_HELP = ImportHelp(
    tfstate="OKE clusters from Terraform state (oci_containerengine_cluster, _node_pool)",
    tfstate_description=(
        "Reads every OKE cluster and node pool of STATE and declares each as an "
        "OciManagedCluster that CAPOCI adopts by OCID, on its existing network "
        "(OkeExistingVcn). The report says what CAPOCI cannot hold and prints the OCI CLI "
        "commands that put CAPOCI's adoption tags on the cluster and its pools before the "
        "first sync; `fleet validate` warns until adoption_tags_applied=True."
    ),
)
"""The help of ``fleet import`` for OKE."""
