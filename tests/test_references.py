"""Reference and name checks within one environment."""

from __future__ import annotations

import dataclasses
from typing import Any

from builders import builtin_plugins
from crd_samples import (
    argocd_application,
    argocd_cluster,
    capoci_managed,
    cluster_v1,
    magnum_environment,
    manifest,
    namespace,
    nodegroup_v1,
)

from fleet.checks.problem import Problem
from fleet.checks.references import check_references
from fleet.core.manifest import Manifest


def refs(manifests: list[Manifest]) -> list[Problem]:
    """The reference check with the plug-ins of a fleet of every built-in cloud."""
    return check_references(manifests, builtin_plugins())


def lines(manifests: list[Manifest]) -> list[str]:
    return [p.line() for p in refs(manifests)]


def without(kind: str, group: str, manifests: list[Manifest]) -> list[Manifest]:
    return [m for m in manifests if (m.kind, m.group) != (kind, group)]


def test_consistent_environments_pass() -> None:
    env = magnum_environment() + [manifest(b) for b in capoci_managed()]
    env.append(manifest(argocd_application()))
    assert refs(env) == []


def test_dangling_openstack_provider_config() -> None:
    env = without("ProviderConfig", "openstack.crossplane.io", magnum_environment())
    found = refs(env)
    assert [(p.object, p.field_path) for p in found] == [
        ("ClusterV1 k8s-ais-batch-dev-multi-v25", "spec.providerConfigRef.name"),
        ("NodegroupV1 zone-a-xlarge", "spec.providerConfigRef.name"),
    ]
    assert (
        found[0].message
        == "no openstack.crossplane.io ProviderConfig jeedy-ais in this environment"
    )


def test_provider_config_of_the_wrong_family_does_not_count() -> None:
    env = magnum_environment()
    for m in env:
        if m.kind == "Cluster":
            m.body["spec"]["providerConfigRef"]["name"] = "jeedy-ais"  # an openstack one
    assert lines(env) == [
        "dev: Cluster k8s-ais-batch-dev-multi-v25: spec.providerConfigRef.name: "
        "no argocd.crossplane.io ProviderConfig jeedy-ais in this environment "
        "(defined at test.py:1)"
    ]


def test_missing_provider_config_ref_means_default() -> None:
    env = magnum_environment()
    del env[3].body["spec"]["providerConfigRef"]
    found = refs(env)
    assert [p.message for p in found] == [
        "no openstack.crossplane.io ProviderConfig default in this environment"
    ]


def test_references_do_not_cross_environments() -> None:
    dev = magnum_environment("dev")
    prod = without("ProviderConfig", "openstack.crossplane.io", magnum_environment("prod"))
    found = refs(dev + prod)
    assert {p.environment for p in found} == {"prod"}
    assert len(found) == 2


def test_nodegroup_cluster_id_must_name_a_cluster() -> None:
    env = magnum_environment()
    env.append(manifest(nodegroup_v1(cluster="k8s-ais-batch-dev-multi-v26", name="zone-b")))
    found = refs(env)
    assert [(p.object, p.field_path) for p in found] == [
        ("NodegroupV1 zone-b", "spec.forProvider.clusterId")
    ]
    assert "'k8s-ais-batch-dev-multi-v26'" in found[0].message


def test_nodegroup_cluster_id_may_match_the_external_name() -> None:
    cluster = cluster_v1()
    cluster["spec"]["forProvider"]["name"] = "renamed-in-magnum"
    cluster["metadata"]["annotations"]["crossplane.io/external-name"] = "magnum-uuid-1234"
    group = nodegroup_v1(cluster="magnum-uuid-1234")
    env = [m for m in magnum_environment() if m.kind not in ("ClusterV1", "NodegroupV1")]
    env += [manifest(cluster), manifest(group)]
    assert refs(env) == []
    env[-1].body["spec"]["forProvider"]["clusterId"] = "k8s-ais-batch-dev-multi-v25"
    assert len(refs(env)) == 1  # metadata.name alone is not a Magnum id


def test_dangling_kubeconfig_secret_ref() -> None:
    env = without("ClusterV1", "containerinfra.openstack.crossplane.io", magnum_environment())
    env = without("NodegroupV1", "containerinfra.openstack.crossplane.io", env)
    found = refs(env)
    assert [(p.object, p.field_path) for p in found] == [
        ("Cluster k8s-ais-batch-dev-multi-v25", "spec.forProvider.config.kubeconfigSecretRef")
    ]
    assert "Secret crossplane-clusters/k8s-ais-batch-dev-multi-v25" in found[0].message
    # The kinds that could produce it come from the plug-ins and components in force.
    assert found[0].message.endswith(
        "(objects that can: Cluster, ClusterV1, ExternalSecret, Secret)"
    ), found[0].message


