"""The parts of ``fleet status`` that need no server: the plug-ins' kinds against the pinned
CRDs, every status path it reads against the upstream schemas, the condition rules, the
read-only ClusterRole, ``[tool.fleet.contexts]``, and that ``fleet synth`` never loads the
Kubernetes client.

Upstream sources (each path below is also checked against the pinned CRD of its release):
argo-cd v3.5.1 ``pkg/apis/application/v1alpha1/types.go`` (``ApplicationStatus``);
crossplane-runtime v2.1.0 ``apis/common/condition.go``; upjet v2.2.0
``pkg/resource/conditions.go``; provider-openstack v0.9.0
``apis/cluster/containerinfra/v1alpha1/zz_clusterv1_types.go`` (``coeVersion``);
cluster-api v1.12.11 ``api/core/v1beta2/cluster_types.go`` and ``machinepool_types.go``
(``status.conditions``, the condition types; ``status.v1beta2.conditions`` when read at
``api/core/v1beta1/``); CAPOCI v0.24.0 ``api/v1beta2/ocimanagedcontrolplane_types.go``
(``status.version``), ``exp/api/v1beta2/ocimanagedmachinepool_types.go``
(``status.failureMessages``); provider-argocd v0.14.3 ``apis/cluster/v1alpha1/types.go``
(``connectionState``).
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import HYBRID, REPO

from fleet.argocd.live import APPLICATIONS, CONNECTION_STATE, REGISTRATIONS, STATUS_ROLE
from fleet.checks.crds import PACKAGED_CRDS
from fleet.clouds.base import cloud_plugins
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
from fleet.platform.live import (
    CLUSTER_API_V1BETA1_CONTRACT,
    CLUSTER_API_V1BETA2,
    CROSSPLANE_MANAGED,
    LiveKind,
    Verdict,
    same_release,
)


def _crds() -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for path in PACKAGED_CRDS.rglob("*.yaml.gz"):
        for doc in yaml.safe_load_all(gzip.decompress(path.read_bytes())):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                out[(spec["group"], spec["names"]["kind"])] = spec
    return out


CRDS = _crds()
KINDS: list[LiveKind] = [
    APPLICATIONS,
    REGISTRATIONS,
    *(k for _, plugin in cloud_plugins() for k in plugin.status.kinds),
]


def _schema(kind: LiveKind) -> dict[str, Any]:
    spec = CRDS[(kind.group, kind.kind)]
    version = next(v for v in spec["versions"] if v["name"] == kind.version)
    return version["schema"]["openAPIV3Schema"]


def _has(schema: dict[str, Any], path: tuple[str, ...]) -> bool:
    node = schema
    for key in path:
        if key == "[]":
            node = node.get("items") or {}
            continue
        props = node.get("properties") or {}
        if key not in props:
            return False
        node = props[key]
    return True


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.group}/{k.kind}")
def test_each_kind_read_is_served_by_its_pinned_crd_with_that_plural_and_scope(
    kind: LiveKind,
) -> None:
    spec = CRDS[(kind.group, kind.kind)]
    assert spec["names"]["plural"] == kind.plural
    assert (spec["scope"] == "Namespaced") is kind.namespaced
    served = {v["name"] for v in spec["versions"] if v.get("served")}
    assert kind.version in served


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        (APPLICATIONS, ("status", "sync", "status")),
        (APPLICATIONS, ("status", "sync", "revision")),
        (APPLICATIONS, ("status", "health", "status")),
        (APPLICATIONS, ("status", "health", "message")),
        (APPLICATIONS, ("status", "health", "lastTransitionTime")),
        (APPLICATIONS, ("status", "operationState", "phase")),
        (APPLICATIONS, ("status", "operationState", "message")),
        (APPLICATIONS, ("status", "operationState", "retryCount")),
        (APPLICATIONS, ("status", "operationState", "finishedAt")),
        (APPLICATIONS, ("status", "conditions", "[]", "type")),
        (APPLICATIONS, ("status", "resources", "[]", "health", "status")),
        (APPLICATIONS, ("status", "resources", "[]", "health", "message")),
        (APPLICATIONS, ("spec", "source", "path")),
        (REGISTRATIONS, (*CONNECTION_STATE, "status")),
        (REGISTRATIONS, (*CONNECTION_STATE, "message")),
        (REGISTRATIONS, (*CONNECTION_STATE, "attemptedAt")),
        (REGISTRATIONS, ("status", "conditions", "[]", "message")),
    ],
)
def test_every_argocd_path_read_is_in_the_upstream_schema(
    kind: LiveKind, path: tuple[str, ...]
) -> None:
    assert _has(_schema(kind), path)


@pytest.mark.parametrize("kind", KINDS[1:], ids=lambda k: f"{k.group}/{k.kind}")
def test_the_conditions_each_rule_reads_are_in_the_schema(kind: LiveKind) -> None:
    """Crossplane's and the v1beta1 contract's at ``status.conditions``; Cluster API's
    v1beta2 ones at ``status.conditions`` when read as v1beta2 (as the fleet renders them),
    at ``status.v1beta2.conditions`` when read as v1beta1."""
    schema = _schema(kind)
    where: tuple[str, ...] = ("status", "conditions")
    if kind.rules is CLUSTER_API_V1BETA2 and kind.version == "v1beta1":
        where = ("status", "v1beta2", "conditions")
    assert kind.rules is not None
    assert _has(schema, (*where, "[]", "lastTransitionTime"))
    assert _has(schema, (*where, "[]", "message"))
    if kind.rules.severity_fails:
        assert _has(schema, (*where, "[]", "severity"))
    if kind.rules.failure_messages:
        assert _has(schema, kind.rules.failure_messages)


def test_each_cloud_names_a_version_field_of_its_schema() -> None:
    found = 0
    for cls, plugin in cloud_plugins():
        where = plugin.status.version
        if where is None:
            continue
        kind = next(
            k for k in plugin.status.kinds if (k.group, k.kind) == (where.group, where.kind)
        )
        assert _has(_schema(kind), where.path), cls
        found += 1
    assert found >= 2


def test_crossplane_rules_fail_on_synced_false_and_wait_on_ready() -> None:
    refused = {
        "metadata": {"name": "c"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "Creating"},
                {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "m"},
            ]
        },
    }
    findings = CROSSPLANE_MANAGED.judge("ClusterV1", refused)
    assert [(f.verdict, f.what) for f in findings] == [
        (Verdict.FAILED, "Synced"),
        (Verdict.PROGRESSING, "Ready"),
    ]
    paused = {
        "status": {
            "conditions": [{"type": "Synced", "status": "False", "reason": "ReconcilePaused"}]
        }
    }
    assert CROSSPLANE_MANAGED.judge("ClusterV1", paused)[0].verdict is Verdict.PROGRESSING
    assert CROSSPLANE_MANAGED.judge("ClusterV1", {"status": {}})[0].what == "conditions"


def test_cluster_api_rules_read_busy_and_up_to_date_conditions() -> None:
    body = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "status": {
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "RollingOut", "status": "True", "message": "rolling"},
                {"type": "WorkerMachinesUpToDate", "status": "False", "message": "old"},
                {"type": "Paused", "status": "False"},
            ]
        },
    }
    found = CLUSTER_API_V1BETA2.judge("Cluster", body)
    assert [(f.what, f.verdict) for f in found] == [
        ("RollingOut", Verdict.PROGRESSING),
        ("WorkerMachinesUpToDate", Verdict.PROGRESSING),
    ]
    failing = {
        "status": {"conditions": [{"type": "Ready", "status": "False", "severity": "Warning"}]}
    }
    assert CLUSTER_API_V1BETA1_CONTRACT.judge("X", failing)[0].verdict is Verdict.PROGRESSING


def test_versions_compare_by_release() -> None:
    assert same_release("v1.25.3", "v1.25.3-cern.0")
    assert same_release("v1.30.1", "v1.30.1")
    assert not same_release("v1.25.3", "v1.24.3-cern.0")
    assert not same_release("v1.25.3", "not-a-version")


def test_the_status_role_reads_exactly_the_kinds_read_and_only_reads(tmp_path: Path) -> None:
    fleet = load_fleet(FleetConfig.load(HYBRID))
    for env, expected_groups in (
        (
            "dev",
            {
                "argoproj.io",
                "cluster.argocd.crossplane.io",
                "containerinfra.openstack.crossplane.io",
            },
        ),
        ("test", None),
    ):
        [role] = [
            m
            for m in render_environment(fleet, env)
            if m.kind == "ClusterRole" and m.name == STATUS_ROLE
        ]
        assert role.folder == "platform"
        rules = role.body["rules"]
        assert {v for r in rules for v in r["verbs"]} == {"get", "list", "watch"}
        granted = {(g, res) for r in rules for g in r["apiGroups"] for res in r["resources"]}
        kinds = {
            (APPLICATIONS.group, APPLICATIONS.plural),
            (REGISTRATIONS.group, REGISTRATIONS.plural),
        }
        for cls, plugin in cloud_plugins():
            if any(isinstance(c, cls) and env in c.environments for c in fleet.declarations()):
                kinds |= {(k.group, k.plural) for k in plugin.status.kinds}
        assert granted == kinds
        if expected_groups is not None:
            assert {g for g, _ in granted} == expected_groups


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('contexts = "prod-ctx"', "must be a table of environment"),
        ('[tool.fleet.contexts]\nstaging = "x"', "unknown environment 'staging'"),
        ('[tool.fleet.contexts]\ndev = ""', "must be the name of a kubeconfig context"),
    ],
)
def test_contexts_are_checked_like_the_rest_of_the_configuration(
    tmp_path: Path, table: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.fleet]\nenvironments = ["dev"]\n{table}\n')
    with pytest.raises(DefinitionError, match=message):
        FleetConfig.load(tmp_path)


def test_contexts_map_environments_to_kubeconfig_contexts(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fleet]\nenvironments = ["dev", "prod"]\n[tool.fleet.contexts]\nprod = "mgmt-prod"\n'
    )
    config = FleetConfig.load(tmp_path)
    assert config.context_for("prod") == "mgmt-prod"
    assert config.context_for("dev") is None


def test_synth_never_imports_the_kubernetes_client(tmp_path: Path) -> None:
    """The client is imported by ``fleet status`` only: the command line, and a whole
    synth of the fixture fleet, leave it unloaded."""
    code = (
        "import sys; from fleet.cli.main import main; "
        f"rc = main(['--root', {str(tmp_path / 'f')!r}, 'synth', '--no-cache']); "
        "assert rc == 0, rc; "
        "loaded = [m for m in sys.modules if m == 'kubernetes' or m.startswith('kubernetes.')]; "
        "print(len(loaded))"
    )

    shutil.copytree(HYBRID, tmp_path / "f")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0"


def test_status_renders_what_synth_renders() -> None:
    """The join reads the objects ``fleet synth`` writes (its own render call, as
    ``views/`` may not import ``pipeline/``)."""
    from fleet.views.status.read import _render

    fleet = load_fleet(FleetConfig.load(HYBRID))
    for env in fleet.environment_names:
        assert [m.relpath for m in _render(fleet, env)] == [
            m.relpath for m in render_environment(fleet, env)
        ]


def test_the_kind_check_script_parses_and_names_pinned_crds() -> None:
    """``examples/status/kind-check.sh`` (documented in the guide, run by people with kind,
    not by CI): valid bash, every CRD it installs is a vendored one, and the ClusterRole it
    applies is the one the synth renders."""
    script = REPO / "examples" / "status" / "kind-check.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    named = re.findall(r"([a-z-]+/[a-z0-9._-]+_[a-z0-9]+|argo-cd/application-crd)\b", text)
    crds = [n for n in named if (PACKAGED_CRDS / f"{n}.yaml.gz").is_file()]
    assert len(crds) == 9
    assert f"clusterrole_rbac.authorization.k8s.io_{STATUS_ROLE}.yaml" in text
    assert "examples/status/kind-check.sh" in (REPO / "docs" / "guide.md").read_text()


def test_the_guides_contexts_block_is_valid_configuration(tmp_path: Path) -> None:
    guide = (REPO / "docs" / "guide.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", guide, re.S) if "contexts" in b]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fleet]\nenvironments = ["dev", "test", "prod"]\n' + block
    )
    assert FleetConfig.load(tmp_path).context_for("prod") == "mgmt-prod"
