"""The fleet's platform: ArgoCD in each management cluster, and fleet-wide packages.

Every cluster declared in this folder is registered in its environment's ArgoCD unless it
says ``register_in_argocd=False``.
"""

from fleet import ArgoCd, Fleet, FleetPackage, HelmChart, ManagementCluster, SecretKeyRef, per_env


def define(fleet: Fleet) -> None:
    """Declare ArgoCD and the packages every cluster of a kind gets."""
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(
            name="argocd-credentials", namespace="crossplane-system", key="authToken"
        ),
        # Prod kubeconfigs go to the secret store, as the seed's CronJob did (section 7.b).
        export_kubeconfigs=per_env(prod=True, default=False),
        kubeconfig_store="cern-secret-store",
    )

    # Each environment's management cluster as the workload clusters see it: the API server
    # an OKE cluster's autoscaler scales its node pools through, and where its own traffic
    # comes from (the NAT address for public API endpoints, the campus range the DRG routes
    # for private ones).
    ManagementCluster(
        fleet,
        "management",
        api_server=per_env(
            prod="https://mgmt-prod.example.org:6443", default="https://mgmt-test.example.org:6443"
        ),
        egress_cidrs=["198.51.100.17/32", "10.20.0.0/16"],
    )

    # A monitoring stack on every prod cluster (the seed's step 5).
    FleetPackage(
        fleet,
        "monitoring",
        environments=["prod"],
        namespace="monitoring",
        source=HelmChart(
            repo_url="https://prometheus-community.github.io/helm-charts",
            chart="kube-prometheus-stack",
            version="62.7.0",
        ),
    )
