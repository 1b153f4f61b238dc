"""``fleet.testing``'s repository half: what a fleet repository's own tests
(``tests/test_fleet_invariants.py``, which ``fleet init`` writes into every new repository) are
written against, so that moving a module of the tool never breaks a user's repository (#30,
"Public extension API").

The scaffold's tests import only the public modules (an AST walk), and each public function
says what the command it stands for says: :meth:`RepositoryOutput.drift_report` what
``fleet synth --check`` prints, :func:`testing.validate_repository` what ``fleet validate``
reports, :func:`testing.cluster_bearing_kinds` what ``fleet diff`` guards.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
import yaml
from support import HYBRID, REPO

import fleet
from fleet import FleetConfig, testing
from fleet.cli.main import main

SCAFFOLD = REPO / "constructs" / "fleet" / "scaffold"
PUBLIC = frozenset({"fleet", "fleet.testing", "fleet.plugin", "fleet.cli"})
"""The modules a fleet repository (and a plug-in) may import: the rest may move."""
PUBLIC_SUBMODULES = frozenset({"testing", "plugin", "cli"})


def internal_imports(source: str) -> list[str]:
    """Every module of the ``fleet`` package ``source`` imports (at module level or inside a
    function) that is not public, and every name ``from fleet import`` takes that ``fleet``
    does not export."""
    wrong: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "fleet":
                wrong += [
                    f"fleet.{a.name}"
                    for a in node.names
                    if a.name not in fleet.__all__ and a.name not in PUBLIC_SUBMODULES
                ]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        wrong += [
            m for m in modules if (m == "fleet" or m.startswith("fleet.")) and m not in PUBLIC
        ]
    return wrong


def _scaffold_python() -> list[Path]:
    """The Python files ``fleet init`` writes: the repository's tests and its ``app.py``."""
    tests = sorted(p for p in (SCAFFOLD / "tests").rglob("*") if p.is_file())
    return [SCAFFOLD / "app.py.tmpl", *tests]


def test_the_walk_finds_an_internal_import() -> None:
    """The check below can fail: each way of reaching past the public API is caught."""
    assert internal_imports("from fleet.pipeline.synth import synthesize") == [
        "fleet.pipeline.synth"
    ]
    assert internal_imports("import fleet.cli.main") == ["fleet.cli.main"]
    assert internal_imports("from fleet.cli.app import cdk8s_app") == ["fleet.cli.app"]
    assert internal_imports("def f():\n    from fleet.guards import deletion\n") == ["fleet.guards"]
    assert internal_imports("from fleet import pipeline, Fleet, testing") == ["fleet.pipeline"]
    assert internal_imports("from fleet import Fleet\nfrom fleet.testing import synth\n") == []


def test_the_scaffolds_python_imports_only_the_public_api() -> None:
    """What ``fleet init`` writes into a user's ``tests/`` and ``app.py`` imports nothing
    from ``fleet.`` but ``fleet``, ``fleet.testing``, ``fleet.plugin`` and ``fleet.cli``: the
    tool's modules may move, a user's repository keeps passing. (The repository's own copies
    are the same bytes: ``test_init.py``.)"""
    files = _scaffold_python()
    assert [p.name for p in files] == ["app.py.tmpl", "test_fleet_invariants.py.tmpl"]
    for path in files:
        source = path.read_text()
        assert "from fleet" in source  # it does use the tool
        assert internal_imports(source) == [], path.relative_to(REPO)


def test_the_public_names_are_exported_and_documented() -> None:
    """Every name of ``fleet.testing.__all__`` exists and says what it is."""
    for name in testing.__all__:
        value = getattr(testing, name)
        if callable(value) and not isinstance(value, tuple):
            assert (value.__doc__ or "").strip(), name


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FleetConfig:
    """The hybrid fixture fleet as a repository of its own, its dist/ written by
    ``fleet synth``."""
    root = tmp_path / "repo"
    shutil.copytree(HYBRID, root, ignore=shutil.ignore_patterns("__pycache__", "dist", ".fleet"))
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--root", str(root), "synth"]) == 0
    return FleetConfig.load(root)


def test_a_fresh_dist_has_no_drift_and_reads_as_written(repository: FleetConfig) -> None:
    out = testing.synth_repository(repository)
    assert sorted(out.files) == sorted(repository.environments)
    assert out.drift() == [] and out.drift_report() == ""
    for env in repository.environments:
        committed = testing.read_dist(repository, env)
        assert committed == out.files[env]
        assert committed, env
        for path, data in committed.items():
            assert testing.reading_problems(data) == [], path
    # the objects are the files' (the lookups of SynthOutput work on them)
    env = repository.environments[0]
    apps = out.names("Application", env=env)
    assert apps and all(
        any(
            yaml.safe_load(data)["metadata"]["name"] == name
            for data in out.files[env].values()
            if b"kind: Application\n" in data
        )
        for name in apps
    )


