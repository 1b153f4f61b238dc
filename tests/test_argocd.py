"""ArgoCd, ArgoRegistration, FleetPackage and the one-button bootstrap."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lupa
import pytest
import yaml
from builders import CREDENTIALS, argocd, rendered
from crd_samples import crds_dir
from support import HYBRID, REPO
from syrupy.assertion import SnapshotAssertion

from fleet import (
    ArgoCd,
    ArgoRegistration,
    ClusterTemplate,
    DefinitionError,
    Fleet,
    FleetCluster,
    FleetConfig,
    FleetPackage,
    GitPath,
    HelmChart,
    MagnumCluster,
    NodeGroup,
    OciClusterIdentity,
    OciManagedCluster,
    OkeNodePool,
    OkeVcn,
    OpenStackProject,
    per_env,
    testing,
)
from fleet.argocd.bootstrap import (
    APPLICATION_HEALTH,
    RESOURCES_FINALIZER,
    WAVE_CLUSTERS,
    WAVE_CORE,
    WAVE_PACKAGES,
    WAVE_PROVIDER_CONFIGS,
    WAVE_PROVIDERS,
)
from fleet.checks.schema import validate_manifests
from fleet.clouds.oci.health import CONTROL_PLANE_HEALTH, POOL_HEALTH
from fleet.clouds.oci.plugin import IDENTITY_HEALTH, READY_HEALTH
from fleet.core.layout import SYNC_WAVE
from fleet.core.manifest import Manifest

SYNC_OPTIONS = "argocd.argoproj.io/sync-options"

# The seed's Figure 14, transcribed.
FIGURE_14 = """
apiVersion: cluster.argocd.crossplane.io/v1alpha1
kind: Cluster
metadata:
  name: k8s-ais-batch-dev-multi-v25
spec:
  forProvider:
    config:
      kubeconfigSecretRef:
        key: attribute.kubeconfig.raw_config
        name: k8s-ais-batch-dev-multi-v25
        namespace: crossplane-clusters
    name: k8s-ais-batch-dev-multi-v25
  providerConfigRef:
    name: argocd-provider
