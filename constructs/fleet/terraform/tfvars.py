r"""Reads the values of a Terraform tfvars file, as data.

Parsing is python-hcl2's; string values are decoded here from their source form with
Terraform's rules (backslash escapes, ``$${`` and ``%%{`` for a literal ``${`` and ``%{``),
because a tfvars file holds values, not expressions: an interpolation, a reference or a
function call is an error naming the file and line, never a silently copied string.

python-hcl2 8.1.4 reads ``$${`` and ``%%{`` only when a ``}`` follows later (its grammar's
``ESCAPED_INTERPOLATION`` is ``$${[^}]*}``, which may also run past the closing quote and
onto later lines), so ``"$${"`` is refused and the error names the wrong place. Before
parsing, :func:`_protect_escapes` rewrites the ``{`` of each such escape inside a quoted
string to ``\{`` (an escape Terraform refuses, so it cannot come from the file: a ``\{``
already in a string is reported as an invalid escape first); :func:`decode_string` reads
``$$\{`` and ``%%\{`` back as ``${`` and ``%{``.

The conversions (:func:`as_int`, :func:`as_bool`, :func:`convert_option`) turn a value into
what a declaration's option takes, within its bounds.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from hcl2.rules.abstract import LarkElement
from hcl2.rules.base import AttributeRule, BlockRule
from hcl2.rules.containers import ObjectRule
from hcl2.utils import SerializationOptions

from fleet.core.credentials import shown
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import Option, options_of
from fleet.terraform.hcl import line_of, parse

_OPTIONS = SerializationOptions(with_comments=False, explicit_blocks=False, preserve_heredocs=False)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
_INT = re.compile(r"^-?[0-9]+$")


def importable(cls: type) -> tuple[Option, ...]:
    """The optional arguments of ``cls`` a tfvars file sets as they are: those of its
    table (:func:`fleet.core.options.options_of`) with a Terraform attribute, rendered as
    they are (``render``) and left out by default. The tfvars key is the attribute, the
    model's keyword the option's, the forProvider field its render path's last step."""
    return tuple(
        o
        for o in options_of(cls).values()
        if o.terraform and o.render and o.default is None and o.scalar in _CONVERT
    )


def _protect_escapes(text: str, *, source: str) -> str:
    r"""``text`` with the ``{`` of every ``$${``/``%%{`` in a quoted string written ``\{``.

    Comments (``#``, ``//``, ``/* */``) and heredocs are left as they are. A ``\{`` already
    in a quoted string is an invalid escape (Terraform's too): a DefinitionError naming the
    line, since after the rewrite it could not be told from a protected escape.
    """
    out: list[str] = []
    i, n, line = 0, len(text), 1
    in_string = False
    while i < n:
        char = text[i]
        if in_string:
            if char == "\\":
                if text.startswith("{", i + 1):
                    raise DefinitionError("invalid escape \\{", where=f"{source}:{line}")
                line += text.startswith("\n", i + 1)
                out.append(text[i : i + 2])
                i += 2
                continue
            if text.startswith(("$${", "%%{"), i):
                out.append(text[i : i + 2] + "\\{")
                i += 3
                continue
            if char == '"' or char == "\n":
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "#" or text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            out.append(text[i:end])
            i = end
            continue
        elif text.startswith("<<", i):
            match = _HEREDOC.match(text, i)
            if match:
                end = match.end()
                line += text.count("\n", i, end)
                out.append(text[i:end])
                i = end
                continue
        if char == "\n":
            line += 1
        out.append(char)
        i += 1
    return "".join(out)


_HEREDOC = re.compile(r"<<-?([A-Za-z_][A-Za-z0-9_]*)\r?\n.*?^[ \t]*\1[ \t]*$", re.S | re.M)