def test_drift_is_what_fleet_synth_check_says(
    repository: FleetConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file changed, one added and one deleted: ``drift()`` names the three, and
    ``drift_report()`` is, line for line, what ``fleet synth --check`` prints (exit 1)."""
    env = repository.environments[0]
    folder = repository.dist_dir / env
    written = sorted(p for p in folder.rglob("*.yaml"))
    changed, deleted = written[0], written[-1]
    changed.write_bytes(changed.read_bytes() + b"# edited by hand\n")
    deleted.unlink()
    (folder / "stray.yaml").write_text("kind: ConfigMap\n")
    out = testing.synth_repository(repository)
    stray = folder / "stray.yaml"
    expected = sorted(
        f"{env}/{p.relative_to(folder).as_posix()}" for p in (changed, deleted, stray)
    )
    assert sorted(out.drift()) == expected
    capsys.readouterr()
    assert main(["--root", str(repository.root), "synth", "--check"]) == 1
    printed = capsys.readouterr()
    assert out.drift_report() in printed.out + printed.err
    assert out.drift_report().splitlines()[0] == (
        "dist/ is not what the sources render (3 files differ):"
    )
    assert out.drift_report().splitlines()[-1] == "run `fleet synth` and commit dist/"


POLICY = """\
from collections.abc import Sequence

from fleet import Check, CheckContext, Checks, Fleet, Manifest, Problem


def no_applications(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    return [
        Problem.of(m, "kind", "no Applications here") for m in manifests if m.kind == "Application"
    ]


def define(fleet: Fleet) -> None:
    Checks.of(fleet).add(Check(name="no-applications", scope="object", run=no_applications))
"""


def test_validate_repository_is_what_fleet_validate_reports(
    repository: FleetConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    """Clean: no lines. With a check of the fleet's own that every Application fails: one
    line per Application, the lines ``fleet validate`` prints (exit 1)."""
    assert testing.validate_repository(repository) == []
    (repository.clusters_dir / "policy.py").write_text(POLICY)
    problems = testing.validate_repository(repository)
    applications = testing.synth_repository(repository, validate=False).all("Application")
    assert len(problems) == len(applications) > 0
    assert all(": kind: no Applications here" in line for line in problems)
    capsys.readouterr()
    assert main(["--root", str(repository.root), "validate"]) == 1
    printed = capsys.readouterr().err.splitlines()
    assert sorted(f"error: {line}" for line in problems) == sorted(printed[:-1])


def test_validate_repository_never_skips_the_schemas(
    repository: FleetConfig, tmp_path: Path
) -> None:
    """A CRD folder that is not there is an error, not a check quietly skipped."""
    with pytest.raises(fleet.FleetError, match="does not exist"):
        testing.validate_repository(repository, crds_dir=tmp_path / "no-crds")


def test_load_repository_is_the_declared_fleet(repository: FleetConfig) -> None:
    app = testing.load_repository(repository)
    clusters = [c for c in app.declarations() if isinstance(c, fleet.FleetCluster)]
    assert clusters
    out = testing.synth_repository(repository, validate=False)
    for env in repository.environments:
        rendered = {m.identity for m in out.manifests[env]}
        declared = {m.identity for c in clusters if env in c.environments for m in c.render(env)}
        assert declared and declared <= rendered, env


def test_cluster_bearing_kinds_include_a_plugin_clouds(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fleet, the kinds its own plug-in clouds bear too (as ``fleet diff`` guards
    them); without, the built-in clouds' and the platform's."""
    monkeypatch.syspath_prepend(str(REPO / "tests" / "fixtures" / "clouds"))
    from capo.cluster import CapoCluster, CapoPool

    builtin = testing.cluster_bearing_kinds()
    assert ("*", "ProviderConfig") in builtin
    assert set(testing.PLATFORM_BEARING_KINDS) <= set(builtin)
    app = testing.fleet(environments=["dev"])
    CapoCluster(
        app,
        "batch",
        name="capo-batch-{env}",
        environments=["dev"],
        region="RegionOne",
        cloud_secret="capo-cloud-config",
        kubernetes_version="v1.31.4",
        image="ubuntu-2404-kube",
        control_plane_flavor="m1.medium",
        pools=[CapoPool(name="general", flavor="m1.large", node_count=3)],
    )
    testing.synth(app)
    capo = {
        (api_version.rpartition("/")[0], kind) for api_version, kind in CapoCluster.bearing_kinds
    }
    with_capo = set(testing.cluster_bearing_kinds(app))
    assert capo <= with_capo
    # Cluster API's Cluster is OKE's too; CAPO's own kinds only the fleet that uses it knows
    assert ("infrastructure.cluster.x-k8s.io", "OpenStackCluster") in capo - set(builtin)
    assert set(builtin) <= with_capo
