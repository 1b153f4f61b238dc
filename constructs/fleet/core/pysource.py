"""The one way input text enters generated Python: input is data, never code.

Every piece of text that reaches a module an import writes goes through this module, as
one of:

- a string literal (:func:`py_str`): repr-like, every character outside printable ASCII
  escaped, so the literal's value is the text, whatever it holds;
- a comment (:func:`comment`): every character outside printable ASCII escaped (a line
  break becomes ``\\n``), so a comment stays one comment line;
- a docstring (:func:`docstring`): a triple-quoted literal built like :func:`py_str`;
- a name (:class:`Name`, :func:`identifier`, :func:`dotted_name`): checked against
  Python's grammar (ASCII, ``str.isidentifier``, not a keyword or soft keyword, not a
  dunder), refused (:class:`UnsafeSource`) otherwise, never repaired.

The expressions a generator composes (:class:`Call`, :class:`Tuple`,
:class:`Comprehension`, :class:`Lookup`, :class:`NamePattern`) check their names when they
are built, so no expression holds source text that did not pass here. What the module as a
whole may hold is checked again on its syntax tree (:mod:`fleet.codegen.source_check`)
before anything writes or runs it.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from fleet.core.errors import DefinitionError

SOFT_KEYWORDS = frozenset({*keyword.softkwlist, "_", "case", "match", "type"})
"""Python's soft keywords (``type`` is one from 3.12): legal names, never generated."""


class UnsafeSource(DefinitionError):
    """Text that cannot become the part of a module asked for (a name that is not a
    Python identifier): refused, never repaired."""


# --- literals and comments --------------------------------------------------------------------


def _escape(char: str, quote: str) -> str:
    """``char`` inside a literal quoted with ``quote`` ("" in a comment: a backslash stays
    as it is, so that escaping a comment twice changes nothing)."""
    if char == "\\":
        return "\\\\" if quote else char
    if quote and char == quote:
        return "\\" + char
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    if " " <= char <= "~":
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quote_for(text: str) -> str:
    """The quote ruff format picks for ``text``: ``"`` unless it holds more of them."""
    return "'" if text.count('"') > text.count("'") else '"'


def escaped(text: str, quote: str) -> str:
    """``text`` as the inside of a literal quoted with ``quote``: printable ASCII only."""
    return "".join(_escape(c, quote) for c in text)


def py_str(value: str) -> str:
    """A Python string literal for ``value``, quoted as ruff format would quote it."""
    quote = quote_for(value)
    return quote + escaped(value, quote) + quote


def comment_text(text: str) -> str:
    """``text`` as the text of one comment line: printable ASCII, every other character
    (line breaks, NUL, U+2028, any non-ASCII) escaped; a backslash is kept, so the result
    read back and given again is unchanged."""
    return escaped(text, "")


def comment(text: str, indent: str = "") -> str:
    """``# text`` as one line (see :func:`comment_text`), without trailing spaces."""
    return f"{indent}# {comment_text(text)}".rstrip()


def docstring(text: str) -> str:
    """A one-line ``\"\"\"...\"\"\"`` docstring whose value is ``text``: every ``"`` and
    backslash escaped, every character outside printable ASCII too."""
    return '"""' + escaped(text, '"') + '"""'


# --- names ------------------------------------------------------------------------------------


def is_identifier(text: str) -> bool:
    """Whether ``text`` may be a name in generated code: an ASCII Python identifier, not
    a keyword or soft keyword, not a dunder (``__import__``, ``__builtins__``)."""
    return (
        text.isascii()
        and text.isidentifier()
        and not keyword.iskeyword(text)
        and text not in SOFT_KEYWORDS
        and not (text.startswith("__") and text.endswith("__"))
    )


def identifier(text: str, *, what: str = "name") -> str:
    """``text``, checked with :func:`is_identifier`; UnsafeSource naming ``what`` else."""
    if not isinstance(text, str) or not is_identifier(text):
        shown = py_str(text) if isinstance(text, str) else type(text).__name__
        raise UnsafeSource(
            f"{shown} is not a Python name the import can write (an ASCII identifier, not "
            "a keyword); the import writes nothing",
            field=what,
        )
    return text


def dotted_name(text: str, *, what: str = "module") -> str:
    """A module path (``clusters._imported_templates``): each part an identifier."""
    for part in text.split("."):
        identifier(part, what=what)
    return text


# --- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A name the generated module defines or imports (a template's or project's
    variable, ``fleet``): checked when built."""

    id: str

    def __post_init__(self) -> None:
        identifier(self.id, what="name")

    @property
    def code(self) -> str:
        """The name as source."""
        return self.id


@dataclass(frozen=True, kw_only=True)
class Lookup:
    """``fleet.declaration("<construct id>", <cls>)``: a declaration another module makes."""

    construct_id: str
    cls: Name

    @property
    def code(self) -> str:
        """The call as source: the id a literal, the class a checked name."""
        return f"fleet.declaration({py_str(self.construct_id)}, {self.cls.code})"


@dataclass(frozen=True, kw_only=True)
class NamePattern:
    """``f"<prefix>{<target>}<suffix>"``: a name made of a comprehension's variable."""

    prefix: str
    target: Name
    suffix: str

    @property
    def code(self) -> str:
        """The f-string as source: both texts escaped with the one quote around them,
        their braces doubled."""
        quote = quote_for(self.prefix + self.suffix)

        def part(text: str) -> str:
            return escaped(text, quote).replace("{", "{{").replace("}", "}}")

        return f"f{quote}{part(self.prefix)}{{{self.target.code}}}{part(self.suffix)}{quote}"


Atom: TypeAlias = Name | Lookup | NamePattern
"""An expression written as composed here (the only source that is not a literal)."""


@dataclass(frozen=True, kw_only=True)
class Call:
    """``callee(positional..., key=value...)``, one argument per line."""

    callee: str
    positional: tuple[Value, ...] = ()
    keywords: tuple[tuple[str, Value], ...] = ()

    def __post_init__(self) -> None:
        identifier(self.callee, what="callee")
        for key, _ in self.keywords:
            identifier(key, what=f"keyword of {self.callee}")


@dataclass(frozen=True)
class Tuple:
    """``(item, ...)``: a row of a :class:`Comprehension`."""

    items: tuple[Value, ...]


@dataclass(frozen=True, kw_only=True)
class Comprehension:
    """``*(element for targets in (row, ...))``: an item of a list, for elements that
    differ only in a few values (``targets`` name them; ``element`` uses the names)."""

    element: Value
    targets: tuple[str, ...]
    rows: tuple[Tuple, ...]

    def __post_init__(self) -> None:
        for target in self.targets:
            identifier(target, what="comprehension variable")
        if not self.targets or len(set(self.targets)) != len(self.targets):
            raise UnsafeSource("a comprehension needs distinct variables", field="targets")


Value: TypeAlias = (
    "str | int | bool | Atom | Call | Tuple | Comprehension | Sequence[Value] | Mapping[str, Value]"
)
"""What a generated expression is built from: literals, checked names, composed calls."""
