"""Slots a plug-in fills instead of editing the tool (#30): fleet-wide components, a
component's own pinned CRDs, the kubeadm providers; and what stays bounded in a long-lived
process (the CRD indexes, the YAML texts).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from builders import argocd, find, magnum, rendered, wave
from crd_samples import manifest

from fleet import DefinitionError, FleetConstruct, FleetError, testing
from fleet.checks import schema
from fleet.checks.crds import PACKAGED_CRDS, plugin_crds, read_crd_file
from fleet.checks.references import check_references
from fleet.checks.waves import check_waves
from fleet.clouds.base import CloudPlugin, FleetCluster
from fleet.core.manifest import Manifest
from fleet.pipeline import yaml_fast
from fleet.pipeline.yaml_canonical import to_yaml
from fleet.platform.changes import Change
from fleet.platform.component import ChartInstall, DirectoryInstall, PlatformComponent
from fleet.platform.kubeadm import (
    KUBEADM_CHANGE_RULES,
    KUBEADM_CONTROL_PLANE,
    judge_control_plane_version,
)
from fleet.platform.plugins import Platform, Plugin, PluginSet
from fleet.testing import InvalidObjects

KYVERNO = PlatformComponent(
    name="kyverno",
    version="3.3.4",
    install=ChartInstall(
        repo_url="https://kyverno.github.io/kyverno/", chart="kyverno", namespace="kyverno"
    ),
    owns=frozenset({("kyverno.io", "ClusterPolicy"), ("kyverno.io", "Policy")}),
    crds_pinned=False,
)
"""A fleet-wide component no declaration class asks for (kyverno's chart 3.3.4)."""

POLICY = {
    "apiVersion": "kyverno.io/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "require-labels"},
    "spec": {"rules": []},
}


# --- Platform.of(fleet).add ------------------------------------------------------------------


def test_a_fleet_wide_component_is_one_line_in_define(tmp_path: Path) -> None:
    """Adding kyverno once meant editing argocd/argo_cd.py in three places."""
    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    magnum(fleet, environments=["dev", "prod"])
    argocd(fleet, versions={"kyverno": "3.3.5"})
    Platform.of(fleet).add(KYVERNO)
    for env in ("dev", "prod"):
        app = find(rendered(fleet, env), "Application", f"fleet-{env}-kyverno")
        assert app.body["spec"]["source"]["chart"] == "kyverno"
        assert app.body["spec"]["source"]["targetRevision"] == "3.3.5"  # ArgoCd(versions=)
        assert wave(app) == 1  # requires nothing
    # Its kinds are owned: a policy synced in platform/ (wave 4) comes after its CRD.
    out = rendered(fleet, "dev")
    policy = Manifest("dev", POLICY, "platform", "test.py:1")
    assert check_waves([*out, policy], Platform.of(fleet).plugins) == []


def test_a_fleet_wide_component_may_be_placed_in_some_environments(tmp_path: Path) -> None:
    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    magnum(fleet, environments=["dev", "prod"])
    argocd(fleet)
    Platform.of(fleet).add(KYVERNO, environments=["prod"])
    assert "fleet-dev-kyverno" not in {m.name for m in rendered(fleet, "dev")}
    assert find(rendered(fleet, "prod"), "Application", "fleet-prod-kyverno")
    # A policy in dev, where kyverno is not installed, is caught by the wave check.
    policy = Manifest("dev", POLICY, "platform", "test.py:1")
    problems = [
        p.line() for p in check_waves([*rendered(fleet, "dev"), policy], Platform.of(fleet).plugins)
    ]
    assert any(
        "comes from kyverno, which this environment does not install" in p for p in problems
    ), problems


def test_platform_add_refuses_what_is_no_component_or_comes_too_late(tmp_path: Path) -> None:
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    with pytest.raises(DefinitionError, match="component: expected a PlatformComponent, got str"):
        Platform.of(fleet).add("kyverno")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="environments: unknown environment 'qa'"):
        Platform.of(fleet).add(KYVERNO, environments=["qa"])
    with pytest.raises(DefinitionError, match="the platform belongs to the Fleet"):
        Platform.of("fleet")  # type: ignore[arg-type]
    fleet.run_phases()
    with pytest.raises(DefinitionError, match="after the tree was locked"):
        Platform.of(fleet).add(KYVERNO)


