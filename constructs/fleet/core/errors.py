"""The error types the fleet raises for bad input."""

from __future__ import annotations

from fleet.core.redact import redact


class FleetError(Exception):
    """Base class for problems the user can fix; the CLI prints them without a traceback."""


class DefinitionError(FleetError):
    """A declaration is wrong: names the place (file:line or construct path) and the field.

    It never prints credential material: a message or field that quotes a rejected value
    holding one (a PEM key, a token, a URL with a password) shows ``<redacted>`` there
    (:func:`fleet.core.redact.redact`; values a message quotes go through
    :func:`fleet.core.redact.shown` first)."""

    def __init__(self, message: str, *, where: str = "", field: str = "") -> None:
        self.message = redact(message)
        self.where = where
        self.field = redact(field)
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line form: ``<where>: <field>: <message>``."""
        parts = [p for p in (self.where, self.field) if p]
        return ": ".join([*parts, self.message])


class DefinitionErrors(FleetError):
    """Several definition problems found in one pass, reported one per line."""

    def __init__(self, errors: list[DefinitionError]) -> None:
        self.errors = errors
        super().__init__("\n".join(e.line() for e in errors))
