"""Every command and snippet in ``docs/guide.md`` works.

``shell`` blocks: each ``fleet`` command is parsed by the real argument parser and, unless
listed in ``PARSE_ONLY`` with a reason, run for real against a copy of the example fleet;
``make`` targets must exist; ``pytest`` options must be known; commands that need a live
cluster (``kind``, ``kubectl``) must be in ``NOT_HERE`` with a reason, and every file they
apply must exist in ``dist/``. ``python`` blocks are declaration modules: each is dropped
into the example fleet and rendered. The ``toml`` block is applied to its pyproject.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from crd_samples import crds_dir
from support import HYBRID

from fleet import FleetConfig
from fleet.cli.main import build_parser, main

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "guide.md"

PARSE_ONLY = {
    "diff": "needs a git history with a base revision; tests/test_cli_diff.py runs it",
    "import": "run below on a fresh project (the example fleet has the same clusters)",
    "init": "writes a new repository; tests/test_init.py runs it end to end",
    "upgrade promote": "reads the promotions from git and the live clusters; "
    "tests/test_rollout.py runs it in a repository",
    "status": "reads a live management cluster; tests/test_status.py runs it against a server",
}
"""fleet subcommands the guide shows that this test only parses, and why."""

NOT_HERE = {
    "kind": "creates a cluster (Docker); the disaster-recovery drill",
    "kubectl": "talks to a live management cluster",
    "git": "the user's repository",
    "argocd": "talks to a live ArgoCD (minting provider-argocd's token)",
    "terraform": "reads the team's Terraform backend (the states a migration imports)",
    "tofu": "reads the team's OpenTofu backend (the states a migration imports)",
}
"""Programs that cannot run in a test, and why."""


def blocks(language: str) -> list[str]:
    """The fenced blocks of ``language`` in the guide, in order."""
    text = GUIDE.read_text()
    return re.findall(rf"^ *```{language}\n(.*?)^ *```$", text, re.M | re.S)


def shell_commands() -> Iterator[list[str]]:
    """Every command line of the guide's ``shell`` blocks, split like a shell would."""
    for block in blocks("shell"):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                yield shlex.split(line)


def _inline_commands() -> Iterator[list[str]]:
    """``kubectl ...`` commands quoted inline in the prose (the retirement steps)."""
    for quoted in re.findall(r"`(kubectl [^`]+)`", GUIDE.read_text()):
        yield shlex.split(quoted.replace("<", "X").replace(">", "X"))


def test_the_guide_has_every_task() -> None:
    titles = re.findall(r"^## (.+)$", GUIDE.read_text(), re.M)
    assert titles == [
        "How the pieces fit",
        "The everyday loop",
        "Declare a Magnum cluster",
        "Declare an OKE cluster",
        "Add an environment",
        "Add what the constructs do not model",
        "Migrate from Terraform",
        "Review a change",
        "Is my change live?",
        "Upgrade Kubernetes across the fleet",
        "Upgrade a Heat-driver Magnum cluster (blue/green)",
        "Retire a cluster safely",
        "Recover from a disaster",
        "Starting a fleet repository (fleet init)",
        "Editor setup",
    ]
    assert len(blocks("mermaid")) == 1


def test_every_program_is_known() -> None:
    programs = {argv[0] for argv in shell_commands()}
    assert programs <= {"fleet", "make", "pytest"} | set(NOT_HERE), programs


def test_every_fleet_command_parses() -> None:
    commands = [argv for argv in shell_commands() if argv[0] == "fleet"]
    assert len(commands) >= 10
    for argv in commands:
        args = build_parser().parse_args(argv[1:])  # SystemExit(2) on an unknown option
        assert callable(args.handler), argv


def test_make_targets_exist() -> None:
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", (REPO / "Makefile").read_text(), re.M))
    for argv in shell_commands():
        if argv[0] == "make":
            assert set(argv[1:]) <= targets, argv
    assert "make setup" in GUIDE.read_text()
    assert "setup" in targets


