"""Schema validation against the pinned upstream CRDs (the vendored crds/, or $FLEET_CRDS_DIR)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from crd_samples import (
    argocd_application,
    argocd_cluster,
    argocd_provider_config,
    capoci_managed,
    cluster_v1,
    crds_dir,
    manifest,
    namespace,
    nodegroup_v1,
    openstack_provider_config,
)

from fleet.checks import cel
from fleet.checks.crds import load_crds
from fleet.checks.schema import (
    FORMATS,
    Problem,
    convert_schema,
    validate_manifests,
)


def problems(*bodies: dict[str, Any]) -> list[Problem]:
    return validate_manifests([manifest(b) for b in bodies], crds_dir=crds_dir())


def only(body: dict[str, Any]) -> Problem:
    found = problems(body)
    assert len(found) == 1, [p.line() for p in found]
    return found[0]


def test_realistic_objects_pass() -> None:
    bodies = [
        cluster_v1(),
        nodegroup_v1(),
        argocd_cluster(),
        openstack_provider_config(),
        argocd_provider_config(),
        argocd_application(),
        namespace(),
        *capoci_managed(),
    ]
    assert problems(*bodies) == []


def test_wrong_type() -> None:
    body = cluster_v1()
    body["spec"]["forProvider"]["nodeCount"] = "3"
    p = only(body)
    assert p.field_path == "spec.forProvider.nodeCount"
    assert "expected number" in p.message and '"3"' in p.message
    assert p.line() == (
        "dev: ClusterV1 k8s-ais-batch-dev-multi-v25: spec.forProvider.nodeCount: "
        'expected number, got "3" (defined at test.py:1)'
    )


def test_label_values_must_be_strings() -> None:
    body = cluster_v1()
    body["spec"]["forProvider"]["labels"]["cern_chart_enabled"] = True
    p = only(body)
    assert p.field_path == "spec.forProvider.labels.cern_chart_enabled"
    assert "expected string" in p.message


def test_enum() -> None:
    body = cluster_v1()
    body["spec"]["deletionPolicy"] = "Keep"
    p = only(body)
    assert p.field_path == "spec.deletionPolicy"
    assert '"Delete"' in p.message and '"Orphan"' in p.message and '"Keep"' in p.message


def test_missing_required() -> None:
    body = argocd_cluster()
    del body["spec"]["forProvider"]["config"]["kubeconfigSecretRef"]["namespace"]
    p = only(body)
    assert p.field_path == "spec.forProvider.config.kubeconfigSecretRef.namespace"
    assert p.message == "required field is missing"


def test_unknown_field_is_an_error() -> None:
    body = cluster_v1()
    body["spec"]["forProvider"]["nodeCout"] = 3
    p = only(body)
    assert p.field_path == "spec.forProvider.nodeCout"
    assert "unknown field" in p.message


def test_unknown_top_level_and_metadata_fields() -> None:
    body = nodegroup_v1()
    body["metadata"]["label"] = {"a": "b"}
    body["extra"] = 1
    paths = sorted(p.field_path for p in problems(body))
    assert paths == ["extra", "metadata.label"]


def test_metadata_types_are_checked() -> None:
    body = nodegroup_v1()
    body["metadata"]["labels"] = {"replicas": 3}
    p = only(body)
    assert p.field_path == "metadata.labels.replicas"


def test_standard_metadata_fields_allowed() -> None:
    body = argocd_application()
    body["metadata"]["labels"] = {"team": "jeedy"}
    body["metadata"]["annotations"] = {"argocd.argoproj.io/sync-wave": "1"}
    assert problems(body) == []


def test_pattern() -> None:
    body = capoci_managed()[0]  # cluster.x-k8s.io/v1beta1 Cluster
    body["spec"]["topology"] = {"class": "oke", "version": "v1.30.1", "classNamespace": "fleet"}
    assert problems(body) == []
    body["spec"]["topology"]["classNamespace"] = "Fleet_NS"
    p = only(body)
    assert p.field_path == "spec.topology.classNamespace"
    assert p.message.startswith("expected a string matching ^[a-z0-9]")
    assert '"Fleet_NS"' in p.message


def test_nested_required_in_list_items() -> None:
    app = argocd_application()
    app["spec"]["source"]["directory"]["jsonnet"] = {"tlas": [{"name": "a"}]}
    found = problems(app)
    assert [p.field_path for p in found] == ["spec.source.directory.jsonnet.tlas[0].value"]


def test_int_or_string() -> None:
    body = capoci_managed()[3]  # MachinePool v1beta1
    body["spec"]["template"]["spec"]["nodeDeletionTimeout"] = "10s"
    assert problems(body) == []
    app = argocd_application()
    app["spec"]["source"]["helm"] = {"parameters": [{"name": "a", "value": "1"}]}
    assert problems(app) == []
    cluster = capoci_managed()[0]
    cluster["spec"]["topology"] = {
        "class": "c",
        "version": "v1.30.1",
        "controlPlane": {"machineHealthCheck": {"maxUnhealthy": "40%"}},
    }
    assert problems(cluster) == []
    cluster["spec"]["topology"]["controlPlane"]["machineHealthCheck"]["maxUnhealthy"] = 2
    assert problems(cluster) == []
    cluster["spec"]["topology"]["controlPlane"]["machineHealthCheck"]["maxUnhealthy"] = 1.5
    p = only(cluster)
    assert p.field_path == "spec.topology.controlPlane.machineHealthCheck.maxUnhealthy"


def test_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "nullable": True},
                    "b": {"type": "string"},
                    "c": {"type": "string", "enum": ["x"], "nullable": True},
                },
            }
        },
    }
    converted, _ = convert_schema(schema)
    spec = converted["properties"]["spec"]
    assert spec["properties"]["a"]["type"] == ["string", "null"]
    assert spec["properties"]["b"]["type"] == "string"
    assert spec["properties"]["c"]["enum"] == ["x", None]
    assert spec["additionalProperties"] is False


def test_nullable_in_real_crd() -> None:
    # provider-argocd Cluster forProvider.labels values are plain strings: null is refused.
    body = argocd_cluster()
    body["spec"]["forProvider"]["labels"] = {"env": None}
    p = only(body)
    assert p.field_path == "spec.forProvider.labels.env"


def test_preserve_unknown_fields_allows_extras() -> None:
    app = argocd_application()
    app["spec"]["source"]["helm"] = {"valuesObject": {"anything": {"goes": [1, 2]}}}
    assert problems(app) == []


def test_format_int32_range() -> None:
    body = capoci_managed()[3]
    body["spec"]["replicas"] = 2**31
    p = only(body)
    assert p.field_path == "spec.replicas"


def test_format_byte_and_date_time() -> None:
    schema = {
        "type": "object",
        "properties": {
            "b": {"type": "string", "format": "byte"},
            "t": {"type": "string", "format": "date-time"},
            "e": {"type": "string", "format": "email"},
        },
    }
    converted, _ = convert_schema(schema)
    assert converted["properties"]["b"]["format"] == "byte"
    assert "format" not in converted["properties"]["e"]  # unknown to Kubernetes' checks: ignored
    for good in ("2024-08-13T09:21:07Z", "2024-08-13T09:21:07.123+02:00", "2024-08-13T09:21"):
        assert FORMATS["date-time"](good), good
    assert not FORMATS["date-time"]("13/08/2024")
    assert FORMATS["byte"]("aGVsbG8=")
    assert not FORMATS["byte"]("not base64!")


def test_cel_required_parameter() -> None:
    body = cluster_v1()
    del body["spec"]["forProvider"]["clusterTemplateId"]
    p = only(body)
    assert p.field_path == "spec"
    assert p.message == "spec.forProvider.clusterTemplateId is a required parameter"


def test_cel_required_parameter_in_init_provider() -> None:
    body = nodegroup_v1()
    cluster_id = body["spec"]["forProvider"].pop("clusterId")
    body["spec"]["initProvider"] = {"clusterId": cluster_id}
    assert problems(body) == []


def test_cel_required_parameter_not_needed_when_observing() -> None:
    body = nodegroup_v1()
    del body["spec"]["forProvider"]["clusterId"]
    del body["spec"]["forProvider"]["name"]
    body["spec"]["managementPolicies"] = ["Observe"]
    assert problems(body) == []
    body["spec"]["managementPolicies"] = ["Observe", "Update"]
    messages = sorted(p.message for p in problems(body))
    assert messages == [
        "spec.forProvider.clusterId is a required parameter",
        "spec.forProvider.name is a required parameter",
    ]


def test_cel_rules_run_on_a_real_runtime() -> None:
    """Shapes the old hand-written subset skipped, on a real CEL runtime (cel-expr-python).

    Defaults first and escaping as kubernetes/apiextensions-apiserver
    pkg/apiserver/schema/cel/validation.go and kubernetes/apiserver pkg/cel/escaping.go.
    """
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "p": {"type": "array", "items": {"type": "string"}, "default": ["*"]},
            "namespace": {"type": "string"},
            "phase": {"type": "string"},
            "a": {"type": "object", "properties": {"b": {"type": "integer"}}},
        },
    }

    def holds(rule: str, value: Any) -> bool:
        entry = {"rule": rule, "message": "no"}
        found = list(
            cel.failures(
                {"x": value}, {"properties": {"x": schema}}, [cel.Rule.of(("x",), schema, entry)]
            )
        )
        assert all(message == "no" for _, message in found), found
        return not found

    required = "!('*' in self.p || 'Create' in self.p) || has(self.a.b)"
    assert not holds(required, {"a": {}})  # p defaults to ["*"]
    assert holds(required, {"a": {"b": 1}})
    assert holds(required, {"p": ["Observe"]})
    assert not holds("!(self.phase in ['Ready', 'Available'])", {"phase": "Ready"})
    assert holds("!(self.phase in ['Ready', 'Available'])", {"phase": "Failed"})
    assert holds("has(self.__namespace__)", {"namespace": "x"})
    assert not holds("size(self.p) > 1", {})
    assert holds("self.phase.matches('^[a-z]+$')", {"phase": "abc"})
    assert not holds("self.phase.matches('^[a-z]+$')", {"phase": "a-b"})
    assert not holds("[has(self.a), has(self.phase)].exists_one(x, x)", {"a": {}, "phase": "n"})
    # a transition rule is not evaluated on create, as the API server skips it without oldSelf
    assert holds("self.a == oldSelf.a", {"a": {}})


def test_cel_evaluation_error_fails_the_rule() -> None:
    """An evaluation error is a failure with the API server's wording, never a pass."""
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "object"}}}
    rule = cel.Rule.of((), schema, {"rule": "self.a.b == 1"})
    [(where, message)] = list(cel.failures({"a": {}}, schema, [rule]))
    assert where == []
    assert message.endswith("evaluating rule: self.a.b == 1")


