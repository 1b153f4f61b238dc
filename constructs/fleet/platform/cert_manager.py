"""cert-manager: the webhook certificates of cluster-api-operator (and of any Cluster API
provider) come from it.

Its Helm chart at v1.21.1, what ``clusterctl init`` of Cluster API v1.12.11 installs
(cluster-api ``cmd/clusterctl/client/config/cert_manager_client.go``
``CertManagerDefaultVersion``). The chart installs and keeps its CRDs (``crds.enabled``,
``crds.keep``: cert-manager ``deploy/charts/cert-manager/values.yaml``); those are not
pinned in ``crds.lock.yaml`` (cert-manager ``deploy/charts/cert-manager/templates/crd-*.yaml``).
"""

from __future__ import annotations

from fleet.platform.component import ChartInstall, PlatformComponent

CERT_MANAGER = PlatformComponent(
    name="cert-manager",
    version="v1.21.1",  # the chart's versions start with "v"
    install=ChartInstall(
        repo_url="https://charts.jetstack.io",
        chart="cert-manager",
        namespace="cert-manager",
        values={"crds": {"enabled": True, "keep": True}},
    ),
    owns=frozenset(
        {
            ("cert-manager.io", "Certificate"),
            ("cert-manager.io", "CertificateRequest"),
            ("cert-manager.io", "Issuer"),
            ("cert-manager.io", "ClusterIssuer"),
            ("acme.cert-manager.io", "Order"),
            ("acme.cert-manager.io", "Challenge"),
        }
    ),
    crds_pinned=False,
)
"""cert-manager (its chart)."""