def test_two_fleets_do_not_share_fleet_wide_components(tmp_path: Path) -> None:
    one = testing.fleet(environments=["dev"], root=tmp_path / "one")
    other = testing.fleet(environments=["dev"], root=tmp_path / "other")
    Platform.of(one).add(KYVERNO)
    assert Platform.of(one).plugins.catalogue.get("kyverno") is KYVERNO
    assert Platform.of(other).plugins.catalogue.get("kyverno") is None


# --- PlatformComponent.crds -------------------------------------------------------------------

GADGET_CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: gadgets.example.org
    spec:
      group: example.org
      names: {kind: Gadget, plural: gadgets}
      scope: Cluster
      versions:
        - name: v1
          served: true
          storage: true
          schema:
            openAPIV3Schema:
              type: object
              properties:
                spec:
                  type: object
                  properties:
                    size: {type: %s}
    """
)


def _plugin_crds(
    root: Path,
    size_type: str = "integer",
    *,
    lock: bool = True,
    extra: dict[str, Path] | None = None,
) -> Path:
    """A plug-in's ``crds/`` folder (its Gadget CRD, gzipped, and ``extra`` files by name)
    beside its ``crds.lock.yaml``."""
    crds = root / "crds"
    (crds / "gadgets").mkdir(parents=True, exist_ok=True)
    files = {"example.org_gadgets.yaml": (GADGET_CRD % size_type).encode()}
    files.update({name: read_crd_file(path) for name, path in (extra or {}).items()})
    entries = []
    for name, data in files.items():
        (crds / "gadgets" / f"{name}.gz").write_bytes(gzip.compress(data, mtime=0))
        entries.append(
            {
                "name": name,
                "url": f"https://example.org/crds/{name}",
                "release": "v1.0.0",
                "sha256": hashlib.sha256(data).hexdigest(),
                "path": f"gadgets/{name}",
            }
        )
    if lock:
        (root / "crds.lock.yaml").write_text(yaml.safe_dump({"crds": entries}))
    return crds


def _gadget_class(crds: Path) -> type[FleetConstruct]:
    component = PlatformComponent(
        name="gadgets",
        version="v1.0.0",
        install=DirectoryInstall(
            repo_url="https://example.org/gadgets", path="dist", namespace="gadgets"
        ),
        owns=frozenset({("example.org", "Gadget")}),
        crds=crds,
    )

    class Gadget(FleetConstruct):
        plugin: ClassVar[Plugin] = Plugin(components=(component,))

        def render(self, environment: str) -> list[Manifest]:
            body: dict[str, Any] = {
                "apiVersion": "example.org/v1",
                "kind": "Gadget",
                "metadata": {"name": self.construct_id},
                "spec": {"size": 3 if self.construct_id != "wrong" else "three"},
            }
            return [self._manifest(environment, "extra", body)]

    return Gadget


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLEET_CRDS_DIR", raising=False)


def test_a_components_crds_are_validated_against(tmp_path: Path, cache: None) -> None:
    gadget = _gadget_class(_plugin_crds(tmp_path / "plugin"))
    fleet = testing.fleet(environments=["dev"], root=tmp_path / "ok")
    gadget(fleet, "fine")
    assert testing.synth(fleet, validate=True).get("Gadget", "fine")
    wrong = testing.fleet(environments=["dev"], root=tmp_path / "wrong")
    gadget(wrong, "wrong")
    with pytest.raises(InvalidObjects, match=r"spec\.size: expected integer, got \"three\""):
        testing.synth(wrong, validate=True)
    # A fleet that does not declare the plug-in's kind never reads its folder.
    assert plugin_crds(Platform.of(testing.fleet(environments=["dev"])).plugins) == ()


def test_a_components_crds_are_pinned_like_the_tools(tmp_path: Path, cache: None) -> None:
    crds = _plugin_crds(tmp_path / "plugin")
    # Edited after pinning: the lock's sha256 refuses it.
    data = (GADGET_CRD % "string").encode()
    (crds / "gadgets" / "example.org_gadgets.yaml.gz").write_bytes(gzip.compress(data, mtime=0))
    fleet = testing.fleet(environments=["dev"], root=tmp_path / "a")
    _gadget_class(crds)(fleet, "fine")
    with pytest.raises(
        FleetError,
        match=r"example.org_gadgets.yaml.gz: sha256 is [0-9a-f]{64}, "
        r"crds.lock.yaml expects",
    ):
        testing.synth(fleet, validate=True)
    # Without a lock beside it, the folder is refused.
    unpinned = _plugin_crds(tmp_path / "unpinned", lock=False)
    fleet = testing.fleet(environments=["dev"], root=tmp_path / "b")
    _gadget_class(unpinned)(fleet, "fine")
    with pytest.raises(FleetError, match=r"is not a crds/ folder beside a crds\.lock\.yaml"):
        testing.synth(fleet, validate=True)


def test_a_kind_two_folders_define_is_refused(tmp_path: Path, cache: None) -> None:
    """A plug-in's folder that also holds a CRD of the tool's (ArgoCD's Application): which
    one validates would depend on the order, so the synth stops, naming both files."""
    application = PACKAGED_CRDS / "argo-cd" / "application-crd.yaml.gz"
    crds = _plugin_crds(tmp_path / "plugin", extra={"application-crd.yaml": application})
    fleet = testing.fleet(environments=["dev"], root=tmp_path / "a")
    _gadget_class(crds)(fleet, "fine")
    with pytest.raises(FleetError) as raised:
        testing.synth(fleet, validate=True)
    assert "argoproj.io/v1alpha1 Application is defined twice: " in str(raised.value)
    assert str(application) in str(raised.value)
    assert str(crds / "gadgets" / "application-crd.yaml.gz") in str(raised.value)


def test_the_schema_verdict_depends_on_a_components_crds(tmp_path: Path) -> None:
    crds = _plugin_crds(tmp_path / "plugin")
    base = schema.available_crds_dir()
    before = schema.schema_inputs(base, frozenset(), (crds,))
    assert before != schema.schema_inputs(base, frozenset(), ())
    _plugin_crds(tmp_path / "plugin", "string")
    assert schema.schema_inputs(base, frozenset(), (crds,)) != before


# --- caches that outlive a fleet ----------------------------------------------------------------


def test_crd_indexes_are_kept_by_content_and_bounded(tmp_path: Path, cache: None) -> None:
    body = {
        "apiVersion": "example.org/v1",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": {"size": 3},
    }
    folders = []
    for i in range(schema.INDEXES_KEPT + 2):
        folder = tmp_path / f"f{i}" / "crds"
        folder.mkdir(parents=True)
        (folder / "gadget.yaml").write_text(GADGET_CRD % "integer")
        folders.append(folder)
        assert schema.validate_manifests([manifest(body)], crds_dir=folder) == []
    assert len(schema._INDEXES) <= schema.INDEXES_KEPT
    # The same folder, its file changed: a new index, a new verdict, in the same process.
    (folders[-1] / "gadget.yaml").write_text(GADGET_CRD % "string")
    os.utime(folders[-1] / "gadget.yaml", ns=(1, 1))
    [problem] = schema.validate_manifests([manifest(body)], crds_dir=folders[-1])
    assert problem.field_path == "spec.size"


def test_yaml_texts_are_bounded_and_still_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_fast, "TEXTS_KEPT", 8)
    for i in range(40):
        body = {"kind": "ConfigMap", "data": {f"key-{i}": f"value {i}: yes", "n": float(i) / 3}}
        assert yaml_fast.fast_to_yaml(body) == to_yaml(body)
        assert len(yaml_fast._VALUES) <= 8 and len(yaml_fast._KEYS) <= 8
        assert len(yaml_fast._FLOATS) <= 8


# --- the kubeadm slot -------------------------------------------------------------------------


def test_kubeadm_brings_its_references(tmp_path: Path) -> None:
    """MachineDeployment (the core's) and KubeadmControlPlane references are checked for any
    cloud that requires the kubeadm control plane."""
    plugins = PluginSet.of([], (KUBEADM_CONTROL_PLANE,))
    deployment = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": "md", "namespace": "ns"},
        "spec": {
            "clusterName": "nowhere",
            "selector": {},
            "template": {
                "spec": {
                    "clusterName": "nowhere",
                    "bootstrap": {
                        "configRef": {
                            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                            "kind": "KubeadmConfigTemplate",
                            "name": "md",
                        }
                    },
                    "infrastructureRef": {
                        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                        "kind": "OpenStackMachineTemplate",
                        "name": "md",
                    },
                }
            },
        },
    }
    control_plane = {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "cp", "namespace": "ns"},
        "spec": {
            "machineTemplate": {
                "infrastructureRef": {
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "OpenStackMachineTemplate",
                    "name": "cp",
                }
            }
        },
    }
    found = {
        (p.object, p.field_path)
        for p in check_references([manifest(deployment), manifest(control_plane)], plugins)
    }
    assert {path for _, path in found} == {
        "spec.clusterName",
        "spec.template.spec.clusterName",
        "spec.template.spec.bootstrap.configRef",
        "spec.template.spec.infrastructureRef",
        "spec.machineTemplate.infrastructureRef",
    }
    # Without the kubeadm slot nothing knows these kinds' references.
    assert check_references([manifest(control_plane)], PluginSet()) == []


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("v1.31.4", "v1.32.0", False),
        ("v1.31.4", "v1.32.9", False),
        ("v1.31.4", "v1.33.0", True),
        ("v1.31.4", "1.34.1", True),  # semver's ParseTolerant: no "v" is fine
        ("v1.31.4", "v1.31.2", False),  # the webhook sets no floor
        ("v1.31.4", "latest", False),  # unparseable: the schema's business, not this rule's
    ],
)
def test_a_control_plane_moves_one_minor_version_at_a_time(
    old: str, new: str, refused: bool
) -> None:
    """cluster-api v1.12.11 controlplane/kubeadm/internal/webhooks/kubeadmcontrolplane.go
    ``validateVersion``: refused from the old minor + 2 on, whatever the patch."""
    [rule] = KUBEADM_CHANGE_RULES
    assert rule.applies("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")
    change = Change("dev", {"spec": {"version": old}}, {"spec": {"version": new}}, None, None)  # type: ignore[arg-type]
    verdicts = judge_control_plane_version(change)
    assert bool(verdicts) is refused
    if refused:
        assert verdicts[0][0] == "error"
        assert "upgrade to v1.32 first" in verdicts[0][1]


# --- FleetCluster as an abstract base ---------------------------------------------------------


def test_a_cluster_class_must_implement_what_the_fleet_calls(tmp_path: Path) -> None:
    class Half(FleetCluster):
        plugin: ClassVar[CloudPlugin] = CloudPlugin()

        def render(self, environment: str) -> list[Manifest]:
            return []

    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    with pytest.raises(DefinitionError) as raised:
        Half(fleet, "half", name="half", environments=["dev"])  # type: ignore[abstract]
    assert raised.value.message == (
        "Half cannot be declared: it does not implement account, kubeconfig_producer, "
        "kubeconfig_secret, kubernetes_version, node_pools, region (abstract in FleetCluster)"
    )
    assert raised.value.where.startswith("tests/test_platform_slots.py:")


def test_a_cluster_class_must_name_its_plugin(tmp_path: Path) -> None:
    from test_plugin_isolation import _Kubeadm

    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    with pytest.raises(DefinitionError, match="_Kubeadm names no CloudPlugin"):
        _Kubeadm(fleet, "k", name="k", environments=["dev"])
