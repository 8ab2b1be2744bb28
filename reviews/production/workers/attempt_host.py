"""The attempt host: forks one process per attempt from
an interpreter that has already imported the route's libraries.

Run by the route's interpreter as ``<python> attempt_host.py <mode> <script> [<module>,…]``
with the route's ``PYTHONPATH``; ``mode`` is ``serve`` (a warm host kept for a run's attempts)
or ``once`` (a fresh interpreter for exactly one attempt, the fallback). Requests arrive on
stdin as JSON lines ``{id, input, execution, stdout, stderr}``; answers leave on stdout as
``{id, pid}`` when the attempt starts and ``{id, exit, cpu_seconds}`` when it has ended and
every process it left behind is gone. End of stdin stops the host and everything it started.

Each attempt is forked, becomes a session of its own (the launcher signals its process group)
and a child subreaper, so whatever its processes leave orphaned — a grandchild that forks or
calls ``setsid`` — is re-parented to it and killed when the worker script ends. If the attempt
itself is killed, its orphans come to the host, which is a subreaper too and kills every child
that is not a running attempt. The worker script runs as ``__main__`` with
``sys.argv = [script, input, execution]``, exactly as a fresh interpreter would run it.

Standalone: standard library only; never imports Django or the project.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import traceback
import types
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
KILLED = 128 + signal.SIGKILL


def prctl(option: int, value: int) -> None:
    """Linux ``prctl(2)`` through the C library (a public OS interface)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def children(pid: int) -> list[int]:
    """``pid``'s children, from ``/proc/<pid>/task/<tid>/children`` (every thread's)."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found  # gone meanwhile
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as listing:
                found.extend(int(child) for child in listing.read().split())
        except OSError:
            continue
    return found


def descendants(*, root: int, spare: set[int]) -> list[int]:
    """``root``'s descendants, skipping the subtrees of the children named in ``spare``."""
    found, pending = [], [child for child in children(root) if child not in spare]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children(pid))
    return found


def kill_leftovers(*, spare: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    """SIGKILL every descendant of this process (but the ``spare`` children and theirs) and
    reap the children, until none is left: a killed process's own children are re-parented here
    (this process is a subreaper) and found by the next pass."""
    me = os.getpid()
    while True:
        found = descendants(root=me, spare=set(spare))
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        reap(spare=spare)


def reap(*, spare: set[int]) -> dict[int, tuple[int, float]]:
    """Collect every exited child without blocking; the ``spare`` ones' results are returned."""
    ended: dict[int, tuple[int, float]] = {}
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        if pid in spare:
            ended[pid] = (os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)


def script_code(script: str) -> types.CodeType | None:
    """The worker script compiled once for every attempt of the host (a compile in each forked
    attempt was ~6 ms of its ~35 ms of CPU). None when it cannot be: each attempt then runs the
    file as a fresh interpreter would, and fails with that interpreter's error."""
    try:
        with open(script, "rb") as source:
            return compile(source.read(), script, "exec")
    except (OSError, SyntaxError, ValueError):
        return None


def run_as_main(*, code: types.CodeType | None, script: str) -> None:
    """The script as ``__main__``, with the globals ``runpy.run_path`` gives a script file."""
    if code is None:
        runpy.run_path(script, run_name="__main__")
        return
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __file__=script, __cached__=None, __loader__=None, __package__="", __spec__=None
    )
    sys.modules["__main__"] = module  # the attempt's own: it ends with the process
    exec(code, module.__dict__)


def run_attempt(
    *, request: dict[str, Any], script: str, host: int, compiled: types.CodeType | None = None
) -> int:
    """In the forked child: become the attempt, run the worker script, clean up after it."""
    os.setsid()
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the host gone means the run is gone
    if os.getppid() != host:
        return KILLED
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _reseed()
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
        os.close(source)
    os.chdir(request["execution"])
    sys.argv = [script, request["input"], request["execution"]]
    code = 0
    try:
        run_as_main(code=compiled, script=script)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:  # the worker's own crash: its traceback, as a fresh interpreter
        traceback.print_exc()
        code = 1
    # The attempt ends with os._exit (its stack is the host's), so exit handlers do not run;
    # logging's shutdown, the one that keeps output, is called as an interpreter exit would.
    logging = sys.modules.get("logging")
    if logging is not None:
        with contextlib.suppress(Exception):
            logging.shutdown()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    kill_leftovers()
    return code


