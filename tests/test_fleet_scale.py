"""The management plane at fleet scale (issue 21, item 8): from the fleet's size the
bootstrap renders the application controller's processors and each Crossplane provider's
reconcile rate, poll and resources. The model and its sources: docs/performance.md, "The
management plane at fleet scale".

Upstream behaviour (read at the pinned tags):

* argoproj/argo-cd v3.5.1 ``docs/operator-manual/high_availability.md``: "For 1000
  applications, we use 50 for ``--status-processors`` and 25 for ``--operation-processors``";
  defaults 20 and 10 (``docs/operator-manual/argocd-cmd-params-cm.yaml``,
  ``controller.status.processors``, ``controller.operation.processors``).
  ``controller/sharding/sharding.go``: the in-cluster destination is shard 0 in every
  algorithm (legacy, round-robin, consistent-hashing), so the fleet's own Applications, which
  all target ``https://kubernetes.default.svc``, stay on one controller replica.
* crossplane-contrib/provider-openstack v0.9.0 and provider-argocd v0.14.3
  ``cmd/provider/main.go``: ``--max-reconcile-rate`` (default 10) is the global rate limiter
  and every controller's ``MaxConcurrentReconciles``; ``--poll`` (10m; provider-argocd 1m);
  ``--leader-election`` off by default. crossplane-runtime v2.1.0
  ``pkg/ratelimiter/default.go`` (``NewGlobal``: burst ten times the rate).
* crossplane/crossplane v2.3.4 ``internal/controller/pkg/runtime/runtime.go``: the
  provider's container is ``package-runtime``; a ``DeploymentRuntimeConfig``'s
  ``deploymentTemplate`` is merged into its Deployment.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from builders import argocd, find, rendered, template

from fleet import (
    Fleet,
    FleetConfig,
    FleetPackage,
    GitPath,
    MagnumCluster,
    NodeGroup,
    OpenStackProject,
)
from fleet.core.manifest import Manifest

NODE_GROUPS = 3


def magnum_fleet(clusters: int, root: Path) -> tuple[Manifest, ...]:
    """``clusters`` Magnum clusters of 1 + 3 node pools in one environment, every one
    registered, one package on all of them."""
    fleet = Fleet(FleetConfig(root=root, environments=("prod",)))
    project = OpenStackProject(fleet, "p", project_name="P", region="cern")
    tpl = template()
    for i in range(clusters):
        MagnumCluster(
            fleet,
            f"c{i}",
            name=f"c{i}",
            environments=["prod"],
            project=project,
            template=tpl,
            flavor="m",
            keypair="k",
            node_count=1,
            node_groups=[
                NodeGroup(name=f"g{g}", flavor="m", node_count=1) for g in range(NODE_GROUPS)
            ],
        )
    FleetPackage(fleet, "mon", namespace="mon", source=GitPath(path="apps/mon"))
    argocd(fleet)
    return tuple(rendered(fleet, "prod"))


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Manifest, ...]]:
    """The rendered environment of a fleet of 10 and of 1,000 clusters."""
    return {n: magnum_fleet(n, tmp_path_factory.mktemp(f"fleet{n}")) for n in (10, 1000)}


def _container(out: tuple[Manifest, ...], name: str) -> dict[str, object]:
    drc = find(out, "DeploymentRuntimeConfig", name).body["spec"]["deploymentTemplate"]["spec"]
    assert drc["replicas"] == 1
    [container] = drc["template"]["spec"]["containers"]
    assert container["name"] == "package-runtime"
    assert not [a for a in container["args"] if a.startswith("--leader-election")]
    return dict(container)


def _flag(container: dict[str, object], flag: str) -> str:
    args = container["args"]
    assert isinstance(args, list)
    [value] = [a.split("=", 1)[1] for a in args if a.startswith(f"--{flag}=")]
    return str(value)


# clusters -> (provider-openstack rate, provider-argocd rate, status, operation processors),
# worked out by hand: 4 Magnum objects a cluster polled every 600 s, one registration a
# cluster polled every 30 s; Applications = root + 4 steps (Crossplane chart, providers,
# provider configs, packages) + one per cluster + one generated per cluster by the package.
EXPECTED = {10: (10, 10, 20, 10), 1000: (14, 67, 101, 51)}


@pytest.mark.parametrize("clusters", sorted(EXPECTED))
def test_the_management_plane_follows_the_fleets_size(
    fleets: dict[int, tuple[Manifest, ...]], clusters: int
) -> None:
    out = fleets[clusters]
    openstack_rate, argocd_rate, status, operation = EXPECTED[clusters]

    managed = sum(m.kind in ("ClusterV1", "NodegroupV1") for m in out)
    assert managed == clusters * (1 + NODE_GROUPS)
    openstack = _container(out, "provider-openstack")
    assert _flag(openstack, "poll") == "10m"
    assert int(_flag(openstack, "max-reconcile-rate")) == openstack_rate
    assert openstack_rate == max(10, math.ceil(2 * managed / 600))
    assert openstack["resources"] == {"requests": {"cpu": "500m", "memory": "512Mi"}}
    provider = find(out, "Provider", "provider-openstack").body["spec"]
    assert provider["runtimeConfigRef"]["name"] == "provider-openstack"

    registrations = sum(m.api_version.startswith("cluster.argocd.") for m in out)
    assert registrations == clusters
    provider_argocd = _container(out, "provider-argocd")
    assert _flag(provider_argocd, "poll") == "30s"
    assert int(_flag(provider_argocd, "max-reconcile-rate")) == argocd_rate
    assert argocd_rate == max(10, math.ceil(2 * registrations / 30))

    applications = sum(m.kind == "Application" for m in out) + clusters  # + generated
    assert applications == 5 + 2 * clusters
    params = find(out, "ConfigMap", "argocd-cmd-params-cm").body
    assert params["data"] == {
        "controller.operation.processors": str(operation),
        "controller.status.processors": str(status),
    }
    assert status == max(20, math.ceil(applications / 20))
    assert operation == max(10, math.ceil(applications / 40))
    assert params["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == (
        "ServerSideApply=true,Prune=false,Delete=false"
    )


def test_upstreams_data_point_is_on_the_line() -> None:
    """1,000 Applications get exactly what argo-cd's high_availability.md uses for them."""
    from fleet.argocd.bootstrap import controller_processors

    assert controller_processors(1000) == {
        "controller.operation.processors": "25",
        "controller.status.processors": "50",
    }
    assert controller_processors(0) == {
        "controller.operation.processors": "10",
        "controller.status.processors": "20",
    }


def test_every_fleet_application_targets_the_management_cluster(
    fleets: dict[int, tuple[Manifest, ...]],
) -> None:
    """Why the processors, not controller replicas: sharding is by destination cluster,
    and the in-cluster destination is always shard 0 (argo-cd controller/sharding)."""
    out = fleets[10]
    apps = [m for m in out if m.kind == "Application"]
    assert {m.body["spec"]["destination"]["server"] for m in apps} == {
        "https://kubernetes.default.svc"
    }