"""


def template() -> ClusterTemplate:
    return ClusterTemplate(
        name="tpl-1.25.3-multi",
        kubernetes_version="v1.25.3",
        base_labels={"kube_tag": "v1.25.3-cern.0"},
        optional_labels=["availability_zone"],
        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
    )


def magnum(fleet: Fleet, construct_id: str = "ais-batch", **overrides: Any) -> MagnumCluster:
    project = overrides.pop("project", None)
    if project is None:
        project = OpenStackProject(
            fleet, f"{construct_id}-project", project_name="P", region="cern"
        )
    args: dict[str, Any] = {
        "name": "k8s-ais-batch-{env}-multi-v25",
        "environments": ["dev"],
        "project": project,
        "template": template(),
        "flavor": "m2.xlarge",
        "keypair": "shared-jeedy-key",
        "node_count": 1,
        "node_groups": [NodeGroup(name="zone-a", flavor="m2.xlarge", node_count=1)],
    }
    args.update(overrides)
    return MagnumCluster(fleet, construct_id, **args)


def find(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    # Two kinds are named Cluster (Cluster API's and provider-argocd's): the fleet's
    # registrations are the ones meant here.
    found = [
        m
        for m in manifests
        if m.kind == kind
        and m.name == name
        and not (kind == "Cluster" and m.api_version.startswith("cluster.x-k8s.io/"))
    ]
    assert len(found) == 1, [(m.kind, m.name) for m in manifests]
    return found[0]


# --- registration ----------------------------------------------------------------------------


def test_figure_14_reproduced_for_the_seed_cluster(fleet: Fleet) -> None:
    magnum(fleet)
    argocd(fleet)
    body = find(rendered(fleet), "Cluster", "k8s-ais-batch-dev-multi-v25").body
    labels = body["spec"]["forProvider"].pop("labels")
    # Applied once the cluster's own objects are Healthy (wave 1 of the cluster's folder).
    assert body["metadata"].pop("annotations") == {SYNC_WAVE: "1"}
    assert body == yaml.safe_load(FIGURE_14)
    assert labels == {
        "fleet/cloud": "magnum",
        "fleet/cluster": "k8s-ais-batch-dev-multi-v25",
        "fleet/environment": "dev",
        "fleet/kubernetes-version": "v1.25.3",
        "fleet/region": "cern",
        "fleet/template": "tpl-1.25.3-multi",
    }


def test_registration_lands_in_the_clusters_folder_with_its_source(fleet: Fleet) -> None:
    cluster = magnum(fleet, fleet_labels={"team": "ais"})
    argocd(fleet)
    m = find(rendered(fleet), "Cluster", "k8s-ais-batch-dev-multi-v25")
    assert m.folder == "clusters/k8s-ais-batch-dev-multi-v25"
    assert m.source == cluster.context
    assert m.body["spec"]["forProvider"]["labels"]["team"] == "ais"


def test_provider_config_minimal_exact(fleet: Fleet) -> None:
    argocd(fleet)
    m = find(rendered(fleet), "ProviderConfig", "argocd-provider")
    assert m.folder == "platform"
    assert m.body == {
        "apiVersion": "argocd.crossplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {
            "annotations": {SYNC_OPTIONS: "Prune=false,Delete=false"},
            "name": "argocd-provider",
        },
        "spec": {
            "credentials": {
                "secretRef": {
                    "key": "token",
                    "name": "argocd-credentials",
                    "namespace": "crossplane-system",
                },
                "source": "Secret",
            },
            # In-cluster address: ArgoCD's self-signed certificate (see test_bootstrap.py).
            "insecure": True,
            "serverAddr": "argocd-server.argocd.svc:443",
        },
    }


def test_every_cluster_is_registered_by_default_and_can_opt_out(fleet: Fleet) -> None:
    magnum(fleet, "a", name="a-{env}")
    magnum(fleet, "b", name="b-{env}", register_in_argocd=False)
    magnum(fleet, "c", name="c-{env}", retired=True)
    argocd(fleet)
    names = {m.name for m in rendered(fleet) if m.api_version.startswith("cluster.argocd.")}
    assert names == {"a-dev"}


def test_no_registration_without_an_argocd(fleet: Fleet) -> None:
    magnum(fleet)
    assert [m for m in rendered(fleet) if m.kind == "Cluster"] == []


def test_explicit_registration_replaces_the_default_one(fleet: Fleet) -> None:
    cluster = magnum(fleet, environments=["dev", "prod"])
    ArgoRegistration(
        fleet,
        "ais-batch-argocd",
        cluster=cluster,
        labels={"tier": "gold"},
        project="ais",
        namespaces=["batch"],
        shard=2,
    )
    argocd(fleet)
    for env in ("dev", "prod"):
        regs = [m for m in rendered(fleet, env) if m.kind == "Cluster"]
        assert len(regs) == 1
        for_provider = regs[0].body["spec"]["forProvider"]
        assert for_provider["labels"]["tier"] == "gold"
        assert for_provider["labels"]["fleet/environment"] == env
        assert (for_provider["project"], for_provider["namespaces"], for_provider["shard"]) == (
            "ais",
            ["batch"],
            2,
        )
    assert [m for m in rendered(fleet, "test") if m.kind == "Cluster"] == []


def test_explicit_registration_names_a_specific_argocd(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    dev = ArgoCd(
        fleet,
        "argocd-dev",
        environments=["dev"],
        server_addr="argocd.dev:443",
        credentials=CREDENTIALS,
        provider_config_name="argocd-dev",
    )
    ArgoRegistration(fleet, "reg", cluster=cluster, argocd=dev)
    body = find(rendered(fleet), "Cluster", "k8s-ais-batch-dev-multi-v25").body
    assert body["spec"]["providerConfigRef"] == {"name": "argocd-dev"}


def test_fails_registration_without_argocd_names_the_registration(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    ArgoRegistration(fleet, "reg", cluster=cluster)
    with pytest.raises(DefinitionError, match=r"test_argocd.py:\d+ \(reg\): argocd: no ArgoCd"):
        rendered(fleet)


def test_fails_registration_of_an_opted_out_cluster(fleet: Fleet) -> None:
    cluster = magnum(fleet, register_in_argocd=False)
    with pytest.raises(DefinitionError, match=r"cluster: .*opted out"):
        ArgoRegistration(fleet, "reg", cluster=cluster)


def test_fails_second_registration_of_a_cluster(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    ArgoRegistration(fleet, "reg", cluster=cluster)
    with pytest.raises(DefinitionError, match="already registered"):
        ArgoRegistration(fleet, "reg2", cluster=cluster)


def test_fails_registration_of_a_non_cluster(fleet: Fleet) -> None:
    with pytest.raises(
        DefinitionError,
        match="cluster: must be a FleetCluster or a reference to a FleetCluster or a string, "
        "got int 42",
    ):
        ArgoRegistration(fleet, "reg", cluster=42)  # type: ignore[arg-type]


def test_fails_bad_registration_label(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    with pytest.raises(DefinitionError, match="labels: label 'tier': value must be"):
        ArgoRegistration(fleet, "reg", cluster=cluster, labels={"tier": "gold plated"})


def test_fails_bad_registration_label_key(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    with pytest.raises(DefinitionError, match="invalid label key 'Bad Key'"):
        ArgoRegistration(fleet, "reg", cluster=cluster, labels={"Bad Key": "x"})


def test_fails_negative_shard(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    with pytest.raises(DefinitionError, match="shard: must be 0 or more"):
        ArgoRegistration(fleet, "reg", cluster=cluster, shard=-1)


def test_fails_fleet_label_that_argocd_cannot_store(fleet: Fleet) -> None:
    magnum(fleet, fleet_labels={"owner": "Jane Doe"})
    argocd(fleet)
    with pytest.raises(DefinitionError, match=r"\(ais-batch\): fleet_labels: label 'owner'"):
        rendered(fleet)


# --- ArgoCd input checks ---------------------------------------------------------------------


def test_fails_two_argocds_in_one_environment(fleet: Fleet) -> None:
    argocd(fleet)
    with pytest.raises(DefinitionError, match="environments: environment 'dev' already has"):
        ArgoCd(fleet, "argocd2", server_addr="x:443", credentials=CREDENTIALS)


def test_fails_server_addr_with_scheme(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="server_addr: must be host:port"):
        argocd(fleet, server_addr="https://argocd.example.org")


def test_fails_credentials_not_a_reference(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="credentials: must be a SecretKeyRef"):
        argocd(fleet, credentials="s3cr3t")


def test_fails_export_without_store(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="kubeconfig_store: kubeconfigs are exported"):
        argocd(fleet, export_kubeconfigs=per_env(prod=True, default=False))


def test_fails_remote_key_without_cluster(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="kubeconfig_remote_key: must contain"):
        argocd(fleet, kubeconfig_remote_key="kubeconfigs/all")


def test_fails_export_flag_not_a_bool(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="export_kubeconfigs: must be True or False"):
        argocd(fleet, export_kubeconfigs="yes", kubeconfig_store="store")


def test_fails_bad_poll_interval(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="provider_argocd_poll_seconds"):
        argocd(fleet, provider_argocd_poll_seconds=0)


def test_fails_export_on_registration_without_store(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    ArgoRegistration(fleet, "reg", cluster=cluster, export_kubeconfig=True)
    argocd(fleet)
    with pytest.raises(DefinitionError, match=r"\(reg\): export_kubeconfig: .*no kubeconfig_store"):
        rendered(fleet)


# --- kubeconfig export -----------------------------------------------------------------------


def test_kubeconfig_export_is_opt_in_per_environment(fleet: Fleet) -> None:
    magnum(fleet, environments=["dev", "prod"])
    argocd(
        fleet,
        export_kubeconfigs=per_env(prod=True, default=False),
        kubeconfig_store="cern-secret-store",
    )
    assert [m for m in rendered(fleet, "dev") if m.kind == "PushSecret"] == []
    assert not any(m.name.endswith("-external-secrets") for m in rendered(fleet, "dev"))
    prod = rendered(fleet, "prod")
    push = find(prod, "PushSecret", "k8s-ais-batch-prod-multi-v25-kubeconfig-export")
    assert push.folder == "clusters/k8s-ais-batch-prod-multi-v25"
    assert push.body == {
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {
            "annotations": {SYNC_WAVE: "1"},
            "name": "k8s-ais-batch-prod-multi-v25-kubeconfig-export",
            "namespace": "crossplane-clusters",
        },
        "spec": {
            "data": [
                {
                    "match": {
                        "remoteRef": {"remoteKey": "kubeconfigs/prod/k8s-ais-batch-prod-multi-v25"},
                        "secretKey": "attribute.kubeconfig.raw_config",
                    }
                }
            ],
            "deletionPolicy": "None",
            "refreshInterval": "1h",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": "cern-secret-store"}],
            "selector": {"secret": {"name": "k8s-ais-batch-prod-multi-v25"}},
            "updatePolicy": "Replace",
        },
    }
    eso = find(prod, "Application", "fleet-prod-external-secrets")
    assert eso.body["metadata"]["annotations"][SYNC_WAVE] == str(WAVE_CORE)


def test_registration_can_opt_out_of_the_export(fleet: Fleet) -> None:
    cluster = magnum(fleet)
    ArgoRegistration(fleet, "reg", cluster=cluster, export_kubeconfig=False)
    argocd(fleet, export_kubeconfigs=True, kubeconfig_store="store")
    assert [m for m in rendered(fleet) if m.kind == "PushSecret"] == []


# --- packages --------------------------------------------------------------------------------


def test_package_from_a_git_path_exact(fleet: Fleet) -> None:
    FleetPackage(
        fleet,
        "logging",
        environments=["prod"],
        namespace="logging",
        match_labels={"fleet/cloud": "magnum"},
        source=GitPath(path="apps/logging"),
    )
    (m,) = [m for c in fleet.declarations() for m in c.manifests("prod")]
    assert m.folder == "packages"
    assert m.body == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "logging", "namespace": "argocd"},
        "spec": {
            "generators": [
                {
                    "clusters": {
                        "selector": {
                            "matchLabels": {"fleet/cloud": "magnum", "fleet/environment": "prod"}
                        }
                    }
                }
            ],
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "syncPolicy": {"preserveResourcesOnDeletion": True},
            "template": {
                "metadata": {"name": "logging-{{.nameNormalized}}"},
                "spec": {
                    "destination": {"namespace": "logging", "server": "{{.server}}"},
                    "project": "default",
                    "source": {
                        "path": "apps/logging",
                        "repoURL": fleet.config.repo_url,
                        "targetRevision": fleet.config.revision,
                    },
                    "syncPolicy": {
                        "automated": {"prune": True, "selfHeal": True},
                        "syncOptions": ["CreateNamespace=true"],
                    },
                },
            },
        },
    }


def test_package_selector_matches_the_registration_labels(fleet: Fleet) -> None:
    magnum(fleet, "a", name="a-{env}", environments=["prod"], fleet_labels={"team": "ais"})
    magnum(fleet, "b", name="b-{env}", environments=["prod"], fleet_labels={"team": "edh"})
    argocd(fleet)
    FleetPackage(
        fleet,
        "monitoring",
        namespace="monitoring",
        match_labels={"team": "ais", "fleet/cloud": "magnum"},
        source=HelmChart(repo_url="https://charts.example.org", chart="mon", version="1.0.0"),
    )
    out = rendered(fleet, "prod")
    (appset,) = [m for m in out if m.kind == "ApplicationSet"]
    wanted = appset.body["spec"]["generators"][0]["clusters"]["selector"]["matchLabels"]
    selected = [
        m.name
        for m in out
        if m.kind == "Cluster" and wanted.items() <= m.body["spec"]["forProvider"]["labels"].items()
    ]
    assert selected == ["a-prod"]


def test_fails_package_sets_the_environment_label(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="match_labels: fleet/environment is set from"):
        FleetPackage(
            fleet,
            "p",
            namespace="p",
            match_labels={"fleet/environment": "prod"},
            source=GitPath(path="x"),
        )


def test_fails_package_path_outside_the_repository(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"source\.path: must be a relative path"):
        FleetPackage(fleet, "p", namespace="p", source=GitPath(path="../elsewhere"))


def test_fails_unpinned_chart(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"source\.version: pin"):
        FleetPackage(
            fleet, "p", namespace="p", source=HelmChart(repo_url="https://x", chart="c", version="")
        )


NOT_PINS = ["latest", "*", "1", "1.2", "^1.2.0", "~1.2", ">=1.0.0", "1.2.x", "1.x", "1.0.0 - 2"]


@pytest.mark.parametrize("version", NOT_PINS)
def test_fails_a_chart_version_that_is_not_a_pin(fleet: Fleet, version: str) -> None:
    """argoproj/argo-cd v3.5.1 ``reposerver/repository/repository.go``
    ``newHelmClientResolveRevision`` passes a version Masterminds SemVer parses (``1``,
    ``1.2`` included) to ``helm pull --version``, and resolves anything else as a constraint
    (``util/versions/tags.go`` ``MaxVersion``); helm/helm v4.2.1 ``pkg/repo/v1/index.go``
    ``IndexFile.Get`` picks the newest match of any non-exact string."""
    with pytest.raises(DefinitionError) as raised:
        FleetPackage(
            fleet,
            "p",
            namespace="p",
            source=HelmChart(repo_url="https://x.example.org", chart="c", version=version),
        )
    assert raised.value.field == "source.version"
    assert raised.value.message.startswith(f"{version!r} is not an exact version")


@pytest.mark.parametrize("version", ["2.3.4", "v1.21.1", "1.0.0-rc.1", "0.1.0+build.5"])
def test_an_exact_chart_version_is_a_pin(fleet: Fleet, version: str) -> None:
    FleetPackage(
        fleet,
        "p",
        namespace="p",
        source=HelmChart(repo_url="https://x.example.org", chart="c", version=version),
    )


@pytest.mark.parametrize("url", ["charts.example.org", "http://charts.example.org", "https://"])
def test_fails_a_chart_repository_without_https_or_oci(fleet: Fleet, url: str) -> None:
    """argoproj/argo-cd v3.5.1 ``util/helm/client.go`` ``IsHelmOciRepo``: a repoURL whose
    parsed host is empty (no scheme) is an OCI registry."""
    with pytest.raises(DefinitionError, match=r"source\.repo_url: .*give the scheme"):
        FleetPackage(
            fleet, "p", namespace="p", source=HelmChart(repo_url=url, chart="c", version="1.0.0")
        )


def test_an_oci_chart_repository_renders_in_argocds_helm_oci_form(fleet: Fleet) -> None:
    """argo-cd v3.5.1: an Application source whose repoURL starts with ``oci://`` is an OCI
    artifact (``IsOCI``, before ``IsHelm``); a chart from an OCI registry is a repoURL
    without a scheme (``IsHelmOciRepo``), pulled as ``oci://<repo>/<chart>``
    (``util/helm/cmd.go``)."""
    magnum(fleet, "a", name="a-{env}", environments=["prod"])
    argocd(fleet)
    FleetPackage(
        fleet,
        "p",
        namespace="p",
        source=HelmChart(repo_url="oci://registry.example.org/charts", chart="c", version="1.0.0"),
    )
    (appset,) = [m for m in rendered(fleet, "prod") if m.kind == "ApplicationSet"]
    source = appset.body["spec"]["template"]["spec"]["source"]
    assert source["repoURL"] == "registry.example.org/charts"


def test_fails_package_source_of_the_wrong_type(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="source: must be a GitPath or a HelmChart"):
        FleetPackage(fleet, "p", namespace="p", source="apps/x")  # type: ignore[arg-type]


# --- the bootstrap graph ---------------------------------------------------------------------


@contextmanager
def _isolated() -> Iterator[None]:
    """Loading the example fleet touches process-wide state (``sys.path``, the ``clusters``
    modules): put it back for the tests that follow."""
    path = list(sys.path)
    modules = {k: v for k, v in sys.modules.items() if k == "clusters" or k.startswith("clusters.")}
    try:
        yield
    finally:
        sys.path[:] = path
        for name in [k for k in sys.modules if k == "clusters" or k.startswith("clusters.")]:
            del sys.modules[name]
        sys.modules.update(modules)


@pytest.fixture(scope="module")
def example(hybrid_rendered: Path) -> Iterator[testing.RepositoryOutput]:
    with _isolated():
        synth = testing.synth_repository(FleetConfig.load(hybrid_rendered))
    yield synth


def _wave(m: Manifest) -> int:
    return int(m.body["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))


def _walk(config: FleetConfig, env: str, files: dict[str, bytes]) -> dict[str, int]:
    """Every dist folder the bootstrap reaches from the root, with the wave that syncs it."""
    root_path = f"bootstrap/application_argoproj.io_argocd_fleet-{env}.yaml"
    assert root_path in files, "the root Application is where the README says"
    reached: dict[str, int] = {}
    queue = [(yaml.safe_load(files[root_path]), 0)]
    seen: set[str] = set()
    while queue:
        app, wave = queue.pop()
        source = app["spec"]["source"]
        assert source["repoURL"] in (config.repo_url, source.get("repoURL"))
        if "chart" in source:  # an upstream Helm chart, pinned
            assert source["targetRevision"][0].isdigit() or source["targetRevision"][0] == "v"
            continue
        assert source["repoURL"] == config.repo_url
        assert source["targetRevision"] == config.revision
        prefix = f"{config.dist}/{env}/"
        assert source["path"].startswith(prefix)
        folder = source["path"][len(prefix) :]
        children = [p for p in files if p.rsplit("/", 1)[0] == folder]
        assert children, f"{source['path']} named by {app['metadata']['name']} is empty"
        assert (config.root / source["path"]).is_dir(), f"{source['path']} is not in dist/"
        if folder in seen:
            continue
        seen.add(folder)
        reached[folder] = wave
        for path in children:
            body = yaml.safe_load(files[path])
            if body["kind"] == "Application":
                # Root waves order the bootstrap's Applications; an Application in a
                # cluster's folder (its workload objects) comes in that folder's root wave.
                child_wave = (
                    int(body["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))
                    if folder == "bootstrap"
                    else wave
                )
                queue.append((body, child_wave))
    return reached


@pytest.mark.parametrize("env", FleetConfig.load(HYBRID).environments)
def test_bootstrap_reaches_every_folder_in_wave_order(
    example: testing.RepositoryOutput, hybrid_rendered: Path, env: str
) -> None:
    config = FleetConfig.load(hybrid_rendered)
    files = example.files[env]
    reached = _walk(config, env, files)
    folders = {p.rsplit("/", 1)[0] for p in files}
    assert set(reached) == folders, "every folder of dist/<env>/ is synced by some Application"
    cluster_waves = {w for f, w in reached.items() if f.startswith("clusters/")}
    assert cluster_waves == {WAVE_CLUSTERS}
    # Clusters come last: the root never waits on a cluster (see test_bootstrap.py).
    steps = ["providers", "platform", "packages", "clusters"]
    waves = {"clusters": WAVE_CLUSTERS, **{f: w for f, w in reached.items() if f in steps}}
    present = [step for step in steps if step in waves]
    assert {"providers", "platform", "clusters"} <= set(present)
    order = [waves[step] for step in present]
    assert order == sorted(order) and len(set(order)) == len(order), waves
    assert max(reached.values()) == WAVE_CLUSTERS
    expected = {"providers": WAVE_PROVIDERS, "platform": WAVE_PROVIDER_CONFIGS}
    assert {k: waves[k] for k in expected} == expected
    assert waves.get("packages", WAVE_PACKAGES) == WAVE_PACKAGES
    core = [m for m in example.manifests[env] if m.kind == "Application" and "chart" in str(m.body)]
    assert min(_wave(m) for m in core) == WAVE_CORE
    assert max(_wave(m) for m in core) < WAVE_PROVIDERS


def test_one_application_per_cluster(example: testing.RepositoryOutput) -> None:
    for env, manifests in example.manifests.items():
        cluster_folders = {m.folder for m in manifests if m.folder.startswith("clusters/")}
        apps = [
            m.body["spec"]["source"]["path"]
            for m in manifests
            if m.kind == "Application" and "/clusters/" in m.body["spec"]["source"].get("path", "")
        ]
        assert sorted(apps) == sorted(f"dist/{env}/{f}" for f in cluster_folders)


def test_no_kustomize_and_no_finalizers(example: testing.RepositoryOutput) -> None:
    for env, files in example.files.items():
        names = {p.rsplit("/", 1)[-1] for p in files}
        assert not names & {"kustomization.yaml", "kustomization.yml", "Chart.yaml"}
        for m in example.manifests[env]:
            if m.kind == "Application":
                assert "kustomize" not in m.body["spec"]["source"]
                if _syncs_a_workload_cluster(m):
                    # An OKE autoscaler's: removing it removes the autoscaler from its cluster.
                    assert m.body["metadata"]["finalizers"] == [RESOURCES_FINALIZER], m.name
                else:
                    assert "finalizers" not in m.body["metadata"], m.name


def test_directory_applications_skip_the_dry_run_for_missing_crds(
    example: testing.RepositoryOutput,
) -> None:
    for manifests in example.manifests.values():
        for m in manifests:
            if m.kind == "Application" and "path" in m.body["spec"]["source"]:
                if m.body["spec"]["source"]["path"].endswith("/bootstrap"):
                    continue  # the root: Application and ConfigMap exist before it
                options = m.body["spec"]["syncPolicy"]["syncOptions"]
                assert "SkipDryRunOnMissingResource=true" in options, m.name


def test_every_cluster_bearing_object_is_never_pruned_or_deleted(
    example: testing.RepositoryOutput,
) -> None:
    fleet = _example_fleet()
    bearing = {
        (api, kind)
        for c in fleet.declarations()
        if isinstance(c, FleetCluster)
        for api, kind in type(c).bearing_kinds
    }
    protected_kinds = bearing | {
        ("argocd.crossplane.io/v1alpha1", "ProviderConfig"),
        ("openstack.crossplane.io/v1beta1", "ProviderConfig"),
        ("pkg.crossplane.io/v1", "Provider"),
        ("v1", "Namespace"),
    }
    count = 0
    for manifests in example.manifests.values():
        for m in manifests:
            if (m.api_version, m.kind) in protected_kinds:
                options = m.body["metadata"]["annotations"][SYNC_OPTIONS].split(",")
                assert {"Prune=false", "Delete=false"} <= set(options), m.describe()
                count += 1
    assert count > 20


def _syncs_a_workload_cluster(m: Manifest) -> bool:
    """An Application to a registered cluster (by name), not to the management cluster."""
    return "name" in m.body["spec"]["destination"]


def test_applications_over_clusters_keep_their_resources(
    example: testing.RepositoryOutput,
) -> None:
    workload = 0
    for manifests in example.manifests.values():
        for m in manifests:
            if m.kind != "Application" or "/clusters/" not in str(m.body["spec"]["source"]):
                continue
            if _syncs_a_workload_cluster(m):
                # in its cluster's folder, with the registration (its own wave 1)
                assert m.folder.startswith("clusters/") and _wave(m) == 1, m.name
                workload += 1
                continue
            assert "finalizers" not in m.body["metadata"]
            assert _wave(m) == WAVE_CLUSTERS
    assert workload == 2  # the audit cluster's autoscaler in test and prod


def _example_fleet() -> Fleet:
    with _isolated():
        return testing.load_repository(FleetConfig.load(HYBRID))


def _produced_secrets(manifests: list[Manifest]) -> set[tuple[str, str, str]]:
    """(namespace, name, key) of every kubeconfig secret the objects make their controllers
    write: Crossplane connection secrets and Cluster API's ``<cluster>-kubeconfig``."""
    out: set[tuple[str, str, str]] = set()
    for m in manifests:
        ref = m.body.get("spec", {}).get("writeConnectionSecretToRef")
        if ref and m.api_version.startswith("containerinfra.openstack."):
            out.add((ref["namespace"], ref["name"], "attribute.kubeconfig.raw_config"))
        if m.api_version.startswith("cluster.x-k8s.io/") and m.kind == "Cluster":
            out.add((m.namespace, f"{m.name}-kubeconfig", "value"))
        if m.kind == "Secret" and m.body.get("type") == "kubernetes.io/service-account-token":
            # filled by Kubernetes' token controller (an OKE autoscaler's token)
            out |= {(m.namespace, m.name, key) for key in ("ca.crt", "namespace", "token")}
    return out