def read_tfvars(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The decoded values of a tfvars file and the line of each top-level key.

    Strings are decoded (``"a\\"b"`` -> ``a"b``); numbers, bools and null stay as HCL
    gives them; lists and objects recursively. Raises DefinitionError(s) naming
    ``file:line`` for malformed HCL, duplicates, blocks and expressions.
    """
    source = str(path)
    tree = parse(path, functools.partial(_protect_escapes, source=source))
    errors: list[DefinitionError] = []
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for child in tree.body.children:
        line = line_of(child)
        where = f"{source}:{line}" if line else source
        if isinstance(child, BlockRule):
            errors.append(DefinitionError("a tfvars file holds no blocks", where=where))
            continue
        if not isinstance(child, AttributeRule):
            continue
        key = str(child.identifier.serialize(_OPTIONS))
        if key in values:
            errors.append(
                DefinitionError(f"set twice (first on line {lines[key]})", where=where, field=key)
            )
            continue
        try:
            _check_object_keys(child, where=source)
            values[key] = _decode(child.expression.serialize(_OPTIONS), where=where, field=key)
        except DefinitionError as e:
            errors.append(e)
            continue
        lines[key] = line
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return values, lines


def _check_object_keys(element: LarkElement, *, where: str) -> None:
    """Duplicate keys in an object: an error (python-hcl2 would keep the last silently)."""
    if isinstance(element, ObjectRule):
        seen: set[str] = set()
        for elem in element.elements:
            key = _decode_key(elem.key.serialize(_OPTIONS), where=where)
            if key in seen:
                line = line_of(elem) or line_of(element)
                raise DefinitionError(
                    f"key {key!r} is set twice in one object", where=f"{where}:{line}"
                )
            seen.add(key)
    for child in getattr(element, "children", None) or ():
        if isinstance(child, LarkElement):
            _check_object_keys(child, where=where)


def _decode_key(raw: Any, *, where: str) -> str:
    if isinstance(raw, str) and raw.startswith('"'):
        return decode_string(raw, where=where, field="key")
    if isinstance(raw, str) and _IDENTIFIER.match(raw):
        return raw
    raise DefinitionError(
        f"object keys must be names or quoted strings, got {shown(raw)}", where=where, field="key"
    )


def _decode(raw: Any, *, where: str, field: str) -> Any:
    if isinstance(raw, str):
        return decode_string(raw, where=where, field=field)
    if isinstance(raw, list):
        return [_decode(v, where=where, field=f"{field}[{i}]") for i, v in enumerate(raw)]
    if isinstance(raw, dict):
        out: dict[str, Any] = {}
        for k, v in raw.items():
            key = _decode_key(k, where=where)
            out[key] = _decode(v, where=where, field=f"{field}.{key}")
        return out
    return raw  # int, float, bool, None


def decode_string(raw: str, *, where: str, field: str) -> str:
    """The value of an HCL quoted string given in source form (quotes included).

    Anything but one literal string (a reference, a function call, an interpolation
    ``${...}`` or directive ``%{...}``) is an error: tfvars hold values.
    """
    if len(raw) < 2 or not raw.startswith('"') or not raw.endswith('"'):
        raise DefinitionError(
            f"must be a literal value, got the expression {shown(raw, field)}",
            where=where,
            field=field,
        )
    body, out, i = raw[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if body.startswith(("$${", "%%{"), i):
            out.append(body[i + 1 : i + 3])
            i += 3
        elif body.startswith(("$$\\{", "%%\\{"), i):  # protected by _protect_escapes
            out.append(body[i] + "{")
            i += 4
        elif body.startswith(("${", "%{"), i):
            raise DefinitionError(
                f"template {body[i : i + 2]}...}} is not a value (write {body[i]}{body[i : i + 2]} "
                "for a literal)",
                where=where,
                field=field,
            )
        elif char == '"':
            raise DefinitionError(
                f"must be one literal string, got the expression {shown(raw, field)}",
                where=where,
                field=field,
            )
        elif char == "\\":
            marker = body[i + 1 : i + 2]
            if marker in _ESCAPES:
                out.append(_ESCAPES[marker])
                i += 2
            elif marker in ("u", "U"):
                width = 4 if marker == "u" else 8
                digits = body[i + 2 : i + 2 + width]
                try:
                    if len(digits) != width:
                        raise ValueError(digits)
                    code = int(digits, 16)
                    if 0xD800 <= code < 0xE000:
                        raise ValueError(digits)
                    out.append(chr(code))
                except ValueError:
                    raise DefinitionError(
                        f"invalid escape \\{marker}{digits}", where=where, field=field
                    ) from None
                i += 2 + width
            else:
                raise DefinitionError(
                    f'invalid escape \\{marker} (known: \\n \\r \\t \\" \\\\ \\u \\U)',
                    where=where,
                    field=field,
                )
        else:
            out.append(char)
            i += 1
    return "".join(out)


def encode_string(value: str) -> str:
    """``value`` as an HCL quoted string: the inverse of :func:`decode_string`."""
    out = ['"']
    i = 0
    while i < len(value):
        char = value[i]
        if value.startswith(("${", "%{"), i):
            out.append(char + value[i : i + 2])
            i += 2
            continue
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif not char.isprintable():
            out.append(f"\\U{ord(char):08x}" if ord(char) > 0xFFFF else f"\\u{ord(char):04x}")
        else:
            out.append(char)
        i += 1
    out.append('"')
    return "".join(out)


# --- conversion ---------------------------------------------------------------------------


def as_int(value: Any, *, where: str, field: str, minimum: int = 0) -> int:
    """A tfvars count: ``"3"`` or ``3`` -> 3; anything else (``"3.5"``, ``"x"``) is an error."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DefinitionError(
            f"must be a whole number, got {shown(value, field)}", where=where, field=field
        )
    if isinstance(value, str) and not _INT.match(value.strip()):
        raise DefinitionError(
            f"must be a whole number, got {shown(value, field)}", where=where, field=field
        )
    number = int(value)
    if number < minimum:
        raise DefinitionError(f"must be {minimum} or more, got {number}", where=where, field=field)
    return number


def as_bool(value: Any, *, where: str, field: str) -> bool:
    """A tfvars flag: ``"true"``/``true`` or ``"false"``/``false``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise DefinitionError(
        f"must be true or false, got {shown(value, field)}", where=where, field=field
    )


def as_text(value: Any, *, where: str, field: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise DefinitionError(
            f"must be a non-empty string, got {shown(value, field)}", where=where, field=field
        )
    return value


def as_labels(value: Any, *, where: str, field: str) -> dict[str, str]:
    """A map of string to string, kept exactly (label values are never converted)."""
    if not isinstance(value, dict):
        raise DefinitionError(f"must be a map, got {shown(value, field)}", where=where, field=field)
    for key, item in value.items():
        if not isinstance(item, str):
            raise DefinitionError(
                f"label values must be quoted strings, got {shown(item, key)} for {key!r}",
                where=where,
                field=field,
            )
    return dict(value)


_CONVERT: dict[type | None, Any] = {int: as_int, bool: as_bool, str: as_text}


def convert_option(option: Option, value: Any, *, where: str, field: str) -> Any:
    """A tfvars value of ``option`` as the model holds it (``"50"`` -> 50), within the
    option's bounds."""
    kind = option.scalar
    if kind is int and option.minimum is not None:
        return as_int(value, where=where, field=field, minimum=option.minimum)
    return _CONVERT[kind](value, where=where, field=field)
