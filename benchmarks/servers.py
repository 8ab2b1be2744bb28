"""HTTP servers the benchmarks start (gunicorn, Datasette, `make run`) and the one way they are
timed: a new connection per request, the whole body read, as a browser's first visit."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Datasette lives in an environment of its own (`make bench` builds it; never the project's, whose
# locked libraries it would otherwise pull along): this variable names its executable, else the
# one on PATH.
DATASETTE_ENV = "ATLAS_BENCH_DATASETTE"
# The same for the project and its raw floor, so both pay the same HTTP cost. Two workers on this
# 2-core machine; the client asks one request at a time.
GUNICORN_WORKERS = "2"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen

    def get(self, *, path: str) -> tuple[int, bytes]:
        client = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            client.request("GET", path, headers={"Connection": "close"})
            response = client.getresponse()
            return response.status, response.read()
        finally:
            client.close()

    def seconds(self, *, path: str) -> float:
        started = time.perf_counter()
        status, _ = self.get(path=path)
        elapsed = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"{self.name} answered {status} for {path}")
        return elapsed

    def stop(self) -> None:
        # Each server runs in its own process group (start_new_session): end it and its workers.
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextmanager
def stopped_after() -> Iterator[dict[str, Server]]:
    """A dict to start servers into; each is stopped when the block ends, however it ends."""
    started: dict[str, Server] = {}
    try:
        yield started
    finally:
        for server in started.values():
            server.stop()


def wait_for(*, server: Server, path: str, timeout: float) -> float:
    """Seconds until ``path`` first answers 200 (polled every 20 ms); raises past ``timeout``."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}")
        try:
            if server.get(path=path)[0] == 200:
                return time.perf_counter() - started
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{server.name} did not answer {path} within {timeout:.0f} s")


def start(
    *, name: str, command: list[str], port: int, env: dict[str, str], path: str, log: Path
) -> Server:
    with log.open("ab") as output:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(name=name, port=port, process=process)
    try:
        wait_for(server=server, path=path, timeout=120)
    except Exception:
        server.stop()
        raise
    return server


def gunicorn(*, name: str, app: str, env: dict[str, str], path: str, log: Path) -> Server:
    port = free_port()
    command = [str(BIN / "gunicorn"), app, "--preload", "--workers", GUNICORN_WORKERS,
               "--bind", f"127.0.0.1:{port}", "--timeout", "120"]  # fmt: skip
    return start(name=name, command=command, port=port, env=env, path=path, log=log)


def datasette_executable() -> str:
    found = os.environ.get(DATASETTE_ENV) or shutil.which("datasette")
    if not found:
        raise RuntimeError(f"Datasette not found: set {DATASETTE_ENV} (make bench builds one)")
    return found


def datasette(*, database: Path, env: dict[str, str], path: str, log: Path) -> Server:
    port = free_port()
    # Immutable (read-only, as Datasette publishes data); facet suggestions off because the
    # project's list answers compute no such thing; the time limits raised so a 100,000-row count
    # and its facets are answered, not cut.
    command = [datasette_executable(), "serve", "--immutable", str(database), "--port", str(port),
               "--setting", "suggest_facets", "off", "--setting", "sql_time_limit_ms", "20000",
               "--setting", "facet_time_limit_ms", "20000",
               "--setting", "max_returned_rows", "1000"]  # fmt: skip
    return start(name="datasette", command=command, port=port, env=env, path=path, log=log)