def _reseed() -> None:
    # ``random`` reseeds itself in a forked child; numpy's global generator does not, and every
    # attempt must draw as a fresh interpreter would.
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        with contextlib.suppress(Exception):
            numpy.random.seed()


class Host:
    def __init__(self, *, script: str, once: bool) -> None:
        self.script = script
        self.once = once
        self.code = script_code(script)
        self.attempts: dict[int, str] = {}  # pid → request id
        self.served = 0
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = socket.socketpair()
        self.pending = b""

    def serve(self) -> None:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        for end in (self.wake_read, self.wake_write):
            end.setblocking(False)
        signal.set_wakeup_fd(self.wake_write.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher stops attempts, not hosts
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, "requests")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "children")
        answer({"ready": os.getpid(), "sys_path": [p for p in sys.path if p]})
        try:
            while self._step():
                pass
        finally:
            for pid in list(self.attempts):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            kill_leftovers()

    def _step(self) -> bool:
        for key, _ in self.selector.select(timeout=1.0):
            if key.data == "children":
                with contextlib.suppress(BlockingIOError):
                    while self.wake_read.recv(4096):
                        pass
                # A child ended: orphans are re-parented here only when a process dies.
                self._collect()
            elif not self._read_requests():
                return False
        return not (self.once and self.served and not self.attempts)

    def _read_requests(self) -> bool:
        try:
            chunk = os.read(0, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False  # the launcher is gone or done
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            if line.strip():
                self._start(json.loads(line))
        return True

    def _start(self, request: dict[str, Any]) -> None:
        if self.once and self.served:
            answer({"id": request["id"], "exit": 1, "cpu_seconds": 0.0})
            return
        self.served += 1
        host = os.getpid()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                self.selector.close()
                self.wake_read.close()
                self.wake_write.close()
                code = run_attempt(
                    request=request, script=self.script, host=host, compiled=self.code
                )
            finally:
                os._exit(code)
        self.attempts[pid] = request["id"]
        answer({"id": request["id"], "pid": pid})

    def _collect(self) -> None:
        ended = reap(spare=set(self.attempts))
        for pid, (code, cpu) in ended.items():
            answer({"id": self.attempts.pop(pid), "exit": code, "cpu_seconds": cpu})
        # Any other child is an orphan of an attempt that was killed: it goes too.
        kill_leftovers(spare=set(self.attempts))


def answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def warm(modules: list[str]) -> None:
    """Import the route's libraries once; an import that fails here fails again, with its own
    error, inside the attempt that needs it."""
    for name in modules:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def main(argv: list[str]) -> int:
    mode, script = argv[1], str(Path(argv[2]).resolve())
    modules = [m for m in (argv[3] if len(argv) > 3 else "").split(",") if m]
    sys.path[0] = str(Path(script).parent)  # as ``python <script>`` would have it
    host = Host(script=script, once=mode == "once")  # the script as it is now, compiled
    warm(modules)
    # What the host imported (pandas, numpy, the Gym library: ~10^5 objects) lives as long as
    # it: frozen, an attempt's collections never walk it nor touch its pages, which a forked
    # child would copy (a full collection in a Gym attempt took ~47 ms of CPU, ~2 ms frozen;
    # a Gym attempt's CPU went from ~31 to ~27.5 ms).
    gc.freeze()
    host.serve()
    return 0


def leave(code: int) -> None:
    """End the host at once: every attempt and what it left are gone and every answer is
    flushed, so nothing is left to finalise. An interpreter's exit would tear down the warmed
    libraries (pandas, numpy and its thread pool: 0.2-1 s on a busy 2-core machine) while the
    run waits for its hosts to end; the attempts end the same way (``os._exit``)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    leave(main(sys.argv))