def test_kubeconfig_secret_ref_with_wrong_key() -> None:
    env = magnum_environment()
    env[5].body["spec"]["forProvider"]["config"]["kubeconfigSecretRef"]["key"] = "kubeconfig"
    found = refs(env)
    assert [p.field_path for p in found] == ["spec.forProvider.config.kubeconfigSecretRef.key"]
    assert "attribute.kubeconfig.raw_config" in found[0].message


def test_kubeconfig_from_a_cluster_api_cluster() -> None:
    registration: dict[str, Any] = argocd_cluster("oke-dev")
    ref = registration["spec"]["forProvider"]["config"]["kubeconfigSecretRef"]
    ref.update(name="oke-dev-kubeconfig", namespace="oke", key="value")
    env = [m for m in magnum_environment() if m.kind == "ProviderConfig"]
    env += [manifest(b) for b in capoci_managed("oke-dev", "oke")] + [manifest(registration)]
    assert refs(env) == []
    ref["namespace"] = "default"
    env[-1] = manifest(registration)
    assert [p.field_path for p in refs(env)] == ["spec.forProvider.config.kubeconfigSecretRef"]


def test_dangling_cluster_api_refs() -> None:
    bodies = capoci_managed()
    env = [manifest(b) for b in bodies if b["kind"] != "OCIManagedControlPlane"]
    found = refs(env)
    assert [(p.object, p.field_path, p.message) for p in found] == [
        (
            "Cluster oke/oke-dev",
            "spec.controlPlaneRef",
            "no infrastructure.cluster.x-k8s.io/v1beta2 OCIManagedControlPlane oke/oke-dev "
            "in this environment",
        )
    ]


def test_cluster_api_ref_must_match_api_version() -> None:
    bodies = capoci_managed()
    bodies[0]["spec"]["infrastructureRef"]["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta1"
    assert [p.field_path for p in refs([manifest(b) for b in bodies])] == ["spec.infrastructureRef"]


def test_machine_pool_cluster_name_and_infrastructure_ref() -> None:
    bodies = capoci_managed()
    bodies[3]["spec"]["clusterName"] = "oke-prod"
    bodies[3]["spec"]["template"]["spec"]["infrastructureRef"]["name"] = "oke-dev-mp-9"
    found = refs([manifest(b) for b in bodies])
    assert [p.field_path for p in found] == [
        "spec.clusterName",
        "spec.template.spec.infrastructureRef",
    ]


def test_v1beta2_refs_use_api_group() -> None:
    bodies = capoci_managed()
    bodies[0]["apiVersion"] = "cluster.x-k8s.io/v1beta2"
    bodies[0]["spec"]["infrastructureRef"] = {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "OCIManagedCluster",
        "name": "oke-dev",
    }
    bodies[0]["spec"]["controlPlaneRef"] = {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "OCIManagedControlPlane",
        "name": "missing",
    }
    found = refs([manifest(b) for b in bodies])
    assert [p.field_path for p in found] == ["spec.controlPlaneRef"]


def test_bad_names() -> None:
    env = magnum_environment()
    env[2] = manifest(namespace("crossplane.clusters"))  # dots: fine for most kinds, not here
    env[3].body["metadata"]["name"] = "K8s_Ais"
    env[3] = dataclasses.replace(env[3])  # a Manifest reads its name from the body once
    found = refs(env)
    messages = {(p.object, p.field_path): p.message for p in found}
    assert messages[("Namespace crossplane.clusters", "metadata.name")].startswith(
        "expected a DNS-1123 label"
    )
    assert messages[("ClusterV1 K8s_Ais", "metadata.name")].startswith(
        "expected a DNS-1123 subdomain"
    )


def test_name_length_limits() -> None:
    long_label = "a" * 64
    assert len(refs([manifest(namespace(long_label))])) == 1
    assert refs([manifest(namespace("a" * 63))]) == []
    app = argocd_application(name="a" * 200 + ".example")
    assert refs([manifest(app)]) == []
    app = argocd_application(name="a" * 254)
    assert [p.field_path for p in refs([manifest(app)])] == ["metadata.name"]
    app = argocd_application()
    app["metadata"]["namespace"] = "Argo CD"
    assert [p.field_path for p in refs([manifest(app)])] == ["metadata.namespace"]
