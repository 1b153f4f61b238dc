"""Schema validation against the pinned upstream CRDs (the vendored crds/, or $FLEET_CRDS_DIR)."""

from __future__ import annotations

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

from fleet.checks.crds import load_crds
from fleet.checks.schema import (
    FORMATS,
    Problem,
    convert_schema,
    declare_schemaless,
    evaluate_rule,
    parse_rule,
    skipped_rules,
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


def test_cel_evaluator_shapes() -> None:
    schema = {"properties": {"p": {"default": ["*"]}}}
    expr = parse_rule("!('*' in self.p || 'Create' in self.p) || has(self.a.b)")
    assert not evaluate_rule(expr, {"a": {}}, schema)
    assert evaluate_rule(expr, {"a": {"b": 1}}, schema)
    assert evaluate_rule(expr, {"p": ["Observe"]}, schema)
    one = parse_rule("[has(self.oci), has(self.url), has(self.selector)].exists_one(x,x)")
    assert evaluate_rule(one, {"url": "u"}, {})
    assert not evaluate_rule(one, {}, {})
    assert not evaluate_rule(one, {"url": "u", "oci": "o"}, {})
    at_most = parse_rule("[has(self.auth),has(self.authRef)].filter(x,x==true).size() <= 1")
    assert evaluate_rule(at_most, {}, {})
    assert not evaluate_rule(at_most, {"auth": {}, "authRef": {}}, {})
    keys = parse_rule("!('esoNamespace' in self) && !('esoStoreName' in self)")
    assert evaluate_rule(keys, {"other": 1}, {})
    assert not evaluate_rule(keys, {"esoStoreName": "x"}, {})
    xor = parse_rule("has(self.value) != has(self.secretRef)")
    assert evaluate_rule(xor, {"value": "x"}, {})
    assert not evaluate_rule(xor, {}, {})
    assert not evaluate_rule(xor, {"value": "x", "secretRef": {}}, {})
    for unsupported in ("size(self) > 0", "self.a == oldSelf.a", "!(self in ['Ready'])"):
        with pytest.raises(ValueError, match="unsupported CEL rule"):
            parse_rule(unsupported)


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


def test_skipped_cel_rules_are_listed() -> None:
    """Rule shapes the evaluator does not handle are recorded, never silently dropped.

    This is the complete list for the pinned CRDs; the module docstring names the same rules.
    """
    index = load_crds(crds_dir())
    evaluated = 0
    for (api_version, kind), crd in index.schemas.items():
        evaluated += len(convert_schema(crd.schema, api_version, kind)[1])
    skipped = {(r.kind, r.rule.split("(", 1)[0] + "(") for r in skipped_rules()}
    assert skipped == {
        ("Cluster", "!("),  # !(self in ['Ready', ...]): list literal
        ("ClusterClass", "!("),
        ("Provider", "self.matches("),
        ("ImageConfig", "size("),
        ("PushSecret", "!has("),  # ... || size(self.rewrite) == 0
    }
    assert evaluated >= 61


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
    declare_schemaless("example.org/v1", "Gadget")
    assert problems(body) == []


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
