"""What a check reports: one :class:`Problem` per thing wrong with one rendered object."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fleet.core.errors import FleetError
from fleet.core.manifest import Manifest
from fleet.core.secrets import redact


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one object."""

    environment: str
    object: str
    """``Kind namespace/name``."""
    field_path: str
    """Dotted JSON path inside the object, e.g. ``spec.forProvider.nodeCount``; "" for the root."""
    message: str
    source: str
    """Where the object was defined (file:line or construct path)."""

    def line(self) -> str:
        """``<env>: <Kind ns/name>: <field>: <message> (defined at <source>)``, with any
        credential material a message quotes (a rejected value) redacted."""
        parts = [self.environment, self.object]
        if self.field_path:
            parts.append(self.field_path)
        parts.append(self.message)
        text = redact(": ".join(parts))
        return f"{text} (defined at {self.source})" if self.source else text

    @classmethod
    def of(cls, manifest: Manifest, field_path: str, message: str) -> Problem:
        """A Problem about ``manifest``."""
        ns = f"{manifest.namespace}/" if manifest.namespace else ""
        return cls(
            manifest.environment,
            f"{manifest.kind} {ns}{manifest.name}",
            field_path,
            message,
            manifest.source,
        )


class InvalidObjects(FleetError):
    """Rendered objects that the API server would refuse, or that must not be written.

    ``objects`` is how many objects were checked (0 when not counted).
    """

    def __init__(self, problems: Sequence[Problem], *, objects: int = 0) -> None:
        self.problems = list(problems)
        self.objects = objects
        super().__init__("\n".join(p.line() for p in self.problems))
