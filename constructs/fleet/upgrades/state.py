"""The committed state of an upgrade rollout: which ring has been promoted to which target,
and how many of its steps. ``fleet upgrade promote`` writes it, a pull request reviews it,
the synth reads it (never the clock)::

    # The progress of the upgrade rollout (...). Written by `fleet upgrade promote`.
    rings:
      canary:
        step: 1
        target: kubernetes-1.31

A ring absent from the file has taken no target: its clusters render what they declare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import yaml

from fleet.core.errors import DefinitionError

HEADER = (
    "# The progress of the fleet's upgrade rollout: for each ring, the target it takes and\n"
    "# how many of its steps are promoted. Written by `fleet upgrade promote`; review it like\n"
    "# any change (the synth renders the clusters of a promoted ring at the target).\n"
)


@dataclass(frozen=True, order=True)
class Progress:
    """Where one ring is: ``target`` (its name) promoted up to step ``step`` (1 or more)."""

    target: str
    step: int


@dataclass(frozen=True)
class RolloutState:
    """The state file, parsed: ring name -> :class:`Progress`."""

    rings: Mapping[str, Progress] = field(default_factory=lambda: MappingProxyType({}))
    lines: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}), compare=False)
    """ring name -> the line that names it (for messages)."""

    def progress(self, ring: str) -> Progress | None:
        """Where ``ring`` is (None: it has taken no target)."""
        return self.rings.get(ring)

    def with_progress(self, ring: str, progress: Progress) -> RolloutState:
        """This state with ``ring`` at ``progress``."""
        return RolloutState(MappingProxyType({**self.rings, ring: progress}))

    def dump(self) -> str:
        """The file's text: the header, then the rings sorted by name (same state, same bytes)."""
        if not self.rings:
            return HEADER + "rings: {}\n"
        body = {
            "rings": {
                name: {"step": p.step, "target": p.target} for name, p in sorted(self.rings.items())
            }
        }
        return HEADER + yaml.safe_dump(body, sort_keys=True, default_flow_style=False)


def parse_state(text: str, *, source: str) -> RolloutState:
    """The state in ``text`` (the file ``source``), or the error naming its line."""

    def fail(message: str, line: int | None = None) -> DefinitionError:
        where = f"{source}:{line}" if line else source
        return DefinitionError(message, where=where, field="state")

    try:
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise fail(f"not YAML: {getattr(e, 'problem', e)}", line) from None
    if root is None:
        return RolloutState()
    if not isinstance(root, yaml.MappingNode):
        raise fail("must be a mapping with the key 'rings'", root.start_mark.line + 1)
    rings_node: yaml.Node | None = None
    for key, value in root.value:
        if key.value != "rings":
            raise fail(f"unknown key {key.value!r} (only 'rings')", key.start_mark.line + 1)
        rings_node = value
    if rings_node is None or (isinstance(rings_node, yaml.ScalarNode) and not rings_node.value):
        return RolloutState()
    if not isinstance(rings_node, yaml.MappingNode):
        raise fail("'rings' must map ring names to {target, step}", rings_node.start_mark.line + 1)
    rings: dict[str, Progress] = {}
    lines: dict[str, int] = {}
    for key, value in rings_node.value:
        line = key.start_mark.line + 1
        name = str(key.value)
        if name in rings:
            raise fail(f"ring {name!r} is listed twice", line)
        fields: dict[str, str] = {}
        if isinstance(value, yaml.MappingNode):
            fields = {str(k.value): str(v.value) for k, v in value.value}
        if set(fields) != {"target", "step"}:
            raise fail(f"ring {name!r}: give target (a name) and step (1 or more)", line)
        try:
            step = int(fields["step"])
        except ValueError:
            step = 0
        if step < 1:
            raise fail(f"ring {name!r}: step must be 1 or more, got {fields['step']!r}", line)
        rings[name] = Progress(fields["target"], step)
        lines[name] = line
    return RolloutState(MappingProxyType(rings), MappingProxyType(lines))


def read_state(path: Path, *, shown: str) -> RolloutState:
    """The state file at ``path`` (``shown``: how messages name it); none yet: nothing
    promoted."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RolloutState()
    except (OSError, UnicodeDecodeError) as e:
        raise DefinitionError(f"cannot read it: {e}", where=shown, field="state") from None
    return parse_state(text, source=shown)