def test_a_rule_that_does_not_compile_is_reported() -> None:
    with pytest.raises(cel.RuleCompileError, match="does not compile"):
        cel.Rule.of((), {}, {"rule": "self.a ==="})


def test_other_cel_rules_are_evaluated() -> None:
    # external-secrets: "exactly one of value or secretRef must be set" (has() != has()).
    body = {
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "delinea", "namespace": "apps"},
        "spec": {
            "provider": {
                "secretserver": {
                    "serverURL": "https://secrets.example.org",
                    "username": {"value": "svc-fleet"},
                    "password": {"secretRef": {"name": "delinea", "key": "password"}},
                }
            }
        },
    }
    assert problems(body) == []
    body["spec"]["provider"]["secretserver"]["username"]["secretRef"] = {"name": "a", "key": "b"}
    p = only(body)
    assert p.field_path == "spec.provider.secretserver.username"
    assert p.message == "exactly one of value or secretRef must be set"


def _rules_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        entries = node.get("x-kubernetes-validations")
        if isinstance(entries, list):
            yield from (e["rule"] for e in entries if isinstance(e, dict) and "rule" in e)
        for value in node.values():
            yield from _rules_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _rules_in(value)


def test_every_pinned_cel_rule_is_compiled() -> None:
    """No skip list: every rule of every served version of every pinned CRD is compiled."""
    index = load_crds(crds_dir())
    for (api_version, kind), crd in index.schemas.items():
        rules = convert_schema(crd.schema, api_version, kind)[1]
        assert sorted(r.text for r in rules) == sorted(
            " ".join(r.split()) for r in _rules_in(crd.schema)
        ), kind


