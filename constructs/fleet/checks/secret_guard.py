"""Refuse credential material in rendered objects: dist/ is committed to git.

Flagged:

* a core ``Secret`` with ``data`` or ``stringData`` (use an ExternalSecret or a reference);
* any string holding a PEM private key block (``-----BEGIN ... PRIVATE KEY-----``), also
  when base64-encoded;
* any string that is a kubeconfig with credentials (``client-key-data`` or a ``token:``
  entry), also when base64-encoded;
* any string holding a URL with a password in it (``https://user:token@host/...``);
* any string holding a token of a well-known format (a JSON Web Token such as ArgoCD's API
  tokens, GitLab, GitHub, AWS, Slack, Google) or ``password=...``
  (:func:`fleet.core.secrets.credential_in`): label values, node labels and the ``key`` of a
  Secret reference too;
* a map key holding any of these (a label key);
* a field named like a credential (``password``, ``passwd``, ``secret``, ``token``,
  ``apiKey``, ``privateKey``, ``clientSecret``, ``accessKey``, ... or ending in one of
  those) whose value is a non-empty literal string, and a ``{key|name, value}`` pair (a node
  label, an environment variable) whose name is such a name.

Not flagged: references. A field whose value is an object (``passwordSecretRef: {name,
key}``) is not a literal, and names ending in ``Ref``, ``Selector``, ``Name``, ``Key``,
``Path`` ... (``tokenSecretRef``, ``secretName``, ``secretKey``) name a secret rather than
hold one; ``key: attribute.kubeconfig.raw_config`` is a key name, not a value.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet.checks.problem import Problem
from fleet.core.credentials import scan
from fleet.core.manifest import Manifest, format_path


def find_secret_material(manifests: Sequence[Manifest]) -> list[Problem]:
    """Every place in ``manifests`` that holds credential material, one Problem each."""
    problems: list[Problem] = []
    for m in manifests:
        body = m.body
        skip: set[str] = set()
        if m.group == "core" and m.kind == "Secret":
            for field in ("data", "stringData"):
                if body.get(field):
                    skip.add(field)
                    problems.append(
                        Problem.of(
                            m,
                            field,
                            f"Secret with {field}: secret values must never be rendered into "
                            "dist/; use an ExternalSecret or a connection-secret reference",
                        )
                    )
        found: list[tuple[list[str | int], str]] = []
        scan({k: v for k, v in body.items() if k not in skip}, [], found)
        problems.extend(Problem.of(m, format_path(path), message) for path, message in found)
    return problems
