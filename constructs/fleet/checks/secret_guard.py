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

import functools
from collections.abc import Sequence
from typing import Any

from fleet.checks.problem import Problem, format_path
from fleet.core.manifest import Manifest
from fleet.core.secrets import MIN_LENGTH, credential_in, is_credential_field


def _credential_literal(key: str) -> str:
    return (
        f"literal value in credential field {key!r}; "
        "use a secret reference (for example a *SecretRef) instead"
    )


_CONTAINERS = (dict, list)  # a tuple: `dict | list` would build a union on every call


_SHORTEST = 9
"""Shorter strings hold no credential material (``a://b:c@d``, a URL with a password, is the
shortest; the other kinds need :data:`~fleet.core.secrets.MIN_LENGTH`)."""
_credential_in = functools.lru_cache(maxsize=1 << 16)(credential_in)
"""Label values, image names and the like repeat across clusters: each is read once."""


def _pair_name(item: dict[Any, Any]) -> str | None:
    """The name of a ``{key|name, value}`` pair (a node label, an environment variable)."""
    for field in ("key", "name"):
        name = item.get(field)
        if isinstance(name, str) and isinstance(item.get("value"), str):
            return name
    return None


def _scan(value: Any, path: list[str | int], out: list[tuple[list[str | int], str]]) -> None:
    # This walks every value of every object a synth has not checked before: one shared
    # path list, copied only for a finding, and no per-node generators (40% faster).
    if isinstance(value, dict):
        pair = _pair_name(value)
        if pair is not None and is_credential_field(pair) and value["value"].strip():
            out.append(([*path, "value"], _credential_literal(pair)))
        for key, item in value.items():
            name = str(key)
            if len(name) >= MIN_LENGTH:
                problem = _credential_in(name)
                if problem:
                    out.append((path[:], f"a key holds a {problem}"))
                    name = "<redacted key>"  # never shown, even in the path of a finding
            if isinstance(item, str):
                if is_credential_field(name) and item.strip():
                    out.append(([*path, name], _credential_literal(name)))
                elif len(item) >= _SHORTEST:
                    problem = _credential_in(item)
                    if problem:
                        out.append(([*path, name], problem))
            elif isinstance(item, _CONTAINERS):
                path.append(name)
                _scan(item, path, out)
                path.pop()
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str) and len(item) >= _SHORTEST:
                problem = _credential_in(item)
                if problem:
                    out.append(([*path, index], problem))
            elif isinstance(item, _CONTAINERS):
                path.append(index)
                _scan(item, path, out)
                path.pop()


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
        _scan({k: v for k, v in body.items() if k not in skip}, [], found)
        problems.extend(Problem.of(m, format_path(path), message) for path, message in found)
    return problems
