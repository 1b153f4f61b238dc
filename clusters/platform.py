"""The fleet's platform: ArgoCD in each management cluster, and fleet-wide packages.

Every cluster declared in this folder is registered in its environment's ArgoCD unless it
says ``register_in_argocd=False``.
"""

from fleet import ArgoCd, Fleet, FleetPackage, HelmChart, SecretKeyRef, per_env


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
