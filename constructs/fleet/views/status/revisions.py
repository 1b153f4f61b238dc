"""Which commit ArgoCD should have: the last one that changed ``dist/<env>/``, from git.

ArgoCD reports the commit it synced (``status.sync.revision``); it is current when that
commit contains the last change of ``dist/<env>/`` (it is that commit or a later one).
Git runs read-only in the project's folder (``git log``, ``git merge-base``).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class RevisionState(StrEnum):
    """ArgoCD's revision against the last change of ``dist/<env>/``."""

    CURRENT = "current"
    """ArgoCD's commit holds the last change."""
    BEHIND = "behind"
    """ArgoCD's commit is older than the last change: it has not seen it yet."""
    UNKNOWN = "unknown"
    """No git history here, or ArgoCD's commit is not in it (fetch), or no revision."""


@dataclass(frozen=True)
class Expected:
    """The last change of one environment's ``dist/`` folder."""

    commit: str | None
    """None: not a git checkout, or the folder was never committed."""
    why_unknown: str = ""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The project's repository, whatever a caller's GIT_DIR says.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=30,
    )


class History:
    """The project's git history, asked once per environment and commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._expected: dict[str, Expected] = {}
        self._contains: dict[tuple[str, str], RevisionState] = {}

    def expected(self, folder: str) -> Expected:
        """The last commit that changed ``folder`` (relative to the project)."""
        if folder not in self._expected:
            try:
                done = _git(self.root, "log", "-1", "--format=%H", "--", folder)
            except (OSError, subprocess.SubprocessError) as e:
                self._expected[folder] = Expected(None, f"git could not run ({e})")
                return self._expected[folder]
            commit = done.stdout.strip()
            if done.returncode != 0:
                self._expected[folder] = Expected(None, "not a git checkout")
            elif not commit:
                self._expected[folder] = Expected(None, f"{folder}/ was never committed")
            else:
                self._expected[folder] = Expected(commit)
        return self._expected[folder]

    def state(self, expected: Expected, revision: str | None) -> RevisionState:
        """Whether ArgoCD's ``revision`` holds ``expected``'s commit."""
        if expected.commit is None or not revision:
            return RevisionState.UNKNOWN
        key = (expected.commit, revision)
        if key not in self._contains:
            if revision == expected.commit:
                self._contains[key] = RevisionState.CURRENT
            else:
                try:
                    known = _git(self.root, "cat-file", "-e", f"{revision}^{{commit}}")
                    if known.returncode != 0:
                        self._contains[key] = RevisionState.UNKNOWN
                    else:
                        done = _git(
                            self.root, "merge-base", "--is-ancestor", expected.commit, revision
                        )
                        self._contains[key] = (
                            RevisionState.CURRENT if done.returncode == 0 else RevisionState.BEHIND
                        )
                except (OSError, subprocess.SubprocessError):
                    self._contains[key] = RevisionState.UNKNOWN
        return self._contains[key]
