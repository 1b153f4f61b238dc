"""How Kubernetes upgrades move through the fleet: the rings, their soak times, the target.

`fleet upgrade plan` prints every cluster's path; `fleet upgrade promote` writes the next
step into rollout.yaml once the ring before has soaked and converged (docs/guide.md,
"Upgrade Kubernetes across the fleet").
"""

from datetime import timedelta

from clusters._templates import CAPI_1_31
from fleet import Fleet, MagnumTarget, OkeRelease, OkeTarget, Ring, Rollout, UpgradeTarget

# One small cluster takes every target first.
CANARY = ["k8s-ais-api-dev"]
# How long each environment's ring runs a target before the next one may take it.
SOAK = {"dev": timedelta(days=2), "test": timedelta(days=3)}
# Oracle Linux 8 OKE worker image for Kubernetes 1.31 in eu-frankfurt-1 (placeholder OCID).
OKE_IMAGE_1_31 = "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaokenode131ol8example"


def define(fleet: Fleet) -> None:
    """Declare the rollout: the canary, then one ring per environment, in their order."""
    Rollout(
        fleet,
        "upgrades",
        rings=[
            Ring(name="canary", clusters=CANARY, soak=timedelta(days=1)),
            *(
                Ring(
                    name=env,
                    environments=[env],
                    exclude=CANARY,
                    soak=SOAK.get(env, timedelta(0)),
                )
                for env in fleet.environment_names
            ),
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
