"""The page-load floor's replay: the page's answer (headers and bytes) kept from the origin's
first, every other path passed to the origin each time."""

from __future__ import annotations

import collections
import contextlib
import http.client
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchmarks import replay_server, servers
from benchmarks.replay_server import write_answer

ROOT = Path(__file__).resolve().parent.parent
PAGE = "/reviews/r1/?tab=tasks"
POLICY = "default-src 'self'; script-src 'self'"


class Origin(ThreadingHTTPServer):
    """A page with the headers a browser acts on, an asset, and a count of what was asked."""

    daemon_threads = True

    def __init__(self, *, page_status: int = 200) -> None:
        self.asked: collections.Counter[str] = collections.Counter()
        self.page_status = page_status
        super().__init__(("127.0.0.1", 0), OriginHandler)


class OriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Origin

    def do_GET(self) -> None:
        self.server.asked[self.path] += 1
        if self.path == PAGE:
            status, body = self.server.page_status, b"<!doctype html><p>page</p>"
            headers = [("Content-Type", "text/html; charset=utf-8"),
                       ("Content-Security-Policy", POLICY),
                       ("Cross-Origin-Opener-Policy", "same-origin")]  # fmt: skip
        else:
            asked = self.server.asked[self.path]
            status, body = 200, f"asset {self.path} #{asked}".encode()
            headers = [("Content-Type", "text/javascript")]
        write_answer(self, (status, headers, body))

    def log_message(self, format: str, *args: object) -> None:
        return


@contextlib.contextmanager
def serving(*, page_status: int = 200) -> Iterator[Origin]:
    server = Origin(page_status=page_status)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def origin() -> Iterator[Origin]:
    with serving() as server:
        yield server


def replay_command(*, origin_port: int, port: int) -> list[str]:
    return replay_server.command(origin_port=origin_port, port=port, page=PAGE)


def get(*, port: int, path: str) -> tuple[int, http.client.HTTPMessage, bytes]:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        client.request("GET", path)
        response = client.getresponse()
        return response.status, response.headers, response.read()
    finally:
        client.close()


def test_the_page_is_answered_from_memory_with_its_headers_and_assets_pass_through(
    origin, tmp_path
):
    port = servers.free_port()
    replay = servers.start(
        name="replay", command=replay_command(origin_port=origin.server_port, port=port),
        port=port, env={}, path=PAGE, log=tmp_path / "replay.log",
    )  # fmt: skip
    try:
        for _ in range(3):
            status, headers, body = get(port=port, path=PAGE)
            assert (status, body) == (200, b"<!doctype html><p>page</p>")
            # The headers that change how a browser loads the page are the origin's.
            assert headers["Content-Security-Policy"] == POLICY
            assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
            assert headers.get_all("Date") in (None, [headers["Date"]])  # written once
        first = get(port=port, path="/static/review.js")
        second = get(port=port, path="/static/review.js")
    finally:
        replay.stop()
    # The page was asked of the origin once, when the replay started; each asset every time.
    assert origin.asked[PAGE] == 1
    assert origin.asked["/static/review.js"] == 2
    assert (first[2], second[2]) == (b"asset /static/review.js #1", b"asset /static/review.js #2")
    assert first[1]["Content-Type"] == "text/javascript"


def test_a_page_the_origin_does_not_answer_is_refused_at_start(tmp_path):
    with serving(page_status=404) as server:
        finished = subprocess.run(
            replay_command(origin_port=server.server_port, port=servers.free_port()),
            capture_output=True, text=True, timeout=120, cwd=ROOT,
        )  # fmt: skip
    assert finished.returncode == 1
    assert f"{PAGE} answered 404 at the origin" in finished.stderr


def test_make_bench_runs_the_page_load_benchmark_and_not_its_helper():
    from benchmarks.run import discover

    found = discover()
    assert "page_load" in found
    assert "replay_server" not in found  # a helper: run as a benchmark it exits 2 without flags
