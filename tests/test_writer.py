"""The writer: a first write all at once, later writes in place (writes first, deletions last)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.pipeline import writer
from fleet.pipeline.writer import read_tree, write_environment

OLD = {
    "a/x.yaml": b"x: old\n",
    "a/b/y.yaml": b"y: old\n",
    "c/d/z.yaml": b"z: old\n",
    "keep.yaml": b"keep\n",
    "gone.yaml": b"gone\n",
}
NEW = {
    "a/x.yaml": b"x: new\n",  # changed
    "a/b/y.yaml": b"y: old\n",  # unchanged
    "keep.yaml": b"keep\n",  # unchanged
    "e/f/added.yaml": b"added\n",  # added; c/d/z.yaml and gone.yaml removed
    "g/added.yaml": b"added too\n",
}


def entries(folder: Path) -> set[str]:
    """Every file, folder and symlink under ``folder`` (relative POSIX paths)."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def hidden(folder: Path) -> list[str]:
    """Hidden entries anywhere under ``folder``: staging folders, temporary files."""
    return sorted(p for p in entries(folder) if any(part.startswith(".") for part in p.split("/")))


@pytest.fixture
def umask() -> Iterator[int]:
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


def test_first_write_creates_the_environment(tmp_path: Path, umask: int) -> None:
    assert write_environment(tmp_path / "dist", "dev", OLD) == len(OLD)  # files changed
    dev = tmp_path / "dist" / "dev"
    assert read_tree(dev) == OLD
    assert entries(tmp_path / "dist") == {"dev"} | {f"dev/{p}" for p in entries(dev)}
    assert (dev / "a" / "x.yaml").stat().st_mode & 0o777 == 0o666 & ~umask
    assert dev.stat().st_mode & 0o777 == 0o777 & ~umask
    assert (dev / "a" / "b").stat().st_mode & 0o777 == 0o777 & ~umask


def test_update_touches_changed_files_only(tmp_path: Path, umask: int) -> None:
    dev = tmp_path / "dev"
    write_environment(tmp_path, "dev", OLD)
    for path in OLD:  # an old mtime, so that a rewrite would show even within one clock tick
        os.utime(dev / path, ns=(1_000_000_000, 1_000_000_000))
    before = {p: (dev / p).stat() for p in OLD}

    # written: a/x.yaml, e/f/added.yaml, g/added.yaml; deleted: c/d/z.yaml, gone.yaml
    assert write_environment(tmp_path, "dev", NEW) == 5
    assert write_environment(tmp_path, "dev", NEW) == 0

    assert read_tree(dev) == NEW
    for path in ("a/b/y.yaml", "keep.yaml"):
        after = (dev / path).stat()
        assert (after.st_ino, after.st_mtime_ns) == (before[path].st_ino, 1_000_000_000)
    changed = (dev / "a/x.yaml").stat()
    assert changed.st_ino != before["a/x.yaml"].st_ino
    assert changed.st_mtime_ns != 1_000_000_000
    for path in ("a/x.yaml", "e/f/added.yaml"):
        assert (dev / path).stat().st_mode & 0o777 == 0o666 & ~umask
    assert (dev / "e" / "f").stat().st_mode & 0o777 == 0o777 & ~umask
    # c/d/z.yaml and gone.yaml are deleted, and so are the folders c/d and c they leave empty.
    assert entries(dev) == set(NEW) | {"a", "a/b", "e", "e/f", "g"}
    assert entries(tmp_path) == {"dev"} | {f"dev/{p}" for p in entries(dev)}


def test_an_empty_render_empties_the_folder_but_keeps_it(tmp_path: Path) -> None:
    write_environment(tmp_path, "dev", OLD)
    write_environment(tmp_path, "dev", {})
    assert (tmp_path / "dev").is_dir()
    assert entries(tmp_path / "dev") == set()


