"""The CRDs objects are validated against are those of the releases the bootstrap deploys.

One source of truth: each platform component's pinned ``version`` (the value the bootstrap
installs, :mod:`fleet.platform`, :mod:`fleet.argocd.components`, the clouds' plug-ins). Every
entry of ``crds.lock.yaml`` sits in the folder of the component that owns it, and names that
component's release tag and the tag's commit. The tags' commits were read in the upstream
repositories (``git rev-parse <tag>^{commit}``): kubernetes-sigs/cluster-api v1.12.11
8f5479b7 (``config/crd/bases/``; main moved them to ``core/config/crd/bases/`` and added
fields v1.12 does not serve), oracle/cluster-api-provider-oci v0.24.0 909e19f4,
argoproj/argo-cd v3.5.1 109ca7ca (``manifests/crds/``), crossplane/crossplane v2.3.4 c2670a73,
crossplane-contrib/provider-openstack v0.9.0 c0f2ee9b, crossplane-contrib/provider-argocd
v0.14.3 87d0a239 (no namespaced ``.m.`` CRDs yet), kubernetes-sigs/cluster-api-operator
v0.28.0 d32c1c2a, external-secrets/external-secrets helm-chart-2.9.0 cc5bfbc2.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from builders import tool_components
from crd_samples import capoci_managed, crds_dir, manifest

from fleet.checks.crds import PACKAGED_LOCK
from fleet.checks.schema import validate_manifests
from fleet.platform.component import PlatformComponent
from fleet.platform.kubeadm import KUBEADM_CRDS

RELEASE_TAG = re.compile(r"^(helm-chart-)?v?\d+\.\d+\.\d+$")
"""A release tag: no ``-N-g<sha>`` suffix, no branch."""


def _entries() -> list[dict[str, str]]:
    """The entries of the package's lock and of the kubeadm providers' own."""
    entries: list[dict[str, str]] = [
        *yaml.safe_load(PACKAGED_LOCK.read_text())["crds"],
        *yaml.safe_load((KUBEADM_CRDS.parent / "crds.lock.yaml").read_text())["crds"],
    ]
    return entries


def _builtin() -> dict[str, PlatformComponent]:
    """Every component the tool ships."""
    return {c.name: c for c in tool_components()}


def _bare(version: str) -> str:
    return version.removeprefix("helm-chart-").removeprefix("v")


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["name"])
def test_each_pinned_crd_is_from_the_release_its_component_deploys(entry: dict[str, str]) -> None:
    component = _builtin()[entry["path"].split("/", 1)[0]]
    assert component.version, f"{component.name} pins no version"
    assert RELEASE_TAG.match(entry["release"]), entry["release"]
    assert _bare(entry["release"]) == _bare(component.version)
    assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
    assert entry["url"].startswith("https://raw.githubusercontent.com/")
    assert f"/{entry['commit']}/" in entry["url"]


def test_a_field_cluster_api_v1_12_does_not_serve_is_refused() -> None:
    """``MachinePool`` v1beta1 ``spec.template.spec.taints`` exists on cluster-api main, not
    in v1.12.11 (``config/crd/bases/cluster.x-k8s.io_machinepools.yaml``): the API server
    of the deployed core would drop it, so validation refuses it."""
    pool = next(o for o in capoci_managed() if o["kind"] == "MachinePool")
    pool["spec"]["template"]["spec"]["taints"] = [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    ]
    problems = [p.line() for p in validate_manifests([manifest(pool)], crds_dir=crds_dir())]
    assert len(problems) == 1
    assert "spec.template.spec.taints" in problems[0]
    assert "unknown field" in problems[0]


def test_namespaced_provider_argocd_kinds_are_refused() -> None:
    """provider-argocd v0.14.3 serves no ``cluster.m.argocd.crossplane.io`` (its
    ``package/crds/`` has only the cluster-scoped kinds): such an object has no CRD."""
    body = {
        "apiVersion": "cluster.m.argocd.crossplane.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "crossplane-system"},
        "spec": {"forProvider": {"name": "c"}},
    }
    problems = [p.line() for p in validate_manifests([manifest(body)], crds_dir=crds_dir())]
    assert len(problems) == 1
    assert "no schema for cluster.m.argocd.crossplane.io/v1alpha1 Cluster" in problems[0]


def test_a_version_override_is_checked_against_the_lock_of_the_crds_in_use(
    tmp_path: Path,
) -> None:
    """``ArgoCd(versions=...)`` deploys another release: with the packaged CRDs, that
    release's objects would be validated against v2.3.4's schemas, so the synth refuses it
    (``fleet.pipeline.synth``); a ``crds/`` folder of the user's own, beside a lock that
    pins the deployed release, validates it."""
    from fleet.checks.crds import PACKAGED_CRDS, unvalidated_versions, verify_vendored

    deployed = {"crossplane": "2.4.0", "cluster-api": "v1.12.11", "argo-cd": "3.5.1"}
    assert unvalidated_versions(deployed, PACKAGED_CRDS) == [("crossplane", "2.4.0", "v2.3.4")]

    own = tmp_path / "crds"
    shutil.copytree(PACKAGED_CRDS, own)
    entries = yaml.safe_load(PACKAGED_LOCK.read_text())
    for entry in entries["crds"]:
        if entry["path"].startswith("crossplane/"):
            entry["release"] = "v2.4.0"  # as if `fleet crds pull --lock` had fetched them
    (tmp_path / "crds.lock.yaml").write_text(yaml.safe_dump(entries))
    verify_vendored(own, tmp_path / "crds.lock.yaml")
    assert unvalidated_versions(deployed, own) == []
    # Without a lock beside it, a folder says nothing about its releases: a release other
    # than the packaged one is not known to be validated (issue 26; docs/guide.md, "The CRDs").
    assert unvalidated_versions(deployed, tmp_path) == [("crossplane", "2.4.0", "")]
    assert unvalidated_versions({"cluster-api": "v1.12.11"}, tmp_path) == []
