"""CRD validation rules (``x-kubernetes-validations``), evaluated with a real CEL runtime.

Every rule of every schema is compiled with ``cel-expr-python`` (the CEL C++ runtime's
Python bindings) and evaluated the way the API server does
(kubernetes/apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``):

* ``self`` is the value at the rule's place in the schema, with the schema's defaults
  applied first (structural defaulting, as the API server defaults before validating);
* object property names that are CEL keywords or hold ``-``, ``.``, ``/`` or ``__`` are
  escaped (``namespace`` -> ``__namespace__``, kubernetes/apiserver ``pkg/cel/escaping.go``);
  map keys (``additionalProperties``) are not;
* a rule that evaluates to false fails with its ``message`` (else ``failed rule: <rule>``);
  one whose evaluation errors (a missing key, no matching overload) fails with
  ``<error> evaluating rule: <rule>``, as the API server does;
* transition rules (those that mention ``oldSelf``) are compiled but evaluated only on
  updates, when there is an old object: ``fleet`` renders objects to be created or
  replaced, so it never evaluates them, exactly as the API server skips them on create.

The pinned CRDs' rules use only standard CEL (``has``, ``size``, ``in``, ``matches``,
list literals, ``filter``, ``exists_one``); the CEL strings extension, which Kubernetes
also enables, is loaded. A rule using a Kubernetes library function this runtime lacks
(``isURL``, ``quantity``, ...) fails to evaluate and is reported as such: no rule is skipped.
Compiled programs are cached per rule text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_EXPAND = re.compile(r"(__|[-./])")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_ACCESSIBLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")


@functools.lru_cache(maxsize=8192)
def escape(name: str) -> str | None:
    """A property name as CEL sees it, or None when CEL cannot reach it at all."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ACCESSIBLE.match(name):
        return None
    return _EXPAND.sub(lambda m: _ESCAPES[m.group(0)], name)


@functools.cache
def _env() -> Any:
    return cel.NewEnv(
        variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
        extensions=[ext_strings.ExtStrings()],
    )


class RuleCompileError(ValueError):
    """A rule the CEL runtime cannot parse."""