def test_every_registration_reads_the_secret_its_cluster_writes(
    example: testing.RepositoryOutput,
) -> None:
    checked = 0
    for manifests in example.manifests.values():
        produced = _produced_secrets(manifests)
        for m in manifests:
            if m.api_version == "cluster.argocd.crossplane.io/v1alpha1":
                ref = m.body["spec"]["forProvider"]["config"]["kubeconfigSecretRef"]
                assert (ref["namespace"], ref["name"], ref["key"]) in produced, m.describe()
                checked += 1
            if m.kind == "PushSecret":
                secret = m.body["spec"]["selector"]["secret"]["name"]
                for item in m.body["spec"]["data"]:
                    key = item["match"]["secretKey"]
                    assert (m.namespace, secret, key) in produced, m.describe()
            if m.kind == "SecretStore":
                ref = m.body["spec"]["provider"]["kubernetes"]["authRef"]
                assert (m.namespace, ref["name"], ref["key"]) in produced, m.describe()
    assert checked >= 10


def test_example_validates_against_the_crds(example: testing.RepositoryOutput) -> None:
    if not crds_dir().is_dir():
        pytest.fail(f"the shared CRDs are missing at {crds_dir()}")
    for manifests in example.manifests.values():
        assert [p.line() for p in validate_manifests(manifests, crds_dir=crds_dir())] == []


