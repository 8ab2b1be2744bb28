"""Attempt hosts: where a native attempt's process comes from.

Every attempt is still one process of its own, forked by an attempt host
(``workers/attempt_host.py``) running the route's interpreter. A run keeps one *warm* host per
route: it imports the route's libraries (for the Gym route, the Gym library and what it imports)
once, and each attempt is forked from it, so an attempt no longer pays for the interpreter's start
and those imports. When the route's interpreter, worker scripts or native checkout changed since
the warm host started, the attempt runs in a fresh interpreter instead (a host started for that
attempt alone), and the stale host is retired. Without ``AttemptHosts`` every attempt gets a fresh
interpreter.

With a ``cache_dir`` the hosts compile to a bytecode cache there (``PYTHONPYCACHEPREFIX``, by
default per user and kept across runs: ``native_bytecode_cache``): the checkout and the
environment stay free of ``__pycache__``, and neither a warm host nor a fresh interpreter
recompiles pandas, numpy and the Gym library. Without one, no bytecode is written at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reviews.production.runtime.errors import ReviewProductionError

HOST_SCRIPT = Path(__file__).resolve().parent.parent / "workers" / "attempt_host.py"
# What a warm Gym host imports before forking: the worker's own modules, the libraries the Gym
# library imports (worker_support.WARM_IMPORTS) and the Gym library with its registry.
GYM_WARM_MODULES = (
    "worker_support",
    "gym_contract",
    "numpy",
    "pandas",
    "omegaconf",
    "requests",
    "func_timeout",
    "pydantic",
    "skyrl_gym",
    "skyrl_gym.envs",
    "urllib.request",
    "http.server",
)
# What any other route's host imports: the standard library's JSON and HTTP client, with which a
# worker of the contract reads its input, calls the model endpoint and writes attempt.json
# (importing urllib.request was ~40 ms of each forked attempt's CPU).
CONTRACT_WARM_MODULES = ("json", "urllib.request")
STARTUP_SECONDS = 600.0
HOST_STOPPED = "The native attempt host has stopped"
# The native environments' bytecode cache: this variable, else the user's cache folder.
BYTECODE_CACHE_ENV = "ATLAS_NATIVE_BYTECODE_CACHE"


def native_bytecode_cache() -> Path:
    """Where native interpreters compile to (``PYTHONPYCACHEPREFIX``), kept across runs: one
    cache serves every interpreter and checkout, because a cached file is named by its source's
    absolute path and Python version and is recompiled when its source changes."""
    configured = os.environ.get(BYTECODE_CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rl-data-atlas" / "native-bytecode"


@dataclass(frozen=True)
class HostSpec:
    """One route's interpreter, worker script, ``PYTHONPATH`` and what its host imports."""

    python: str
    script: str
    pythonpath: tuple[str, ...]
    warm: tuple[str, ...] = ()


