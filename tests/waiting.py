"""Waiting in tests: for a condition, with a generous deadline — never for a fixed time.

A test that sleeps "long enough" or asserts that something took under N seconds passes on an idle
machine and fails on a busy one (a newcomer's laptop, CI at load 10). The deadline here only
bounds how long a broken behaviour takes to fail; a working one returns as soon as it holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Long enough for any condition that holds at all on a machine at load 10.
DEADLINE_SECONDS = 120.0
POLL_SECONDS = 0.02


def wait_until(condition: Callable[[], T], *, what: str, seconds: float = DEADLINE_SECONDS) -> T:
    """``condition()``'s first truthy value; AssertionError naming ``what`` past the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not reached within {seconds:g} s: {what}")
        time.sleep(POLL_SECONDS)
