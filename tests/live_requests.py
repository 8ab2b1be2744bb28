"""Requests the live server is still answering, so a test's database is flushed only after them.

A browser test can end while its page still has a request in flight (a facet fetch fired on load,
a drawer's details): the live server answers it in its own thread, on the very connection the
test's teardown then flushes. On SQLite's shared in-memory database the two collide — the flush
fails ("couldn't be flushed") or the server thread's connection check raises. Django's
request_started signal names each thread that answers a request; the teardown waits for each to
end — after its response, its connection check and its socket — never for a fixed time.

Joining the threads, not only counting request_finished: the test client disconnects and
reconnects Django's own request_finished receiver on every request, so the order in which the
receivers run — and whether the connection check is done when ours runs — is not fixed.
"""

from __future__ import annotations

import threading
import time

from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_started

from tests.waiting import DEADLINE_SECONDS


class InFlight:
    """The live server's threads that answered a request and may not have ended yet."""

    def __init__(self) -> None:
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()

    def started(self, sender: type, **_: object) -> None:
        # The test client's handler is no WSGIHandler: its requests run in the test's own thread.
        if isinstance(sender, type) and issubclass(sender, WSGIHandler):
            with self._lock:
                self._threads.add(threading.current_thread())

    def tracked(self) -> int:
        """How many answering threads the next wait will join."""
        with self._lock:
            return len(self._threads)

    def wait_until_quiet(self, *, seconds: float = DEADLINE_SECONDS) -> None:
        deadline = time.monotonic() + seconds
        with self._lock:
            threads, self._threads = self._threads, set()
        for thread in threads - {threading.current_thread()}:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        busy = [thread for thread in threads if thread.is_alive()]
        if busy:
            with self._lock:
                self._threads.update(busy)
            raise AssertionError(
                f"the live server still answered {len(busy)} request(s) after {seconds:g} s"
            )


IN_FLIGHT = InFlight()
request_started.connect(IN_FLIGHT.started, weak=False, dispatch_uid="tests.live_requests.started")