def test_small_fleet_validates_against_the_crds(fleet: Fleet) -> None:
    cluster = magnum(fleet, environments=["dev", "prod"])
    ArgoRegistration(fleet, "reg", cluster=cluster, project="ais", shard=1, namespaces=["a"])
    argocd(fleet, export_kubeconfigs=True, kubeconfig_store="store", insecure=True)
    FleetPackage(fleet, "p", namespace="p", source=GitPath(path="apps/p", recurse=True))
    manifests = rendered(fleet, "prod")
    assert [p.line() for p in validate_manifests(manifests, crds_dir=crds_dir())] == []


def test_root_application_in_the_readme(
    example: testing.RepositoryOutput, hybrid_rendered: Path
) -> None:
    readme = (REPO / "README.md").read_text()
    command = "kubectl apply -n argocd -f dist/{env}/bootstrap/{file}"
    file = "application_argoproj.io_argocd_fleet-<env>.yaml"
    assert command.format(env="<env>", file=file) in readme
    for env, files in example.files.items():
        relpath = f"bootstrap/application_argoproj.io_argocd_fleet-{env}.yaml"
        assert relpath in files
        assert (hybrid_rendered / "dist" / env / relpath).is_file()


# --- ArgoCD configuration and its Lua health checks -------------------------------------------


