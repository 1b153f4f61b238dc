"""Invariants of this repository's fleet (``clusters/``, ``dist/``) that hold for any fleet.

Nothing here names a cluster or counts objects: replace the clusters with your own, run
``fleet synth``, and these still pass (or point at a real problem in your fleet). `fleet init`
writes this same file into a new fleet repository; the tool's own behaviour is tested on
fixture fleets in the tool's repository (tests/fixtures/fleets/). It imports only ``fleet``
and ``fleet.testing``, the public API: the tool's modules may move under it.
"""

from __future__ import annotations

import fnmatch
import posixpath
from pathlib import Path

import pytest
import yaml

from fleet import FleetCluster, FleetConfig, testing
from fleet.testing import PLATFORM_BEARING_KINDS, RepositoryOutput

ROOT = Path(__file__).resolve().parents[1]
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
CONFIG = FleetConfig.load(ROOT)


@pytest.fixture(scope="module")
def fleet_synth() -> RepositoryOutput:
    """The repository's fleet, rendered (and validated: CRDs, references, secrets)."""
    return testing.synth_repository(CONFIG)


def test_dist_is_what_the_sources_render(fleet_synth: RepositoryOutput) -> None:
    """``fleet synth --check``: the committed dist/ is the render of the sources (on failure,
    the same message: the files that differ and the command that fixes them)."""
    assert sorted(fleet_synth.files) == sorted(CONFIG.environments)
    if fleet_synth.drift():
        pytest.fail(fleet_synth.drift_report(), pytrace=False)


@pytest.mark.parametrize("env", CONFIG.environments)
def test_dist_reads_as_written(env: str) -> None:
    """No anchors, and no plain scalar that Kubernetes (go-yaml v2), go-yaml v3, PyYAML or
    ruamel.yaml (YAML 1.1 or 1.2) would read as anything but the string it is."""
    for path, data in testing.read_dist(CONFIG, env).items():
        assert testing.reading_problems(data) == [], f"{env}/{path}"


def test_every_object_passes_every_check() -> None:
    """What ``fleet validate`` runs (every check of the fleet: schemas against the CRDs pinned
    in the fleet package, references, bootstrap waves, no secret material, the fleet's own),
    without the cache."""
    problems = testing.validate_repository(CONFIG)
    if problems:
        pytest.fail("\n".join(problems))


@pytest.mark.parametrize("env", CONFIG.environments)
def test_every_folder_is_synced_by_an_application_of_this_repository(
    fleet_synth: RepositoryOutput, env: str
) -> None:
    files = fleet_synth.files[env]
    prefix = f"{CONFIG.dist}/{env}/"
    synced: set[str] = set()
    for data in files.values():
        body = yaml.safe_load(data)
        if body.get("kind") != "Application":
            continue
        source = body["spec"]["source"]
        if source.get("repoURL") == CONFIG.repo_url and "path" in source:
            assert source["targetRevision"] == CONFIG.revision, body["metadata"]["name"]
            assert source["path"].startswith(prefix), source["path"]
            synced.add(source["path"][len(prefix) :])
    folders = {posixpath.dirname(path) for path in files}
    assert folders - synced == set(), "folders of dist/ that no Application syncs"
    assert synced - folders == set(), "Applications that sync a folder with nothing in it"


def test_every_cluster_bearing_object_is_protected(fleet_synth: RepositoryOutput) -> None:
    """Every object of a cluster-bearing kind a cluster class declares, and every
    ProviderConfig, carries ArgoCD's ``Prune=false,Delete=false``, unless its cluster opted
    out (``deletion_protection=False``). (ArgoCD registrations are guarded by ``fleet diff``.)"""
    fleet = testing.load_repository(CONFIG)
    unprotected = {
        (env, m.identity)
        for c in fleet.declarations()
        if isinstance(c, FleetCluster) and not c.deletion_protection
        for env in CONFIG.environments
        for m in c.render(env)
    }
    kinds = [k for k in testing.cluster_bearing_kinds(fleet) if k not in PLATFORM_BEARING_KINDS]
    kinds.append(("*", "ProviderConfig"))
    for env, manifests in fleet_synth.manifests.items():
        for m in manifests:
            group = m.identity[0]
            if not any(
                fnmatch.fnmatchcase(group, g) and fnmatch.fnmatchcase(m.kind, k) for g, k in kinds
            ):
                continue
            if (env, m.identity) in unprotected:
                continue
            annotations = m.body["metadata"].get("annotations") or {}
            options = set(str(annotations.get(SYNC_OPTIONS, "")).split(","))
            assert {"Prune=false", "Delete=false"} <= options, f"{env}: {m.describe()}"
