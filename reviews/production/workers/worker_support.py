"""What every native worker shares: events, native code capture, the
solver's chat calls and the error outcome.

Standalone: imported by the worker scripts beside it (their folder is ``sys.path[0]``) inside the
native interpreter, so it uses the standard library only and never imports Django or the project.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import http.client
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

CAPTURED_PREFIXES = (
    "skyrl_gym.",
    "skyrl_train.trajectory_runners.",
    "harbor.verifier.",
    "tasktrove_verify.",
    "verifyit.",
)
CAPTURED_NAMES = ("verifyit",)
COMMIT = re.compile(r"^[0-9a-f]{40}$")
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
RELAYED_HEADERS = frozenset({"authorization", "content-type", "accept"})
RELAY_TIMEOUT = 600.0
CO_OPTIMIZED = 0x1  # set on function code objects only (inspect.CO_OPTIMIZED)
# Third-party libraries the Gym library imports. They are not native code and are never captured;
# importing them before the profile hook is installed spares the hook their thousands of calls.
WARM_IMPORTS = ("numpy", "pandas", "omegaconf", "requests", "func_timeout", "pydantic")


def warm_imports() -> None:
    for name in WARM_IMPORTS:
        # Optional: a library missing here is imported (or not) by the native code later.
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def is_native_module(name: str) -> bool:
    return name in CAPTURED_NAMES or name.startswith(CAPTURED_PREFIXES)


# The native modules a forking parent (a warm attempt host) had loaded, noted just before each
# fork: ``(count, last name, its module, native names)``. The attempt then looks only at what it
# imported itself, the entries after that last one (a dict keeps insertion order). Reading every
# entry of ``sys.modules`` in a forked attempt touched ~900 modules' pages, each then copied for
# the child: ~1,100 page faults and ~5 ms of an attempt's ~35 ms of CPU.
_at_fork: tuple[int, str, Any, tuple[str, ...]] | None = None


def _note_before_fork() -> None:
    global _at_fork
    if not sys.modules:
        return
    last = next(reversed(sys.modules))
    module = sys.modules[last]
    noted = _at_fork
    if noted is not None and noted[:2] == (len(sys.modules), last) and noted[2] is module:
        return  # nothing imported since the last fork (a host imports nothing between them)
    natives = tuple(name for name in sys.modules if is_native_module(name))
    _at_fork = (len(sys.modules), last, module, natives)


os.register_at_fork(before=_note_before_fork)


def loaded_native_modules() -> list[str]:
    """The names of the native modules in ``sys.modules`` now, sorted."""
    noted = _at_fork
    if noted is None:  # not a forked attempt: a fresh interpreter's few hundred modules
        return sorted(name for name in sys.modules if is_native_module(name))
    _, last, module, found = noted
    names = set(found)
    for name in reversed(sys.modules):
        if name == last and sys.modules.get(name) is module:
            break  # everything before it was there at the fork
        if is_native_module(name):
            names.add(name)
    return sorted(name for name in names if name in sys.modules)


class EventLog:
    """``verifier-trace.jsonl``: one JSON event per line, each with its ``at`` timestamp."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: list[str] = []
        path.touch()

    def write(self, event: str, **fields: Any) -> None:
        self.names.append(event)
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps({"at": now(), "event": event, **fields}, default=str) + "\n")


class NativeCapture:
    """Records which native modules' code actually runs.

    A profile hook (cheaper than a line tracer: it fires on calls only) notes the module of every
    called function; code objects already seen are skipped, so the cost is one set lookup per call.
    """

    def __init__(self) -> None:
        self.called: set[str] = set()
        self._seen: set[Any] = set()

    def _profile(self, frame: Any, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code in self._seen:
            return
        self._seen.add(code)
        if not code.co_flags & CO_OPTIMIZED:
            return  # a module or class body runs on import; that is not a call into its code
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and is_native_module(name):
            self.called.add(name)

    def start(self) -> None:
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)

    def stop(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)

    def write(self, execution_dir: Path) -> list[dict[str, Any]]:
        """Copy every imported native module's source and write ``native-code-index.json``."""
        entries = []
        for name in loaded_native_modules():
            origin = getattr(sys.modules[name], "__file__", None)
            if not origin or not origin.endswith(".py"):
                continue
            relative = name.replace(".", "/")
            if os.path.basename(origin) == "__init__.py":
                relative += "/__init__.py"
            else:
                relative += ".py"
            target = execution_dir / "native-code" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, target)
            entry = {
                "module": name,
                "origin": os.path.abspath(origin),
                "path": f"native-code/{relative}",
                "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
                "called_in_attempt": name in self.called,
            }
            if name == "verifyit" or name.startswith("verifyit."):
                entry["package"] = verifyit_package()
            entries.append(entry)
        write_json(execution_dir / "native-code-index.json", entries)
        return entries


