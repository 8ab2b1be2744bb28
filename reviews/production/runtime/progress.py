"""Progress on stderr: tasks done/total, model calls, retries, solver calls, elapsed time, and what
is running now.

A slow call must not look like a hang: while work is in flight the line is redrawn every second
on a terminal (every 30 s in a log) with each running call or attempt, its task, stage and elapsed
time. Notes (a retry, a refused answer asked again) are lines of their own.

On a terminal one line is redrawn in place; otherwise (a log file, CI) each update is its own line,
so nothing is lost to carriage returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from reviews.production.runtime.concurrency import SlotCounts
from reviews.production.runtime.model_client import CallStats
from reviews.production.runtime.terminal import shown

TERMINAL_TICK_SECONDS = 1.0
LOG_TICK_SECONDS = 30.0
SHOWN_ACTIVITIES = 3
Activities = Callable[[], list[tuple[str, float]]]


class Progress:
    def __init__(
        self,
        *,
        total: int,
        stats: CallStats,
        stream: TextIO | None = None,
        command: str = "make_review",
        activities: Activities | None = None,
        solver_calls: Callable[[], int] | None = None,
        concurrency: Callable[[], SlotCounts] | None = None,
        tick_seconds: float | None = None,
    ) -> None:
        self.total = total
        self.command = command
        self.stats = stats
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.activities = activities
        self.solver_calls = solver_calls
        self.concurrency = concurrency
        self.stage = "starting"
        self.tick_seconds = tick_seconds
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None

    def line(self, stage: str) -> str:
        elapsed = time.monotonic() - self.started
        parts = [
            f"{self.command}: tasks {self.done}/{self.total}",
            f"calls {self.stats.calls}",
            f"retries {self.stats.retries}",
        ]
        if self.solver_calls is not None:
            parts.append(f"solver calls {self.solver_calls()}")
        if self.stats.reasks:
            parts.append(f"re-asks {self.stats.reasks}")
        parts += [f"{elapsed:.1f}s", stage]
        slots = self.concurrency() if self.concurrency is not None else None
        if slots is not None and slots.queued:
            # Waiting for the endpoint's slots is ours, not the server's: no deadline runs.
            parts.append(f"queued {slots.queued} (at most {slots.limit} in flight)")
        running = self.activities() if self.activities is not None else []
        if running:
            shown = ", ".join(
                f"{label} {seconds:.0f}s" for label, seconds in running[:SHOWN_ACTIVITIES]
            )
            more = len(running) - SHOWN_ACTIVITIES
            parts.append(f"running: {shown}" + (f" +{more} more" if more > 0 else ""))
        return " · ".join(parts)

    def update(self, stage: str, *, task_done: bool = False) -> None:
        with self._lock:
            if task_done:
                self.done += 1
            self.stage = stage
            self._draw()

    def note(self, text: str) -> None:
        """A line of its own (never overwritten), then the progress line again on a terminal."""
        with self._lock:
            text = shown(text)
            if self.tty:
                self.stream.write("\r\033[K" + f"{self.command}: {text}\n")
                self._draw()
            else:
                self.stream.write(f"{self.command}: {text}\n")
                self.stream.flush()

    def start(self) -> None:
        """Redraw while work is in flight, so a slow call shows its elapsed time."""
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def finish(self) -> None:
        self._stopped.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _tick(self) -> None:
        interval = self.tick_seconds or (TERMINAL_TICK_SECONDS if self.tty else LOG_TICK_SECONDS)
        while not self._stopped.wait(interval):
            if self.activities is not None and self.activities():
                with self._lock:
                    self._draw()

    def _draw(self) -> None:
        # Stages and labels may carry what a dataset named (a task id): shown, never obeyed.
        text = shown(self.line(self.stage))
        if self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def progress_printer(
    *, command: str, total: int, stream: TextIO | None = None
) -> Callable[[str], None]:
    """The curators' tools' progress: one line per step on stderr, each with the elapsed time."""
    out = stream if stream is not None else sys.stderr
    started = time.monotonic()

    def report(stage: str) -> None:
        out.write(f"{command}: {total} case(s) · {time.monotonic() - started:.1f}s · {stage}\n")
        out.flush()

    return report
