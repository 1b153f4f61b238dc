"""The one redaction layer of every message: what a message may show of the input it is about.

An error (or a report line) derived from input names the file, line and field, and quotes the
text only when it cannot be a secret. Three pieces, each used wherever a message is made:

* :func:`shown` -- a value as a message quotes it, or :data:`HIDDEN`: for any value under a
  field named like a credential (:func:`is_secret_name`: ``registry-password``,
  ``client_secret``, ``api_key``, numbers and booleans under such a name included), and for
  any value that holds credential material (:func:`fleet.core.secrets.credential_in`: a key
  block, a token of a known format, a URL with a password, ``registry-token=...``) or looks
  like a random token (:func:`looks_random`), in a map's keys too;
* :func:`parser_error` -- a third-party parser's exception (lark, which python-hcl2 uses)
  rewritten as its position and what the grammar expected there, never the text it stopped
  at (a single-quoted password is one "unexpected token" quoting the password);
* :func:`redact` -- the last pass over every line the command line prints (``error:``,
  ``report:``) and every :class:`~fleet.core.errors.DefinitionError` and check problem:
  credential material that is recognisable by its form, wherever a message put it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fleet.core.secrets import credential_in, redact

__all__ = [
    "HIDDEN",
    "is_secret_name",
    "looks_random",
    "parser_error",
    "redact",
    "shown",
    "unquoted",
    "withheld",
]

HIDDEN = "a value that looks like a credential (not shown)"
"""What a message says instead of a value it may not show."""

_SECRET_WORDS = (
    "passw",
    "passphrase",
    "secret",
    "token",
    "credential",
    "apikey",
    "privatekey",
    "accesskey",
)
"""Normalised (lower case, no ``-``/``_``/``.``) pieces of a name whose values a message never
quotes. Wider than what the secret guard refuses (``secretName`` is a reference there): a
message loses little by not quoting a Secret's name, and leaks a password by quoting one."""
_SECRET_ENDINGS = ("key", "keys", "pwd", "pass", "auth")


def is_secret_name(name: str) -> bool:
    """Whether values of a field or map key called ``name`` are never quoted in a message:
    ``password``, ``registry-password``, ``os_token``, ``ssh_key``, ``SecretKeyRef.key``."""
    norm = re.sub(r"[-_.\s]", "", name).lower()
    return any(word in norm for word in _SECRET_WORDS) or norm.endswith(_SECRET_ENDINGS)


_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def looks_random(text: str) -> bool:
    """Whether ``text`` holds a run of 20 or more token characters mixing upper case, lower
    case and digits (an OpenStack application credential secret, an API key of no known
    prefix). Names, versions, images, UUIDs and CIDRs have no such run."""
    for run in _TOKEN_RUN.findall(_UUID.sub("", text)):
        if (
            any(c.isupper() for c in run)
            and any(c.islower() for c in run)
            and any(c.isdigit() for c in run)
        ):
            return True
    return False


def withheld(value: object, field: str = "") -> bool:
    """Whether a message must not quote ``value`` (of the field or map key ``field``)."""
    if value is None or isinstance(value, bool):
        return False
    if field and is_secret_name(field):
        return True
    if isinstance(value, str):
        return bool(credential_in(value)) or looks_random(value)
    if isinstance(value, int | float):
        return False
    if isinstance(value, Mapping):
        return any(withheld(k) or withheld(v, str(k)) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return any(withheld(item) for item in value)
    return withheld(repr(value))


def shown(value: object, field: str = "") -> str:
    """``repr(value)`` for a message, or :data:`HIDDEN` when it may be a secret
    (:func:`withheld`)."""
    return HIDDEN if withheld(value, field) else repr(value)


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def unquoted(message: str) -> str:
    """A third-party message without the text it quotes (``'...'`` and ``"..."`` become
    ``<text>``): for messages whose structure is unknown."""
    return _QUOTED.sub("<text>", message.strip().splitlines()[0] if message.strip() else "")


_TERMINALS: Mapping[str, str] = {
    "DBLQUOTE": '"',
    "LBRACE": "{",
    "RBRACE": "}",
    "LSQB": "[",
    "RSQB": "]",
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "COLON": ":",
    "EQ": "=",
    "DOT": ".",
    "NAME": "a name",
    "INT_LITERAL": "a number",
    "FLOAT_LITERAL": "a number",
    "TRUE": "true",
    "FALSE": "false",
    "NULL": "null",
    "NL_OR_COMMENT": "a line break",
    "$END": "the end of the file",
    "HEREDOC_TEMPLATE": "a heredoc",
    "HEREDOC_TEMPLATE_TRIM": "a heredoc",
    "INTERP_START": "${",
    "STRING_CHARS": "string text",
}
"""What a grammar terminal is, in words: python-hcl2 8.1.4's ``hcl2.lark`` names. A name not
listed here is shown by its name (a terminal's name is the grammar's, never the input's)."""
_VALUE_START = {"DBLQUOTE", "INT_LITERAL", "NAME", "LBRACE", "LSQB"}


def _terminal(name: str) -> str:
    word = _TERMINALS.get(name)
    if word is None:
        return name.lower().replace("_", " ")
    return word if any(c.isalnum() for c in word) else repr(word)


def _expected(names: set[str]) -> str:
    if names >= _VALUE_START:
        return "a value (a quoted string, a number, true, false, null, a list or an object)"
    words = sorted({_terminal(n) for n in names})
    if len(words) > 6:
        return f"one of {len(words)} other tokens"
    return " or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1]


def _position(value: object) -> int:
    """A line or column lark gives (``'?'`` for a token without one, -1 at the end)."""
    return value if isinstance(value, int) and value > 0 else 0


def parser_error(error: Exception) -> tuple[int, str]:
    """A parser's exception as ``(line, message)``: the column, what kind of token it found
    (``string text``, not the text) and what the grammar expected there (``line`` is 0 when
    unknown). Reads lark's ``UnexpectedInput`` attributes (``line``, ``column``,
    ``token.type``, ``expected``, ``allowed``, ``char``: lark-parser/lark 1.3.1
    ``lark/exceptions.py``) without importing lark; their ``str()`` quotes the token's text."""
    line, column = _position(getattr(error, "line", 0)), _position(getattr(error, "column", 0))
    where = f"column {column}: " if column > 0 else ""
    token = getattr(error, "token", None)
    expected = getattr(error, "expected", None) or getattr(error, "allowed", None)
    char = getattr(error, "char", None)
    if token is not None:
        kind = str(getattr(token, "type", "") or "")
        found = _terminal(kind) if kind else "a token"
        if kind == "STRING_CHARS":
            found = 'text outside a double-quoted string (HCL quotes strings with " only)'
    elif isinstance(char, str) and len(char) == 1:
        found = repr(char) if not char.isalnum() else "a letter or digit"
    else:
        found = "the end of the input" if type(error).__name__ == "UnexpectedEOF" else ""
    if not found:
        return line, f"malformed HCL: {unquoted(str(error)) or 'parse error'}"
    message = f"malformed HCL at {where}unexpected {found}"
    if expected:
        message += f"; expected {_expected({str(n) for n in expected})}"
    return line, message
