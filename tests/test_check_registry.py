"""The check registry: a fleet's own check, added through ``Checks.of(fleet).add``, runs in
``fleet synth`` (its parallel workers too), ``fleet validate``, ``fleet diff`` and
``fleet.testing.synth``, and a cacheable check is not asked again about an object whose
verdict the synth cache holds, until the object, the check's code or its inputs change."""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import subprocess
from collections import Counter
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from conftest import ProjectFactory
from crd_samples import crds_dir, manifest, openstack_provider_config
from support import REPO, tree_hash

from fleet import (
    Check,
    CheckContext,
    Checks,
    ClusterTemplate,
    DefinitionError,
    Fleet,
    FleetConfig,
    MagnumCluster,
    Manifest,
    OpenStackProject,
    Problem,
    testing,
)
from fleet.checks.registry import BUILTIN_CHECKS, run_checks, verdict_key
from fleet.cli.main import main
from fleet.core.declaration import FleetConstruct
from fleet.platform.plugins import PluginSet
from fleet.testing import InvalidObjects

POLICY = """\
import os

from fleet import Check, Checks, Fleet, Problem


def _log(context, check, manifests):
    envs = ",".join(sorted({m.environment for m in manifests}))
    with (context.config.root / "checked.log").open("a") as f:
        f.write(f"{check} {envs} {len(manifests)} {os.getpid()}\\n")


def no_forbidden_names(manifests, context):
    _log(context, "names", manifests)
    return [
        Problem.of(m, "metadata.name", "names starting with 'forbidden' break the policy")
        for m in manifests
        if m.name.startswith("forbidden")
    ]


def environment_tally(manifests, context):
    _log(context, "tally", manifests)
    return []


def policy_inputs(context):
    return (context.config.root / "policy.txt").read_text()


def define(fleet: Fleet) -> None:
    Checks.of(fleet).add(
        Check(
            name="no-forbidden-names",
            scope="object",
            cacheable=True,
            run=no_forbidden_names,
            inputs=policy_inputs,
        )
    )
    tally = Check(name="environment-tally", scope="environment", run=environment_tally)
    Checks.of(fleet).add(tally)
"""

PROJECTS = """\
from fleet import ClusterTemplate, Fleet, MagnumCluster, OpenStackProject

T = ClusterTemplate(
    name="k8s-1.30",
    kubernetes_version="v1.30.1",
    base_labels={"kube_tag": "v1.30.1"},
    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
)


def cluster(fleet, id, nodes=1):
    return MagnumCluster(
        fleet, id, name=id + "-{env}", environments=["dev", "test", "prod"], project=DEMO,
        template=T, flavor="m2.large", keypair="k", node_count=nodes,
    )


def define(fleet: Fleet) -> None:
    global DEMO
    DEMO = OpenStackProject(fleet, "demo", project_name="DEMO")
    cluster(fleet, "alpha")
"""
ENVS = ("dev", "test", "prod")