def _lua_health(script: str, obj: dict[str, Any]) -> dict[str, str]:
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)

    def to_lua(value: Any) -> Any:
        if isinstance(value, dict):
            return lua.table_from({k: to_lua(v) for k, v in value.items()})
        if isinstance(value, list):
            return lua.table_from([to_lua(v) for v in value])
        return value

    lua.globals().obj = to_lua(obj)
    result = lua.execute(script)
    return {"status": result["status"], "message": result["message"]}


def test_argocd_cm_keys(fleet: Fleet) -> None:
    argocd(fleet)
    cm = find(rendered(fleet), "ConfigMap", "argocd-cm")
    assert cm.folder == "bootstrap"
    assert cm.body["metadata"]["annotations"] == {
        SYNC_OPTIONS: "ServerSideApply=true,Prune=false,Delete=false",
        SYNC_WAVE: "0",
    }
    data = cm.body["data"]
    assert data["application.resourceTrackingMethod"] == "annotation"
    assert yaml.safe_load(data["resource.exclusions"])[-1] == {
        "apiGroups": ["*"],
        "kinds": ["ProviderConfigUsage"],
        "clusters": ["*"],
    }
    assert data["resource.customizations.health.argoproj.io_Application"] == APPLICATION_HEALTH
    # No OKE cluster in this environment: no Cluster API health checks either.
    assert not [k for k in data if "cluster.x-k8s.io" in k]
    # The rendered fleet's tree is locked: the same ArgoCd in a fleet with an OKE cluster.
    fleet = Fleet(fleet.config)
    argocd(fleet)
    OciManagedCluster(
        fleet,
        "oke",
        name="oke-{env}",
        environments=["dev"],
        compartment_id="ocid1.compartment.oc1..aaaaexample",
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        node_pools=[OkeNodePool(name="general", ocpus=1, node_count=3)],
        # CAPOCI runs without credentials of its own: every cluster names an identity.
        identity=OciClusterIdentity(fleet, "tenancy", principal_secret="oci-user-principal"),
        network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
    )
    data = find(rendered(fleet), "ConfigMap", "argocd-cm").body["data"]
    infra = "infrastructure.cluster.x-k8s.io"
    assert data[f"resource.customizations.health.{infra}_OCIManagedCluster"] == READY_HEALTH
    for kind, lua in (
        ("OCIManagedControlPlane", CONTROL_PLANE_HEALTH),
        ("OCIManagedMachinePool", POOL_HEALTH),
    ):
        assert data[f"resource.customizations.health.{infra}_{kind}"] == lua
        # they read timestamps (fleet.platform.health_lua): string.match needs the libraries
        assert data[f"resource.customizations.useOpenLibs.{infra}_{kind}"] == "true"
    key = "resource.customizations.health.infrastructure.cluster.x-k8s.io_OCIClusterIdentity"
    assert data[key] == IDENTITY_HEALTH


