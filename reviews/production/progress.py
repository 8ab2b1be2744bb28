"""Progress on stderr: tasks done/total, calls made, retries, elapsed time.

On a terminal one line is redrawn in place; otherwise (a log file, CI) each update is its own line,
so nothing is lost to carriage returns.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from reviews.production.model_client import CallStats


class Progress:
    def __init__(
        self,
        *,
        total: int,
        stats: CallStats,
        stream: TextIO | None = None,
        command: str = "make_review",
    ) -> None:
        self.total = total
        self.command = command
        self.stats = stats
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()

    def line(self, stage: str) -> str:
        elapsed = time.monotonic() - self.started
        return (
            f"{self.command}: tasks {self.done}/{self.total} · calls {self.stats.calls} · "
            f"retries {self.stats.retries} · {elapsed:.1f}s · {stage}"
        )

    def update(self, stage: str, *, task_done: bool = False) -> None:
        with self._lock:
            if task_done:
                self.done += 1
            text = self.line(stage)
            if self.tty:
                self.stream.write("\r\033[K" + text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
