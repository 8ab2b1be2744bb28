"""The tools' HTTP client on its own: TLS, proxies from the environment, its connection slots,
and what it costs a tool to load. The deadline, the size cap and Ctrl-C are held through the
model and Atlas clients (test_launcher_and_client, test_real_server_behaviours, hostile tests).
"""

from __future__ import annotations

import dataclasses
import http.server
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviews.production.runtime.bounded_http import DEADLINE, BoundedHttp, CallFailed
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


class Recording(http.server.BaseHTTPRequestHandler):
    """Answers every GET with its own request line; a server's ``hold`` event, when set up,
    keeps the answer back until the test releases it."""

    def do_GET(self) -> None:
        server = self.server
        server.lines.append(self.requestline)  # type: ignore[attr-defined]
        server.arrived.set()  # type: ignore[attr-defined]
        hold = server.hold  # type: ignore[attr-defined]
        if hold is not None:
            hold.wait(timeout=30)
        body = self.requestline.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(*, tls: ssl.SSLContext | None = None, hold: threading.Event | None = None):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording)
        server.lines, server.arrived, server.hold = [], threading.Event(), hold  # type: ignore[attr-defined]
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made by the system's openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_an_https_endpoint_is_verified_against_the_bundle_the_environment_names(
    serve, certificate, monkeypatch
) -> None:
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = serve(tls=context)
    url = f"https://127.0.0.1:{server.server_address[1]}/v1/models?x=1"
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    answer = BoundedHttp().request("GET", url, timeout=30, max_bytes=1000)
    assert (answer.status, answer.text) == (200, "GET /v1/models?x=1 HTTP/1.1")

    monkeypatch.delenv("SSL_CERT_FILE")  # certifi's bundle does not know this certificate
    with pytest.raises(CallFailed) as refused:
        BoundedHttp().request("GET", url, timeout=30, max_bytes=1000)
    assert refused.value.kind == "transport"
    assert "CERTIFICATE_VERIFY_FAILED" in refused.value.reason


def test_a_proxy_named_in_the_environment_carries_plain_calls_unless_bypassed(
    serve, monkeypatch
) -> None:
    proxy = serve()
    monkeypatch.setenv("HTTP_PROXY", f"http://user:p%40ss@127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    answer = BoundedHttp().request(
        "GET", "http://models.invalid:8080/v1/models", timeout=30, max_bytes=1000
    )
    assert answer.text == "GET http://models.invalid:8080/v1/models HTTP/1.1"

    monkeypatch.setenv("NO_PROXY", "models.invalid")
    with pytest.raises(CallFailed) as direct:
        BoundedHttp().request("GET", "http://models.invalid:8080/v1", timeout=30, max_bytes=1000)
    assert direct.value.kind == "transport"
    assert len(proxy.lines) == 1


@dataclasses.dataclass
class Held:
    """A call the server holds until ``release`` is set, made by ``http`` in a thread of its own;
    its answer is appended to ``answers`` when the server lets it go."""

    http: BoundedHttp
    server: Any
    url: str
    release: threading.Event
    holder: threading.Thread
    answers: list[Any]


def held_call(*, serve, path: str, connections: int) -> Held:
    release = threading.Event()
    server = serve(hold=release)
    url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    http = BoundedHttp(connections=connections)
    answers: list[Any] = []
    holder = threading.Thread(
        target=lambda: answers.append(http.request("GET", url, timeout=60, max_bytes=1000))
    )
    holder.start()
    assert server.arrived.wait(timeout=30)
    return Held(http=http, server=server, url=url, release=release, holder=holder, answers=answers)


def test_a_call_waits_for_a_free_connection_within_its_own_deadline(serve) -> None:
    held = held_call(serve=serve, path="/slow", connections=1)
    try:
        with pytest.raises(CallFailed) as waited:
            held.http.request("GET", held.url, timeout=0.3, max_bytes=1000)
        assert waited.value.kind == DEADLINE
        assert len(held.server.lines) == 1  # the second call never reached the server
    finally:
        held.release.set()
        held.holder.join(timeout=30)
    assert [answer.status for answer in held.answers] == [200]


def watchdogs(*, besides: set[threading.Thread]) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate()
            if thread.name == "bounded-http-watchdog" and thread not in besides]  # fmt: skip


def test_the_watchdog_lives_while_a_call_is_in_flight_and_not_after(serve) -> None:
    # A client nobody closes (a tool that raised half-way, a test) must not keep a thread per
    # client for the rest of the process; the next call starts a watchdog again.
    before = set(threading.enumerate())
    held = held_call(serve=serve, path="/held", connections=2)
    try:
        assert len(watchdogs(besides=before)) == 1  # started with the call, alive while held
        # While one call is held, another past its deadline is still ended by the watchdog.
        held.server.arrived.clear()
        with pytest.raises(CallFailed) as overdue:
            held.http.request("GET", held.url, timeout=0.3, max_bytes=1000)
        assert overdue.value.kind == DEADLINE
    finally:
        held.release.set()
        held.holder.join(timeout=60)
    assert [answer.status for answer in held.answers] == [200]
    wait_until(lambda: not watchdogs(besides=before), what="the idle client's watchdog ended")
    assert held.http.request("GET", held.url, timeout=30, max_bytes=1000).status == 200
    wait_until(lambda: not watchdogs(besides=before), what="the next call's watchdog ended too")


@pytest.mark.parametrize("address", ["ftp://127.0.0.1/x", "http:///no-host", "http://h:99999/"])
def test_an_address_that_is_not_http_is_a_transport_failure(address: str) -> None:
    with pytest.raises(CallFailed) as refused:
        BoundedHttp().request("GET", address, timeout=5, max_bytes=10)
    assert refused.value.kind == "transport"
    assert refused.value.reason.startswith("InvalidURL")


def test_the_model_client_loads_no_third_party_http_library() -> None:
    # A reviewer pays every import of make_review's start-up: the standard library's client is
    # already loaded, where httpx (with its command-line extras) cost ~0.1 s of CPU.
    code = (
        "import sys; import reviews.production.runtime.model_client, "
        "reviews.production.runtime.atlas_client; "
        "print(sorted(m for m in ('httpx', 'httpcore', 'certifi') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