def test_application_health_follows_the_child() -> None:
    assert _lua_health(APPLICATION_HEALTH, {})["status"] == "Progressing"
    child = {"status": {"health": {"status": "Degraded", "message": "boom"}}}
    assert _lua_health(APPLICATION_HEALTH, child) == {"status": "Degraded", "message": "boom"}
    assert _lua_health(APPLICATION_HEALTH, {"status": {"health": {"status": "Healthy"}}}) == {
        "status": "Healthy",
        "message": "",
    }


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (None, "Progressing"),
        ({"ready": False}, "Progressing"),
        ({"ready": True}, "Healthy"),
        ({"conditions": [{"type": "Ready", "status": "True"}]}, "Healthy"),
        (
            {"conditions": [{"type": "Ready", "status": "False", "severity": "Info"}]},
            "Progressing",
        ),
        (
            {
                "conditions": [
                    {"type": "Other", "status": "False"},
                    {"type": "Ready", "status": "False", "severity": "Error", "message": "quota"},
                ]
            },
            "Degraded",
        ),
        ({"failureReason": "InvalidConfiguration", "ready": False}, "Degraded"),
    ],
)
def test_capoci_health(status: dict[str, Any] | None, expected: str) -> None:
    obj: dict[str, Any] = {"kind": "OCIManagedCluster"}
    if status is not None:
        obj["status"] = status
    assert _lua_health(READY_HEALTH, obj)["status"] == expected


