"""Clusters of the AIS community (OpenStack project "JEEDY AIS")."""

from clusters._templates import MULTI_1_25_3, SINGLE_1_25_3
from fleet import Fleet, MagnumCluster, NodeGroup, OpenStackProject, per_env


def define(fleet: Fleet) -> None:
    """Declare the AIS project and its clusters."""
    jeedy_ais = OpenStackProject(
        fleet,
        "jeedy-ais",
        project_name="JEEDY AIS",
        region="cern",
    )

    # The seed's cluster (Figures 10, 12, 13), in every environment; dev exactly as there.
    MagnumCluster(
        fleet,
        "ais-batch",
        name="k8s-ais-batch-{env}-multi-v25",
        environments=["dev", "test", "prod"],
        project=jeedy_ais,
        template=MULTI_1_25_3,
        flavor="m2.xlarge",
        keypair="shared-jeedy-key",
        create_timeout_minutes=60,
        master_count=per_env(dev=1, test=1, prod=3),
        node_count=1,
        node_groups=[
            NodeGroup(
                name="zone-a-xlarge",
                flavor="m2.xlarge",
                node_count=per_env(dev=1, default=3),
                availability_zone="cern-geneva-a",
            ),
            NodeGroup(
                name="zone-b-xlarge",
                flavor="m2.xlarge",
                node_count=per_env(dev=2, default=3),
                availability_zone="cern-geneva-b",
            ),
            NodeGroup(
                name="zone-c-xlarge",
                flavor="m2.xlarge",
                node_count=per_env(dev=2, default=3),
                availability_zone="cern-geneva-c",
            ),
        ],
        fleet_labels={"team": "ais", "workload": "batch"},
    )

    # An interactive service: small in dev and test, autoscaled in prod.
    MagnumCluster(
        fleet,
        "ais-web",
        name="k8s-ais-web-{env}-v25",
        environments=["dev", "test", "prod"],
        project=jeedy_ais,
        template=SINGLE_1_25_3,
        flavor=per_env(dev="m2.medium", default="m2.large"),
        keypair="shared-jeedy-key",
        node_count=per_env(dev=1, test=2, prod=4),
        labels=per_env(
            dev={"availability_zone": "cern-geneva-a"},
            default={"availability_zone": "cern-geneva-a", "monitoring_enabled": "true"},
        ),
        node_groups=[
            NodeGroup(
                name="burst",
                flavor="m2.large",
                node_count=per_env(dev=0, test=0, prod=2),
                min_node_count=0,
                max_node_count=per_env(dev=2, test=2, prod=10),
                availability_zone="cern-geneva-a",
            ),
        ],
        fleet_labels={"team": "ais", "workload": "web"},
    )

    # A shared CI cluster, only in test.
    MagnumCluster(
        fleet,
        "ais-ci",
        name="k8s-ais-ci-test-v25",
        environments=["test"],
        project=jeedy_ais,
        template=SINGLE_1_25_3,
        flavor="m2.large",
        keypair="shared-jeedy-key",
        node_count=3,
        labels={"availability_zone": "cern-geneva-b", "cephfs_csi_enabled": "true"},
        fleet_labels={"team": "ais", "workload": "ci"},
    )