def run(root: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--root", str(root), *args])
    return code, out.getvalue(), err.getvalue()


def calls(root: Path) -> Counter[tuple[str, str, int]]:
    """(check, environment, objects handed over) of every call since the last look."""
    log = root / "checked.log"
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return Counter((c, env, int(n)) for c, env, n, _pid in (line.split() for line in lines))


def pids(root: Path) -> set[str]:
    return {line.split()[3] for line in (root / "checked.log").read_text().splitlines()}


@pytest.fixture
def project(make_project: ProjectFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    monkeypatch.delenv("FLEET_NO_CACHE", raising=False)
    monkeypatch.delenv("FLEET_JOBS", raising=False)
    root = make_project({"clusters/policy.py": POLICY, "clusters/projects.py": PROJECTS})
    (root / "policy.txt").write_text("v1\n")
    return root


def every_env(check: str, objects: int) -> Counter[tuple[str, str, int]]:
    return Counter({(check, env, objects): 1 for env in ENVS})


def test_synth_runs_a_fleet_check_and_honours_its_cacheable_flag(project: Path) -> None:
    assert run(project, "synth")[0] == 0
    # A ProviderConfig and a ClusterV1 per environment; each check sees one environment.
    assert calls(project) == every_env("names", 2) + every_env("tally", 2)

    assert run(project, "synth")[0] == 0
    # Every verdict came from the cache: the cacheable check is not asked again.
    assert calls(project) == every_env("tally", 2)

    projects = project / "clusters" / "projects.py"
    projects.write_text(projects.read_text().replace('"alpha")', '"alpha", nodes=2)'))
    assert run(project, "synth")[0] == 0
    assert calls(project) == every_env("names", 1) + every_env("tally", 2)

    # The check's inputs changed: its verdicts are void.
    (project / "policy.txt").write_text("v2\n")
    assert run(project, "synth")[0] == 0
    assert calls(project) == every_env("names", 2) + every_env("tally", 2)

    # The check's code changed: the same.
    policy = project / "clusters" / "policy.py"
    policy.write_text(policy.read_text() + "# reviewed\n")
    assert run(project, "synth")[0] == 0
    assert calls(project) == every_env("names", 2) + every_env("tally", 2)

    assert run(project, "synth", "--no-cache")[0] == 0
    assert calls(project) == every_env("names", 2) + every_env("tally", 2)


def test_a_failing_fleet_check_fails_synth_validate_and_diff(project: Path) -> None:
    assert run(project, "synth")[0] == 0
    (project / ".gitignore").write_text(".fleet/\nchecked.log\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    for command in (["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(
            ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@e.org", *command],
            check=True,
        )
    calls(project)
    before = tree_hash(project / "dist")
    projects = project / "clusters" / "projects.py"
    projects.write_text(projects.read_text() + '    cluster(fleet, "forbidden")\n')

    def line(env: str) -> str:
        return (
            f"error: {env}: ClusterV1 forbidden-{env}: metadata.name: names starting with "
            "'forbidden' break the policy (defined at clusters/projects.py:12 (forbidden))"
        )

    code, _, err = run(project, "synth")
    assert code == 2
    assert err.splitlines() == [line(env) for env in ENVS]
    assert tree_hash(project / "dist") == before
    # Only the new object is asked about; the others' verdicts are cached.
    assert calls(project) == every_env("names", 1) + every_env("tally", 3)

    code, _, err = run(project, "validate")
    assert code == 1
    assert err.splitlines() == [*(line(env) for env in ENVS), "3 problems in 9 objects"]
    assert calls(project) == every_env("names", 1) + every_env("tally", 3)

    code, _, err = run(project, "diff", "--base", "HEAD")
    assert code == 2
    assert err.splitlines() == [line(env) for env in ENVS]
    assert calls(project) == every_env("names", 1) + every_env("tally", 3)
    assert tree_hash(project / "dist") == before

    # Without the offending object, diff runs the checks and reports the change.
    projects.write_text(PROJECTS.replace('"alpha")', '"alpha", nodes=2)'))
    code, out, _ = run(project, "diff", "--base", "HEAD")
    assert code == 0
    assert "~ ClusterV1 alpha-dev" in out
    assert calls(project) == every_env("names", 1) + every_env("tally", 2)


def test_parallel_workers_run_the_fleet_checks_too(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEET_JOBS", "2")
    assert run(project, "synth", "--no-cache")[0] == 0
    assert len(pids(project)) == 2  # this process and one worker
    assert calls(project) == every_env("names", 2) + every_env("tally", 2)


def test_testing_synth_runs_the_fleet_checks(tmp_path: Path) -> None:
    def with_cluster(root: Path) -> Fleet:
        app = testing.fleet(environments=["dev"], root=root)
        template = ClusterTemplate(
            name=f"tpl-{root.name}",
            kubernetes_version="v1.29.2",
            uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
            base_labels={"kube_tag": "v1"},
        )
        project = OpenStackProject(app, "proj", project_name="P")
        MagnumCluster(
            app,
            "web",
            name="web-{env}",
            environments=["dev"],
            project=project,
            template=template,
            flavor="m2.small",
            keypair="k",
            node_count=2,
        )
        return app

    def no_clusters(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
        return [
            Problem.of(m, "kind", "no clusters here") for m in manifests if m.kind == "ClusterV1"
        ]

    app = with_cluster(tmp_path / "a")
    Checks.of(app).add(Check(name="no-clusters", scope="object", run=no_clusters))
    testing.synth(app)  # checks run only when asked
    with pytest.raises(InvalidObjects, match=r"^dev: ClusterV1 web-dev: kind: no clusters here"):
        testing.synth(app, validate=True)
    # Another fleet in the same process does not have the check.
    testing.synth(with_cluster(tmp_path / "b"), validate=True)


def test_a_check_says_what_is_wrong_with_it_where_it_is_declared(tmp_path: Path) -> None:
    def nothing(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
        return []

    here = re.escape(os.path.relpath(__file__))  # locations are relative to the cwd
    with pytest.raises(DefinitionError, match=rf"^{here}:\d+: cacheable: check 'x': only an"):
        Check(name="x", scope="environment", run=nothing, cacheable=True)
    with pytest.raises(DefinitionError, match=r"scope: expected 'object' or 'environment'"):
        Check(name="x", scope="fleet", run=nothing)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match=r"run: expected a function"):
        Check(name="x", scope="object", run="nothing")  # type: ignore[arg-type]

    app = testing.fleet(environments=["dev"], root=tmp_path)
    checks = Checks.of(app)
    with pytest.raises(DefinitionError, match=r"name: a built-in check is named 'schema'"):
        checks.add(Check(name="schema", scope="object", run=nothing))
    checks.add(Check(name="mine", scope="object", run=nothing))
    with pytest.raises(DefinitionError, match=rf"name: a check named 'mine' was added at {here}"):
        checks.add(Check(name="mine", scope="environment", run=nothing))
    assert [c.name for c in checks.all] == [*(c.name for c in BUILTIN_CHECKS), "mine"]
    with pytest.raises(DefinitionError, match=r"fleet: checks belong to the Fleet"):
        Checks.of(object())  # type: ignore[arg-type]


def test_run_checks_gives_cacheable_checks_only_the_unchecked_objects(tmp_path: Path) -> None:
    seen: dict[str, list[str]] = {}

    def recorder(name: str) -> Check:
        def record(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
            seen[name] = [m.name for m in manifests]
            return []

        if name == "environment":
            return Check(name=name, scope="environment", run=record)
        return Check(name=name, scope="object", run=record, cacheable=name == "cached")

    a, b = manifest(openstack_provider_config("a")), manifest(openstack_provider_config("b"))
    context = CheckContext(FleetConfig(root=tmp_path), None, PluginSet())
    checks = [recorder("cached"), recorder("object"), recorder("environment")]
    run_checks(checks, [a, b], context, unchecked=[b])
    assert seen == {"cached": ["b"], "object": ["a", "b"], "environment": ["a", "b"]}
    seen.clear()
    run_checks(checks, [a, b], context, unchecked=[])
    assert seen == {"object": ["a", "b"], "environment": ["a", "b"]}  # nothing to ask

    key = verdict_key(checks, context)
    assert verdict_key(checks[1:], context) != key  # another set of cacheable checks
    assert verdict_key([*checks, recorder("environment")], context) == key  # not cacheable

    def limited(limit: int, manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
        return [Problem.of(m, "", "too long") for m in manifests if len(m.name) > limit]

    def bound(limit: int) -> Check:
        run = functools.partial(limited, limit)
        return Check(name="limited", scope="object", run=run, cacheable=True)

    # The arguments a partial binds decide its verdicts, as its code does.
    assert verdict_key([bound(10)], context) == verdict_key([bound(10)], context)
    assert verdict_key([bound(10)], context) != verdict_key([bound(20)], context)


FUNCTIONS = {
    "validate_manifests": "schema.py",
    "check_references": "references.py",
    "check_waves": "waves.py",
    "find_secret_material": "secret_guard.py",
}


def test_only_the_registry_lists_the_checks() -> None:
    """No module of the tool calls a built-in check's function but the registry (and the
    check's own module): synth, validate and diff cannot drift apart again."""
    package = REPO / "constructs" / "fleet"
    users: dict[str, set[str]] = {name: set() for name in FUNCTIONS}
    for path in package.rglob("*.py"):
        module = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Name)
                and node.id in FUNCTIONS
                and module != f"checks/{FUNCTIONS[node.id]}"
            ):
                users[node.id].add(module)
    assert users == {name: {"checks/registry.py"} for name in FUNCTIONS}


class _Gadget(FleetConstruct):
    """A declaration of a kind of the user's own, whose CRD the fleet does not have."""

    def render(self, environment: str) -> list[Manifest]:
        body = {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"}}
        return [self._manifest(environment, "extra", body)]


def test_a_schemaless_kind_is_accepted_by_its_fleet_only(tmp_path: Path) -> None:
    refused = testing.fleet(environments=["dev"], root=tmp_path / "a")
    _Gadget(refused, "gadget")
    with pytest.raises(InvalidObjects, match=r"no schema for example\.org/v1 Gadget"):
        testing.synth(refused, validate=True)

    accepted = testing.fleet(environments=["dev"], root=tmp_path / "b")
    Checks.of(accepted).accept_schemaless("example.org/v1", "Gadget")
    _Gadget(accepted, "gadget")
    assert testing.synth(accepted, validate=True).get("Gadget", "g")

    # Nothing is left behind in the process: a third fleet is refused again.
    again = testing.fleet(environments=["dev"], root=tmp_path / "c")
    _Gadget(again, "gadget")
    with pytest.raises(InvalidObjects, match="no schema"):
        testing.synth(again, validate=True)


def test_accept_schemaless_refuses_an_empty_kind() -> None:
    app = testing.fleet(environments=["dev"])
    with pytest.raises(DefinitionError, match="kind: must be a non-empty string"):
        Checks.of(app).accept_schemaless("example.org/v1", "")
