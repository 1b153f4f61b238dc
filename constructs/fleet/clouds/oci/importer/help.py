"""What ``fleet import`` says about the OKE importer (read when the command line is built:
nothing heavy is imported here)."""

from __future__ import annotations

from fleet.clouds.base import ImportHelp, ImportOption

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

OCI_IDENTITY = ImportOption(
    flag="--oci-identity",
    metavar="ID",
    help="the OciClusterIdentity every imported OKE cluster uses: the construct id of one the "
    "fleet declares, else one the import declares under that id (principal Secret "
    "ID-principal); by default the fleet's CapociCredentials, else its only "
    "OciClusterIdentity, else one per tenancy",
)
"""Which identity imported OKE clusters use, when the default rule is not the team's."""