class HostedAttempt:
    """A running attempt, with the part of ``subprocess.Popen`` the launcher uses: ``pid`` (also
    its process group: the attempt is a session of its own), ``wait`` and ``poll``."""

    def __init__(self, *, host: HostProcess, request_id: str) -> None:
        self.host = host
        self.request_id = request_id
        self.pid = 0
        self.returncode: int | None = None
        self.cpu_seconds = 0.0
        self._started = threading.Event()
        self._ended = threading.Event()

    def _on_message(self, message: dict[str, Any]) -> None:
        if "pid" in message:
            self.pid = int(message["pid"])
            self._started.set()
        elif "exit" in message:
            self.returncode = int(message["exit"])
            self.cpu_seconds = float(message.get("cpu_seconds") or 0.0)
            self._started.set()
            self._ended.set()

    def _host_gone(self) -> None:
        if self.returncode is None:
            self.returncode = -9
        self._started.set()
        self._ended.set()

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(cmd=str(self.host.spec.script), timeout=timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self._ended.is_set() else None


class HostProcess:
    """One attempt host: started, asked for attempts over its stdin, answered on its stdout.
    Constructing one starts its interpreter without waiting; ``wait_ready`` waits until it has
    imported what it warms up and can fork attempts."""

    def __init__(
        self, *, spec: HostSpec, env: dict[str, str], once: bool, stderr: IO[bytes] | int
    ) -> None:
        self.spec = spec
        self.once = once
        self.process = subprocess.Popen(
            [spec.python, str(HOST_SCRIPT), "once" if once else "serve", spec.script,
             ",".join(spec.warm)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            start_new_session=True,  # a Ctrl-C at the terminal reaches make_review only
        )  # fmt: skip
        self.cpu_seconds = 0.0
        self._lock = threading.Lock()
        self._attempts: dict[str, HostedAttempt] = {}
        self._count = 0
        self._ready = threading.Event()
        self.ready = False  # its "ready" answer arrived
        self.sys_path: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def wait_ready(self) -> HostProcess:
        """Block until the host can fork attempts; a host that ended first is closed and
        refused."""
        self._ready.wait(STARTUP_SECONDS)
        if not self.ready or self.process.poll() is not None:
            self.close()
            raise ReviewProductionError(f"Cannot start the native attempt host {self.spec.python}")
        return self

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "ready" in message:
                self.sys_path = list(message.get("sys_path") or [])
                self.ready = True
                self._ready.set()
                continue
            with self._lock:
                attempt = self._attempts.get(message["id"])
                if "exit" in message:
                    self._attempts.pop(message["id"], None)
                    self.cpu_seconds += float(message.get("cpu_seconds") or 0.0)
            if attempt is not None:
                attempt._on_message(message)
        self._ready.set()
        with self._lock:
            orphaned, self._attempts = list(self._attempts.values()), {}
        for attempt in orphaned:
            attempt._host_gone()

    def start(self, *, input_path: Path, execution: Path, stdout: Path, stderr: Path) -> Any:
        with self._lock:
            self._count += 1
            request_id = str(self._count)
            attempt = HostedAttempt(host=self, request_id=request_id)
            self._attempts[request_id] = attempt
            request = {"id": request_id, "input": str(input_path), "execution": str(execution),
                       "stdout": str(stdout), "stderr": str(stderr)}  # fmt: skip
            try:
                assert self.process.stdin is not None
                self.process.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
                self.process.stdin.flush()
            except OSError:
                self._attempts.pop(request_id, None)
                raise ReviewProductionError(HOST_STOPPED) from None
        attempt._started.wait()
        if attempt.pid == 0:
            raise ReviewProductionError(HOST_STOPPED)
        return attempt

    def close(self) -> None:
        """End of stdin stops the host: it kills what it still runs and exits. One still
        importing has started nothing yet and is killed at once."""
        if not self.ready and self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=5)


def host_environment(*, pythonpath: tuple[str, ...], cache_dir: Path | None) -> dict[str, str]:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "PYTHONUNBUFFERED": "1",
    }
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment.pop("PYTHONPYCACHEPREFIX", None)
    if cache_dir is None:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        environment["PYTHONPYCACHEPREFIX"] = str(cache_dir)
    return environment


def fingerprint(*, spec: HostSpec, sys_path: list[str]) -> tuple[Any, ...]:
    """What a warm host's imports depend on, cheaply: the interpreter, the worker scripts, every
    ``.py`` file of the packages on the route's ``PYTHONPATH`` (path, size, mtime) and the
    directories on the host's ``sys.path`` (a package installed or removed changes them)."""
    return file_fingerprint(spec=spec) + path_fingerprint(sys_path=sys_path)


def file_fingerprint(*, spec: HostSpec) -> tuple[Any, ...]:
    """The files part of ``fingerprint``, taken before a host starts importing them: a file
    changed while it imports counts as changed under it."""
    stats: list[Any] = [_stat(Path(spec.python).resolve()), _stat(Path(spec.script))]
    stats.extend(_stat(path) for path in sorted(HOST_SCRIPT.parent.glob("*.py")))
    for entry in spec.pythonpath:
        stats.extend(_tree_stats(Path(entry)))
    return tuple(stats)


def path_fingerprint(*, sys_path: list[str]) -> tuple[Any, ...]:
    return tuple(_stat(Path(entry)) for entry in sys_path)


