"""An installed cloud plug-in brings its importer (#30 "A cloud is one package, importer
included"): a distribution names its cluster class under the entry-point group
``fleet.clouds``, and ``fleet import tfstate`` reads its resource types.

The cloud is the fixture ``tests/fixtures/clouds/capo`` (its importer, ``capo/importer.py``,
is written against ``fleet.plugin`` alone), installed as a real distribution: the package
and its ``.dist-info`` (``METADATA``, ``entry_points.txt``) in a site folder on
``PYTHONPATH``, found by ``importlib.metadata`` as pip's install would be
(``tests/test_plugin_commands.py`` does the same for subcommands). Its state,
``tests/fixtures/terraform/capo/capo-batch.tfstate``, holds the fixture's made-up resource
type ``capo_cluster``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

from fleet.clouds.base import CLOUDS_GROUP
from fleet.importers.registry import importer_entries
from fleet.plugin import CLOUDS_GROUP as PUBLIC_GROUP

CAPO = REPO / "tests" / "fixtures" / "clouds" / "capo"
STATE = REPO / "tests" / "fixtures" / "terraform" / "capo" / "capo-batch.tfstate"
MAGNUM_STATE = REPO / "tests" / "fixtures" / "terraform" / "real"
MAGNUM_STATE = MAGNUM_STATE / "ppouliot-magnum-clusters" / "state" / "terraform.tfstate"

PLATFORM = """\
from fleet import ArgoCd, Fleet, SecretKeyRef