def test_pinned_rules_that_were_skipped_now_reject() -> None:
    """Rules the old subset skipped: crossplane Provider spec.package matches(), and the
    Cluster API condition-type list literal, now reject a wrong object."""
    provider = {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": "p"},
        "spec": {"package": "xpkg.upbound.io/crossplane-contrib/provider-openstack:v1.0.0"},
    }
    assert problems(provider) == []
    provider["spec"]["package"] = "provider-openstack"
    p = only(provider)
    assert p.field_path == "spec.package"


def test_unknown_kind_is_an_error() -> None:
    body = {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}}
    p = only(body)
    assert "no schema for example.org/v1 Widget" in p.message


def test_served_versions_only() -> None:
    body = {
        "apiVersion": "external-secrets.io/v1beta1",
        "kind": "ExternalSecret",
        "metadata": {"name": "x", "namespace": "y"},
        "spec": {},
    }
    assert "no schema for external-secrets.io/v1beta1 ExternalSecret" in only(body).message


def test_schemaless_kind() -> None:
    body = {"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    assert len(problems(body)) == 1
    gadget = {("example.org/v1", "Gadget")}
    assert validate_manifests([manifest(body)], crds_dir=crds_dir(), schemaless=gadget) == []


def test_core_kinds_use_kubernetes_schemas() -> None:
    assert problems(namespace()) == []
    bad = namespace()
    bad["spec"] = {"finalizers": "kubernetes"}
    p = only(bad)
    assert p.field_path == "spec.finalizers"
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n"},
        "data": {"a": "b"},
        "extra": 1,
    }
    assert only(config_map).field_path == "extra"
    service_account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "s", "namespace": "n"},
        "automountServiceAccountToken": "no",
    }
    assert only(service_account).field_path == "automountServiceAccountToken"


def test_problems_carry_environment_and_source() -> None:
    body = nodegroup_v1()
    body["spec"]["forProvider"]["nodeCount"] = "two"
    found = validate_manifests(
        [manifest(body, environment="prod", source="clusters/jeedy_ais.py:12")],
        crds_dir=crds_dir(),
    )
    assert [p.line() for p in found] == [
        "prod: NodegroupV1 zone-a-xlarge: spec.forProvider.nodeCount: expected number, "
        'got "two" (defined at clusters/jeedy_ais.py:12)'
    ]