def test_files_and_folders_swap_places(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    write_environment(tmp_path, "dev", {"a": b"file\n", "b/x.yaml": b"1", "b/c/y.yaml": b"2"})
    new = {"a/x.yaml": b"now below a\n", "b": b"now a file\n", "b2/z.yaml": b"3"}
    write_environment(tmp_path, "dev", new)
    assert read_tree(dev) == new
    assert entries(dev) == set(new) | {"a", "b2"}
    write_environment(tmp_path, "dev", {"a": b"file again\n", "b/c/y.yaml": b"4"})
    assert read_tree(dev) == {"a": b"file again\n", "b/c/y.yaml": b"4"}
    assert entries(dev) == {"a", "b", "b/c", "b/c/y.yaml"}


def test_symlinks_are_replaced_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.yaml").write_bytes(b"outside\n")
    (outside / "folder" / "x.yaml").write_bytes(b"outside too\n")
    snapshot = read_tree(outside)
    dist = tmp_path / "dist"
    dev = dist / "dev"
    write_environment(dist, "dev", {"keep.yaml": b"keep\n"})
    (dev / "file.yaml").symlink_to(outside / "file.yaml")  # where a file is produced
    (dev / "folder").symlink_to(outside / "folder", target_is_directory=True)  # a folder
    (dev / "stale.yaml").symlink_to(outside / "file.yaml")  # not produced
    (dev / "dangling.yaml").symlink_to(outside / "missing.yaml")  # produced, target missing
    new = {
        "keep.yaml": b"keep\n",
        "file.yaml": b"new\n",
        "folder/x.yaml": b"new\n",
        "dangling.yaml": b"new\n",
    }

    write_environment(dist, "dev", new)

    assert read_tree(dev) == new
    assert not any(p.is_symlink() for p in dev.rglob("*"))
    assert read_tree(outside) == snapshot
    assert not (outside / "missing.yaml").exists()


def test_an_environment_folder_that_is_a_symlink_is_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_bytes(b"outside\n")
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "dev").symlink_to(outside, target_is_directory=True)
    write_environment(dist, "dev", {"x.yaml": b"new\n"})
    assert not (dist / "dev").is_symlink()
    assert read_tree(dist / "dev") == {"x.yaml": b"new\n"}
    assert read_tree(outside) == {"x.yaml": b"outside\n"}


