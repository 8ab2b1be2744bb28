"""HTTP calls with a deadline for the whole call and a cap on the answer's size.

``httpx`` timeouts bound each socket operation, not the call: a body trickled one byte per second
never trips a 10 s read timeout, and nothing bounds how much a server may send. Here every call
runs under a watchdog that shuts its socket down when the call's deadline passes or the run is
stopped (Ctrl-C), so a blocked read returns at once, and the answer is read in chunks and refused
as soon as it grows past ``max_bytes``.

The socket is learnt from httpx's documented ``trace`` request extension (the
``connection.connect_tcp.complete`` event carries the network stream); connections are therefore
not kept alive between calls, so every call's socket is its own.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

WATCH_SECONDS = 0.1
CONNECT_SECONDS = 30.0
# httpx logs every request at INFO; the progress line already counts calls.
logging.getLogger("httpx").setLevel(logging.WARNING)
# The reason a call ended early, as the caller reports it.
DEADLINE = "deadline"
STOPPED = "stopped"


class CallFailed(Exception):
    """A call that produced no complete answer. ``kind`` is ``deadline`` (the whole-call timeout
    passed), ``stopped`` (the run was interrupted), ``too_large`` (the answer passed the size cap)
    or ``transport`` (connection refused, reset, a malformed HTTP answer)."""

    def __init__(self, kind: str, reason: str, *, partial: bytes = b"") -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.partial = partial


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    seconds: float
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class InFlight:
    """One running call, as the progress line shows it."""

    label: str
    started: float
    deadline: float
    ended: str | None = None
    _socket: socket.socket | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._socket = sock
            ended = self.ended
        if ended is not None:
            _shutdown(sock)

    def end(self, why: str) -> None:
        with self._lock:
            if self.ended is not None:
                return
            self.ended = why
            sock = self._socket
        _shutdown(sock)


def _shutdown(sock: socket.socket | None) -> None:
    # shutdown(), unlike close(), wakes a thread blocked reading the socket.
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class BoundedHttp:
    """An ``httpx`` client whose calls each have a deadline and a size cap, and are cancelled
    when ``stop`` is set. Thread-safe: one instance serves every concurrent call of a run."""

    def __init__(self, *, stop: threading.Event | None = None, connections: int = 8) -> None:
        self.stop = stop if stop is not None else threading.Event()
        self._http = httpx.Client(
            limits=httpx.Limits(max_connections=max(connections, 1), max_keepalive_connections=0),
        )
        self._calls: list[InFlight] = []
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()
        self._http.close()

    def in_flight(self) -> list[InFlight]:
        with self._lock:
            return [call for call in self._calls if call.ended is None]

    def request(
        self,
        method: str,
        url: str,
        *,
        timeout: float,
        max_bytes: int,
        label: str = "",
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """The whole answer within ``timeout`` seconds and ``max_bytes`` bytes, else
        ``CallFailed``. HTTP error statuses are answers, not failures."""
        started = time.monotonic()
        call = InFlight(label=label, started=started, deadline=started + timeout)
        self._register(call)

        def trace(event: str, info: dict[str, Any]) -> None:
            if event == "connection.connect_tcp.complete":
                stream = info.get("return_value")
                if stream is not None:
                    call.attach(stream.get_extra_info("socket"))

        try:
            return self._exchange(
                call=call, method=method, url=url, content=content, headers=headers,
                timeout=timeout, max_bytes=max_bytes, trace=trace,
            )  # fmt: skip
        finally:
            call.end("done")
            with self._lock:
                self._calls.remove(call)

    def _exchange(
        self,
        *,
        call: InFlight,
        method: str,
        url: str,
        content: bytes | None,
        headers: dict[str, str] | None,
        timeout: float,
        max_bytes: int,
        trace: Callable[[str, dict[str, Any]], None],
    ) -> Answer:
        received = bytearray()
        try:
            with self._http.stream(
                method,
                url,
                content=content,
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_SECONDS)),
                extensions={"trace": trace},
            ) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise CallFailed(
                        "too_large",
                        f"the answer declares {int(declared):,} bytes, more than the "
                        f"{max_bytes:,} allowed",
                    )
                for chunk in response.iter_bytes():
                    received += chunk
                    if len(received) > max_bytes:
                        raise CallFailed(
                            "too_large",
                            f"the answer passed {max_bytes:,} bytes and was refused",
                            partial=bytes(received[:max_bytes]),
                        )
                    if call.ended is not None or time.monotonic() >= call.deadline:
                        break
                status = response.status_code
                answered = {name.lower(): value for name, value in response.headers.items()}
        except CallFailed:
            raise
        except httpx.TimeoutException as exc:
            raise self._ended(call, timeout, partial=bytes(received)) or CallFailed(
                DEADLINE, f"no complete answer within {timeout:g} s ({type(exc).__name__})"
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
            ended = self._ended(call, timeout, partial=bytes(received))
            if ended is not None:
                raise ended from None
            raise CallFailed(
                "transport", f"{type(exc).__name__}: {exc}", partial=bytes(received)
            ) from None
        ended = self._ended(call, timeout, partial=bytes(received))
        if ended is not None:
            raise ended
        return Answer(status=status, body=bytes(received), seconds=call.elapsed, headers=answered)

    def _ended(self, call: InFlight, timeout: float, *, partial: bytes) -> CallFailed | None:
        """Why the watchdog (or the deadline check between chunks) ended the call, if it did."""
        if call.ended is None and time.monotonic() >= call.deadline:
            call.end(DEADLINE)
        if call.ended == STOPPED:
            return CallFailed(STOPPED, "the run was interrupted", partial=partial)
        if call.ended == DEADLINE:
            return CallFailed(
                DEADLINE, f"no complete answer within the {timeout:g} s deadline", partial=partial
            )
        return None

    # --- the watchdog ---

    def _register(self, call: InFlight) -> None:
        with self._lock:
            self._calls.append(call)
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="bounded-http-watchdog", daemon=True
                )
                self._watcher.start()
        if self.stop.is_set():
            call.end(STOPPED)

    def _watch(self) -> None:
        while not self._closed.wait(WATCH_SECONDS):
            now = time.monotonic()
            stopped = self.stop.is_set()
            for call in self.in_flight():
                if stopped:
                    call.end(STOPPED)
                elif now >= call.deadline:
                    call.end(DEADLINE)