def test_pytest_options_exist() -> None:
    options = {w for argv in shell_commands() if argv[0] == "pytest" for w in argv[1:]}
    assert options <= {"--snapshot-update"}
    help_text = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    assert all(option in help_text for option in options)


def test_live_cluster_commands_apply_files_that_exist(hybrid_rendered: Path) -> None:
    applied = []
    for argv in [*shell_commands(), *_inline_commands()]:
        if argv[0] not in NOT_HERE:
            continue
        if "-f" in argv:
            target = argv[argv.index("-f") + 1]
            if not target.startswith("https://"):
                assert (hybrid_rendered / target).is_file(), target
                applied.append(target)
    # the one-button bootstrap: the root Application of prod
    assert applied == ["dist/prod/bootstrap/application_argoproj.io_argocd_fleet-prod.yaml"]


def test_secrets_created_by_hand_are_the_ones_dist_references(hybrid_rendered: Path) -> None:
    """Each ``kubectl create secret`` matches a secretRef (name, namespace, key) in dist/."""
    prod = hybrid_rendered / "dist" / "prod"
    rendered = "\n".join(p.read_text() for p in prod.rglob("*.yaml"))
    created = [a for a in shell_commands() if a[:3] == ["kubectl", "-n", "crossplane-system"]]
    assert len(created) == 2
    for argv in created:
        name = argv[argv.index("generic") + 1]
        key = next(a for a in argv if a.startswith("--from-")).split("=", 1)[1].split("=")[0]
        assert f"key: {key}\n      name: {name}\n      namespace: crossplane-system" in rendered