def define(fleet: Fleet) -> None:
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
"""


def _dist(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site folder holding the installed distribution ``fleet-capo`` 1.0 (the package
    ``capo``), whose cluster class is named twice: once by the class, once by its plug-in
    (found once)."""
    folder = tmp_path / "site"
    shutil.copytree(CAPO, folder / "capo", ignore=shutil.ignore_patterns("__pycache__"))
    _dist(
        folder,
        "fleet-capo",
        f"[{CLOUDS_GROUP}]\ncapo = capo.cluster:CapoCluster\n"
        "capo-plugin = capo.plugin:CAPO_PLUGIN\n",
    )
    return folder


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A site folder with a distribution whose two entry points are broken: one names a
    module that is not there, one names something that is no cloud."""
    folder = tmp_path / "broken-site"
    (folder / "fleet_odd").mkdir(parents=True)
    (folder / "fleet_odd" / "__init__.py").write_text("NOT_A_CLOUD = 3\n")
    _dist(
        folder,
        "fleet-odd",
        f"[{CLOUDS_GROUP}]\nmissing = fleet_gone.cluster:GoneCluster\n"
        "odd = fleet_odd:NOT_A_CLOUD\n",
    )
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev", "prod"]\n')
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "platform.py").write_text(PLATFORM)
    return root


def _fleet(
    sites: list[Path], tmp_path: Path, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(s) for s in sites),
        "FLEET_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("FLEET_CRDS_DIR", None)
    script = Path(sys.executable).with_name("fleet")
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
        cwd=cwd,
    )


def test_the_group_is_public() -> None:
    assert PUBLIC_GROUP == CLOUDS_GROUP == "fleet.clouds"


def test_installed_clouds_come_after_the_built_in_ones_each_once(
    site: Path, broken: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = importer_entries()
    assert [e.help.tfstate.split()[0] for e in before] == ["Magnum", "OKE"]
    monkeypatch.syspath_prepend(str(broken))
    monkeypatch.syspath_prepend(str(site))
    warned: list[str] = []
    after = importer_entries(warned.append)
    assert after[: len(before)] == before
    assert [e.help.tfstate for e in after[len(before) :]] == [
        "CAPO clusters from Terraform state (capo_cluster)"
    ]
    assert [o.flag for o in after[-1].options] == ["--capo-cloud-secret"]
    assert warned == [
        "cloud plug-in 'missing' (fleet_gone.cluster:GoneCluster, from fleet-odd 1.0) not "
        "loaded: ModuleNotFoundError: No module named 'fleet_gone'",
        "cloud plug-in 'odd' (fleet_odd:NOT_A_CLOUD, from fleet-odd 1.0) not loaded: it "
        "names neither a FleetCluster subclass nor a CloudPlugin",
    ]
    # Deterministic: the same look-up gives the same entries in the same order.
    assert importer_entries() == after
    loaded = after[-1].load()
    assert (loaded.name, sorted(loaded.clusters)) == ("CAPO", ["capo_cluster"])


def test_import_help_shows_the_plugins_importer(site: Path, tmp_path: Path) -> None:
    done = _fleet([site], tmp_path, "import", "--help")
    assert done.returncode == 0, done.stderr
    assert "CAPO clusters from Terraform state (capo_cluster)" in " ".join(done.stdout.split())
    assert done.stderr == ""
    tfstate = _fleet([site], tmp_path, "import", "tfstate", "--help")
    shown = " ".join(tfstate.stdout.split())
    assert "--capo-cloud-secret SECRET the Secret holding the imported CAPO" in shown
    assert "capo_cluster of STATE and declares each as a CapoCluster" in shown


def test_the_plugins_state_imports_renders_and_validates(
    site: Path, project: Path, tmp_path: Path
) -> None:
    done = _fleet(
        [site],
        tmp_path,
        "--root",
        str(project),
        "import",
        "tfstate",
        str(STATE),
        "--capo-cloud-secret",
        "batch-clouds",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    module = project / "clusters" / "capo_batch.py"
    text = module.read_text()
    assert "from capo.cluster import CapoCluster\n" in text
    assert "from fleet import Fleet\n" in text
    for line in (
        'name="capo-batch-dev"',
        'environments=["dev"]',
        'cloud_secret="batch-clouds"',
        'region="RegionOne"',
        'kubernetes_version="v1.31.4"',
        'image="ubuntu-2404-kube"',
        'control_plane_flavor="m1.medium"',
        'ssh_key_name="ops"',
    ):
        assert line in text, text
    # Left to their defaults (equal to the option's cloud_default): not declared.
    assert "control_plane_count" not in text and "clouds_yaml_entry" not in text
    report = [line for line in done.stdout.splitlines() if line.startswith("report: ")]
    assert (
        "report: capo-batch-dev (dev): carried: region, kubernetes_version, image, "
        "control_plane_flavor, ssh_key_name (CAPO does not copy it)"
    ) in report, report
    assert any("1 other resource(s) not read" in line for line in report)
    assert done.stdout.splitlines()[-1] == (
        "imported 1 cluster as 1 declaration (rendered and checked before writing)"
    )
    synth = _fleet([site], tmp_path, "--root", str(project), "synth", "--no-cache")
    assert synth.returncode == 0, synth.stdout + synth.stderr
    dist = project / "dist" / "dev" / "clusters" / "capo-batch-dev"
    objects = {p.name: p.read_text() for p in sorted(dist.glob("*.yaml"))}
    rendered = "\n".join(objects.values())
    assert "name: batch-clouds" in rendered and "region: RegionOne" in rendered
    assert "sshKeyName: ops" in rendered
    validate = _fleet([site], tmp_path, "--root", str(project), "validate")
    assert validate.returncode == 0, validate.stdout + validate.stderr


def test_an_attribute_with_no_fate_is_refused(site: Path, project: Path, tmp_path: Path) -> None:
    doc = json.loads(STATE.read_text())
    doc["resources"][0]["instances"][0]["attributes"]["floating_ip"] = "203.0.113.7"
    state = tmp_path / "capo-batch.tfstate"
    state.write_text(json.dumps(doc))
    done = _fleet([site], tmp_path, "--root", str(project), "import", "tfstate", str(state))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {state} capo_cluster.batch: floating_ip: capo_cluster attribute "
        "'floating_ip' is neither imported nor dropped by the CAPO importer (a provider newer "
        "than its option table?): nothing is written; add the option that imports it, or "
        "its drop"
    ]
    assert "203.0.113.7" not in done.stderr
    assert sorted(p.name for p in (project / "clusters").iterdir()) == [
        "__init__.py",
        "platform.py",
    ]


def test_a_broken_entry_point_warns_and_built_in_importers_work(
    broken: Path, tmp_path: Path
) -> None:
    from conftest import copy_fleet
    from support import HYBRID

    root = copy_fleet(HYBRID, tmp_path / "hybrid")
    done = _fleet(
        [broken],
        tmp_path,
        "--root",
        str(root),
        "import",
        "tfstate",
        "--state",
        f"dev={MAGNUM_STATE}",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: cloud")]
    assert warnings == [
        "warning: cloud plug-in 'missing' (fleet_gone.cluster:GoneCluster, from fleet-odd 1.0) "
        "not loaded: ModuleNotFoundError: No module named 'fleet_gone'",
        "warning: cloud plug-in 'odd' (fleet_odd:NOT_A_CLOUD, from fleet-odd 1.0) not loaded: "
        "it names neither a FleetCluster subclass nor a CloudPlugin",
    ]
    assert done.stdout.splitlines()[-1].startswith("imported ")


def test_a_generated_module_imports_only_the_plugins_classes_from_its_module(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The syntax-tree check of the generated modules allows the plug-in's own classes
    from its module (``GeneratedCode.module``), and nothing else from it, nor them from
    ``fleet``."""
    from fleet.codegen.source_check import GeneratedCodeError, check_source
    from fleet.importers.generated import shape

    monkeypatch.syspath_prepend(str(site))
    allowed = shape([e.load() for e in importer_entries()])
    head = '"""Generated by `fleet import tfstate` (x): re-import to update."""\n\n'
    body = '\n\ndef define(fleet: Fleet) -> None:\n    """Declare."""\n'
    good = head + "from capo.cluster import CapoCluster\nfrom fleet import Fleet\n" + body
    check_source(good, allowed, package="clusters", catalog=False, where="m.py")
    for imports, refused in (
        ("from capo.cluster import CAPI_API\nfrom fleet import Fleet\n", "'CAPI_API' from capo"),
        ("from fleet import CapoCluster, Fleet\n", "'CapoCluster' from fleet"),
        ("from capo.plugin import CapoCluster\nfrom fleet import Fleet\n", "from 'capo.plugin'"),
    ):
        with pytest.raises(GeneratedCodeError, match=refused):
            check_source(
                head + imports + body, allowed, package="clusters", catalog=False, where="m.py"
            )