@functools.lru_cache(maxsize=4096)
def compile_rule(text: str) -> Any:
    """The compiled program of ``text`` (cached: each distinct rule is compiled once)."""
    try:
        return _env().compile(text, disable_check=True)
    except Exception as e:  # the binding raises plain RuntimeError/ValueError
        raise RuleCompileError(f"CEL rule does not compile: {text}: {e}") from None


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``x-kubernetes-validations`` entry at a place in the schema."""

    path: tuple[str, ...]
    """Schema path: property names, ``[]`` for array items, ``{}`` for map values."""
    schema: dict[str, Any]
    """The schema node the rule sits on (``self``'s schema)."""
    text: str
    """The rule with its whitespace collapsed (for messages)."""
    source: str
    """The rule as written."""
    program: Any
    message: str
    message_expression: Any
    transition: bool
    """Uses ``oldSelf``: evaluated only on updates (never here)."""

    @classmethod
    def of(cls, path: tuple[str, ...], schema: dict[str, Any], entry: dict[str, Any]) -> Rule:
        """Compile one validation entry (raises RuleCompileError)."""
        text = str(entry.get("rule", ""))
        flat = " ".join(text.split())
        message_expression = entry.get("messageExpression")
        return cls(
            path=path,
            schema=schema,
            text=flat,
            source=text,
            program=compile_rule(text),
            message=str(entry.get("message") or f"failed rule: {flat}"),
            message_expression=compile_rule(str(message_expression))
            if message_expression
            else None,
            transition=bool(re.search(r"\boldSelf\b", text)),
        )


Need = dict[str, "Need | None"]
"""The fields of ``self`` some rule reads: escaped name -> deeper needs (None: all of it)."""

_CHAIN = re.compile(r"\bself((?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\s*[(\[])?")


def needs(texts: Sequence[str]) -> Need | None:
    """What the rules ``texts`` read of ``self``; None when they use ``self`` as a whole.

    ``has(self.a.b)`` and ``self.a.b.matches(...)`` read ``a.b``; ``self.a[0]`` reads all of
    ``a``; a bare ``self`` (``size(self)``, ``'x' in self``) reads everything. Preparing
    only what is read keeps a ClusterV1's 60 labels out of a required-parameter rule.
    """
    tree: Need = {}
    for text in texts:
        for m in _CHAIN.finditer(text):
            names = m.group(1).split(".")[1:]
            if m.group(2) and m.group(2).strip() == "(" and names:
                names = names[:-1]  # a method or macro call on the chain
            if not names:
                return None
            node = tree
            for i, name in enumerate(names):
                last = i == len(names) - 1
                if name in node and node[name] is None:
                    break
                if last:
                    node[name] = None
                else:
                    child = node.get(name)
                    if child is None:
                        child = node[name] = {}
                    node = child
    return tree


_ESCAPED: dict[int, tuple[dict[str, Any], dict[str, tuple[str, dict[str, Any]]]]] = {}


def _escaped(props: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """``properties`` by escaped name (computed once per schema node)."""
    hit = _ESCAPED.get(id(props))
    if hit is None or hit[0] is not props:
        table = {}
        for name, sub in props.items():
            key = escape(name)
            if key is not None:
                table[key] = (name, sub)
        hit = _ESCAPED[id(props)] = (props, table)
    return hit[1]


def with_defaults(value: Any, schema: dict[str, Any], need: Need | None = None) -> Any:
    """A copy of ``value`` with the schema's defaults applied and property names escaped.

    Defaults go in where a property is absent (or null and not nullable), recursively,
    as the API server's structural defaulting does before validation. With ``need``, only
    the fields it names are kept (see :func:`needs`).
    """
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        if props:
            escaped = _escaped(props)
            keys = escaped if need is None else need
            for key in keys:
                if key not in escaped:
                    continue
                name, sub = escaped[key]
                item = value.get(name)
                if item is None and not (name in value and sub.get("nullable")):
                    if "default" not in sub:
                        continue
                    item = sub["default"]  # read only: never mutated
                out[key] = with_defaults(item, sub, None if need is None else need[key])
            if len(value) > len(out):  # unknown fields (preserve-unknown-fields)
                for name, item in value.items():
                    unknown = escape(name) if name not in props else None
                    if unknown is not None and (need is None or unknown in need):
                        out[unknown] = item
            return out
        if need is not None:
            value = {k: v for k, v in value.items() if k in need}
        if isinstance(extra, dict):
            return {
                k: with_defaults(v, extra, None if need is None else need[k])
                for k, v in value.items()
            }
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict) and (items.get("properties") or items.get("items")):
            return [with_defaults(v, items) for v in value]
        return value
    return value


def instances(
    value: Any, schema: dict[str, Any], path: tuple[str, ...], where: list[str | int]
) -> Iterator[tuple[Any, list[str | int]]]:
    """(value, json path) of every instance at schema ``path``, defaults applied along it."""
    if not path:
        yield value, where
        return
    step, rest = path[0], path[1:]
    if step == "[]":
        if isinstance(value, list):
            sub = schema.get("items") or {}
            for i, item in enumerate(value):
                yield from instances(item, sub, rest, [*where, i])
    elif step == "{}":
        if isinstance(value, dict):
            sub = schema.get("additionalProperties") or {}
            for name, item in value.items():
                yield from instances(item, sub, rest, [*where, name])
    elif isinstance(value, dict):
        sub = (schema.get("properties") or {}).get(step) or {}
        item = value.get(step)
        if item is None and "default" in sub:
            item = sub["default"]
        if item is not None or step in value:
            yield from instances(item, sub, rest, [*where, step])


@dataclass(frozen=True, slots=True)
class _Group:
    path: tuple[str, ...]
    schema: dict[str, Any]
    need: Need | None
    rules: tuple[Rule, ...]
    all_hold: Any
    """``(r1) && (r2) && ...``: true only when every rule is (CEL's && absorbs an error
    only into false), so a passing object costs one evaluation, not one per rule."""


class RuleSet:
    """The rules of one schema, grouped by place (built once per compiled CRD).

    Rules at the same place share one prepared ``self`` and one activation.
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        by_path: dict[tuple[str, ...], list[Rule]] = {}
        for rule in rules:
            if not rule.transition:
                by_path.setdefault(rule.path, []).append(rule)
        self.groups = tuple(
            _Group(
                path,
                group[0].schema,
                needs([r.text for r in group]),
                tuple(group),
                group[0].program
                if len(group) == 1
                else _conjunction(tuple(r.source for r in group)),
            )
            for path, group in by_path.items()
        )

    def failures(
        self, body: dict[str, Any], root: dict[str, Any]
    ) -> Iterator[tuple[list[str | int], str]]:
        """(json path, message) of every rule that fails on ``body`` (schema ``root``)."""
        env = _env()
        for group in self.groups:
            for value, where in instances(body, root, group.path, []):
                try:
                    activation = env.Activation(
                        {"self": with_defaults(value, group.schema, group.need)}
                    )
                except (TypeError, ValueError, RuntimeError) as e:  # not a JSON value
                    yield where, f"cannot be given to CEL ({e}): {group.rules[0].text}"
                    continue
                if group.all_hold is not None:
                    result = group.all_hold.eval(activation)
                    if result.type() == cel.Type.BOOL and result.value() is True:
                        continue
                for rule in group.rules:
                    message = _evaluate(rule, activation)
                    if message is not None:
                        yield where, message


def _conjunction(sources: tuple[str, ...]) -> Any:
    """One program for several rules; None if their conjunction does not compile."""
    try:
        return compile_rule(" && ".join(f"({source})" for source in sources))
    except RuleCompileError:
        return None


def failures(
    body: dict[str, Any], root: dict[str, Any], rules: Sequence[Rule]
) -> Iterator[tuple[list[str | int], str]]:
    """(json path, message) of every rule of ``rules`` that fails on ``body``."""
    return RuleSet(rules).failures(body, root)


def _evaluate(rule: Rule, activation: Any) -> str | None:
    """None when ``rule`` holds, else the API server's message."""
    result = rule.program.eval(activation)
    if result.type() == cel.Type.BOOL:
        if result.value() is True:
            return None
        if rule.message_expression is not None:
            custom = rule.message_expression.eval(activation)
            text = custom.value() if custom.type() == cel.Type.STRING else ""
            if isinstance(text, str) and text.strip() and "\n" not in text:
                return text
        return rule.message
    if result.type() == cel.Type.ERROR:
        return f"{result.value()} evaluating rule: {rule.text}"
    return f"rule returned {result.type().name()}, not a bool: {rule.text}"
