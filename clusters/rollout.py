"""How Kubernetes upgrades move through the fleet: the rings, their soak times, the target.

`fleet upgrade plan` prints every cluster's path; `fleet upgrade promote` writes the next
step into rollout.yaml once the ring before has soaked and converged (docs/guide.md,
"Upgrade Kubernetes across the fleet"). The OKE clusters upgrade in place (control plane,
then node pools); the Magnum clusters are on Heat-era templates that declare no driver, so
the plan lists them for blue/green, onto the Cluster API template below.
"""

from datetime import timedelta

from fleet import (
    ClusterTemplate,
    Fleet,
    MagnumTarget,
    OkeRelease,
    OkeTarget,
    Ring,
    Rollout,
    UpgradeTarget,
)

# How long each environment's ring runs a target before the next one may take it.
SOAK = {"dev": timedelta(days=2), "test": timedelta(days=3)}

# The Cluster API template (openstack/magnum-capi-helm) Magnum clusters move to; the driver
# takes the Kubernetes version from the image's kube_version property.
CAPI_1_31 = ClusterTemplate(
    name="kubernetes-1.31.2-capi",
    driver="k8s_capi_helm_v1",
    kubernetes_version="v1.31.2",
    image="ubuntu-jammy-kube-v1.31.2",
    uuid={"cern": "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d31"},  # example UUID
    base_labels={"monitoring_enabled": "true", "auto_healing_enabled": "true"},
)
# Oracle Linux 8 OKE worker image for Kubernetes 1.31 in eu-frankfurt-1 (placeholder OCID).
OKE_IMAGE_1_31 = "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaokenode131ol8example"


def define(fleet: Fleet) -> None:
    """Declare the rollout: one ring per environment, in their order."""
    Rollout(
        fleet,
        "upgrades",
        rings=[
            Ring(name=env, environments=[env], soak=SOAK.get(env, timedelta(0)))
            for env in fleet.environment_names
        ],
        targets=[
            UpgradeTarget(
                name="kubernetes-1.31",
                clouds=[
                    MagnumTarget(templates={"k8s_capi_helm_v1": CAPI_1_31}),
                    OkeTarget(
                        releases={
                            "eu-frankfurt-1": OkeRelease(
                                kubernetes_version="v1.31.1", node_image_id=OKE_IMAGE_1_31
                            )
                        }
                    ),
                ],
            )
        ],
    )
