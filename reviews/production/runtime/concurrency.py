"""Independent pieces of work run ``jobs`` at a time (make_review's tasks, make_difficulty's
attempts): the first failure stops the rest, and Ctrl-C stops everything cleanly.

Ctrl-C: the first one sets the run's stop event at once — every model call in
flight is cancelled, every native worker is sent SIGINT — and the run ends with a line saying it
can be resumed; a second one kills the workers' process groups and ends the process immediately.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TypeVar

from reviews.production.runtime.errors import ReviewProductionError

INTERRUPTED = "Interrupted; saved files remain in place. Run again with --resume to finish."
FORCED = "Interrupted again: stopping now; saved files remain in place. Run again with --resume."
FORCED_EXIT_STATUS = 130
T = TypeVar("T")
R = TypeVar("R")
# How often a caller queued for an endpoint slot looks at the run's stop event: an Event cannot
# wake a Condition, and a queued call must end within this when Ctrl-C is pressed.
SLOT_STOP_CHECK_SECONDS = 0.1


class SlotWaitStopped(Exception):
    """The run was stopped while a caller was queued for an endpoint slot."""


@dataclass(frozen=True)
class SlotCounts:
    limit: int
    busy: int
    queued: int


class EndpointSlots:
    """At most ``limit`` callers of one model endpoint at a time (``model.max_concurrency``, the
    server's own slot count, or the connection pool): a one-slot llama.cpp server answers the
    rest only after queueing them itself, where their whole-call deadlines would run out. Callers
    queue here instead, before their deadline starts. ``set_limit`` may change the limit once
    the server has said how many slots it has; callers already holding one keep it."""

    def __init__(self, *, limit: int) -> None:
        self._limit = max(limit, 1)
        self._busy = 0
        self._queued = 0
        self._changed = threading.Condition()

    def set_limit(self, limit: int) -> None:
        with self._changed:
            self._limit = max(limit, 1)
            self._changed.notify_all()

    def counts(self) -> SlotCounts:
        with self._changed:
            return SlotCounts(limit=self._limit, busy=self._busy, queued=self._queued)

    @contextlib.contextmanager
    def held(self, *, stop: threading.Event) -> Iterator[None]:
        """One slot for the block; ``SlotWaitStopped`` when ``stop`` is set while queued."""
        with self._changed:
            self._queued += 1
            try:
                while self._busy >= self._limit:
                    if stop.is_set():
                        raise SlotWaitStopped()
                    self._changed.wait(SLOT_STOP_CHECK_SECONDS)
            finally:
                self._queued -= 1
            self._busy += 1
        try:
            yield
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify()


def run_concurrently(
    *,
    items: Sequence[T],
    work: Callable[[T], R],
    jobs: int,
    stop: threading.Event,
    finished: Callable[[int, R], None],
) -> list[R]:
    """``work`` on every item, ``jobs`` at a time; ``finished(index, result)`` runs in the
    calling thread as each item finishes (progress, partial records). A failure sets ``stop``,
    the items already running finish or stop (keeping what they saved for a resume) and the
    first failure in item order is raised."""
    results: dict[int, R] = {}
    errors: dict[int, BaseException] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(work, item): index for index, item in enumerate(items)}
        pending = set(futures)
        try:
            while pending:
                done, pending = concurrent.futures.wait(
                    pending, timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in done:
                    index = futures[future]
                    try:
                        results[index] = future.result()
                    except BaseException as exc:  # collected; the first by order is raised
                        errors[index] = exc
                        stop.set()
                        continue
                    finished(index, results[index])
        except KeyboardInterrupt:
            stop.set()
            concurrent.futures.wait(pending)
            raise ReviewProductionError(INTERRUPTED) from None
    real = {index: exc for index, exc in errors.items() if not isinstance(exc, KeyboardInterrupt)}
    if real:
        raise real[min(real)]
    if errors:
        raise ReviewProductionError(INTERRUPTED)
    return [results[index] for index in range(len(items))]


# The process groups of the native workers running now: a second Ctrl-C kills them before the
# process ends, so no worker outlives the run (they run in sessions of their own, which the
# terminal's SIGINT never reaches).
_groups: set[int] = set()
_groups_lock = threading.Lock()


@contextlib.contextmanager
def tracked_group(pid: int) -> Iterator[None]:
    """While the block runs, the process group ``pid`` leads is killed by a forced exit."""
    with _groups_lock:
        _groups.add(pid)
    try:
        yield
    finally:
        with _groups_lock:
            _groups.discard(pid)


def kill_tracked_groups() -> None:
    with _groups_lock:
        groups = list(_groups)
    for pid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def interruptible(*, stop: threading.Event, command: str, forced: str = FORCED) -> Iterator[None]:
    """While the block runs in the main thread: the first SIGINT sets ``stop`` and raises
    ``KeyboardInterrupt`` (the run stops cleanly and says it can be resumed); a second SIGINT
    ends the process at once. Elsewhere (a thread) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupts = 0

    def on_interrupt(_signum: int, _frame: FrameType | None) -> None:
        nonlocal interrupts
        interrupts += 1
        stop.set()
        if interrupts > 1:
            kill_tracked_groups()
            sys.stderr.write(f"\n{command}: {forced}\n")
            sys.stderr.flush()
            os._exit(FORCED_EXIT_STATUS)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