def _tree_stats(root: Path) -> Iterator[Any]:
    """The ``.py`` files of ``root``'s packages and modules (hidden folders skipped)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        if entry.is_file() and entry.name.endswith(".py"):
            yield _stat(Path(entry.path))
        elif entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            for folder, dirs, files in os.walk(entry.path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield _stat(Path(folder) / name)


def _stat(path: Path) -> tuple[str, int, int]:
    try:
        status = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), status.st_size, status.st_mtime_ns)


class AttemptHosts:
    """A run's warm hosts, one per route, and the fresh-interpreter fallback."""

    def __init__(self, *, cache_dir: Path | None, stderr_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir
        self.stderr_dir = stderr_dir
        self._lock = threading.Lock()
        self._warm: dict[HostSpec, tuple[HostProcess, tuple[Any, ...]]] = {}
        # Started ahead of the first attempt (``start``), with their files' fingerprint.
        self._starting: dict[HostSpec, tuple[HostProcess, tuple[Any, ...]]] = {}
        self._retired: list[HostProcess] = []
        self._logs: list[IO[bytes]] = []
        self._closed = False
        self.fresh_attempts = 0
        self.forked_attempts = 0

    def start(self, spec: HostSpec) -> None:
        """Start the route's warm host now without waiting for it, so the run's first attempts
        wait only for what is left of its start-up. A host that cannot start is left for the
        first attempt to report, as if it had not been started early."""
        with self._lock:
            if self._closed or spec in self._warm or spec in self._starting:
                return
            with contextlib.suppress(OSError):
                self._starting[spec] = self._launch(spec)

    def _launch(self, spec: HostSpec) -> tuple[HostProcess, tuple[Any, ...]]:
        files = file_fingerprint(spec=spec)
        host = HostProcess(
            spec=spec,
            env=host_environment(pythonpath=spec.pythonpath, cache_dir=self.cache_dir),
            once=False,
            stderr=self._stderr(),
        )
        return host, files

    def host_for(self, spec: HostSpec) -> HostProcess | None:
        """The route's warm host (started on first use unless ``start`` did it earlier), or
        None when its inputs changed since it started: that attempt runs in a fresh
        interpreter."""
        with self._lock:
            if spec not in self._warm:
                starting = self._starting.pop(spec) if spec in self._starting else None
                host, files = starting or self._launch(spec)
                host.wait_ready()
                self._warm[spec] = (host, files + path_fingerprint(sys_path=host.sys_path))
            host, seen = self._warm[spec]
        # Outside the lock: the run's attempts start together, and each stats the route's files.
        if host.process.poll() is None and fingerprint(spec=spec, sys_path=host.sys_path) == seen:
            return host
        with self._lock:
            # Changed under the warm host: retire it (once); a later attempt starts a new one.
            if self._warm.get(spec, (None,))[0] is host:
                del self._warm[spec]
                self._retired.append(host)
        return None

    def _stderr(self) -> IO[bytes] | int:
        if self.stderr_dir is None:
            return subprocess.DEVNULL
        self.stderr_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.stderr_dir / f"attempt-host-{len(self._logs):03d}.stderr", "ab")  # noqa: SIM115
        self._logs.append(log)
        return log

    def close(self) -> None:
        with self._lock:
            self._closed = True
            hosts = [host for host, _ in (*self._warm.values(), *self._starting.values())]
            hosts += self._retired
            self._warm, self._starting, self._retired = {}, {}, []
        for host in hosts:
            host.close()
        for log in self._logs:
            log.close()


@contextlib.contextmanager
def hosted(
    *, hosts: AttemptHosts | None, spec: HostSpec, stderr: IO[bytes]
) -> Iterator[tuple[HostProcess, bool]]:
    """The host an attempt runs in: the warm one when it can be used, else a fresh interpreter
    for this attempt alone (closed when the attempt is over). Yields ``(host, forked_warm)``."""
    warm = hosts.host_for(spec) if hosts is not None else None
    if warm is not None:
        hosts.forked_attempts += 1  # type: ignore[union-attr]
        yield warm, True
        return
    cache = hosts.cache_dir if hosts is not None else None
    if hosts is not None:
        hosts.fresh_attempts += 1
    fresh = HostProcess(
        spec=HostSpec(python=spec.python, script=spec.script, pythonpath=spec.pythonpath),
        env=host_environment(pythonpath=spec.pythonpath, cache_dir=cache),
        once=True,
        stderr=stderr,
    ).wait_ready()
    try:
        yield fresh, False
    finally:
        fresh.close()