def verifyit_package() -> dict[str, str]:
    """verifyit's version and VCS origin from its installation record (PEP 610 direct_url.json)."""
    distribution = importlib.metadata.distribution("verifyit")
    record = json.loads(distribution.read_text("direct_url.json") or "{}")
    commit = (record.get("vcs_info") or {}).get("commit_id")
    if not isinstance(commit, str) or not COMMIT.match(commit):
        raise RuntimeError("The installed verifyit package records no 40-hex source commit")
    return {
        "version": distribution.version,
        "source_url": record.get("url", ""),
        "source_commit": commit,
    }


@contextlib.contextmanager
def captured_output(*, stdout: Path, stderr: Path):
    """Send file descriptors 1 and 2 to the verifier logs, so output of any child process the
    verifier starts is kept too, not only what Python's ``print`` writes."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with stdout.open("ab") as out, stderr.open("ab") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


SOLVER_UNAVAILABLE_EXIT = 75  # EX_TEMPFAIL: the attempt did not happen; try again later
SOLVER_UNAVAILABLE_FILE = "solver-unavailable.json"


class SolverUnavailable(Exception):
    """The solver endpoint could not be reached (refused, reset, timed out) or kept failing with
    a retryable status: no finished attempt exists, so the worker exits with
    ``SOLVER_UNAVAILABLE_EXIT`` and writes no ``attempt.json``."""


REDACTED = "[REDACTED]"


def redact(text: str, *, secrets: list[str]) -> str:
    """``text`` with every secret replaced, as it is, JSON-escaped and percent-encoded: an
    endpoint that echoes the key must not get it written into the run."""
    for secret in secrets:
        for form in {secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe="")}:
            text = text.replace(form, REDACTED)
    return text


def chat_completion(*, model: dict[str, Any], body: dict[str, Any], turn_dir: Path) -> dict:
    """One solver call, saved as ``request.json`` and ``response.json`` (no auth header; the key
    redacted from whatever the endpoint answers)."""
    write_json(turn_dir / "request.json", body)
    headers = {"Content-Type": "application/json"}
    key_env = model.get("api_key_env")
    secrets = [os.environ[key_env]] if key_env and os.environ.get(key_env) else []
    if secrets:
        headers["Authorization"] = f"Bearer {secrets[0]}"
    url = f"{model['base_url'].rstrip('/')}/chat/completions"
    attempts = int(model.get("max_retries", 4)) + 1
    backoff = float(model.get("retry_backoff_seconds", 1.0))
    data = json.dumps(body).encode("utf-8")
    for attempt in range(attempts):
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=float(model["timeout"])) as answer:
                raw = redact(answer.read().decode("utf-8"), secrets=secrets)
            (turn_dir / "response.json").write_text(raw, encoding="utf-8")
            return json.loads(raw)
        except urllib.error.HTTPError as exc:
            text = redact(exc.read().decode("utf-8", "replace"), secrets=secrets)
            (turn_dir / "http-error.txt").write_text(f"HTTP {exc.code}\n{text}\n", "utf-8")
            if exc.code not in RETRIED_STATUSES:
                raise RuntimeError(f"Solver call failed with HTTP {exc.code}") from None
            if attempt + 1 == attempts:
                raise SolverUnavailable(
                    f"HTTP {exc.code} after {attempts} tries at {url}"
                ) from None
        except (OSError, http.client.HTTPException) as exc:
            # URLError, refused or reset connections, timeouts, a truncated answer: transport.
            reason = redact(str(getattr(exc, "reason", exc)), secrets=secrets)
            (turn_dir / "http-error.txt").write_text(f"{reason}\n", "utf-8")
            if attempt + 1 == attempts:
                raise SolverUnavailable(f"{reason} after {attempts} tries at {url}") from None
        time.sleep(min(backoff * (2**attempt), 30.0))
    raise RuntimeError("Solver call failed")  # pragma: no cover - the loop always returns or raises


def solver_unavailable_exit(
    *, events: EventLog, execution_dir: Path, exc: BaseException, what: str = "Solver"
) -> int:
    """Record why no attempt happened (``what`` was unavailable: the solver, or the container
    engine) and return the exit status the launcher recognises."""
    events.write("solver_unavailable", detail=str(exc), unavailable=what)
    write_json(execution_dir / SOLVER_UNAVAILABLE_FILE, {"reason": str(exc), "unavailable": what})
    return SOLVER_UNAVAILABLE_EXIT


class CriticRecorder:
    """Saves a learned verifier's critic calls as ``verifier/critic/call-NNN/{request,response}
    .json``.

    MarinSkyRL's learned verifiers reach their critic model through the OpenAI-compatible
    ``base_url`` of each ``judges.<name>`` entry of the environment's config. For the attempt,
    each such ``base_url`` is pointed at a local forwarder that relays every call unchanged to the
    configured endpoint and keeps the request and response bodies, numbered in arrival order
    from ``call-000`` (the authorization header is relayed, never saved). Environments without
    judges are left as they are.
    """

    def __init__(self, *, env_config: Any, folder: Path) -> None:
        self.folder = folder
        self.upstreams: list[str] = []
        self._config = env_config
        self._server: Any = None
        self._count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> CriticRecorder:
        judges = self._config.get("judges") if isinstance(self._config, dict) else None
        entries = [
            entry
            for entry in (judges.values() if isinstance(judges, dict) else [])
            if isinstance(entry, dict) and isinstance(entry.get("base_url"), str)
        ]
        if not entries:
            return self
        self._server = _forwarder(self)
        port = self._server.server_address[1]
        for entry in entries:
            self.upstreams.append(entry["base_url"].rstrip("/"))
            entry["base_url"] = f"http://127.0.0.1:{port}/{len(self.upstreams) - 1}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def next_call(self) -> Path:
        with self._lock:
            number, self._count = self._count, self._count + 1
        return self.folder / f"call-{number:03d}"


def _forwarder(recorder: CriticRecorder) -> Any:
    import http.server

    class Relay(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            index, _, rest = self.path.lstrip("/").partition("/")
            upstream = f"{recorder.upstreams[int(index)]}/{rest}"
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            call = recorder.next_call()
            call.mkdir(parents=True, exist_ok=True)
            (call / "request.json").write_bytes(body)
            headers = {k: v for k, v in self.headers.items() if k.lower() in RELAYED_HEADERS}
            bearer = headers.get("Authorization", "").removeprefix("Bearer ").strip()
            secrets = [bearer] if bearer else []

            def kept(raw: bytes) -> bytes:
                return redact(raw.decode("utf-8", "replace"), secrets=secrets).encode("utf-8")

            request = urllib.request.Request(upstream, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=RELAY_TIMEOUT) as answer:
                    status, raw = answer.status, answer.read()
                (call / "response.json").write_bytes(kept(raw))
            except urllib.error.HTTPError as exc:
                status, raw = exc.code, exc.read()
                (call / "http-error.txt").write_bytes(f"HTTP {status}\n".encode() + kept(raw))
            except OSError as exc:
                (call / "http-error.txt").write_text(f"{exc}\n", "utf-8")
                status, raw = 502, json.dumps({"error": str(exc)}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *_args: Any) -> None:
            pass  # the saved calls are the record; stderr stays the worker's own

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)


def error_outcome(*, events: EventLog, exc: BaseException, turns: int) -> dict[str, Any]:
    """An exception inside the worker becomes an ``error`` verification, never a crash."""
    events.write(
        "execution_error",
        type=type(exc).__name__,
        detail=str(exc),
        traceback="".join(traceback.format_exception(exc)),
    )
    return {
        "verification": {
            "status": "error",
            "score": None,
            "passed": None,
            "reason": f"{type(exc).__name__}: {exc}",
            "diagnostics": {"exception_type": type(exc).__name__},
        },
        "verifier_executed": "verify_start" in events.names,
        "done": False,
        "turns": turns,
    }
