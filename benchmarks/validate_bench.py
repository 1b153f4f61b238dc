"""Time each check of the registry (schemas, references, waves, secret guard) over a large fleet.

Usage: ``python benchmarks/validate_bench.py [--objects N] [--crds DIR]``. Builds N objects
(default 15,000) shaped like the real ones: seed ClusterV1 (60 labels), NodegroupV1,
provider-argocd Cluster, and CAPOCI Cluster/OCIManagedCluster/.../MachinePool, spread over
three environments, then runs each of ``BUILTIN_CHECKS`` on every environment, as synth
does (without the cache), and prints timings and objects per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "constructs"))

from builders import builtin_plugins
from crd_samples import (
    argocd_cluster,
    argocd_provider_config,
    capoci_managed,
    cluster_v1,
    crds_dir,
    manifest,
    nodegroup_v1,
    openstack_provider_config,
)

from fleet.checks.registry import BUILTIN_CHECKS, CheckContext
from fleet.checks.schema import validate_manifests
from fleet.core.config import FleetConfig
from fleet.core.manifest import Manifest


def build(count: int) -> list[Manifest]:
    """About ``count`` manifests over dev/test/prod, each environment self-consistent."""
    environments = ("dev", "test", "prod")
    out: list[Manifest] = []
    for env in environments:
        out += [manifest(openstack_provider_config(), env), manifest(argocd_provider_config(), env)]
    i = 0
    while len(out) < count:
        env = environments[i % 3]
        if i % 2 == 0:
            name = f"magnum-{i:05d}"
            bodies = [
                cluster_v1(name),
                nodegroup_v1(name, f"{name}-zone-a"),
                nodegroup_v1(name, f"{name}-zone-b"),
                argocd_cluster(name),
            ]
            for body in bodies[1:3]:
                body["spec"]["forProvider"]["clusterId"] = name
            labels = bodies[0]["spec"]["forProvider"]["labels"]
            labels.update({f"extra_label_{k}": f"value-{k}" for k in range(60 - len(labels))})
        else:
            bodies = capoci_managed(f"oke-{i:05d}", "oke")
        out += [manifest(body, env) for body in bodies]
        i += 1
    return out[:count]


def main() -> None:
    """Run the benchmark and print the numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=15_000)
    parser.add_argument("--crds", type=Path, default=crds_dir())
    args = parser.parse_args()
    manifests = build(args.objects)
    n = len(manifests)

    start = time.perf_counter()
    validate_manifests(manifests[:1], crds_dir=args.crds)
    warm = time.perf_counter() - start

    context = CheckContext(FleetConfig(root=Path.cwd()), args.crds, builtin_plugins())
    by_env: dict[str, list[Manifest]] = {}
    for m in manifests:
        by_env.setdefault(m.environment, []).append(m)
    timings: list[tuple[str, float, int]] = []
    for check in BUILTIN_CHECKS:
        start = time.perf_counter()
        found = sum(len(check.run(ms, context)) for ms in by_env.values())
        timings.append((check.name, time.perf_counter() - start, found))

    print(f"{n} objects; CRD load + first compile: {warm:.2f} s")
    for label, seconds, found in timings:
        print(f"{label:18} {seconds:6.2f} s  {n / seconds:10.0f} objects/s  problems: {found}")


if __name__ == "__main__":
    main()
