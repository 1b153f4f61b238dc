"""Canonical YAML: the same object gives the same bytes, everywhere, and means the same to
every reader (go-yaml v2 in Kubernetes first; :mod:`fleet.pipeline.yaml_scalars`)."""

from __future__ import annotations

import functools
from typing import Any

import yaml
from yaml.events import AliasEvent, NodeEvent, ScalarEvent
from yaml.nodes import Node, ScalarNode

from fleet.pipeline.yaml_scalars import go_yaml_tag, reads_as_string

_BASE: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available
_STR_TAG = "tag:yaml.org,2002:str"
_QUOTE = "tag:fleet,2026:quote"
"""What :meth:`Dumper.resolve` answers for a string no reader may see plain: a tag that is
not the string's, so the emitter finds the plain form ambiguous and quotes it."""


_plain = functools.lru_cache(maxsize=1 << 16)(reads_as_string)
""":func:`reads_as_string`, remembered: keys and values repeat across the objects of a fleet."""
_base_resolve = _BASE.resolve


class SelfContainingObject(ValueError):
    """An object that holds itself: plain YAML (no anchors) cannot write it."""


class Dumper(_BASE):  # type: ignore[misc]
    """PyYAML's safe dumper (libyaml's emitter when available) with two changes.

    * A string is written plain only when :func:`~fleet.pipeline.yaml_scalars.reads_as_string`
      (every YAML 1.1 and 1.2 reader reads it back as the same string); otherwise quoted.
      PyYAML's own resolver leaves ``y``, ``n``, ``1e3``, ``0o17``, ``08`` plain, which
      Kubernetes' go-yaml v2 reads as a boolean, a float, an integer, a float.
    * No anchors and aliases: an object used twice is written twice.
    """

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> Any:
        """The implicit tag of ``value``; for a string no reader may see plain, not the
        string's (the emitter, which asks with ``implicit=(True, False)``, then quotes)."""
        tag = _base_resolve(self, kind, value, implicit)
        if tag == _STR_TAG and kind is ScalarNode and implicit[0] and not _plain(value):
            return _QUOTE
        return tag

    def ignore_aliases(self, data: Any) -> bool:
        """Always: ``dist/`` holds no anchors (people and some tools read them badly)."""
        return True


DUMPER: Any = Dumper
"""The dumper of canonical YAML (:mod:`fleet.pipeline.yaml_fast` resolves scalars with it too)."""


def dump(data: Any) -> str:
    """``data`` as canonical YAML text: sorted keys, block style, no folding, no anchors."""
    try:
        return yaml.dump(
            data,
            Dumper=DUMPER,
            sort_keys=True,
            default_flow_style=False,
            allow_unicode=True,
            width=1 << 30,
        )
    except RecursionError:
        raise SelfContainingObject(
            "the object holds itself (a dict or list inside itself): plain YAML, without "
            "anchors, cannot write it"
        ) from None


def to_yaml(body: dict[str, Any]) -> bytes:
    """One Kubernetes object as YAML bytes: sorted keys, block style, UTF-8, no folding."""
    return dump(body).encode("utf-8")


def reading_problems(data: bytes | str) -> list[str]:
    """What in the YAML ``data`` may not read as written: anchors and aliases, and plain
    scalars that PyYAML reads as strings but another reader (go-yaml v2 in Kubernetes, go-yaml
    v3, ruamel.yaml, YAML 1.2) may not (:func:`~fleet.pipeline.yaml_scalars.reads_as_string`).
    Empty for what :func:`to_yaml` writes."""
    problems: list[str] = []
    resolver: Any = yaml.resolver.Resolver()
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for event in yaml.parse(data, Loader=loader):
        if isinstance(event, AliasEvent):
            problems.append(f"alias *{event.anchor}")
        elif isinstance(event, NodeEvent) and event.anchor is not None:
            problems.append(f"anchor &{event.anchor}")
        if isinstance(event, ScalarEvent) and event.implicit[0] and not event.style:
            text = event.value
            pyyaml = resolver.resolve(ScalarNode, text, (True, False))
            if pyyaml == _STR_TAG and not reads_as_string(text):
                problems.append(
                    f"plain {text!r}: a string to PyYAML, {go_yaml_tag(text)} to go-yaml v2 "
                    "or another type to another YAML 1.1/1.2 reader"
                )
    return problems
