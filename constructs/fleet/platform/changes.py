"""What a controller does with a change to an object that already exists, as rules a cloud
plug-in declares (``CloudPlugin.change_rules``) and ``fleet diff`` applies
(:mod:`fleet.guards.change_rules`).

A rule names the kinds (and fields) it is about and judges one changed object: it sees the
object on both sides and can look up other objects of the same environment on either side
(the ProviderConfig a managed resource moves to, say). It returns verdicts, ``(level,
message)``; ``error`` fails ``fleet diff``, so its message says what to do instead (the
blue/green or retire path). Generic: the rules themselves live with their cloud.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fleet.platform.upjet import Level

Body = Mapping[str, Any]
"""One object, parsed."""

Verdict = tuple[Level, str]
"""A rule's judgement: ``error`` fails ``fleet diff``, ``warning`` and ``note`` inform."""


class Objects(Protocol):
    """One side of one environment (the base revision's, or the working tree's)."""

    def get(self, group: str, kind: str, name: str, namespace: str = "") -> Body | None:
        """The object of that identity on this side, None if there is none."""
        ...

    def of_kind(self, group: str, kind: str) -> Sequence[Body]:
        """Every object of ``group``/``kind`` on this side."""
        ...


@dataclass(frozen=True)
class Change:
    """One object present on both sides whose content differs, with its environment."""

    environment: str
    old: Body
    """The object as the base revision renders it."""
    new: Body
    """The object as the working tree renders it."""
    base: Objects
    head: Objects


ChangeJudge = Callable[[Change], Sequence[Verdict]]


@dataclass(frozen=True, kw_only=True)
class ChangeRule:
    """A judgement of changes to existing objects of some kinds.

    ``paths``: the rule runs when a field at or below one of them changes (body paths such
    as ``("spec", "providerConfigRef")``); empty, on any change of the object. ``source``
    names the upstream behaviour the rule follows (repository, version, file).
    """

    groups: tuple[str, ...]
    kinds: tuple[str, ...]
    judge: ChangeJudge
    source: str
    paths: tuple[tuple[str, ...], ...] = ()

    def applies(self, group: str, kind: str) -> bool:
        """Whether the rule judges objects of ``group``/``kind``."""
        return group in self.groups and kind in self.kinds
