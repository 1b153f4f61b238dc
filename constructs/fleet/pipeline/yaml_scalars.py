"""Which plain YAML scalars every reader of ``dist/`` takes for the same string.

A string the emitter writes without quotes (a *plain* scalar) is typed by the reader's
resolver: ``gpu: y`` is the boolean ``true`` to Kubernetes. The first reader of ``dist/``
is sigs.k8s.io/yaml (``YAMLToJSON``), which decodes with go-yaml v2 (v1.4.0 vendors it as
``goyaml.v2``; v1.5.0 and later require ``go.yaml.in/yaml/v2`` v2.4.2: the same
``resolve.go`` as gopkg.in/yaml.v2 v2.4.0); ArgoCD and kubectl read through it too, people
and tools read with PyYAML, ruamel.yaml or go-yaml v3. :func:`reads_as_string` is the one
rule the emitter (:mod:`fleet.pipeline.yaml_canonical`, and so
:mod:`fleet.pipeline.yaml_fast`) applies: a string is written plain only if **every** one of
these resolvers reads it back as that string:

* go-yaml v2 ``resolve()`` (:func:`go_yaml_tag`, a port: go-yaml/yaml v2.4.0 ``resolve.go``),
  which also types what Go's ``strconv`` parses (``0o17``, ``0b101``, ``1_000`` after it
  drops every ``_``, ``08`` as a float, ``0b+1``) and ``YYYY-M-D`` timestamps; its decoder
  takes a plain ``<<`` key as a merge (``decode.go`` ``isMerge``);
* go-yaml v3 (v3.0.1 ``resolve.go``: v2's rules without the YAML 1.1 booleans; its encoder
  still quotes them, ``isOldBool``), and both encoders' quoting of sexagesimal numbers
  ``1:20`` "for compatibility with other parsers" (``encode.go`` ``isBase60Float``);
* the YAML 1.1 types (https://yaml.org/type/: ``y``/``n``/``yes``/``off`` booleans, ``~``,
  ``0x``/``0``/``0b``/sexagesimal integers, floats, timestamps, ``<<`` merge, ``=`` value)
  as PyYAML 6.0.3 and ruamel.yaml resolve them;
* the YAML 1.2 core schema (YAML 1.2.2, 10.3.2: ``0o17``, ``1e3``, ``.inf``), and ruamel.yaml
  0.19.1's wider 1.2 tables (``resolver.py``: underscores in numbers, ``-_`` an integer).

``tests/test_yaml_plain.py`` emits random strings, biased towards these shapes, and reads
them back with PyYAML (1.1), ruamel.yaml (1.2 and 1.1) and this port; a run against the Go
library itself is recorded in docs/upstream-behaviour.md ("YAML that Kubernetes reads").
"""

from __future__ import annotations

import math
import re

STR = "!!str"
"""The short tag of a string."""

_GO_MAP = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE"), "!!bool"),
    **dict.fromkeys(("on", "On", "ON", "n", "N", "no", "No", "NO"), "!!bool"),
    **dict.fromkeys(("false", "False", "FALSE", "off", "Off", "OFF"), "!!bool"),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), "!!null"),
    **dict.fromkeys((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF"), "!!float"),
    **dict.fromkeys(("+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"), "!!float"),
}
"""go-yaml v2 ``resolveMap`` (``<<`` is in it too, but ``resolve`` never reaches it: '<'
has no hint; the decoder's ``isMerge`` takes a plain ``<<`` instead)."""
_GO_OLD_BOOLS = frozenset(
    ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off")
) | {"OFF"}
"""The YAML 1.1 booleans go-yaml v3 reads as strings (v3 ``encode.go`` ``isOldBool``)."""

_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
"""go-yaml ``yamlStyleFloat``, applied to the text without its ``_``."""
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
"""go-yaml ``base60float`` (``encode.go``): quoted on output by v2 and v3."""
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?")
"""What Go's ``strconv.ParseFloat`` accepts after a leading '.': digits, exponent, and
``_`` only between digits (``underscoreOK``)."""
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_GO_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}

_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:(?:([Tt])| +)([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,][0-9]+)?"
    r"(Z|[-+][0-9]{2}:[0-9]{2})?)?"
)
"""go-yaml's ``allowedTimestampFormats`` as Go's ``time.Parse`` reads them: ``2006-1-2``,
``2006-1-2T15:4:5.999999999Z07:00`` (``T`` or ``t``), ``2006-1-2 15:4:5.999999999`` (one
or more spaces, no zone); a fraction after ``.`` or ``,``."""


def _go_parse_uint(text: str) -> int | None:
    """``strconv.ParseUint(text, 0, 64)`` for a text without ``_``; None on error."""
    base = 10
    if text[:1] == "0":
        prefix = text[1:2].lower()
        if len(text) >= 3 and prefix in ("b", "o", "x"):
            base, text = {"b": 2, "o": 8, "x": 16}[prefix], text[2:]
        else:
            base, text = 8, text[1:]
    elif not text:
        return None
    digits = _GO_DIGITS[base]
    if any(c not in digits for c in text):
        return None
    value = int(text, base) if text else 0
    return value if value < 1 << 64 else None


