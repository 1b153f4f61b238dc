"""Bad input, table-driven: each case names its message and exit code, prints one line per
problem (``lines``, one unless said) and never a credential it was given (``hidden``), and
leaves dist/ alone.

Every case runs through the real command line against a copy of a small project whose
``dist/`` is committed-style (rendered by ``fleet synth`` before the case breaks
something); a sha256 of every file under ``dist/`` is taken before and after. Most cases
run in-process (``fleet.cli.main.main``); those marked ``subprocess`` run the installed
``fleet`` script, as a user or CI would.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from crd_samples import crds_dir
from support import tree_hash

from fleet.cli.main import main

PYPROJECT = """\
[tool.fleet]
environments = ["dev", "test", "prod"]
"""

TEMPLATES = """\
from fleet import ClusterTemplate

SINGLE = ClusterTemplate(
    name="kubernetes-1.25.3-3",
    kubernetes_version="v1.25.3",
    base_labels={"kube_tag": "v1.25.3-cern.0", "monitoring_enabled": "false"},
    optional_labels=["availability_zone"],
    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
)
"""

BASE = """\
from clusters._templates import SINGLE
from fleet import Fleet, MagnumCluster, NodeGroup, OpenStackProject


def define(fleet: Fleet) -> None:
    demo = OpenStackProject(fleet, "demo", project_name="DEMO")
    MagnumCluster(
        fleet, "web", name="web-{env}", environments=["dev", "test", "prod"],
        project=demo, template=SINGLE, flavor="m2.large", keypair="k", node_count=2,
        node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)],
    )
"""

PRELUDE = """\
import cdk8s

from clusters._templates import SINGLE
from fleet import (
    ArgoCd,
    ClusterTemplate,
    Fleet,
    FleetPackage,
    GitPath,
    HelmChart,
    JsonPatch,
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


def define(fleet: Fleet) -> None:
    broken = OpenStackProject(fleet, "broken", project_name="BROKEN")
"""

MAGNUM_DEFAULTS = {
    "name": '"x-{env}"',
    "environments": '["dev"]',
    "project": "broken",
    "template": "SINGLE",
    "flavor": '"m2.large"',
    "keypair": '"k"',
    "node_count": "1",
}


def magnum(construct_id: str = "x", *, after: str = "", **fields: str) -> str:
    """A definition module declaring one MagnumCluster; ``fields`` are Python source."""
    args = {**MAGNUM_DEFAULTS, **fields}
    call = f"MagnumCluster(fleet, {construct_id!r}, " + ", ".join(
        f"{k}={v}" for k, v in args.items()
    )
    body = f"cluster = {call})\n{textwrap.dedent(after)}"
    return PRELUDE + textwrap.indent(body, "    ")


ARGOCD = """\
ArgoCd(
    fleet, "argocd", server_addr="argocd-server.argocd.svc:443",
    credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="authToken"),
)
"""


def with_argocd(after: str) -> str:
    """A module declaring the fleet's ArgoCd, then ``after`` (statements in define)."""
    return PRELUDE + textwrap.indent(ARGOCD + textwrap.dedent(after), "    ")


def oke(**fields: str) -> str:
    """A module declaring one OciManagedCluster; ``fields`` are Python source."""
    args = {
        "name": '"oke-{env}"',
        "environments": '["dev"]',
        "identity": "OciClusterIdentity(fleet, 'oci', principal_secret='oci-principal')",
        "compartment_id": '"ocid1.compartment.oc1..aaaaexample"',
        "region": '"eu-frankfurt-1"',
        "kubernetes_version": '"v1.30.1"',
        "availability_domains": '["BKrI:EU-FRANKFURT-1-AD-1"]',
        "node_image_id": '"ocid1.image.oc1.eu-frankfurt-1.aaaaexample"',
        "node_pools": '[OkeNodePool(name="general", ocpus=2, memory_gb=16, node_count=1)]',
        "network": 'OkeVcn(api_allowed_cidrs=["192.0.2.0/24"])',
        **fields,
    }
    call = "OciManagedCluster(fleet, 'oke', " + ", ".join(f"{k}={v}" for k, v in args.items())
    return PRELUDE + textwrap.indent(call + ")\n", "    ")


GITLAB_TOKEN = "glpat-" + "x1Y2z3" * 4
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJhcmdvY2QtZmxlZXQifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
"""Credentials of well-known formats (a GitLab token, an ArgoCD API token)."""
PEM_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexampleexampleexample\n"
    "-----END RSA PRIVATE KEY-----\n"
)

ASPECT = """\
from fleet import Aspects, Fleet


class Zones:
    def visit(self, node):
        {visit}


def define(fleet: Fleet) -> None:
    Aspects.of(fleet).add(Zones())
"""

VALIDATION = """\
from fleet import Fleet


def define(fleet: Fleet) -> None:
    def check():
        {body}

    fleet.node.add_validation(check)
"""


SEED_TFVARS = """\
project_name = "JEEDY AIS"
region_name = "cern"
keypair = "shared-jeedy-key"
cluster_name = "k8s-ais-batch-dev-multi-v25"
cluster_template_name = "kubernetes-1.25.3-3"
flavor = "m2.xlarge"
master_count = "1"
node_count = "1"
"""


PROGRESS_LINE = re.compile(r"^synth: \[\d+/\d+\] ")


def one_cluster_state(*, labels: object, **changed: object) -> str:
    """A state file (format 4) of one Magnum cluster whose template only its UUID names;
    ``changed`` replaces attributes."""
    attributes: dict[str, object] = {
        "id": "0f8c7f3a-6b1e-4c2d-9a8b-7e6d5c4b3a21",
        "name": "c-dev",
        "cluster_template_id": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
        "coe_version": "v1.27.8",
        "project_id": "p",
        "region": "RegionOne",
        "node_count": 1,
        "master_count": 1,
        "labels": labels,
        "merge_labels": True,
        **changed,
    }
    resource = {
        "mode": "managed",
        "type": "openstack_containerinfra_cluster_v1",
        "name": "c",
        "provider": 'provider["registry.terraform.io/terraform-provider-openstack/openstack"]',
        "instances": [{"schema_version": 0, "attributes": attributes}],
    }
    return json.dumps({"version": 4, "terraform_version": "1.9.8", "resources": [resource]})


