"""No error message prints credential material (issue 21, item 9):
:func:`fleet.core.secrets.redact` behind every DefinitionError, every Problem line and the
command line's error printer."""

from __future__ import annotations

import pytest

from fleet import DefinitionError
from fleet.checks.problem import Problem
from fleet.core.secrets import credential_in, redact

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiJhcmdvY2QifQ.c2lnbmF0dXJl"
SECRETS = {
    "pem": PEM,
    "jwt": JWT,
    "gitlab": "glpat-" + "a1B2c3" * 4,
    "github": "ghp_" + "A1b2" * 9,
    "github-fine-grained": "github_pat_" + "11ABCDEFG0" * 3,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghij",
    "url": "https://ci:hunter2@git.example.org/fleet.git",
    "password": "user=admin password=hunter2",
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_kind_is_recognised_and_redacted(name: str) -> None:
    secret = SECRETS[name]
    assert credential_in(secret)
    shown = redact(f"field: got {secret!r} here")
    assert "<redacted>" in shown
    assert shown.startswith("field: got ") and shown.endswith(" here")
    for part in ("hunter2", "b3BlbnNzaC1rZXkt", "a1B2c3a1B2c3", "A1b2A1b2", "IOSFODNN7"):
        assert part not in shown


@pytest.mark.parametrize(
    "text",
    [
        "clusters/a.py:3 (argocd): token: must be a SecretKeyRef, got str",
        "node_count: must be 0 or more, got -1 (dev)",
        "--feature-gates=CSIMigration=true --bootstrap-token-ttl=1h",
        "git@github.com:org/fleet.git",
        "registry.example.org/team/image:v1.2.3",
        "6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b",
    ],
)
def test_ordinary_messages_are_left_alone(text: str) -> None:
    assert credential_in(text) is None
    assert redact(text) == text


def test_a_definition_error_and_a_problem_never_print_a_secret() -> None:
    error = DefinitionError(f"must be a UUID, got {JWT!r}", where="c.py:1", field="uuid")
    assert error.line() == "c.py:1: uuid: must be a UUID, got '<redacted>'"
    assert JWT not in str(error)
    problem = Problem("dev", "ClusterV1 x", "spec.x", f"expected number, got {PEM!r}", "")
    assert "PRIVATE KEY" not in problem.line()


@pytest.mark.parametrize(
    "text",
    [
        "clusters/a.py:3 (p): password: must be a SecretKeyRef, got str",
        "dev: Cluster x: spec.forProvider.config.password: literal value in credential field",
        "dev: X x: spec.token: expected string, got number",
    ],
)
def test_messages_about_credential_fields_keep_their_words(text: str) -> None:
    assert redact(text) == text


def test_a_quoted_password_or_kubeconfig_goes() -> None:
    assert redact("got 'user=admin password=hunter2'") == "got 'user=admin <redacted>'"
    kubeconfig = "clusters:\\n- name: k\\nusers:\\n- user:\\n    token: abcdefghijklmnop\\n"
    assert "abcdefghijklmnop" not in redact(f"got {kubeconfig!r}")