def test_capoci_identity_health() -> None:
    assert _lua_health(IDENTITY_HEALTH, {})["status"] == "Healthy"
    failed = {"status": {"conditions": [{"type": "X", "status": "False", "severity": "Error"}]}}
    assert _lua_health(IDENTITY_HEALTH, failed)["status"] == "Degraded"


# --- snapshots -------------------------------------------------------------------------------


def test_small_fleet_snapshot(fleet: Fleet, snapshot: SnapshotAssertion) -> None:
    cluster = magnum(fleet, environments=["dev", "prod"])
    magnum(fleet, "web", name="web-{env}", environments=["prod"], fleet_labels={"team": "web"})
    ArgoRegistration(fleet, "reg", cluster=cluster, project="ais")
    argocd(fleet, export_kubeconfigs=per_env(prod=True, default=False), kubeconfig_store="vault")
    FleetPackage(
        fleet,
        "monitoring",
        environments=["prod"],
        namespace="monitoring",
        source=HelmChart(
            repo_url="https://charts.example.org",
            chart="monitoring",
            version="1.2.3",
            values={"retention": "7d"},
        ),
    )
    for env in ("dev", "prod"):
        out = {m.relpath: m.body for m in rendered(fleet, env)}
        assert out == snapshot(name=env)


def test_1000_clusters_register_in_their_own_folders_below_argocds_limit(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path, environments=("prod",)))
    project = OpenStackProject(fleet, "p", project_name="P", region="cern")
    tpl = template()
    for i in range(1000):
        MagnumCluster(
            fleet,
            f"c{i}",
            name=f"c{i}",
            environments=["prod"],
            project=project,
            template=tpl,
            flavor="m",
            keypair="k",
            node_count=1,
        )
    argocd(fleet)
    out = rendered(fleet, "prod")
    registrations = [m for m in out if m.api_version.startswith("cluster.argocd.")]
    assert len(registrations) == 1000
    assert len([m for m in out if m.kind == "Application"]) > 1000
    # Each registration sits in its cluster's folder, synced by that cluster's Application.
    assert {m.folder for m in registrations} == {f"clusters/c{i}" for i in range(1000)}
    # ArgoCD's directory limit is 10 MB (argo-cd v3.5.1 argocd-cmd-params-cm
    # reposerver.max.combined.directory.manifests.size): every folder stays far below it;
    # bootstrap/, the largest, holds about 1.1 KB per cluster Application (1.08 MB here).
    from fleet.pipeline.yaml_canonical import to_yaml

    sizes: dict[str, int] = {}
    for m in out:
        sizes[m.folder] = sizes.get(m.folder, 0) + len(to_yaml(m.body))
    assert max(sizes.values()) < 2_000_000