@dataclass(frozen=True)
class Case:
    """One bad input: files written into the project, the command, what it must say."""

    id: str
    files: dict[str, str]
    message: str
    """A regex that one stderr line (without ``error: ``) must match from its start."""
    argv: tuple[str, ...] = ("synth",)
    exit_code: int = 2
    subprocess: bool = False
    lines: int = 1
    """How many lines stderr holds: one per problem (an object in three environments:
    three)."""
    hidden: str = ""
    """A credential in the bad input that no output may show."""


CASES = [
    Case(
        "module-without-define",
        {"clusters/shared.py": magnum().replace("def define(", "def defnie(")},
        r"clusters/shared\.py:1: no define\(fleet\) function; every module of clusters/ "
        r"declares with one, and a helper module's name starts with `_` "
        r"\(rename it to clusters/_shared\.py\)$",
    ),
    Case(
        "unknown-template",
        {"clusters/broken.py": magnum(template='"kubernetes-1.25.3-33"')},
        r"clusters/broken\.py:\d+ \(x\): template: unknown cluster template "
        r"'kubernetes-1\.25\.3-33'; did you mean 'kubernetes-1\.25\.3-3'\?$",
        subprocess=True,
    ),
    Case(
        "template-without-uuid-for-region",
        {
            "clusters/broken.py": magnum(template="NO_UUID")
            .replace(
                "def define(",
                'NO_UUID = ClusterTemplate(name="t-no-uuid", kubernetes_version="v1.25.3")'
                "\n\n\ndef define(",
            )
            .replace("from fleet import Fleet,", "from fleet import ClusterTemplate, Fleet,")
        },
        r"clusters/broken\.py:\d+ \(x\): template: template 't-no-uuid' has no UUID for the "
        r"project's region \(none set\); .*`openstack coe cluster template show t-no-uuid "
        r"-f value -c uuid` or `fleet import tfstate`$",
    ),
    Case(
        "autoscaling-with-one-bound",
        {"clusters/broken.py": magnum(min_node_count="1")},
        r"clusters/broken\.py:\d+ \(x\): max_node_count: an autoscaled cluster needs both "
        r"min_node_count and max_node_count$",
    ),
    Case(
        "label-typo",
        {"clusters/broken.py": magnum(labels='{"monitoring_enabeld": "true"}')},
        r"clusters/broken\.py:\d+ \(x\): labels: label 'monitoring_enabeld' is neither a base "
        r"nor an optional label of template 'kubernetes-1\.25\.3-3'; did you mean "
        r"'monitoring_enabled'\?",
    ),
    Case(
        "label-value-not-a-string",
        {"clusters/broken.py": magnum(labels='{"monitoring_enabled": True}')},
        r"clusters/broken\.py:\d+ \(x\): labels: label values are strings, got True for "
        r"'monitoring_enabled'$",
    ),
    Case(
        "negative-node-count",
        {"clusters/broken.py": magnum(node_count="-1")},
        r"clusters/broken\.py:\d+ \(x\): node_count: must be 0 or more, got -1 \(dev\)$",
    ),
    Case(
        "no-masters",
        {"clusters/broken.py": magnum(master_count="0")},
        r"clusters/broken\.py:\d+ \(x\): master_count: must be 1 or more, got 0$",
    ),
    Case(
        "duplicate-cluster-name",
        {"clusters/broken.py": magnum(name='"web-{env}"')},
        r"clusters/broken\.py:\d+ \(x\): name: cluster name 'web-dev' in dev is also that of "
        r"cluster 'web' at clusters/base\.py:\d+: their objects and folder would be one; pin "
        r"another with object_name= on one of them$",
    ),
    Case(
        "duplicate-construct-id",
        {"clusters/broken.py": magnum("web")},
        r"clusters/broken\.py:\d+: id: duplicate declaration 'web' "
        r"\(first at clusters/base\.py:\d+\)$",
    ),
    Case(
        "duplicate-node-group",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="m2.large", node_count=1), '
                'NodeGroup(name="a", flavor="m2.large", node_count=2)]'
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_groups: duplicate node group name 'a'$",
    ),
    Case(
        "node-group-without-flavor",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="", node_count=1)]'
            )
        },
        r"clusters/broken\.py:\d+ \(node group a\): flavor: a node group needs a flavor$",
    ),
    Case(
        "unknown-environment",
        {"clusters/broken.py": magnum(environments='["dev", "staging"]')},
        r"clusters/broken\.py:\d+ \(x\): environments: unknown environment 'staging' "
        r"\(configured: dev, test, prod\)$",
    ),
    Case(
        "per-env-missing-an-environment",
        {
            "clusters/broken.py": magnum(
                environments='["dev", "test", "prod"]', node_count="per_env(dev=1, prod=3)"
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_count: no value for environment 'test' "
        r"\(given for: dev, prod\) and no default$",
    ),
    Case(
        "magnum-refused-name",
        {"clusters/broken.py": magnum(name='"Web Cluster"')},
        r"clusters/broken\.py:\d+ \(x\): name: Magnum refuses the cluster name 'Web Cluster': "
        r"1 to 242 characters, an ASCII letter first, then letters, digits, '_', '\.' or '-' "
        r"\(magnum/api/controllers/v1/cluster\.py\)$",
    ),
    Case(
        "one-magnum-name-in-two-environments",
        {"clusters/broken.py": magnum(name='"shared"', environments='["dev", "prod"]')},
        r"clusters/broken\.py:\d+ \(x\): name: environments dev and prod both render Magnum "
        r"cluster 'shared' in the same OpenStack project \(project 'BROKEN'\): each management "
        r"cluster would adopt and reconcile the same cluster; put \{env\} in the name, or set "
        r"separate_clouds=True on project 'broken' if each environment's credentials reach "
        r"another cloud or project$",
    ),
    Case(
        "object-name-collision",
        {"clusters/broken.py": magnum(name='"Web-{env}"')},
        r"clusters/broken\.py:\d+ \(x\): name: object name 'web-dev' in dev \(derived from "
        r"'Web-dev'\) is also that of cluster 'web' at clusters/base\.py:\d+: their objects and "
        r"folder would be one; pin another with object_name= on one of them$",
    ),
    Case(
        "node-group-object-name-collision",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="user-m3.large", flavor="m2.large", node_count=1), '
                'NodeGroup(name="user-m3_large", flavor="m2.large", node_count=1)]'
            )
        },
        r"clusters/broken\.py:\d+ \(node group user-m3_large\): object_name: node groups "
        r"'user-m3\.large' \(clusters/broken\.py:\d+\) and 'user-m3_large' both have the object "
        r"name 'user-m3-large' \(their NodegroupV1 names would be one\): pin another with "
        r"NodeGroup\(object_name=\.\.\.\) on one of them$",
    ),
    Case(
        "create-only-name",
        {"clusters/broken.py": magnum(create_only='("name",)')},
        r"clusters/broken\.py:\d+ \(x\): create_only: 'name' cannot be create-only: the name "
        r"is how Magnum and the provider know it \(ForceNew\), and it never changes in the fleet$",
    ),
    Case(
        "min-above-max",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="m2.large", node_count=3, '
                "min_node_count=5, max_node_count=2)]"
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_groups\[a\]\.min_node_count: min_node_count 5 "
        r"is above max_node_count 2 \(dev\)$",
    ),
    Case(
        "unknown-keyword-argument",
        {"clusters/broken.py": magnum(nodecount="3")},
        r"clusters/broken\.py:\d+: nodecount: unknown keyword argument of MagnumCluster "
        r"\(did you mean 'node_count'\?\)$",
    ),
    Case(
        "syntax-error",
        {"clusters/broken.py": PRELUDE + "    MagnumCluster(fleet, 'x',\n"},
        r"clusters/broken\.py:\d+: syntax error: '\(' was never closed$",
        subprocess=True,
    ),
    Case(
        "secret-data-in-an-environment-chart",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(
                textwrap.dedent(
                    """\
                    secret = cdk8s.ApiObject(
                        fleet.environment("dev"), "creds", api_version="v1", kind="Secret",
                        metadata={"name": "creds", "namespace": "default"},
                    )
                    secret.add_json_patch(cdk8s.JsonPatch.add("/data", {"password": "aGk="}))
                    """
                ),
                "    ",
            )
        },
        r"dev: Secret default/creds: data: Secret with data: secret values must never be "
        r"rendered into dist/",
    ),
    Case(
        "schema-violation-through-a-json-patch",
        {
            "clusters/broken.py": magnum(
                after='cluster.add_json_patch(JsonPatch.replace("/spec/forProvider/nodeCount", '
                '"3"), kind="ClusterV1")\n'
            )
        },
        r'dev: ClusterV1 x-dev: spec\.forProvider\.nodeCount: expected number, got "3"',
    ),
    Case(
        "unknown-environment-on-the-command-line",
        {},
        r"environment: unknown environment 'staging' \(configured: dev, test, prod\)$",
        argv=("synth", "--env", "staging"),
    ),
    # --- issue 14: inputs that used to render silently wrong (exit 0) ---------------------
    Case(
        "per-env-key-not-an-environment",
        {
            "clusters/broken.py": magnum(
                environments='["dev", "test", "prod"]',
                node_count="per_env(dev=1, prd=4, default=2)",
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_count: per_env key 'prd' is not an environment "
        r"\(configured: dev, test, prod\); did you mean 'prod'\?$",
    ),
    Case(
        "per-env-key-inside-a-node-group",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="m2.large", '
                "node_count=per_env(dve=1, default=2))]"
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_groups\[a\]\.node_count: per_env key 'dve' is "
        r"not an environment \(configured: dev, test, prod\); did you mean 'dev'\?$",
    ),
    Case(
        "json-patch-for-an-unknown-environment",
        {
            "clusters/broken.py": magnum(
                after='cluster.add_json_patch(JsonPatch.add("/metadata/labels", {}), '
                'environment="staging")\n'
            )
        },
        r"clusters/broken\.py:\d+ \(x\): add_json_patch\.environment: unknown environment "
        r"'staging' \(configured: dev, test, prod\)$",
    ),
    Case(
        "json-patch-for-an-environment-the-construct-is-not-in",
        {
            "clusters/broken.py": magnum(
                after='cluster.add_json_patch(JsonPatch.add("/metadata/labels", {}), '
                'environment="prod")\n'
            )
        },
        r"clusters/broken\.py:\d+ \(x\): add_json_patch\.environment: 'x' is not placed in "
        r"'prod' \(environments: dev\): the patch would apply nowhere$",
    ),
    Case(
        "json-patch-for-a-kind-never-rendered",
        {
            "clusters/broken.py": magnum(
                after='cluster.add_json_patch(JsonPatch.add("/metadata/labels", {}), '
                'kind="ClusterV2")\n'
            )
        },
        r"clusters/broken\.py:\d+ \(x\): add_json_patch\.kind: json patch for kind 'ClusterV2' "
        r"matches no object in dev \(rendered kinds: ClusterV1\)$",
    ),
    Case(
        "boolean-given-as-a-string",
        {"clusters/broken.py": magnum(merge_labels='"false"')},
        r"clusters/broken\.py:\d+ \(x\): merge_labels: must be True or False, got str 'false'$",
    ),
    Case(
        "lifecycle-option-given-as-a-string",
        {"clusters/broken.py": magnum(deletion_protection='"no"')},
        r"clusters/broken\.py:\d+ \(x\): deletion_protection: must be True or False, got str 'no'$",
    ),
    Case(
        "boolean-given-as-a-number-in-a-node-group",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="m2.large", node_count=1, retired=1)]'
            )
        },
        r"clusters/broken\.py:\d+ \(node group a\): retired: must be True or False, got int 1$",
    ),
    Case(
        "export-kubeconfigs-given-as-a-string",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(
                ARGOCD.replace(
                    'key="authToken"),', 'key="authToken"),\n    export_kubeconfigs="false",'
                ),
                "    ",
            )
        },
        r"clusters/broken\.py:\d+ \(argocd\): export_kubeconfigs: must be True or False or "
        r"per_env\(True or False\), got str 'false'$",
    ),
    Case(
        "count-given-as-a-boolean",
        {"clusters/broken.py": magnum(node_count="True")},
        r"clusters/broken\.py:\d+ \(x\): node_count: must be an integer or per_env\(an integer\), "
        r"got bool True$",
    ),
    Case(
        "count-given-as-a-float-in-per-env",
        {"clusters/broken.py": magnum(node_count="per_env(dev=1.5, default=2)")},
        r"clusters/broken\.py:\d+ \(x\): node_count\[dev\]: must be an integer, got float 1\.5$",
    ),
    Case(
        "fleet-labels-overriding-the-fleets-own",
        {"clusters/broken.py": magnum(fleet_labels='{"fleet/environment": "prod"}')},
        r"clusters/broken\.py:\d+ \(x\): fleet_labels: 'fleet/environment': labels under fleet/ "
        r"are the fleet's own",
    ),
    Case(
        "package-selecting-no-cluster",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools", match_labels={"tier": "gold"},
                    source=GitPath(path="apps/tools"),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): match_labels: selects no registered cluster in dev "
        r"\(match_labels tier=gold\); fix the labels, or pass allow_empty=True$",
    ),
    Case(
        "magnum-node-group-named-like-magnums-own",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="default-worker", flavor="m2.large", node_count=1)]'
            )
        },
        r"clusters/broken\.py:\d+ \(node group default-worker\): name: 'default-worker' is the "
        r"node group Magnum creates for every cluster",
    ),
    Case(
        "oke-services-cidr-inside-the-vcn",
        {"clusters/broken.py": oke(services_cidr='"10.0.200.0/24"')},
        r"clusters/broken\.py:\d+ \(oke\): services_cidr: 10\.0\.200\.0/24 overlaps the VCN's "
        r"10\.0\.0\.0/16$",
    ),
    Case(
        "helm-chart-without-a-name",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools",
                    source=HelmChart(
                        repo_url="https://charts.example.org", chart="", version="1.0.0"
                    ),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): source\.chart: name the chart$",
    ),
    Case(
        "credentials-inside-a-url",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools",
                    source=GitPath(path="apps", repo_url="https://ci:glpat-s3cr3t@git.example.org/a.git"),
                )
                """
            )
        },
        r"dev: ApplicationSet argocd/tools: spec\.template\.spec\.source\.repoURL: URL with a "
        r"password in it",
        lines=3,
    ),
    # --- wrong shapes: the field and what was expected, never a raw Python error ------------
    Case(
        "labels-given-as-a-list",
        {"clusters/broken.py": magnum(labels='["monitoring_enabled=true"]')},
        r"clusters/broken\.py:\d+ \(x\): labels: must be a mapping of str to str or "
        r"per_env\(a mapping of str to str\), got list \['monitoring_enabled=true'\]$",
    ),
    Case(
        "node-groups-given-a-single-node-group",
        {
            "clusters/broken.py": magnum(
                node_groups='NodeGroup(name="a", flavor="m2.large", node_count=1)'
            )
        },
        r"clusters/broken\.py:\d+ \(x\): node_groups: must be a list of NodeGroup, got a single "
        r"NodeGroup \(put it in a list: \[\.\.\.\]\)$",
    ),
    Case(
        "environments-given-as-one-string",
        {"clusters/broken.py": magnum(environments='"dev,prod"')},
        r"clusters/broken\.py:\d+ \(x\): environments: must be a list of str, got str 'dev,prod'$",
    ),
    Case(
        "project-given-as-a-name",
        {"clusters/broken.py": magnum(project='"broken"')},
        r"clusters/broken\.py:\d+ \(x\): project: must be an OpenStackProject or a reference to "
        r"an OpenStackProject, or per_env of those, got str 'broken'$",
    ),
    Case(
        "node-group-with-a-list-item-of-the-wrong-type",
        {"clusters/broken.py": magnum(node_groups='[{"name": "a"}]')},
        r"clusters/broken\.py:\d+ \(x\): node_groups\[0\]: must be a NodeGroup, got dict ",
    ),
    Case(
        "oke-node-pool-count-as-a-string",
        {
            "clusters/broken.py": oke(
                node_pools='[OkeNodePool(name="general", ocpus=2, memory_gb=16, node_count="3")]'
            )
        },
        r"clusters/broken\.py:\d+ \(OkeNodePool general\): node_count: must be an integer or "
        r"per_env\(an integer\), got str '3'$",
    ),
    Case(
        "argocd-project-not-a-kubernetes-name",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools", project="Team Tools",
                    source=GitPath(path="apps/tools"),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): project: must be a DNS-1123 subdomain "
        r"\(lower-case letters, digits, '-' and '\.'\), got 'Team Tools'$",
    ),
    Case(
        "secret-given-where-a-reference-belongs-is-not-echoed",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(
                ARGOCD.replace(
                    'SecretKeyRef(name="argocd", namespace="crossplane-system", key="authToken")',
                    '"hunter2-argocd-token"',
                ),
                "    ",
            )
        },
        r"clusters/broken\.py:\d+ \(argocd\): credentials: must be a SecretKeyRef, got str$",
    ),
    # --- issue 21, item 7: label values Magnum would apply literally ----------------------
    Case(
        "template-label-holding-a-placeholder",
        {
            "clusters/broken.py": magnum(template="PLACEHOLDER")
            .replace(
                "def define(",
                'PLACEHOLDER = ClusterTemplate(name="t-x", kubernetes_version="v1.25.3", '
                'uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a50", '
                'base_labels={"container_infra_prefix": "<container_infra_prefix>"})'
                "\n\n\ndef define(",
            )
            .replace("from fleet import Fleet,", "from fleet import ClusterTemplate, Fleet,")
        },
        r"clusters/broken\.py:\d+ \(template t-x\): base_labels: label 'container_infra_prefix' "
        r"holds the placeholder '<container_infra_prefix>': Magnum applies label values as they "
        r"are",
    ),
    Case(
        "cluster-label-holding-a-placeholder",
        {"clusters/broken.py": magnum(labels='{"availability_zone": "<availability_zone>"}')},
        r"clusters/broken\.py:\d+ \(x\): labels: label 'availability_zone' holds the "
        r"placeholder '<availability_zone>'",
    ),
    Case(
        "container-infra-prefix-without-a-trailing-slash",
        {
            "clusters/broken.py": magnum(
                labels='{"container_infra_prefix": "registry.example.org/magnum"}',
                allow_extra_labels="True",
            )
        },
        r"clusters/broken\.py:\d+ \(x\): labels: label 'container_infra_prefix' is "
        r"'registry\.example\.org/magnum': Magnum's Heat template accepts only a registry prefix "
        r"ending in '/'",
    ),
    # --- issue 21, item 9: the user's own code (Aspects, validations, define) -------------
    Case(
        "aspect-that-raises",
        {"clusters/broken.py": ASPECT.format(visit="raise ValueError('no zone')")},
        r"clusters/broken\.py:6: aspect: Zones\.visit raised ValueError: no zone "
        r"\(visiting the fleet\)$",
    ),
    Case(
        "aspect-with-the-wrong-signature",
        {
            "clusters/broken.py": ASPECT.replace("visit(self, node)", "visit(self)").format(
                visit="pass"
            )
        },
        r"clusters/broken\.py:5: aspect: Zones\.visit\(self\) cannot be called as an "
        r"Aspect's visit\(node\)$",
    ),
    Case(
        "aspect-that-returns-a-value",
        {"clusters/broken.py": ASPECT.format(visit="return node")},
        r"clusters/broken\.py:5: aspect: Zones\.visit returned a Fleet; visit\(node\) changes "
        r"the construct in place and returns None$",
    ),
    Case(
        "validation-that-returns-a-string",
        {"clusters/broken.py": VALIDATION.format(body="return 'no zone'")},
        r"clusters/broken\.py:5: validation: define\.check returned str 'no zone'; a "
        r"validation returns a list of messages \(str\), \[\] when valid$",
    ),
    Case(
        "validation-that-returns-something-else-than-messages",
        {"clusters/broken.py": VALIDATION.format(body="return [None]")},
        r"clusters/broken\.py:5: validation: define\.check returned None; each message is a "
        r"str$",
    ),
    Case(
        "validation-that-raises",
        {"clusters/broken.py": VALIDATION.format(body="return [1 / 0]")},
        r"clusters/broken\.py:6: validation: define\.check raised ZeroDivisionError: division "
        r"by zero \(validating the fleet\)$",
    ),
    Case(
        "validation-with-the-wrong-signature",
        {
            "clusters/broken.py": VALIDATION.replace("def check()", "def check(node)").format(
                body="return []"
            )
        },
        r"clusters/broken\.py:5: add_validation: define\.check\(node\) cannot be called as a "
        r"validation: def check\(\) -> list\[str\]$",
    ),
    Case(
        "define-with-the-wrong-signature",
        {"clusters/broken.py": "def define(fleet, extra):\n    pass\n"},
        r"clusters/broken\.py:1: define: define\(fleet, extra\) cannot be called as "
        r"define\(fleet\): def define\(fleet: Fleet\) -> None$",
    ),
    Case(
        "define-that-returns-a-value",
        {"clusters/broken.py": "def define(fleet):\n    return 'done'\n"},
        r"clusters/broken\.py:1: define: define returned str 'done'; define\(fleet\) declares "
        r"on the fleet and returns None$",
    ),
    Case(
        "define-that-raises",
        {"clusters/broken.py": "def define(fleet):\n    {}['zone']\n"},
        r"clusters/broken\.py:2: define: define raised KeyError: 'zone'$",
    ),
    # --- issue 21, item 9: contradictory options, refused whichever way round -----------
    Case(
        "oke-public-api-endpoint-with-public-api-endpoint-false",
        {
            "clusters/broken.py": oke(
                network='OkeVcn(api_endpoint="public", public_api_endpoint=False, '
                'api_allowed_cidrs=["192.0.2.0/24"])'
            )
        },
        r"clusters/broken\.py:\d+ \(OkeVcn\): public_api_endpoint: public_api_endpoint=False "
        r"says private but api_endpoint='public': they contradict each other; give api_endpoint "
        r"only$",
    ),
    Case(
        "oke-private-api-endpoint-with-public-api-endpoint-true",
        {
            "clusters/broken.py": oke(
                network='OkeVcn(api_endpoint="private", public_api_endpoint=True, '
                'private_api_reachable_via="DRG")'
            )
        },
        r"clusters/broken\.py:\d+ \(OkeVcn\): public_api_endpoint: public_api_endpoint=True "
        r"says public but api_endpoint='private': they contradict each other",
    ),
    Case(
        "magnum-masters-without-a-load-balancer",
        {"clusters/broken.py": magnum(master_count="3", master_lb_enabled="False")},
        r"clusters/broken\.py:\d+ \(x\): master_lb_enabled: master_count 3 with "
        r"master_lb_enabled=False \(dev\): Magnum refuses it",
    ),
    Case(
        "node-group-zone-given-twice",
        {
            "clusters/broken.py": magnum(
                node_groups='[NodeGroup(name="a", flavor="m2.large", node_count=1, '
                'availability_zone="zone-a", labels={"availability_zone": "zone-b"})]'
            )
        },
        r"clusters/broken\.py:\d+ \(node group a\): availability_zone: availability_zone "
        r"'zone-a' and labels\['availability_zone'\] 'zone-b' contradict each other",
    ),
    Case(
        "fleet-labels-on-an-unregistered-cluster",
        {"clusters/broken.py": magnum(fleet_labels='{"tier": "gold"}', register_in_argocd="False")},
        r"clusters/broken\.py:\d+ \(x\): fleet_labels: fleet_labels label the cluster's ArgoCD "
        r"registration, and register_in_argocd=False renders none",
    ),
    # --- issue 21, item 9: chart versions that are not pins, repositories without a scheme
    *(
        Case(
            f"chart-version-{label}",
            {
                "clusters/broken.py": with_argocd(
                    f"""\
                    FleetPackage(
                        fleet, "tools", namespace="tools", allow_empty=True,
                        source=HelmChart(
                            repo_url="https://charts.example.org", chart="c", version={version!r}
                        ),
                    )
                    """
                )
            },
            rf"clusters/broken\.py:\d+ \(tools\): source\.version: {re.escape(repr(version))} "
            r"is not an exact version: a range .* resolves to the newest match at every sync",
        )
        for label, version in (
            ("latest", "latest"),
            ("caret-range", "^1.2"),
            ("tilde-range", "~1"),
            ("x-range", "1.x"),
            ("comparison", ">=1"),
            ("star", "*"),
            ("major-only", "1"),
            ("major-minor", "1.2"),
        )
    ),
    Case(
        "argocd-component-version-that-is-a-range",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(
                ARGOCD.replace(
                    'key="authToken"),', 'key="authToken"),\n    versions={"crossplane": "2.x"},'
                ),
                "    ",
            )
        },
        r"clusters/broken\.py:\d+ \(argocd\): versions\[crossplane\]: '2\.x' is not an exact "
        r"version",
    ),
    Case(
        "argocd-component-version-whose-crds-are-not-the-validated-ones",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(
                ARGOCD.replace(
                    'key="authToken"),',
                    'key="authToken"),\n    versions={"crossplane": "2.4.0"},',
                ),
                "    ",
            )
        },
        r"clusters/broken\.py:\d+ \(argocd\): versions\[crossplane\]: '2\.4\.0' deploys "
        r"crossplane 2\.4\.0, but the CRDs its objects are validated against are of v2\.3\.4",
    ),
    Case(
        "chart-repository-without-a-scheme",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools", allow_empty=True,
                    source=HelmChart(repo_url="charts.example.org", chart="c", version="1.0.0"),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): source\.repo_url: 'charts\.example\.org': give the "
        r"scheme, https://",
    ),
    # --- issue 21, item 9: secrets anywhere in dist/ --------------------------------------
    Case(
        "token-in-a-label-value",
        {"clusters/broken.py": magnum(labels=f'{{"monitoring_enabled": "{GITLAB_TOKEN}"}}')},
        r"dev: ClusterV1 x-dev: spec\.forProvider\.labels\.monitoring_enabled: GitLab token; "
        r"keep it in a Secret",
    ),
    Case(
        "token-as-a-label-key",
        {
            "clusters/broken.py": magnum(
                labels=f'{{"{GITLAB_TOKEN}": "true"}}', allow_extra_labels="True"
            )
        },
        r"dev: ClusterV1 x-dev: spec\.forProvider\.labels: a key holds a GitLab token",
    ),
    Case(
        "password-in-a-node-label",
        {
            "clusters/broken.py": oke(
                node_pools='[OkeNodePool(name="general", ocpus=2, memory_gb=16, node_count=1, '
                'labels={"registry-password": "hunter2"})]'
            )
        },
        r"dev: OCIManagedMachinePool oke-clusters/oke-dev-general: "
        r"spec\.initialNodeLabels\[0\]\.value: literal value in credential field "
        r"'registry-password'",
    ),
    Case(
        "token-given-as-a-secret-references-key",
        {
            "clusters/broken.py": PRELUDE
            + textwrap.indent(ARGOCD.replace('key="authToken"', f'key="{JWT}"'), "    ")
        },
        r"clusters/broken\.py:\d+: key: holds a JSON Web Token, not a name: a SecretKeyRef names "
        r"the Secret and the key in it",
    ),
    # --- issue 21, item 9: a rejected value that is a credential is never printed ---------
    Case(
        "token-given-as-a-template-uuid-is-not-echoed",
        {
            "clusters/broken.py": magnum(template="T").replace(
                "def define(",
                'T = ClusterTemplate(name="t", kubernetes_version="v1.25.3", '
                f'uuid="{GITLAB_TOKEN}")\n\n\ndef define(',
            )
        },
        r"clusters/broken\.py:\d+ \(template t\): uuid: must be a Magnum UUID like "
        r"6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b, got '<redacted>'$",
        hidden=GITLAB_TOKEN,
    ),
    Case(
        "private-key-given-as-a-cluster-name-is-not-echoed",
        {"clusters/broken.py": magnum(name=repr(PEM_KEY))},
        r"clusters/broken\.py:\d+ \(x\): name: Magnum refuses the cluster name '<redacted>",
        hidden="MIIEowIBAAKCAQEA",
    ),
    Case(
        "password-in-a-chart-repository-is-not-echoed",
        {
            "clusters/broken.py": with_argocd(
                """\
                FleetPackage(
                    fleet, "tools", namespace="tools", allow_empty=True,
                    source=HelmChart(
                        repo_url="ci:hunter2-s3cr3t@charts.example.org", chart="c", version="1.0.0"
                    ),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): source\.repo_url: '<redacted>@charts\.example\.org': "
        r"give the scheme",
        hidden="hunter2-s3cr3t",
    ),
    Case(
        "token-given-as-a-chart-version-is-not-echoed",
        {
            "clusters/broken.py": with_argocd(
                f"""\
                FleetPackage(
                    fleet, "tools", namespace="tools", allow_empty=True,
                    source=HelmChart(
                        repo_url="https://charts.example.org", chart="c", version="{JWT}"
                    ),
                )
                """
            )
        },
        r"clusters/broken\.py:\d+ \(tools\): source\.version: '<redacted>' is not an exact "
        r"version",
        hidden=JWT.split(".")[1],
    ),
    Case(
        "token-raised-by-the-users-own-code-is-not-echoed",
        {"clusters/broken.py": f"def define(fleet):\n    raise ValueError('bad {GITLAB_TOKEN}')\n"},
        r"clusters/broken\.py:2: define: define raised ValueError: bad <redacted>$",
        hidden=GITLAB_TOKEN,
    ),
    Case(
        "a-fleets-own-check-that-raises",
        {
            "clusters/checks.py": (
                "from fleet import Check, Checks\n\n\n"
                "def mine(manifests, context):\n"
                "    return [m.body['spec']['nope'] for m in manifests]\n\n\n"
                "def define(fleet):\n"
                "    Checks.of(fleet).add(Check(name='mine', scope='environment', run=mine))\n"
            )
        },
        r"clusters/checks\.py:5: check mine: mine raised KeyError: 'nope' \(on dev\)$",
    ),
    Case(
        "a-fleets-own-check-that-returns-no-list",
        {
            "clusters/checks.py": (
                "from fleet import Check, Checks\n\n\n"
                "def mine(manifests, context):\n"
                "    return 'fine'\n\n\n"
                "def define(fleet):\n"
                "    Checks.of(fleet).add(Check(name='mine', scope='object', run=mine))\n"
            )
        },
        r"clusters/checks\.py:4: check mine: mine returned str 'fine'; expected a list of Problem$",
    ),
    # --- configuration ------------------------------------------------------------------
    Case(
        "pyproject-toml-syntax-error",
        {"pyproject.toml": '[tool.fleet]\nenvironments = ["dev", "test", "prod"\n'},
        r"pyproject\.toml:\d+: TOML syntax error: ",
        subprocess=True,
    ),
    Case(
        "environment-name-not-a-dns-label",
        {"pyproject.toml": '[tool.fleet]\nenvironments = ["dev", "test", "Prod_EU"]\n'},
        r"pyproject\.toml: \[tool\.fleet\]: environments: must be lower-case letters, digits "
        r"and '-', start and end with a letter or digit, at most 57 characters; got 'Prod_EU'$",
    ),
    Case(
        "setting-of-the-wrong-type",
        {"pyproject.toml": "[tool.fleet]\nrevision = 3\n"},
        r"pyproject\.toml: \[tool\.fleet\]: revision: must be a non-empty string, got 3$",
    ),
    Case(
        "root-that-is-not-a-folder",
        {},
        r"--root pyproject\.toml: not a folder \(the fleet project\)$",
        argv=("--root", "pyproject.toml", "ls"),
    ),
    Case(
        "crds-that-is-a-file",
        {},
        r"CRD folder pyproject\.toml \(from --crds\) is not a folder; ",
        argv=("validate", "--crds", "pyproject.toml"),
    ),
    Case(
        "repo-url-with-a-password-is-one-line-not-echoed",
        {
            "pyproject.toml": PYPROJECT
            + 'repo_url = "https://ci:hunter2-FAKE@git.example.org/f.git"\n'
        },
        r"pyproject\.toml: \[tool\.fleet\]: repo_url: URL with a password in it",
        hidden="hunter2-FAKE",
    ),
    Case(
        "dist-is-the-project-folder",
        {"pyproject.toml": PYPROJECT + 'dist = "."\n'},
        r"pyproject\.toml: \[tool\.fleet\]: dist: must be a folder inside the project as a "
        r"plain relative path \(such as 'dist' or 'deploy/dist': no '/' at either end, no '\.' "
        r"or '\.\.'\), got '\.'$",
    ),
    Case(
        "dist-outside-the-project",
        {"pyproject.toml": PYPROJECT + 'dist = "../out"\n'},
        r"pyproject\.toml: \[tool\.fleet\]: dist: must be a folder inside the project .*, "
        r"got '\.\./out'$",
        argv=("validate",),
    ),
    Case(
        "dist-holds-the-declarations",
        {"pyproject.toml": PYPROJECT + 'dist = "fleet"\nclusters = "fleet/clusters"\n'},
        r"pyproject\.toml: \[tool\.fleet\]: dist: 'fleet' holds the declarations "
        r"\('fleet/clusters'\): a synth deletes every folder in it that is not an environment$",
    ),
    Case(
        "malformed-tfvars",
        {"import/bad.tfvars": SEED_TFVARS + 'labels = {\n  "kube_tag" = \n'},
        r"import/bad\.tfvars:10: malformed HCL at column 16: ",
        argv=("import", "tfvars", "import/bad.tfvars"),
    ),
    Case(
        "tfvars-without-cluster-name",
        {
            "import/bad.tfvars": SEED_TFVARS.replace(
                'cluster_name = "k8s-ais-batch-dev-multi-v25"\n', ""
            )
        },
        r"import/bad\.tfvars: cluster_name: missing cluster_name$",
        argv=("import", "tfvars", "import/bad.tfvars"),
    ),
    Case(
        "tfvars-with-a-negative-node-count",
        {"import/bad.tfvars": SEED_TFVARS.replace('node_count = "1"', 'node_count = "-2"')},
        r"import/bad\.tfvars:\d+: node_count: must be 0 or more, got -2$",
        argv=("import", "tfvars", "import/bad.tfvars"),
    ),
    # --- fleet import tfstate: state formats it does not read, credentials never echoed -
    Case(
        "state-format-version-3",
        {
            "import/old.tfstate": json.dumps(
                {
                    "version": 3,
                    "terraform_version": "0.11.14",
                    "modules": [{"path": ["root"], "resources": {}}],
                }
            )
        },
        r"import/old\.tfstate: version: state format version 3 \(Terraform 0\.11 or older\) "
        r"is not supported: run Terraform 0\.12 or newer once on it",
        argv=("import", "tfstate", "import/old.tfstate", "--environment", "dev"),
    ),
    Case(
        "state-format-version-5",
        {"import/new.tfstate": json.dumps({"version": 5, "resources": []})},
        r"import/new\.tfstate: version: state format version 5 is newer than this importer "
        r"reads \(version 4\)",
        argv=("import", "tfstate", "import/new.tfstate", "--environment", "dev"),
    ),
    Case(
        "show-json-of-a-newer-format",
        {"import/state.json": json.dumps({"format_version": "2.0", "values": {}})},
        r"import/state\.json: format_version: `terraform show -json` format_version '2\.0' is "
        r"newer than this importer reads \(0\.x, 1\.x\)$",
        argv=("import", "tfstate", "import/state.json", "--environment", "dev"),
    ),
    Case(
        "a-shown-plan-is-not-a-state",
        {
            "import/plan.json": json.dumps(
                {"format_version": "1.2", "planned_values": {}, "resource_changes": []}
            )
        },
        r"import/plan\.json: format_version: a plan \(`terraform show -json PLANFILE`\), not "
        r"a state",
        argv=("import", "tfstate", "import/plan.json", "--environment", "dev"),
    ),
    Case(
        "a-saved-plan-is-not-a-state",
        {"import/plan.tfplan": "PK\x03\x04 a zip archive"},
        r"import/plan\.tfplan: a saved plan \(terraform plan -out\), not a state",
        argv=("import", "tfstate", "import/plan.tfplan", "--environment", "dev"),
    ),
    Case(
        "an-empty-state",
        {"import/empty.json": json.dumps({"format_version": "1.0", "terraform_version": "1.9.8"})},
        r"import/empty\.json: an empty state \(`terraform show -json` gives no values\)",
        argv=("import", "tfstate", "import/empty.json", "--environment", "dev"),
    ),
    Case(
        "state-label-holding-a-password-is-refused-not-echoed",
        {"import/secret.tfstate": one_cluster_state(labels={"db_password": "hunter2-FAKE"})},
        r"import/secret\.tfstate openstack_containerinfra_cluster_v1\.c: labels\.db_password: "
        r"holds credential material \(literal value in credential field 'db_password'\)",
        argv=("import", "tfstate", "import/secret.tfstate", "--environment", "dev"),
    ),
    Case(
        "state-count-with-a-fraction-is-refused-by-its-attribute",
        {"import/odd.tfstate": one_cluster_state(labels={}, node_count=3.5)},
        r"import/odd\.tfstate openstack_containerinfra_cluster_v1\.c: node_count: the state "
        r"holds a number with a fraction where terraform-provider-openstack has a whole number",
        argv=("import", "tfstate", "import/odd.tfstate", "--environment", "dev"),
    ),
    Case(
        "state-labels-not-a-map-are-refused-without-quoting-them",
        {"import/odd.tfstate": one_cluster_state(labels=["hunter2-FAKE"])},
        r"import/odd\.tfstate openstack_containerinfra_cluster_v1\.c: labels: the state holds "
        r"a list where terraform-provider-openstack has a map of strings",
        argv=("import", "tfstate", "import/odd.tfstate", "--environment", "dev"),
        hidden="hunter2-FAKE",
    ),
    Case(
        "state-without-a-magnum-cluster-says-what-it-holds",
        {
            "import/other.tfstate": json.dumps(
                {
                    "version": 4,
                    "resources": [
                        {
                            "mode": "managed",
                            "type": "openstack_compute_instance_v2",
                            "name": "vm",
                            "instances": [{"attributes": {"id": "x"}}],
                        }
                    ],
                }
            )
        },
        r"import/other\.tfstate: no openstack_containerinfra_cluster_v1: nothing to import "
        r"\(other resources: 1, openstack_compute_instance_v2\.vm\)$",
        argv=("import", "tfstate", "import/other.tfstate", "--environment", "dev"),
    ),
    Case(
        "the-same-state-file-twice",
        {"import/a.tfstate": one_cluster_state(labels={})},
        r"import/a\.tfstate: given twice: pass each state file once$",
        argv=("import", "tfstate", "import/a.tfstate", "import/a.tfstate", "--environment", "dev"),
    ),
    Case(
        "a-copy-of-a-state-names-the-address",
        {
            "import/a.tfstate": one_cluster_state(labels={}),
            "import/copy.tfstate": one_cluster_state(labels={}),
        },
        r"import/copy\.tfstate openstack_containerinfra_cluster_v1\.c: cluster "
        r"0f8c7f3a-6b1e-4c2d-9a8b-7e6d5c4b3a21 is also import/a\.tfstate "
        r"openstack_containerinfra_cluster_v1\.c: pass each state once$",
        argv=(
            "import",
            "tfstate",
            "import/a.tfstate",
            "import/copy.tfstate",
            "--environment",
            "dev",
        ),
    ),
    Case(
        "an-out-module-fleet-synth-would-not-read-is-refused",
        {"import/a.tfstate": one_cluster_state(labels={})},
        r"--out: elsewhere/a\.py: must be a module directly in .*clusters/ \(NAME\.py, NAME a "
        r"Python name not starting with '_'\): fleet synth reads only those$",
        argv=("import", "tfstate", "import/a.tfstate", "--out", "elsewhere/a.py"),
    ),
    Case(
        "an-out-helper-module-is-refused",
        {"import/a.tfvars": SEED_TFVARS},
        r"--out: clusters/_a\.py: must be a module directly in .*clusters/",
        argv=("import", "tfvars", "import/a.tfvars", "--out", "clusters/_a.py"),
    ),
    Case(
        "a-source-that-is-a-file-says-so",
        {"import/a.tfstate": one_cluster_state(labels={}), "import/main.tf": ""},
        r"import/main\.tf: --source: a file, not the configuration's folder$",
        argv=("import", "tfstate", "import/a.tfstate", "--source", "import/main.tf"),
    ),
    Case(
        "an-empty-state-file-says-so",
        {"import/empty.tfstate": "\n"},
        r"import/empty\.tfstate: an empty file, not a state \(did `terraform state pull` "
        r"fail\?\)$",
        argv=("import", "tfstate", "import/empty.tfstate", "--environment", "dev"),
    ),
    Case(
        "a-state-cut-short-says-so",
        {"import/cut.tfstate": one_cluster_state(labels={})[:300]},
        r"import/cut\.tfstate:1: not JSON: Unterminated string \(the file ends there: cut "
        r"short\?\)$",
        argv=("import", "tfstate", "import/cut.tfstate", "--environment", "dev"),
    ),
    Case(
        # opentofu/opentofu internal/encryption/base.go: basedata
        "an-encrypted-opentofu-state-says-how-to-decrypt-it",
        {
            "import/enc.tfstate": json.dumps(
                {
                    "meta": {"key_provider.pbkdf2.key": "eyJzYWx0Ijoi"},
                    "encrypted_data": "c2VjcmV0IGNpcGhlcnRleHQ=",
                    "encryption_version": "v0",
                }
            )
        },
        r"import/enc\.tfstate: an OpenTofu state encrypted at rest \(encryption_version 'v0'\): "
        r"pass `tofu show -json > state\.json` instead",
        argv=("import", "tfstate", "import/enc.tfstate", "--environment", "dev"),
    ),
    Case(
        "tfvars-credential-where-a-count-belongs-is-not-echoed",
        {
            "import/bad.tfvars": SEED_TFVARS.replace(
                'node_count = "1"', 'node_count = "https://admin:hunter2-FAKE@example.org"'
            )
        },
        r"import/bad\.tfvars:\d+: node_count: must be a whole number, got a value that looks "
        r"like a credential \(not shown\)$",
        argv=("import", "tfvars", "import/bad.tfvars"),
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The small project with dist/ rendered, as it would be committed."""
    root = tmp_path_factory.mktemp("bad-inputs") / "project"
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "_templates.py").write_text(TEMPLATES)
    (root / "clusters" / "base.py").write_text(BASE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLEET_CRDS_DIR", str(crds_dir()))
        mp.chdir(root)
        assert main(["--root", str(root), "synth"]) == 0
    assert (root / "dist" / "dev" / "clusters" / "web-dev").is_dir()
    yield root


def sources(folder: Path) -> dict[str, str]:
    """Hashes of the declarations, without the bytecode that importing them writes."""
    return {k: v for k, v in tree_hash(folder).items() if "__pycache__" not in k}


def run(root: Path, case: Case) -> tuple[int, str, str]:
    if case.subprocess:
        fleet = Path(sys.executable).with_name("fleet")
        proc = subprocess.run(
            [str(fleet), "--root", str(root), *case.argv],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.returncode, proc.stdout, proc.stderr
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--root", str(root), *case.argv])
    return code, out.getvalue(), err.getvalue()


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 15
    assert len({c.id for c in CASES}) == len(CASES)
    assert sum(1 for c in CASES if c.argv[0] == "import") >= 2


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(
    case: Case, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__"))
    for relpath, source in case.files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    monkeypatch.chdir(root)
    dist_before = tree_hash(root / "dist")
    clusters_before = sources(root / "clusters")

    code, out, err = run(root, case)

    # A synth slower than 2 s (a loaded machine) prints progress lines first: not errors.
    lines = [line for line in err.splitlines() if not PROGRESS_LINE.match(line)]
    assert code == case.exit_code, err
    assert len(lines) == case.lines, err
    assert all(line.startswith("error: ") for line in lines), err
    assert any(re.match(case.message, line.removeprefix("error: ")) for line in lines), err
    assert "Traceback" not in err + out
    assert not case.hidden or case.hidden not in err + out
    assert tree_hash(root / "dist") == dist_before
    assert sources(root / "clusters") == clusters_before
