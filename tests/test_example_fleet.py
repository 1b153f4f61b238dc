"""The example fleet (``clusters/``) and the tool's fixture fleet share one source.

The fixture (tests/fixtures/fleets/hybrid/clusters) is the source; ``make example`` copies it
to ``clusters/``. While ``clusters/__init__.py`` still carries the ``fleet-example:`` line the
two must be equal file for file; a user who replaces the example with their own clusters
drops that line, and from then on ``clusters/`` is theirs alone.
"""

from __future__ import annotations

from pathlib import Path

from support import HYBRID, REPO

MARKER = "fleet-example: the tool's example fleet"


def sources(folder: Path) -> dict[str, bytes]:
    """The Python sources of ``folder``, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.py"))}


def test_the_fixture_says_it_is_the_example_source() -> None:
    assert MARKER in (HYBRID / "clusters" / "__init__.py").read_text()


def test_the_example_is_the_fixture_while_it_says_so() -> None:
    init = REPO / "clusters" / "__init__.py"
    if not init.is_file() or MARKER not in init.read_text():
        return  # the user's own clusters: nothing to compare
    example, fixture = sources(REPO / "clusters"), sources(HYBRID / "clusters")
    differing = sorted(
        k for k in example.keys() | fixture.keys() if example.get(k) != fixture.get(k)
    )
    assert not differing, f"clusters/ differs from its source ({differing}): run `make example`"
