"""What credential material looks like in a string: the one test shared by the secret guard
(nothing secret in ``dist/``: :mod:`fleet.checks.secret_guard`) and every error message
(:class:`~fleet.core.errors.DefinitionError` never prints one: :func:`redact`).

Recognised, also base64-encoded where noted:

* a PEM private key block (``-----BEGIN ... PRIVATE KEY-----``; base64 too);
* a kubeconfig with credentials (``client-key-data``, or a ``token:`` entry; base64 too);
* a URL with a password in it (``https://user:token@host/``);
* a token of a well-known format: a JSON Web Token (ArgoCD's API tokens, Kubernetes service
  account tokens), GitLab (``glpat-``, ``gldt-``, ...) and GitHub (``ghp_``,
  ``github_pat_``, ...) tokens, AWS access key ids, Slack tokens, Google API keys;
* ``password=...`` / ``password: ...`` inside a longer string, and ``NAME=value`` where
  ``NAME`` is named like a credential (:func:`is_credential_field`: ``registry-token=...``,
  a URL's ``?api_key=...``).

A value with none of these may still be a secret (an OpenStack application credential
secret is 86 random characters): names decide there (:func:`is_credential_field`, used by
the secret guard and by :mod:`fleet.core.redact`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_KUBECONFIG_TOKEN = re.compile(r"(?m)^\s*(?:-\s*)?\"?token\"?\s*:\s*\"?[^\s\"{}]")
_BASE64_PEM_OR_YAML = ("LS0tLS1CRUdJT", "YXBpVmVyc2lvbj", "Y2xpZW50LWtleS1kYXRh")
"""base64 of '-----BEGI', 'apiVersion', 'client-key-data' (prefix-aligned only)."""
URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
"""``scheme://user:password@``: userinfo with a password (RFC 3986 section 3.2.1 deprecates
it). ``ssh://git@host`` (a user name alone) is not a credential."""
URL_MESSAGE = (
    "URL with a password in it (user:password@); keep credentials in a Secret and "
    "reference it (ArgoCD: a repository credential Secret)"
)

TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")),
    ("GitLab token", re.compile(r"\bgl[a-z]{1,5}-[A-Za-z0-9_-]{20,}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
)
"""Token formats with a fixed prefix (their issuers document them), by what they are."""
PASSWORD_ASSIGNMENT = re.compile(r"(?i)\b(?:password|passwd)\s*[=:]\s*[^\s,;'\"]+")

CREDENTIAL_WORDS = (
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "clientsecret",
    "accesskey",
    "secretaccesskey",
    "credentials",
)
"""Normalised (lower case, no ``-``/``_``) field names, or name endings, that hold credentials."""

REFERENCE_ENDINGS = (
    "ref",
    "refs",
    "selector",
    "name",
    "names",
    "key",
    "keys",
    "path",
    "file",
    "namespace",
    "type",
    "field",
    "enabled",
    "policy",
)
"""Name endings that mark a field naming a secret (or describing one) rather than holding it."""


def _normalise(name: str) -> str:
    return name.replace("-", "").replace("_", "").lower()


@functools.lru_cache(maxsize=4096)
def is_credential_field(name: str) -> bool:
    """Whether a field (or map key) called ``name`` holds a credential when it holds a literal:
    ``password``, ``registry-token``, ``clientSecret``, ``apiKey``; not ``tokenSecretRef``,
    ``secretName``, ``secretKey`` (they name a secret) nor ``bootstrap_token_ttl``."""
    norm = _normalise(name)
    if any(norm.endswith(word) for word in ("apikey", "privatekey", "accesskey")):
        return True
    if norm.endswith(REFERENCE_ENDINGS):
        return False
    return norm.endswith(CREDENTIAL_WORDS)


CREDENTIAL_ASSIGNMENT = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]*)=([^\s,;&'\"<>()]{3,}[^\s,;&'\"<>():.])"
)
"""``NAME=value`` (a ``key=value`` label key, a query parameter, a command-line flag): a
credential when ``NAME`` is named like one (:func:`is_credential_field`). Values of fewer
than 4 characters are not taken for one (``token=a value ...`` in a message), nor a ``:``
or ``.`` that ends the value (a message's own punctuation)."""


def _credential_assignments(text: str) -> list[re.Match[str]]:
    return [
        m
        for m in CREDENTIAL_ASSIGNMENT.finditer(text)
        if is_credential_field(m.group(1).rsplit(".", 1)[-1])
    ]


_MARKER = re.compile(
    "|".join(
        (
            "PRIVATE KEY",
            "client-key-data",
            "token",
            *_BASE64_PEM_OR_YAML,
            "eyJ",
            r"gl[a-z]{1,5}-",
            "gh[pousr]_",
            "github_pat_",
            "AKIA",
            "ASIA",
            "xox[abprs]-",
            "AIza",
            "(?i:passw)",
        )
    )
)
"""Substrings without which a string holds none of the above (a cheap first test)."""
_ASSIGNED = re.compile(
    r"(?i:passw\w*|secret|token|credentials|api[-_]?key|private[-_]?key|access[-_]?key)="
)
"""The end of a ``NAME=`` whose NAME may be named like a credential (the same cheap test for
:data:`CREDENTIAL_ASSIGNMENT`)."""


def _marked(text: str) -> bool:
    return bool(_MARKER.search(text)) or ("=" in text and bool(_ASSIGNED.search(text)))


MIN_LENGTH = 16
"""Shorter strings hold none of the above (an AWS key id, the shortest, has 20 characters)."""


def _decoded(value: str) -> str | None:
    compact = "".join(value.split())
    if not any(marker in compact for marker in _BASE64_PEM_OR_YAML):
        return None
    try:
        return base64.b64decode(compact, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def credential_in(value: str) -> str | None:
    """What credential material ``value`` holds (a short phrase naming it and what to do
    instead), or None."""
    if "://" in value and "@" in value and URL_CREDENTIALS.search(value):
        return URL_MESSAGE
    if len(value) < MIN_LENGTH or not (
        _MARKER.search(value) or ("=" in value and _ASSIGNED.search(value))
    ):
        return None
    for text, how in ((value, ""), (_decoded(value), "base64-encoded ")):
        if not text:
            continue
        if PEM.search(text):
            return f"{how}PEM private key block; reference a Secret instead of inlining the key"
        if "client-key-data" in text or (
            "clusters" in text and "users" in text and _KUBECONFIG_TOKEN.search(text)
        ):
            return f"{how}kubeconfig with credentials; reference the Secret that holds it"
    for what, pattern in TOKENS:
        if pattern.search(value):
            return f"{what}; keep it in a Secret and reference it"
    if PASSWORD_ASSIGNMENT.search(value):
        return "password written out; keep it in a Secret and reference it"
    if "=" in value and _credential_assignments(value):
        return "credential written out (NAME=value); keep it in a Secret and reference it"
    return None


_REDACTED = "<redacted>"
_PEM_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", re.S
)
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
"""A value a message quotes (``repr``)."""


_USERINFO = re.compile(r"(?<![\w/<>])[\w.%+-]+:[^\s/@'\"<>:]+@(?=[A-Za-z0-9.-])")
"""``user:password@host`` without a scheme (a URL missing its ``https://``)."""
_KUBECONFIG_VALUE = re.compile(
    r"(?m)(\b(?:token|client-key-data|client-certificate-data)\"?\s*:\s*\"?)[^\s\"'{}]{8,}"
)


def _assignments_redacted(text: str) -> str:
    for m in reversed(_credential_assignments(text)):
        text = text[: m.start(2)] + _REDACTED + text[m.end(2) :]
    return text


def _quoted(match: re.Match[str]) -> str:
    quoted = match.group(0)
    inner = quoted[1:-1].replace("\\n", "\n")  # a repr writes line breaks as \n
    if not credential_in(inner):
        return quoted
    inner = _KUBECONFIG_VALUE.sub(lambda m: m.group(1) + _REDACTED, inner)
    inner = PASSWORD_ASSIGNMENT.sub(_REDACTED, inner)
    inner = _assignments_redacted(inner)
    if credential_in(inner):  # a base64 key block or the like: all of it
        inner = _REDACTED
    return quoted[0] + inner.replace("\n", "\\n") + quoted[-1]


def redact(text: str) -> str:
    """``text`` with every piece of credential material replaced by ``<redacted>``: for
    messages that quote what the user wrote (an error never prints a secret).

    Formats that cannot be anything else (a key block, a token, a URL's password) go
    wherever they are; ``password: ...`` and kubeconfig entries only inside a quoted value
    (``'...'``, as messages quote what they reject), so that a message about a field named
    ``password`` or ``token`` keeps its words; ``NAME=value`` with NAME named like a
    credential anywhere (a label key in a field path: ``labels.registry-token=<redacted>``)."""
    if "@" in text:
        text = URL_CREDENTIALS.sub(
            lambda m: m.group(0).split("://", 1)[0] + "://" + _REDACTED + "@", text
        )
        text = _USERINFO.sub(_REDACTED + "@", text)
    if not _marked(text):
        return text
    text = _PEM_BLOCK.sub(_REDACTED, text)
    for _, pattern in TOKENS:
        text = pattern.sub(_REDACTED, text)
    text = _QUOTED.sub(_quoted, text)
    return _assignments_redacted(text) if "=" in text else text
