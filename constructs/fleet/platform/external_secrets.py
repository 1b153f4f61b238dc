"""External Secrets Operator as a platform component: the ArgoCD layer pushes kubeconfigs
with it (``ArgoCd(export_kubeconfigs=...)``), an autoscaled OKE cluster pushes its
autoscaler's management-cluster token into the workload cluster with it
(:mod:`fleet.clouds.oci.autoscaler`). Pinned: chart 2.9.0 (``crds.lock.yaml`` pins the CRDs of
external-secrets helm-chart-2.9.0).
"""

from __future__ import annotations

from fleet.core import layout
from fleet.core.layout import PROTECT
from fleet.platform.component import ChartInstall, PlatformComponent

EXTERNAL_SECRETS = PlatformComponent(
    name="external-secrets",
    version="2.9.0",
    install=ChartInstall(
        repo_url="https://charts.external-secrets.io",
        chart="external-secrets",
        namespace="external-secrets",
        # Keep its CRDs out of any prune (external-secrets hack/helm.generate.sh).
        values={
            "installCRDs": True,
            "crds": {
                "annotations": {
                    layout.SYNC_OPTIONS: ",".join(PROTECT),
                    "helm.sh/resource-policy": "keep",
                }
            },
        },
    ),
    owns=frozenset(
        {
            ("external-secrets.io", "ExternalSecret"),
            ("external-secrets.io", "PushSecret"),
            ("external-secrets.io", "SecretStore"),
            ("external-secrets.io", "ClusterSecretStore"),
        }
    ),
)
"""External Secrets Operator: pushes kubeconfigs to a secret store (only where exported), and
an autoscaler's token into its OKE cluster."""
