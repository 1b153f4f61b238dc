"""Progress of a long synth: a rich bar on a terminal, plain lines otherwise, nothing if fast.

Nothing is shown for the first ``delay_s`` seconds (2 by default), so a small fleet's
synth prints exactly what it printed before. After that a terminal gets a ``rich``
progress bar (removed when done), and a pipe or CI log gets one line per step.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

DELAY_S = 2.0


class Progress:
    """Steps of a synth: ``expect(n)`` more steps, ``advance(what)`` when one is done.

    ``force_terminal`` overrides the detection of a terminal on ``stream`` (True: the bar,
    False: plain lines). Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        *,
        stream: TextIO | None = None,
        force_terminal: bool | None = None,
        delay_s: float = DELAY_S,
        label: str = "synth",
        enabled: bool = True,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.enabled = enabled
        self.terminal = force_terminal if force_terminal is not None else bool(self.stream.isatty())
        self.total = 0
        self.completed = 0
        self.last = "starting"
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self._shown = False
        self._closed = False
        self._bar: RichProgress | None = None
        self._task: object = None
        self._timer: threading.Timer | None = None
        if enabled:
            if delay_s <= 0:
                self._show()
            else:
                self._timer = threading.Timer(delay_s, self._show)
                self._timer.daemon = True
                self._timer.start()

    @classmethod
    def silent(cls) -> Progress:
        """A progress that never shows anything."""
        return cls(enabled=False)

    @property
    def shown(self) -> bool:
        """Whether anything was displayed (the synth took longer than the delay)."""
        return self._shown

    def expect(self, steps: int) -> None:
        """``steps`` more steps are to come."""
        with self._lock:
            self.total += steps
            if self._bar is not None:
                self._bar.update(self._task, total=self.total)  # type: ignore[arg-type]

    def advance(self, what: str) -> None:
        """One step is done: ``what`` says which (``rendered dev``)."""
        with self._lock:
            self.completed += 1
            self.last = what
            if not self._shown or self._closed:
                return
            if self._bar is not None:
                self._bar.update(
                    self._task,  # type: ignore[arg-type]
                    completed=self.completed,
                    description=f"{self.label}: {what}",
                )
            else:
                self._line(what)

    def _line(self, what: str) -> None:
        elapsed = time.perf_counter() - self.started
        total = max(self.total, self.completed)
        self.stream.write(f"{self.label}: [{self.completed}/{total}] {what} ({elapsed:.1f} s)\n")
        self.stream.flush()

    def _show(self) -> None:
        with self._lock:
            if self._closed or self._shown:
                return
            self._shown = True
            if not self.terminal:
                self._line(f"{self.last}, working...")
                return
            # rich is imported only for a bar actually shown (it costs 30 ms to import).
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            console = Console(file=self.stream, force_terminal=True)
            self._bar = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._bar.add_task(
                f"{self.label}: {self.last}",
                total=max(self.total, 1),
                completed=self.completed,
            )
            self._bar.start()

    def close(self) -> None:
        """Stop showing progress (the bar disappears)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._bar is not None:
                self._bar.stop()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
