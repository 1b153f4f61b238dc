"""The secret guard: no credential material in rendered objects."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from crd_samples import (
    argocd_application,
    argocd_cluster,
    argocd_provider_config,
    capoci_managed,
    cluster_v1,
    magnum_environment,
    manifest,
)

from fleet.checks.problem import Problem
from fleet.checks.secret_guard import find_secret_material

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexampleexampleexample\n"
    "-----END RSA PRIVATE KEY-----\n"
)
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://k8s-ais-batch-dev-multi-v25.cern.ch:6443
  name: k8s
users:
- name: admin
  user:
    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.example
contexts: []
"""


def only(body: dict[str, Any]) -> Problem:
    found = find_secret_material([manifest(body)])
    assert len(found) == 1, [p.line() for p in found]
    return found[0]


def test_references_are_not_secret_material() -> None:
    env = magnum_environment() + [manifest(b) for b in capoci_managed()]
    env += [manifest(argocd_application()), manifest(argocd_provider_config())]
    store = {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db", "namespace": "apps"},
        "spec": {
            "secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "db/password"}}],
        },
    }
    secret_refs = {
        "apiVersion": "cluster.argocd.crossplane.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "x"},
        "spec": {
            "forProvider": {
                "config": {
                    "passwordSecretRef": {"name": "x", "namespace": "y", "key": "password"},
                    "bearerTokenSecretRef": {"name": "x", "namespace": "y", "key": "token"},
                    "username": "admin",
                }
            }
        },
    }
    empty = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}}
    env += [manifest(store), manifest(secret_refs), manifest(empty)]
    assert find_secret_material(env) == []


@pytest.mark.parametrize("field", ["data", "stringData"])
def test_secret_with_data(field: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "k8s-ais-batch-dev-multi-v25", "namespace": "crossplane-clusters"},
        "type": "connection.crossplane.io/v1alpha1",
        field: {"attribute.kubeconfig.raw_config": base64.b64encode(KUBECONFIG.encode()).decode()},
    }
    p = only(body)
    assert p.field_path == field
    assert p.object == "Secret crossplane-clusters/k8s-ais-batch-dev-multi-v25"
    assert f"Secret with {field}" in p.message


def test_pem_private_key_anywhere() -> None:
    body = capoci_managed()[4]
    body["spec"]["sshPublicKey"] = PEM
    p = only(body)
    assert p.field_path == "spec.sshPublicKey"
    assert "PEM private key" in p.message


def test_base64_pem_private_key() -> None:
    app = argocd_application()
    app["spec"]["source"]["helm"] = {
        "parameters": [{"name": "tls", "value": base64.b64encode(PEM.encode()).decode()}]
    }
    p = only(app)
    assert p.field_path == "spec.source.helm.parameters[0].value"
    assert "base64-encoded PEM private key" in p.message


def test_kubeconfig_with_token() -> None:
    app = argocd_application()
    app["spec"]["source"]["helm"] = {"values": KUBECONFIG}
    p = only(app)
    assert p.field_path == "spec.source.helm.values"
    assert "kubeconfig" in p.message


def test_kubeconfig_with_client_key_data() -> None:
    app = argocd_application()
    app["metadata"]["annotations"] = {"note": "users:\n- user:\n    client-key-data: LS0tLS1\n"}
    assert only(app).field_path == "metadata.annotations.note"


@pytest.mark.parametrize(
    "field", ["password", "passwd", "adminPassword", "token", "apiKey", "privateKey", "secret"]
)
def test_credential_literals(field: str) -> None:
    body = argocd_cluster()
    body["spec"]["forProvider"]["config"][field] = "hunter2"
    p = only(body)
    assert p.field_path == f"spec.forProvider.config.{field}"
    assert f"literal value in credential field {field!r}" in p.message


def test_empty_credential_field_is_fine() -> None:
    body = capoci_managed()[3]
    body["spec"]["template"]["spec"]["bootstrap"] = {"dataSecretName": ""}
    body["spec"]["template"]["spec"]["password"] = ""
    assert find_secret_material([manifest(body)]) == []


def test_problem_line_names_environment_object_field_and_source() -> None:
    body = argocd_provider_config()
    body["spec"]["credentials"] = {"source": "None", "token": "abc"}
    found = find_secret_material([manifest(body, "prod", "clusters/argocd.py:7")])
    assert [p.line() for p in found] == [
        "prod: ProviderConfig argocd-provider: spec.credentials.token: literal value in "
        "credential field 'token'; use a secret reference (for example a *SecretRef) instead "
        "(defined at clusters/argocd.py:7)"
    ]


# --- issue 21, item 9: secrets anywhere in an object -------------------------------------------

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJhcmdvY2QtZmxlZXQifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
"""The shape of an ArgoCD API token (a JSON Web Token: header.payload.signature)."""
GITLAB = "glpat-" + "x1Y2z3" * 4


@pytest.mark.parametrize("value", [JWT, GITLAB, "AKIAIOSFODNN7EXAMPLE", "db password=hunter2"])
def test_a_token_in_a_label_value(value: str) -> None:
    """A label's name says nothing: the value itself is recognised."""
    body = cluster_v1()
    body["spec"]["forProvider"]["labels"]["registry_pull"] = value
    p = only(body)
    assert p.field_path == "spec.forProvider.labels.registry_pull"
    assert "keep it in a Secret and reference it" in p.message


def test_a_token_as_a_label_key_is_found_and_not_shown() -> None:
    body = cluster_v1()
    body["spec"]["forProvider"]["labels"][GITLAB] = "true"
    p = only(body)
    assert p.field_path == "spec.forProvider.labels"
    assert p.message.startswith("a key holds a GitLab token")
    assert GITLAB not in p.line()


def test_a_credential_named_node_label() -> None:
    """OKE node labels render as ``{key, value}`` pairs (CAPOCI ``initialNodeLabels``), as
    environment variables are ``{name, value}``: the pair's name counts as a field name."""
    body = capoci_managed()[4]
    body["spec"]["initialNodeLabels"] = [
        {"key": "tier", "value": "gold"},
        {"key": "db-password", "value": "hunter2"},
    ]
    p = only(body)
    assert p.field_path == "spec.initialNodeLabels[1].value"
    assert "literal value in credential field 'db-password'" in p.message


def test_a_token_given_as_a_secret_references_key() -> None:
    body = argocd_provider_config()
    body["spec"]["credentials"]["secretRef"]["key"] = JWT
    p = only(body)
    assert p.field_path == "spec.credentials.secretRef.key"
    assert p.message.startswith("JSON Web Token")


def test_key_names_and_references_stay_fine() -> None:
    """Names of keys (``key: password``) are references, not values; ordinary long strings
    (image tags, feature gates) are no token."""
    body = argocd_provider_config()
    body["spec"]["credentials"]["secretRef"]["key"] = "password"
    labels = cluster_v1()
    labels["spec"]["forProvider"]["labels"].update(
        kubelet_options="--feature-gates=CSIMigration=true --token-ttl=1h",
        registry="registry.example.org/glance-images/v1",
    )
    assert find_secret_material([manifest(body), manifest(labels)]) == []
