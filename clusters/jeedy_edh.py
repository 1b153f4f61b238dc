"""Clusters of the EDH community (OpenStack project "JEEDY EDH")."""

from clusters._templates import MULTI_1_25_3, SINGLE_1_25_3
from fleet import Fleet, MagnumCluster, NodeGroup, OpenStackProject, per_env


def define(fleet: Fleet) -> None:
    """Declare the EDH project and its clusters."""
    jeedy_edh = OpenStackProject(
        fleet,
        "jeedy-edh",
        project_name="JEEDY EDH",
        region="cern",
    )

    # Electronic Document Handling: highly available in prod, one zone elsewhere.
    MagnumCluster(
        fleet,
        "edh-app",
        name="k8s-edh-app-{env}-multi-v25",
        environments=["test", "prod"],
        project=jeedy_edh,
        template=MULTI_1_25_3,
        flavor="m2.large",
        keypair="shared-edh-key",
        master_count=per_env(test=1, prod=3),
        node_count=1,
        labels=per_env(test={}, prod={"manila_enabled": "true", "manila_csi_enabled": "true"}),
        node_groups=[
            NodeGroup(
                name=f"zone-{zone}-large",
                flavor="m2.large",
                node_count=per_env(test=1, prod=2),
                availability_zone=f"cern-geneva-{zone}",
            )
            for zone in ("a", "b", "c")
        ],
        fleet_labels={"team": "edh", "workload": "web"},
    )

    MagnumCluster(
        fleet,
        "edh-dev",
        name="k8s-edh-dev-v25",
        environments=["dev"],
        project=jeedy_edh,
        template=SINGLE_1_25_3,
        flavor="m2.medium",
        keypair="shared-edh-key",
        node_count=2,
        labels={"availability_zone": "cern-geneva-c"},
        fleet_labels={"team": "edh", "workload": "web"},
    )

    # Batch processing for EDH reports: GPU nodes in prod only.
    MagnumCluster(
        fleet,
        "edh-reports",
        name="k8s-edh-reports-{env}-v25",
        environments=["dev", "prod"],
        project=jeedy_edh,
        template=SINGLE_1_25_3,
        flavor="m2.large",
        keypair="shared-edh-key",
        node_count=per_env(dev=1, prod=2),
        labels=per_env(
            dev={"availability_zone": "cern-geneva-b"},
            prod={"availability_zone": "cern-geneva-b", "nvidia_gpu_enabled": "true"},
        ),
        node_groups=[
            NodeGroup(
                name="gpu",
                flavor="g1.4xlarge",
                node_count=per_env(dev=0, prod=2),
                availability_zone="cern-geneva-b",
            ),
        ],
        fleet_labels={"team": "edh", "workload": "batch"},
    )
