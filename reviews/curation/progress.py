"""Progress on stderr for the curators' tools: one line per step, each with the elapsed time."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def progress_printer(
    *, command: str, total: int, stream: TextIO | None = None
) -> Callable[[str], None]:
    out = stream if stream is not None else sys.stderr
    started = time.monotonic()

    def report(stage: str) -> None:
        out.write(f"{command}: {total} case(s) · {time.monotonic() - started:.1f}s · {stage}\n")
        out.flush()

    return report
