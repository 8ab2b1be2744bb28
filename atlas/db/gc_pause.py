"""Bulk work that builds millions of live objects runs with the cyclic garbage collector paused;
a process keeps what it loaded at start-up out of the collector's walks (``settle_loaded``).

CPython's generational collector runs after every few hundred container allocations, and each
older-generation collection walks everything that survived so far. Reading a 100,000-row catalog
artifact builds millions of dicts, lists and strings that all stay alive, so the collections
re-walk them for nothing: the artifact's parse took 2.8-3.9 s with the collector running and
0.7 s with it paused. The paused work makes no reference cycles worth collecting early; whatever
it leaves is collected once the collector resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# A request or a run makes thousands of short-lived containers (a 500-row list: a payload, a
# mapping and a row per source; a review run: every request, answer and record it writes), and
# the collector's default first generation (700 allocations) walked them many times over: about
# 1.5 ms of a 27 ms list under gunicorn. The first generation is collected every 20,000
# allocations instead; cycles still go, a few milliseconds later.
GEN0_THRESHOLD = 20_000

_lock = threading.Lock()
_state = {"depth": 0, "was_enabled": False}


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the block; nested or concurrent blocks resume it when the last one
    ends, and only if it was running before the first began."""
    with _lock:
        if _state["depth"] == 0:
            _state["was_enabled"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_enabled"]:
                gc.enable()


def settle_loaded() -> None:
    """What the process has loaded by now (Django, the apps, their modules) lives as long as it:
    frozen, the collector never walks it again — not at each full collection, not at exit, where
    a command that set Django up spent 0.2-0.4 s collecting its modules — and under `gunicorn
    --preload` the workers keep sharing the master's pages instead of touching every object at
    their first full collection. The first generation is collected less often
    (``GEN0_THRESHOLD``)."""
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
