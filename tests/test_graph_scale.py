"""Which Application applies what: the folder index says what :func:`syncs` says."""

from __future__ import annotations

from support import REPO
from test_graph import _app

from fleet import FleetConfig, Manifest
from fleet.discovery import load_fleet
from fleet.graph import _Appliers, syncs
from fleet.synth import render_environment

# --- which Application applies what, by folder ------------------------------------------


def _object(folder: str, name: str) -> Manifest:
    return Manifest(
        "dev", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}, folder, "t"
    )


def _check_appliers(manifests: list[Manifest], dist: str = "dist") -> None:
    """The index says what :func:`syncs` says, for every Application and object."""
    index = _Appliers(manifests, dist=dist)
    for m in manifests:
        assert index.appliers(m) == [a for a in index.apps if syncs(a, m, dist=dist)], m
    for app in index.apps:
        assert index.count(app) == sum(1 for m in manifests if syncs(app, m, dist=dist)), app


def test_appliers_agree_with_syncs_on_odd_paths() -> None:
    apps = [
        _app("root", "dist/dev/bootstrap"),
        _app("all", "", recurse=True),
        _app("dot", "."),
        _app("slashes", "./dist/dev/clusters/"),
        _app("deep", "dist/dev/clusters", recurse=True),
        _app("one", "dist/dev/clusters/web"),
        _app("prefix", "dist/dev/clusters/we", recurse=True),
        _app("other", "dist/test/clusters", recurse=True),
    ]
    objects = [
        _object("clusters/web", "a"),
        _object("clusters/web/inner", "b"),
        _object("clusters/webby", "c"),
        _object("clusters", "d"),
        _object("", "e"),
    ]
    _check_appliers([*apps, *objects])
    _check_appliers([*apps, *objects], dist="")
    index = _Appliers([*apps, *objects], dist="dist")
    assert [a.name for a in index.appliers(objects[0])] == ["all", "deep", "one"]
    assert [a.name for a in index.appliers(objects[2])] == ["all", "deep"]


def test_appliers_agree_with_syncs_on_the_example_fleet() -> None:
    fleet = load_fleet(FleetConfig.load(REPO))
    for env in fleet.environment_names:
        _check_appliers(render_environment(fleet, env))
