"""Counted nouns in messages: ``1 environment``, ``3 environments``."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``nouns``, default ``noun + "s"``) unless 1."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