def _go_parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)`` for a text without ``_``; None on error."""
    sign = text[:1] if text[:1] in ("+", "-") else ""
    value = _go_parse_uint(text[len(sign) :])
    if value is None:
        return None
    limit = (1 << 63) if sign == "-" else (1 << 63) - 1
    return None if value > limit else value


def _go_parse_base(text: str, base: int) -> bool:
    """``strconv.ParseInt(text, base, 64)`` succeeds (a sign is allowed, ``_`` is not)."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or any(c not in _GO_DIGITS[base] for c in body):
        return False
    value = int(body, base)
    return value <= ((1 << 63) if text[:1] == "-" else (1 << 63) - 1)


def _go_timestamp(text: str) -> bool:
    """go-yaml ``parseTimestamp``: four digits and '-' first, then one of its formats."""
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return False
    year, month, day, t, hour, minute, second, zone = match.groups()
    y, m = int(year), int(month)
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not 1 <= m <= 12 or not 1 <= int(day) <= _DAYS[m - 1] + (m == 2 and leap):
        return False
    if hour is not None:
        if int(hour) > 23 or int(minute) > 59 or int(second) > 59:
            return False
        if t is None and zone is not None:  # the space-separated format has no zone
            return False
        if t is not None and zone is None:  # the T formats end in a zone
            return False
        if zone and zone != "Z" and (int(zone[1:3]) > 24 or int(zone[4:6]) > 60):
            return False
    return True


def go_yaml_tag(text: str, *, v3: bool = False) -> str:
    """The tag go-yaml v2 (``v3``: v3) gives the plain scalar ``text``: ``!!str``,
    ``!!bool``, ``!!int``, ``!!float``, ``!!null``, ``!!timestamp`` or ``!!merge``.

    A port of ``resolve("", text)`` (go-yaml/yaml v2.4.0 and v3.0.1 ``resolve.go``, with
    Go's ``strconv`` and ``time.Parse`` rules), plus the decoder's plain ``<<`` merge key."""
    if text == "<<":
        return "!!merge"
    tag = _GO_MAP.get(text)
    if tag is not None:
        return STR if v3 and text in _GO_OLD_BOOLS else tag
    hint = text[:1]
    if hint == ".":
        if _DOT_FLOAT.fullmatch(text) and not math.isinf(float(text.replace("_", ""))):
            return "!!float"
        return STR
    if not hint or hint not in "+-0123456789":
        return STR
    if _go_timestamp(text):
        return "!!timestamp"
    plain = text.replace("_", "")
    if _go_parse_int(plain) is not None or _go_parse_uint(plain) is not None:
        return "!!int"
    if _YAML_STYLE_FLOAT.fullmatch(plain) and not math.isinf(float(plain)):
        return "!!float"
    if plain.startswith("0b") and _go_parse_base(plain[2:], 2):
        return "!!int"
    if plain.startswith("-0b") and _go_parse_base("-" + plain[3:], 2):
        return "!!int"
    # v3 also parses "0o17" and "-0o17" itself: strconv's base 0 has already (Go 1.13+).
    return STR


_YAML_TYPES = re.compile(
    "|".join(
        f"(?:{r})"
        for r in (
            # booleans: YAML 1.1 (PyYAML leaves out y/n; ruamel's 1.1 table has them)
            r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",
            r"~|null|Null|NULL|",  # null, 1.1 and 1.2 (the empty plain scalar too)
            # integers: 1.1 (binary, octal 0777, hex, sexagesimal) and ruamel's 1.2 table
            # (``0o`` optional, ``_`` anywhere after a sign or digit: ``-_`` is one)
            r"[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|(?=[-+0-9])[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+",
            r"[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
            # floats: 1.1 (PyYAML's), 1.2 core ``1e3``/``.5e3``, ruamel's ``_``, sexagesimal
            r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+",
            r"[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*",
            r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
            r"<<|=",  # merge key, value (1.1; PyYAML has no constructor for it)
            # timestamps (1.1 type repository, PyYAML's and ruamel's regex)
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)"
            r"[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
            r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
        )
    )
)
"""Every plain scalar a YAML 1.1 or 1.2 resolver (PyYAML, ruamel.yaml, the specs' tables)
types as something other than a string."""


_TYPED_FIRST = frozenset("yYnNtTfFoO~-+.0123456789<=")
"""The first characters of everything :data:`_YAML_TYPES` and :func:`go_yaml_tag` type."""


def reads_as_string(text: str) -> bool:
    """Whether ``text``, written as a plain scalar, is read back as the string ``text`` by
    go-yaml v2 (Kubernetes) and v3, PyYAML and ruamel.yaml, under YAML 1.1 and 1.2.

    >>> [reads_as_string(s) for s in ("v1.30.1", "y", "1e3", "0o17", "1:20", "08")]
    [True, False, False, False, False, False]
    """
    if text and text[0] not in _TYPED_FIRST:  # most names: no table starts there
        return True
    if _YAML_TYPES.fullmatch(text):
        return False
    numeric = text[:1] in "+-0123456789."
    return not numeric or (go_yaml_tag(text) == STR and not _BASE60.fullmatch(text))
