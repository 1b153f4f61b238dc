"""The SSO service: a hybrid fleet in one file (Magnum on-premise, OKE in Oracle Cloud).

On-premise clusters run the service; the OKE clusters in eu-frankfurt-1 are its
disaster-recovery site, with nodes spread across the three availability domains and
their fault domains (seed Figure 16).
"""

from clusters._templates import SINGLE_1_25_3
from fleet import (
    Fleet,
    MagnumCluster,
    OciClusterIdentity,
    OciManagedCluster,
    OkeNodePool,
    OkeVcn,
    OpenStackProject,
    per_env,
)

FRANKFURT_ADS = [f"BKrI:EU-FRANKFURT-1-AD-{n}" for n in (1, 2, 3)]
# Oracle Linux 8 OKE worker image for Kubernetes 1.30 in eu-frankfurt-1 (placeholder OCID).
OKE_IMAGE = "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaokenode130ol8example"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFleetSsoOpsExampleKey0000000000000000 sso-ops"
# Who may reach the OKE API endpoints: the management cluster's egress (NAT) address, which
# Cluster API and ArgoCD come from, and the operators' VPN range (documentation ranges).
MANAGEMENT_EGRESS = "198.51.100.17/32"
OPERATORS_VPN = "192.0.2.0/24"
COMPARTMENTS = per_env(
    test="ocid1.compartment.oc1..aaaaaaaassotestexample",
    prod="ocid1.compartment.oc1..aaaaaaaassoprodexample",
)


def define(fleet: Fleet) -> None:
    """Declare the SSO clusters on both clouds."""
    jeedy_sso = OpenStackProject(fleet, "jeedy-sso", project_name="JEEDY SSO", region="cern")
    tenancy = OciClusterIdentity(fleet, "oci-tenancy", principal_secret="oci-user-principal")

    MagnumCluster(
        fleet,
        "sso-onprem",
        name="k8s-sso-{env}-v25",
        environments=["dev", "test", "prod"],
        project=jeedy_sso,
        template=SINGLE_1_25_3,
        flavor="m2.large",
        keypair="shared-sso-key",
        node_count=per_env(dev=1, test=2, prod=3),
        labels={"availability_zone": "cern-geneva-a"},
        fleet_labels={"team": "sso", "workload": "web"},
    )

    # The disaster-recovery copy of the SSO service: one general-purpose pool.
    OciManagedCluster(
        fleet,
        "sso-oke",
        name="oke-sso-{env}",
        environments=["test", "prod"],
        identity=tenancy,
        compartment_id=COMPARTMENTS,
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        availability_domains=FRANKFURT_ADS,
        node_image_id=OKE_IMAGE,
        ssh_public_key=SSH_KEY,
        network=OkeVcn(api_allowed_cidrs=[MANAGEMENT_EGRESS, OPERATORS_VPN]),
        node_pools=[
            OkeNodePool(
                name="general",
                node_shape="VM.Standard.E4.Flex",
                ocpus=1,
                memory_gb=16,
                node_count=per_env(test=1, prod=3),
            ),
        ],
        fleet_labels={"team": "sso", "workload": "web"},
    )

    # Batch jobs of the SSO audit pipeline: an enhanced cluster (virtual-node ready)
    # with two pools of different shapes, and a private API endpoint that the management
    # cluster reaches through the campus DRG.
    OciManagedCluster(
        fleet,
        "sso-audit-oke",
        name="oke-sso-audit-{env}",
        environments=["test", "prod"],
        identity=tenancy,
        compartment_id=COMPARTMENTS,
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        cluster_type="enhanced",
        availability_domains=FRANKFURT_ADS,
        node_image_id=OKE_IMAGE,
        ssh_public_key=SSH_KEY,
        network=OkeVcn(
            cidr="10.1.0.0/16",
            control_plane_endpoint_cidr="10.1.0.8/29",
            service_lb_cidr="10.1.0.32/27",
            worker_cidr="10.1.64.0/20",
            pod_cidr="10.1.128.0/18",
            api_endpoint="private",
            private_api_reachable_via="the campus DRG (FastConnect) routes 10.0.0.0/8 to the VCN",
            api_allowed_cidrs=["10.0.0.0/8"],
        ),
        node_pools=[
            OkeNodePool(
                name="system",
                node_shape="VM.Standard.E4.Flex",
                ocpus=2,
                memory_gb=32,
                node_count=per_env(test=1, prod=3),
                labels={"fleet.example.org/pool": "system"},
            ),
            # Batch work comes and goes: the cluster's autoscaler adds nodes from zero (it
            # never removes any: docs/oke-clusters.md, "Node pool size").
            OkeNodePool(
                name="batch-arm",
                node_shape="VM.Standard.A1.Flex",
                ocpus=4,
                memory_gb=24,
                boot_volume_size_gb=100,
                min_node_count=0,
                max_node_count=per_env(test=2, prod=6),
                max_pods_per_node=31,
                labels={"fleet.example.org/pool": "batch"},
            ),
        ],
        fleet_labels={"team": "sso", "workload": "batch"},
    )