def test_inline_kubectl_commands_name_real_resource_kinds() -> None:
    resources = {argv[2] for argv in _inline_commands() if argv[1] in ("delete", "patch")}
    resources |= {argv[4] for argv in _inline_commands() if argv[1] == "-n"}
    assert resources == {
        "clusters.cluster.argocd.crossplane.io",
        "clusterv1.containerinfra.openstack.crossplane.io",
        "nodegroupv1.containerinfra.openstack.crossplane.io",
        "clusters.cluster.x-k8s.io",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example fleet, guide snippets added (its rollout replaced by the guide's),
    its pyproject as the guide says."""
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.copy(HYBRID / "pyproject.toml", root)
    shutil.copytree(HYBRID / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__py*"))
    for i, source in enumerate(blocks("python")):
        # The guide's rollout replaces the example's (a fleet declares one).
        name = "rollout.py" if "\n    Rollout(" in source else f"guide_{i}.py"
        (root / "clusters" / name).write_text(source)
    (toml,) = [b for b in blocks("toml") if "environments" in b]
    environments = re.search(r"^environments = .*$", toml, re.M)
    assert environments is not None
    pyproject = root / "pyproject.toml"
    text = re.sub(r"^environments = .*$", environments.group(0), pyproject.read_text(), flags=re.M)
    pyproject.write_text(text)
    return root


def test_fleet_commands_run(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's fleet commands, in its order, on the example fleet plus its snippets."""
    if not os.environ.get("FLEET_CRDS_DIR"):  # `make test` sets it; plain pytest may not
        monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    ran = []
    for argv in shell_commands():
        if argv[0] != "fleet" or argv[1] in PARSE_ONLY or " ".join(argv[1:3]) in PARSE_ONLY:
            continue
        if argv[1] == "ls" and "staging" in argv:
            continue  # run below, once a cluster is placed there
        code = main(["--root", str(project), *argv[1:]])
        out, err = capsys.readouterr()
        assert code == 0, (argv, err)
        ran.append(" ".join(argv[1:]))
        if argv[1] == "ls":
            fmt = argv[argv.index("--format") + 1] if "--format" in argv else "json"
            env = argv[argv.index("--env") + 1]
            assert (f"{env}," if fmt == "csv" else f'"environment": "{env}"') in out
    assert "validate" in ran
    assert "graph --env prod" in ran
    assert "upgrade plan" in ran
    assert (project / "dist" / "staging" / "bootstrap").is_dir()


def test_snippets_declare_their_clusters(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(project), "ls", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {(r["environment"], r["cluster"], r["cloud"]) for r in rows}
    assert {
        ("dev", "k8s-ats-web-dev-v25", "magnum"),
        ("prod", "k8s-ats-web-prod-v25", "magnum"),
        ("test", "oke-ats-test", "oke"),
        ("prod", "oke-ats-prod", "oke"),
    } <= names


def test_new_environment_renders_once_a_cluster_is_placed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = project / "clusters" / "guide_0.py"
    module.write_text(
        module.read_text().replace(
            'environments=["dev", "prod"]', 'environments=["dev", "staging", "prod"]'
        )
    )
    # as the guide says: a per_env value needs an entry or a default for the new environment
    assert main(["--root", str(project), "synth"]) == 2
    assert "no value for environment 'staging'" in capsys.readouterr().err
    module.write_text(
        module.read_text()
        .replace("per_env(dev=1, prod=3)", "per_env(dev=1, default=3)")
        .replace("per_env(dev=2, prod=10)", "per_env(dev=2, default=10)")
    )
    assert main(["--root", str(project), "synth"]) == 0
    assert main(["--root", str(project), "ls", "--env", "staging"]) == 0
    out = capsys.readouterr().out
    assert '"cluster": "k8s-ats-web-staging-v25"' in out
    assert FleetConfig.load(project).environments == ("dev", "test", "staging", "prod")
    assert (project / "dist" / "staging" / "clusters" / "k8s-ats-web-staging-v25").is_dir()


def guide_imports(block: str) -> list[list[str]]:
    return [
        shlex.split(line.strip())
        for line in block.splitlines()
        if line.strip().startswith("fleet import")
    ]


def test_migration_from_terraform(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guide's tfvars import commands, one community after the other, into the example
    fleet: the migration fixtures laid out as ``terraform/<community>``, with their states."""
    root = example_project
    migration = REPO / "tests" / "fixtures" / "migration"
    shutil.copytree(migration / "tfvars", root / "terraform")
    shutil.copy(migration / "state" / "edh.tfstate", root)
    shutil.copy(migration / "state" / "data.json", root)
    (section,) = [b for b in blocks("shell") if "--tfvars" in b]
    imports = guide_imports(section)
    assert [argv[2] for argv in imports] == ["tfstate", "tfvars"]
    for argv in imports:
        args = [str(root / a) if (root / a).exists() and a != "." else a for a in argv[1:]]
        assert main(["--root", str(root), *args]) == 0
    assert main(["--root", str(root), "synth"]) == 0
    assert "fleet synth" in section
    for module in ("edh.py", "data.py"):
        assert 'management_policies=["Observe"]' in (root / "clusters" / module).read_text()
    assert main(["--root", str(root), "ls", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"cluster": "k8s-edh-search-prod-v25"' in out
    assert '"cluster": "k8s-data-lake-dev-multi-v25"' in out


def test_migration_from_terraform_state(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guide's state import, step by step, on the paws fixture (one OpenTofu
    configuration applied per datacenter): its states pulled as the guide says, its
    configuration as ``tofu/``."""
    root = example_project
    paws = REPO / "tests" / "fixtures" / "terraform" / "real" / "paws"
    for state in (paws / "state").glob("*.tfstate"):
        shutil.copy(state, root)
    shutil.copytree(paws / "source" / "tofu", root / "tofu")
    (section,) = [b for b in blocks("shell") if "--source" in b]
    imports = guide_imports(section)
    assert [argv[2] for argv in imports] == ["tfstate"]
    for argv in imports:
        args = [a if "=" not in a else a.replace("=", f"={root}/", 1) for a in argv[1:]]
        args = [str(root / a) if (root / a).exists() and a != "." else a for a in args]
        assert main(["--root", str(root), *args]) == 0, capsys.readouterr().err
    assert main(["--root", str(root), "synth"]) == 0
    out = capsys.readouterr().out
    assert "report: paws-127d (prod): " in out and "environment: the state was given" in out
    assert main(["--root", str(root), "ls", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"cluster": "paws-dev-127d"' in out and '"cluster": "paws-127d"' in out


def test_readme_everyday_commands_exist() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Everyday commands\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```shell\n(.*?)```", section, re.S)
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert {argv[0] for argv in commands} == {"make", "fleet", "pytest"}
    for argv in commands:
        if argv[0] == "fleet":
            assert callable(build_parser().parse_args(argv[1:]).handler), argv
    assert "docs/guide.md" in section


def test_readme_cluster_in_python_renders_where_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's "A cluster in Python", as the module it names, in the fixture fleet: a
    ClusterV1 and a NodegroupV1 per node group in the cluster's folder, the project's
    ProviderConfig in platform/, the template's UUID as clusterTemplateId."""
    if not os.environ.get("FLEET_CRDS_DIR"):
        monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    readme = (REPO / "README.md").read_text()
    section = readme.split("## A cluster in Python\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    module = re.match(r"# (clusters/\w+\.py) ", block)
    assert module is not None, block.splitlines()[0]
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.copy(HYBRID / "pyproject.toml", root)
    shutil.copytree(HYBRID / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__py*"))
    (root / module.group(1)).write_text(block)
    assert main(["--root", str(root), "synth"]) == 0
    for env in ("dev", "test", "prod"):
        folder = root / "dist" / env / "clusters" / f"k8s-ais-batch-{env}-multi-v25"
        kinds = sorted(p.name.split("_", 1)[0] for p in folder.glob("*.yaml"))
        assert kinds.count("clusterv1") == 1 and kinds.count("nodegroupv1") == 1, kinds
        cluster = yaml.safe_load(next(folder.glob("clusterv1_*.yaml")).read_text())
        assert re.fullmatch(r"[0-9a-f-]{36}", cluster["spec"]["forProvider"]["clusterTemplateId"])
        platform = root / "dist" / env / "platform"
        assert (platform / "providerconfig_openstack.crossplane.io_jeedy-ais.yaml").is_file()


ARGOCD_INSTALL = re.compile(
    r"kubectl apply (?P<flags>[^\n]*?)-f https://raw\.githubusercontent\.com/argoproj/argo-cd/"
    r"(?P<ref>[^/\s]+)/manifests/(?P<file>[\w.-]+\.yaml)"
)


def test_the_argocd_install_is_the_pinned_release_applied_server_side() -> None:
    """Every ArgoCD install command of the guide and the README names the release the
    bootstrap is verified against (``fleet.argocd.components.ARGO_CD``), which is the release
    of the pinned ArgoCD CRDs (``crds.lock.yaml``), and applies it server-side: a
    client-side ``argocd-cm`` is taken over by ArgoCD's server-side sync and loses upstream's
    ``ignoreResourceUpdates`` defaults (argo-cd v3.5.1 ``gitops-engine/pkg/sync/
    sync_context.go`` ``needsClientSideApplyMigration``; docs/upstream-behaviour.md). Fails
    when the lock, the component and the docs diverge."""
    from fleet.argocd.components import ARGO_CD
    from fleet.checks.crds import PACKAGED_LOCK

    lock = yaml.safe_load(PACKAGED_LOCK.read_text())["crds"]
    releases = {e["release"] for e in lock if e["path"].startswith("argo-cd/")}
    assert releases == {ARGO_CD.version}
    found = 0
    for doc in (GUIDE, REPO / "README.md"):
        for match in ARGOCD_INSTALL.finditer(doc.read_text()):
            found += 1
            assert match["ref"] == ARGO_CD.version, (doc.name, match[0])
            assert match["file"] == "install.yaml", (doc.name, match[0])
            flags = match["flags"].split()
            assert "--server-side" in flags and "--force-conflicts" in flags, (doc.name, match[0])
    assert found == 2