# --- OKE --------------------------------------------------------------------------------------


def test_oke_cluster_is_registered_from_the_cluster_api_kubeconfig(fleet: Fleet) -> None:
    OciManagedCluster(
        fleet,
        "oke",
        name="oke-{env}",
        environments=["prod"],
        compartment_id="ocid1.compartment.oc1..aaaaexample",
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        namespace="oke",
        network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
        node_pools=[OkeNodePool(name="general", ocpus=1, node_count=3)],
        fleet_labels={"team": "sso"},
        identity=OciClusterIdentity(fleet, "tenancy", principal_secret="oci-user-principal"),
    )
    argocd(fleet, export_kubeconfigs=True, kubeconfig_store="vault")
    out = rendered(fleet, "prod")
    body = find(out, "Cluster", "oke-prod").body
    assert body["apiVersion"] == "cluster.argocd.crossplane.io/v1alpha1"
    assert body["spec"]["forProvider"]["config"] == {
        "kubeconfigSecretRef": {"key": "value", "name": "oke-prod-kubeconfig", "namespace": "oke"}
    }
    assert body["spec"]["forProvider"]["labels"] == {
        "fleet/cloud": "oke",
        "fleet/cluster": "oke-prod",
        "fleet/environment": "prod",
        "fleet/kubernetes-version": "v1.30.1",
        "fleet/region": "eu-frankfurt-1",
        "team": "sso",
    }
    assert (("oke", "oke-prod-kubeconfig", "value")) in _produced_secrets(out)
    # export_kubeconfigs=True leaves OKE out: its kubeconfig holds a minutes-long token.
    assert not [m for m in out if m.kind == "PushSecret"]
    cm = find(out, "ConfigMap", "argocd-cm").body["data"]
    # ArgoCD has no health for CAPOCI's kinds (argo-cd v3.5.1 resource_customizations/).
    for kind in ("OCIManagedCluster", "OCIManagedControlPlane", "OCIManagedMachinePool"):
        assert f"resource.customizations.health.infrastructure.cluster.x-k8s.io_{kind}" in cm
    namespaces = {m.name for m in out if m.kind == "Namespace"}
    assert "oke" in namespaces
    app = find(out, "Application", "fleet-prod-cluster-oke-prod")
    assert app.body["spec"]["source"]["path"] == "dist/prod/clusters/oke-prod"
    assert [p.line() for p in validate_manifests(out, crds_dir=crds_dir())] == []
