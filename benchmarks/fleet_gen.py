"""Generates a synthetic hybrid fleet as a temporary fleet project, for the synth benchmark.

The project has a ``pyproject.toml`` with ``[tool.fleet]``, ``clusters/__init__.py`` and one
generated ``clusters/bench.py`` whose ``define(fleet)`` declares, with the real constructs:

* 80% Magnum clusters (``MagnumCluster``, 3 ``NodeGroup``\\s, about 60 labels from a
  ``ClusterTemplate`` of 56 base labels plus a few per cluster), spread over 10
  ``OpenStackProject``\\s;
* 20% OKE clusters (``OciManagedCluster`` with 2 ``OkeNodePool``\\s and an ``OkeVcn``);
* one ``ArgoCd``, so every cluster is registered (``register_in_argocd`` defaults to on).

Every cluster is placed in every environment; ``clusters`` is the count per environment.
Each cluster is one explicit constructor call, as a person would write it.
"""

from __future__ import annotations

import re
from pathlib import Path

ENV_NAMES = ("dev", "test", "prod", "staging", "qa", "perf", "sandbox", "preprod")
PROJECTS = 10
ZONES = ("cern-geneva-a", "cern-geneva-b", "cern-geneva-c")
ADS = tuple(f"BKrI:EU-FRANKFURT-1-AD-{n}" for n in (1, 2, 3))
OKE_IMAGE = "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaokenode130ol8example"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFleetBenchExampleKey00000000000000000000 bench"
BASE_LABELS = 56
"""Template base labels; each Magnum cluster adds or overrides about 4 (about 60 in all)."""


def environments(count: int) -> list[str]:
    """``count`` environment names: dev, test, prod, then more."""
    names = list(ENV_NAMES[:count])
    names += [f"env{i}" for i in range(len(names), count)]
    return names


def is_oke(index: int) -> bool:
    """Every fifth cluster is an OKE cluster (20%)."""
    return index % 5 == 4


def _header(envs: list[str]) -> str:
    labels = "".join(
        f'    "bench_label_{k:02d}": "value-{k:02d}",\n' for k in range(BASE_LABELS - 4)
    )
    compartments = ", ".join(f'{e}="ocid1.compartment.oc1..aaaaaaaabench{e}example"' for e in envs)
    return f'''"""A generated benchmark fleet (benchmarks/fleet_gen.py): do not edit by hand."""

from fleet import (
    ArgoCd,
    ClusterTemplate,
    Fleet,
    MagnumCluster,
    NodeGroup,
    OciClusterIdentity,
    OciManagedCluster,
    OkeNodePool,
    OkeVcn,
    OpenStackProject,
    SecretKeyRef,
    per_env,
)

ENVS = {envs!r}
ADS = {list(ADS)!r}
OKE_IMAGE = {OKE_IMAGE!r}
SSH_KEY = {SSH_KEY!r}
COMPARTMENTS = per_env({compartments})

TEMPLATE = ClusterTemplate(
    name="kubernetes-1.25.3-3-multi",
    kubernetes_version="v1.25.3",
    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
    base_labels={{
    "kube_tag": "v1.25.3-cern.0",
    "monitoring_enabled": "false",
    "cephfs_csi_enabled": "false",
    "manila_enabled": "false",
{labels}    }},
    optional_labels=["availability_zone", "team_quota", "cost_center", "owner_email"],
    changing_labels=["monitoring_enabled", "cephfs_csi_enabled", "manila_enabled"],
)


def define(fleet: Fleet) -> None:
    """The benchmark fleet."""
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(
            name="argocd-credentials", namespace="crossplane-system", key="authToken"
        ),
    )
    tenancy = OciClusterIdentity(fleet, "oci-tenancy", principal_secret="oci-user-principal")
    projects = [
        OpenStackProject(fleet, f"bench-project-{{i}}", project_name=f"BENCH {{i}}", region="cern")
        for i in range({PROJECTS})
    ]
'''


def _magnum(index: int, node_count: int) -> str:
    zones = "".join(
        f"""            NodeGroup(
                name="zone-{zone[-1]}",
                flavor="m2.{("large", "xlarge", "2xlarge")[(index + z) % 3]}",
                node_count=per_env(dev=1, default={node_count + z}),
                availability_zone="{zone}",
            ),
"""
        for z, zone in enumerate(ZONES)
    )
    return f"""    MagnumCluster(
        fleet,
        "magnum-{index:05d}",
        name="k8s-bench-{index:05d}-{{env}}",
        environments=ENVS,
        project=projects[{index % PROJECTS}],
        template=TEMPLATE,
        flavor="m2.xlarge",
        keypair="bench-key",
        master_count=per_env(dev=1, default=3),
        node_count={node_count},
        labels={{
            "availability_zone": "{ZONES[index % 3]}",
            "team_quota": "q{index % 7}",
            "cost_center": "cc-{index % 97:03d}",
            "owner_email": "team{index % 13}@example.org",
            "monitoring_enabled": "{"true" if index % 2 else "false"}",
        }},
        node_groups=[
{zones}        ],
        fleet_labels={{"team": "team{index % 13}", "workload": "bench"}},
    )
"""


def _oke(index: int, node_count: int) -> str:
    return f"""    OciManagedCluster(
        fleet,
        "oke-{index:05d}",
        name="oke-bench-{index:05d}-{{env}}",
        environments=ENVS,
        identity=tenancy,
        compartment_id=COMPARTMENTS,
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        availability_domains=ADS,
        node_image_id=OKE_IMAGE,
        ssh_public_key=SSH_KEY,
        network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
        node_pools=[
            OkeNodePool(
                name="system",
                node_shape="VM.Standard.E4.Flex",
                ocpus=2,
                memory_gb=32,
                node_count={node_count},
            ),
            OkeNodePool(
                name="batch",
                node_shape="VM.Standard.A1.Flex",
                ocpus=4,
                memory_gb=24,
                node_count={node_count + 1},
            ),
        ],
        fleet_labels={{"team": "team{index % 13}", "workload": "bench"}},
    )
"""


def fleet_source(clusters: int, envs: list[str]) -> str:
    """The text of ``clusters/bench.py`` for ``clusters`` clusters per environment."""
    parts = [_header(envs)]
    for i in range(clusters):
        count = 2 + i % 4
        parts.append(_oke(i, count) if is_oke(i) else _magnum(i, count))
    return "".join(parts)


def write_project(root: Path, *, clusters: int, envs: int) -> None:
    """Create (or overwrite) the benchmark project in ``root``."""
    names = environments(envs)
    (root / "clusters").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        f'[tool.fleet]\nenvironments = {names!r}\nrepo_url = "https://git.example.org/bench.git"\n'.replace(
            "'", '"'
        )
    )
    (root / "clusters" / "__init__.py").write_text('"""Benchmark fleet."""\n')
    (root / "clusters" / "bench.py").write_text(fleet_source(clusters, names))


_FIRST_NODE_COUNT = re.compile(r"(\n        node_count=)(\d+)(,\n)")


def change_one_cluster(root: Path) -> str:
    """Change the node count of the first cluster in ``clusters/bench.py``; its construct id."""
    path = root / "clusters" / "bench.py"
    text = path.read_text()
    match = _FIRST_NODE_COUNT.search(text)
    if match is None:
        raise ValueError(f"no node_count in {path}")
    changed = f"{match.group(1)}{int(match.group(2)) + 1}{match.group(3)}"
    path.write_text(text[: match.start()] + changed + text[match.end() :])
    return "magnum-00000"
