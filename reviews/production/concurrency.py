"""Independent pieces of work run ``jobs`` at a time (make_review's tasks, make_difficulty's
attempts): the first failure stops the rest, and Ctrl-C stops everything cleanly."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from reviews.production.errors import ReviewProductionError

INTERRUPTED = "Interrupted; saved files remain in place. Run again with --resume to finish."
T = TypeVar("T")
R = TypeVar("R")


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
