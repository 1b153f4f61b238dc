"""The complete rendered output of each environment, as a reviewable snapshot.

A pull request that changes any manifest changes this snapshot; the diff shows it.
"""

from __future__ import annotations

import pytest
from support import REPO
from syrupy.assertion import SnapshotAssertion

from fleet import FleetConfig
from fleet.pipeline.synth import Synth, synthesize


@pytest.fixture(scope="module")
def example() -> Synth:
    return synthesize(FleetConfig.load(REPO))


@pytest.mark.parametrize("environment", FleetConfig.load(REPO).environments)
def test_environment_snapshot(
    example: Synth, environment: str, snapshot: SnapshotAssertion
) -> None:
    files = example.files[environment]
    rendered = "".join(f"--- # {path}\n{files[path].decode()}" for path in sorted(files))
    assert rendered == snapshot
