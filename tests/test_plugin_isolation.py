"""A fleet's platform is what its own declarations name, never what the process imported
(#30 "Catalogue per fleet").

Before, plug-ins were found by walking every imported declaration class: importing two
unrelated cloud classes that each declared a kubeadm control plane made a Magnum-only fleet
fail with "KubeadmControlPlane is owned by two platform components". Now the catalogue is
built from the fleet's declarations and kept on the fleet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest
from builders import argocd, magnum
from support import FIXTURE_FLEETS, REPO

from fleet import FleetError, testing
from fleet.clouds.base import CloudPlugin, FleetCluster
from fleet.core.manifest import Manifest
from fleet.core.values import SecretKeyRef
from fleet.platform.component import DirectoryInstall, PlatformComponent
from fleet.platform.plugins import Platform

MAGNUM_ONLY = FIXTURE_FLEETS / "magnum"
FIXTURE_CLOUDS = REPO / "tests" / "fixtures" / "clouds"

RENDER = textwrap.dedent(
    """\
    import hashlib, importlib, json, pkgutil, sys
    from pathlib import Path

    mode, root, clouds = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if mode == "every":
        import fleet

        # Every module of the package (both built-in clouds, the importers, the CLI) ...
        for info in pkgutil.walk_packages(fleet.__path__, "fleet."):
            importlib.import_module(info.name)
        # ... every fixture cloud ...
        sys.path.insert(0, str(clouds))
        for info in pkgutil.walk_packages([str(clouds)]):
            importlib.import_module(info.name)
        # ... and the reproduction of #30: two unrelated cloud classes, each with its own
        # kubeadm control plane.
        from fleet.plugin import CloudPlugin, DirectoryInstall, PlatformComponent
        from fleet.clouds.base import FleetCluster

        def kubeadm(name):
            return PlatformComponent(
                name=name,
                install=DirectoryInstall(repo_url="https://example.org/" + name, path="x",
                                         namespace=name),
                owns=frozenset({("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")}),
            )

        class First(FleetCluster):
            plugin = CloudPlugin(components=(kubeadm("first-kubeadm"),))

        class Second(FleetCluster):
            plugin = CloudPlugin(components=(kubeadm("second-kubeadm"),))

    from fleet.core.config import FleetConfig
    from fleet.pipeline.synth import synthesize

    result = synthesize(FleetConfig.load(root), use_cache=False)
    files = {
        f"{env}/{path}": hashlib.sha256(data).hexdigest()
        for env, tree in result.files.items()
        for path, data in tree.items()
    }
    modules = sorted(m for m in sys.modules if m.startswith(("fleet.clouds.", "capo")))
    print(json.dumps({"files": files, "modules": modules}))
    """
)


def _render(mode: str, tmp_path: Path) -> dict[str, object]:
    env = {**os.environ, "FLEET_CACHE_DIR": str(tmp_path / f"cache-{mode}")}
    env.pop("FLEET_CRDS_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", RENDER, mode, str(MAGNUM_ONLY), str(FIXTURE_CLOUDS)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[str, object] = json.loads(proc.stdout)
    return found


def test_every_plugin_imported_renders_the_same_bytes(tmp_path: Path) -> None:
    """One process imports every plug-in of the repository (the fixture clouds too, and two
    rogue kubeadm control planes); the other only what the Magnum-only fleet loads. Both
    synthesize (checks included) to the same files, byte for byte."""
    only = _render("only", tmp_path)
    every = _render("every", tmp_path)
    assert only["files"] == every["files"]
    assert len(only["files"]) >= 40  # type: ignore[arg-type]
    # The premise: the first process loaded Magnum alone, the second every cloud.
    assert not [m for m in only["modules"] if m.startswith(("fleet.clouds.oci", "capo"))]  # type: ignore[attr-defined]
    assert "fleet.clouds.magnum.cluster" in only["modules"]  # type: ignore[operator]
    assert {"fleet.clouds.oci.cluster", "capo.cluster"} <= set(every["modules"])  # type: ignore[arg-type]


def _kubeadm(name: str) -> PlatformComponent:
    return PlatformComponent(
        name=name,
        install=DirectoryInstall(repo_url=f"https://example.org/{name}", path="x", namespace=name),
        owns=frozenset({("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")}),
    )


class _Kubeadm(FleetCluster):
    """A cloud that brings its own kubeadm control plane instead of the shared one."""

    def render(self, environment: str) -> list[Manifest]:
        return []

    def kubernetes_version(self, environment: str) -> str:
        return "v1.31.4"

    def region(self, environment: str) -> str:
        return "r"

    def account(self, environment: str) -> str:
        return "a"

    def node_pools(self, environment: str) -> list[object]:  # type: ignore[override]
        return []

    def kubeconfig_secret(self, environment: str) -> SecretKeyRef:
        return SecretKeyRef(name=f"{self.object_name(environment)}-kc", namespace="n", key="k")

    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        return ("v1", "Secret", "n", "x")


class _First(_Kubeadm):
    plugin: ClassVar[CloudPlugin] = CloudPlugin(components=(_kubeadm("first-kubeadm"),))


class _Second(_Kubeadm):
    plugin: ClassVar[CloudPlugin] = CloudPlugin(components=(_kubeadm("second-kubeadm"),))


def test_two_clouds_owning_one_kind_break_only_a_fleet_that_declares_both(
    tmp_path: Path,
) -> None:
    """The reproduction in-process: with both classes imported (above), a Magnum-only fleet
    validates; a fleet that declares both is refused, naming the two components."""
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    magnum(fleet)
    argocd(fleet)
    testing.synth(fleet, validate=True)
    assert Platform.of(fleet).plugins.catalogue.get("first-kubeadm") is None

    both = testing.fleet(environments=["dev"], root=tmp_path / "both")
    argocd(both)
    _First(both, "a", name="a", environments=["dev"])
    _Second(both, "b", name="b", environments=["dev"])
    with pytest.raises(
        FleetError,
        match="KubeadmControlPlane is owned by two platform "
        "components: first-kubeadm and second-kubeadm",
    ):
        testing.synth(both, validate=True)


def test_the_catalogue_is_kept_on_the_fleet_once_locked(tmp_path: Path) -> None:
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    magnum(fleet)
    before = Platform.of(fleet).plugins  # in define(): made afresh, the tree still grows
    argocd(fleet)
    assert Platform.of(fleet).plugins is not before
    assert "provider-argocd" not in {c.name for c in before.catalogue.components}
    fleet.run_phases()
    kept = Platform.of(fleet).plugins
    assert Platform.of(fleet).plugins is kept  # one per fleet from now on
    assert "provider-argocd" in {c.name for c in kept.catalogue.components}