def test_leftovers_of_an_interrupted_write_are_removed(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    write_environment(tmp_path, "dev", OLD)
    (dev / f"{writer.TEMP_PREFIX}123-0").write_bytes(b"half")
    (dev / "a" / "b" / f"{writer.TEMP_PREFIX}123-1").write_bytes(b"half")
    (tmp_path / ".dev.new-123-abcd" / "a").mkdir(parents=True)  # an interrupted first write
    (tmp_path / ".dev.new-123-abcd" / "a" / "x.yaml").write_bytes(b"x")
    (tmp_path / ".dev.old-123").mkdir()  # the previous writer's retired tree
    write_environment(tmp_path, "dev", OLD)
    assert read_tree(dev) == OLD
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("failing_call", range(4))
def test_an_error_halfway_deletes_nothing_and_the_next_write_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_call: int
) -> None:
    dev = tmp_path / "dev"
    write_environment(tmp_path, "dev", OLD)
    # NEW needs 3 replacements (a/x.yaml, e/f/added.yaml, g/added.yaml): the write fails at
    # the first, second or third; with failing_call 3 it does not fail (checks the count).
    replace = os.replace
    calls: list[str] = []
    fail = [failing_call < 3]

    def flaky_replace(src: str, dst: str) -> None:
        calls.append(dst)
        if fail[0] and len(calls) == failing_call + 1:
            fail[0] = False
            raise OSError(28, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    if failing_call < 3:
        with pytest.raises(OSError, match="No space left"):
            write_environment(tmp_path, "dev", NEW)
        current = read_tree(dev)
        for path, data in NEW.items():
            assert current.get(path) in (OLD.get(path), data), path
        assert set(OLD) <= set(current)  # nothing deleted yet
        assert set(current) <= set(OLD) | set(NEW)
        assert hidden(tmp_path) == []  # the failed temporary file is gone
    done = len(calls) - 1 if failing_call < 3 else 0
    calls.clear()
    write_environment(tmp_path, "dev", NEW)
    assert len(calls) == 3 - done  # what the failed write replaced is not written again
    assert read_tree(dev) == NEW
    assert entries(dev) == set(NEW) | {"a", "a/b", "e", "e/f", "g"}
    assert hidden(tmp_path) == []


def test_a_writer_waits_for_the_lock_on_dist(tmp_path: Path) -> None:
    write_environment(tmp_path, "dev", OLD)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        other = threading.Thread(target=write_environment, args=(tmp_path, "dev", NEW))
        other.start()
        other.join(0.3)
        assert other.is_alive()
        assert read_tree(tmp_path / "dev") == OLD
    finally:
        os.close(fd)  # releases the lock
    other.join(10)
    assert not other.is_alive()
    assert read_tree(tmp_path / "dev") == NEW


# --- first writes staged while the synth renders (writer.Staging) ------------------------------


def test_a_staged_first_write_is_renamed_into_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    dist = tmp_path / "dist"
    items = list(OLD.items())
    with writer.Staging(dist, ["dev"]) as staging:
        staging.add("dev", items[:2])
        staging.add("dev", items[2:])
        assert [p.name.startswith(".dev.new-") for p in dist.iterdir()] == [True]

        def unstaged(*args: object) -> None:
            raise AssertionError("written again instead of renamed")

        monkeypatch.setattr(writer, "_write_locked", unstaged)
        assert write_environment(dist, "dev", OLD, staging=staging) == len(OLD)
    assert read_tree(dist / "dev") == OLD
    assert hidden(dist) == []
    assert (dist / "dev" / "a" / "x.yaml").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (dist / "dev" / "a" / "b").stat().st_mode & 0o777 == 0o777 & ~umask
    monkeypatch.undo()
    write_environment(dist, "dev", NEW)  # the lock was released
    assert read_tree(dist / "dev") == NEW


def test_a_staged_environment_not_installed_leaves_nothing(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    with writer.Staging(dist, ["dev", "prod"]) as staging:
        staging.add("dev", list(OLD.items()))
        staging.add("prod", list(NEW.items()))
    assert not dist.exists()  # a failed synth: dist/ as it was (here: absent)

    write_environment(dist, "test", NEW)
    with writer.Staging(dist, ["dev"]) as staging:
        staging.add("dev", list(OLD.items()))
    assert entries(dist) == {"test"} | {f"test/{p}" for p in entries(dist / "test")}


def test_only_environments_without_a_folder_are_staged(tmp_path: Path) -> None:
    write_environment(tmp_path, "dev", OLD)
    inode = os.stat(tmp_path / "dev" / "keep.yaml").st_ino
    with writer.Staging(tmp_path, ["dev", "prod"]) as staging:
        staging.add("dev", list(NEW.items()))
        staging.add("prod", list(NEW.items()))
        assert [p.name[:10] for p in tmp_path.iterdir() if p.name.startswith(".")] == [".prod.new-"]
        write_environment(tmp_path, "dev", NEW, staging=staging)
        write_environment(tmp_path, "prod", NEW, staging=staging)
    assert read_tree(tmp_path / "dev") == read_tree(tmp_path / "prod") == NEW
    assert os.stat(tmp_path / "dev" / "keep.yaml").st_ino == inode  # updated in place
    assert hidden(tmp_path) == []


def test_staging_that_failed_or_missed_files_falls_back_to_an_ordinary_write(
    tmp_path: Path,
) -> None:
    with writer.Staging(tmp_path, ["dev", "prod"]) as staging:
        staging.add("dev", list(OLD.items()))
        staging.add("prod", list(OLD.items())[:2])  # not every file reached it
        assert staging._process is not None
        staging._process.kill()  # the helper dies (a full disk, a signal)
        staging.add("dev", [("late.yaml", b"late\n")])
        write_environment(tmp_path, "dev", {**OLD, "late.yaml": b"late\n"}, staging=staging)
        write_environment(tmp_path, "prod", OLD, staging=staging)
    assert read_tree(tmp_path / "dev") == {**OLD, "late.yaml": b"late\n"}
    assert read_tree(tmp_path / "prod") == OLD
    assert hidden(tmp_path) == []


def test_staging_waits_for_no_other_writer(tmp_path: Path) -> None:
    # Another synth holds dist/: nothing is staged, and the write waits for the lock.
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        staging = writer.Staging(tmp_path, ["dev"])
        staging.add("dev", list(OLD.items()))
        assert list(tmp_path.iterdir()) == []
        other = threading.Thread(
            target=write_environment, args=(tmp_path, "dev", OLD), kwargs={"staging": staging}
        )
        other.start()
        other.join(0.3)
        assert other.is_alive()
    finally:
        os.close(fd)
    other.join(10)
    staging.close()
    assert read_tree(tmp_path / "dev") == OLD
    assert hidden(tmp_path) == []


def test_an_interrupt_while_installing_stops_the_helper_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    # Ctrl-C while the synth waits for the helper (the join in install): the helper is
    # stopped before its folder is removed, and the folder install had taken is removed too.
    dist = tmp_path / "out" / "dist"
    staging = writer.Staging(dist, ["dev"])
    with pytest.raises(KeyboardInterrupt), staging:
        staging.add("dev", list(OLD.items()))
        process, feeder = staging._process, staging._feeder
        assert process is not None and feeder is not None
        join = feeder.join

        def interrupted(timeout: float | None = None) -> None:
            feeder.join = join  # type: ignore[method-assign]
            raise KeyboardInterrupt

        feeder.join = interrupted  # type: ignore[method-assign]
        write_environment(dist, "dev", OLD, staging=staging)
    assert process.poll() is not None  # not still writing into dist/
    assert not (tmp_path / "out").exists()  # dist/ and the folder above it, as they were


@pytest.mark.parametrize("relpath", ["../x.yaml", "a/../../x.yaml", "/abs.yaml", "a//b.yaml", ""])
def test_a_path_that_leaves_the_folder_is_never_written(tmp_path: Path, relpath: str) -> None:
    dist = tmp_path / "out" / "dist"
    with pytest.raises(ValueError, match="not a path inside dist/dev/"):
        write_environment(dist, "dev", {"ok.yaml": b"1", relpath: b"2"})
    with writer.Staging(dist, ["dev"]) as staging:
        assert staging.add("dev", [("ok.yaml", b"1")])
        assert not staging.add("dev", [(relpath, b"2")])
        assert not staging.add("dev", [("late.yaml", b"3")])  # not staged any more
    assert entries(tmp_path) == set()


def test_a_synth_killed_outright_leaves_no_staging_folder(tmp_path: Path) -> None:
    # SIGKILL (the OOM killer, a CI job cancelled hard): no cleanup runs in the synth, and
    # its helper, at the end of its input without the "everything was sent" record,
    # removes the staging folder itself.
    dist = tmp_path / "dist"
    child = f"""
import os, signal, sys, time
from pathlib import Path
from fleet.pipeline import writer
staging = writer.Staging(Path({str(dist)!r}), ["dev"])
staging.add("dev", [("a/x.yaml", b"x"), ("y.yaml", b"y")])
while not (staging._folders["dev"] / "y.yaml").exists():
    time.sleep(0.01)
os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    deadline = time.monotonic() + 30
    while entries(dist) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entries(dist) == set()
