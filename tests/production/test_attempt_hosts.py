"""Attempt hosts: one process per attempt, forked from a warm host per route (or a
fresh interpreter when the route changed), with no descendant outliving its attempt."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.hosts import BYTECODE_CACHE_ENV, AttemptHosts, HostSpec
from reviews.production.runtime.launcher import (
    host_spec,
    prime_native_bytecode,
    start_hosts,
    start_routes,
    worker_route,
)
from reviews.production.runtime.tasks import GYM_ROUTE, HARBOR_ROUTE, expected_routes
from tests.production.helpers import load, make_review
from tests.production.test_launcher_and_client import TASK, alive, attempt, runtime_with
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

WORKERS = Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers"
REPORT = """
import json, os, sys
from pathlib import Path
out = Path(sys.argv[2])
(out / "attempt.json").write_text(json.dumps({"verification": {"status": "verified"},
    "verifier_executed": True, "done": True, "turns": 1, "parent": os.getppid(),
    "group": os.getpgid(0), "pid": os.getpid(), "argv": sys.argv, "cwd": os.getcwd()}))
"""
# Leaves a forked child and a daemon behind, each sleeping for a minute: the daemon is started
# by a middle process that calls setsid and exits at once, so it is orphaned in its own session.
LEAVES_DESCENDANTS = """
import json, os, subprocess, sys, time
from pathlib import Path
out = Path(sys.argv[2])
middle = subprocess.run([sys.executable, "-c", "import subprocess, sys; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
    " start_new_session=True, stdout=subprocess.DEVNULL); print(p.pid)"],
    stdout=subprocess.PIPE, text=True, check=True)
daemon = int(middle.stdout)
forked = os.fork()
if forked == 0:
    time.sleep(60)
    os._exit(0)
Path({pids!r}).write_text(json.dumps([daemon, forked]))
{tail}
"""


def wait_dead(pids: list[int]) -> list[int]:
    """The pids still running at the deadline (killing is asynchronous): none, unless one is
    never killed."""
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not any(alive(pid) for pid in pids), what=f"{pids} gone")
    return [pid for pid in pids if alive(pid)]


def new_host(before: set[int]) -> int:
    """The one attempt host started since ``before``. A process just started may not show its
    command line yet (exec is still setting it up), so this waits until it does."""
    [started] = wait_until(lambda: set(host_children()) - before, what="a new attempt host")
    return started


def test_attempts_fork_from_one_warm_host_until_the_route_changes(tmp_path):
    runtime = runtime_with(tmp_path, REPORT)
    hosts = AttemptHosts(cache_dir=tmp_path / "bytecode")
    try:
        first, second = (
            attempt(tmp_path, runtime, hosts=hosts),
            attempt(tmp_path, runtime, hosts=hosts),
        )
        # Both forked from the same host, not started by this process; each a session leader.
        assert first["parent"] == second["parent"] != os.getpid()
        assert first["pid"] != second["pid"] and first["group"] == first["pid"]
        execution = tmp_path / "run/tasks/0000/execution-001"
        assert second["argv"][1:] == [str(execution / "input.json"), str(execution)]
        assert second["cwd"] == str(execution) and hosts.forked_attempts == 2
        # The worker script changed: that attempt runs in a fresh interpreter, the next one in a
        # new warm host.
        script = Path(runtime["workers"]["custom"]["script"])
        script.write_text(script.read_text() + "\n# edited\n")
        fresh = attempt(tmp_path, runtime, hosts=hosts)
        renewed = attempt(tmp_path, runtime, hosts=hosts)
    finally:
        hosts.close()
    assert hosts.fresh_attempts == 1 and hosts.forked_attempts == 3
    assert len({first["parent"], fresh["parent"], renewed["parent"]}) == 3


@pytest.mark.parametrize("warm", [True, False], ids=["warm host", "fresh interpreter"])
def test_no_descendant_outlives_a_finished_attempt(tmp_path, warm):
    pids = tmp_path / "pids.json"
    runtime = runtime_with(tmp_path, LEAVES_DESCENDANTS.format(pids=str(pids), tail=REPORT))
    hosts = AttemptHosts(cache_dir=None) if warm else None
    try:
        outcome = attempt(tmp_path, runtime, hosts=hosts)
        assert outcome["done"] is True
        left = json.loads(pids.read_text())
        # The forked child and the orphaned daemon in its own session: both gone.
        assert wait_dead(left) == []
    finally:
        if hosts is not None:
            hosts.close()


@pytest.mark.parametrize("warm", [True, False], ids=["warm host", "fresh interpreter"])
def test_no_descendant_outlives_a_killed_attempt(tmp_path, warm):
    pids = tmp_path / "pids.json"
    runtime = runtime_with(
        tmp_path, LEAVES_DESCENDANTS.format(pids=str(pids), tail="time.sleep(60)")
    )
    hosts = AttemptHosts(cache_dir=None) if warm else None
    # Stopped once its descendants are running, whatever the machine's speed (a timeout of a
    # few seconds could fire before they start).
    stop = threading.Event()

    def stop_once_started() -> None:
        wait_until(lambda: pids.is_file() and pids.read_text().endswith("]"), what="descendants")
        stop.set()

    threading.Thread(target=stop_once_started, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            attempt(tmp_path, runtime, hosts=hosts, stop=stop, grace_seconds=0.2)
        assert wait_dead(json.loads(pids.read_text())) == []
    finally:
        if hosts is not None:
            hosts.close()


def test_closing_the_hosts_stops_them(tmp_path):
    runtime = runtime_with(tmp_path, REPORT)
    hosts = AttemptHosts(cache_dir=None)
    host_pid = attempt(tmp_path, runtime, hosts=hosts)["parent"]
    assert alive(host_pid)
    hosts.close()
    assert wait_dead([host_pid]) == []


def test_gym_attempts_fork_warm_and_capture_what_a_fresh_interpreter_does(
    tmp_path, write_config, checkout, monkeypatch
):
    monkeypatch.setenv(BYTECODE_CACHE_ENV, str(tmp_path / "bytecode"))
    config = write_config(rows=2)
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "2", "--output", str(output), "--jobs", "1")
    # Bytecode went to the native cache (the checkout's own files among it), none into the
    # checkout, which stays clean, nor into the run.
    cached = list((tmp_path / "bytecode").rglob("*.pyc"))
    assert any(str(checkout / "skyrl-gym") in str(path) for path in cached)
    assert not list(checkout.rglob("__pycache__"))
    assert subprocess.run(["git", "-C", str(checkout), "status", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout == ""  # fmt: skip
    assert not list(output.rglob("*.pyc"))
    # The same attempt in a fresh interpreter imports and calls the same native modules.
    execution = output / "tasks/0001/execution-000"
    again = tmp_path / "fresh"
    again.mkdir()
    subprocess.run(
        [sys.executable, str(WORKERS / "gym_worker.py"), str(execution / "input.json"), str(again)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            (f"{checkout}/skyrl-gym", f"{checkout}/skyrl-train", str(checkout))
        ), "PYTHONDONTWRITEBYTECODE": "1"},
        check=True, cwd=again, capture_output=True,
    )  # fmt: skip

    def captured(folder: Path) -> list[tuple[str, bool, str]]:
        return [
            (entry["module"], entry["called_in_attempt"], entry["sha256"])
            for entry in load(folder / "native-code-index.json")
        ]

    assert captured(execution) == captured(again)
    assert ("skyrl_gym.envs.gsm8k.env", True) in {(m, c) for m, c, _ in captured(execution)}
    assert (
        load(execution / "attempt.json")["verification"]
        == load(again / "attempt.json")["verification"]
    )


def test_an_edited_library_on_the_route_path_means_a_fresh_interpreter(tmp_path):
    library = tmp_path / "lib"
    (library / "probe").mkdir(parents=True)
    module = library / "probe" / "__init__.py"
    module.write_text("VALUE = 1\n")
    body = REPORT.replace("import json, os, sys", "import json, os, sys, probe")
    runtime = runtime_with(tmp_path, body)
    runtime["workers"]["custom"]["pythonpath"] = [str(library)]
    hosts = AttemptHosts(cache_dir=None)
    try:
        attempt(tmp_path, runtime, hosts=hosts)
        attempt(tmp_path, runtime, hosts=hosts)
        assert (hosts.forked_attempts, hosts.fresh_attempts) == (2, 0)
        module.write_text("VALUE = 2  # changed under the warm host\n")
        attempt(tmp_path, runtime, hosts=hosts)
        assert (hosts.forked_attempts, hosts.fresh_attempts) == (2, 1)
    finally:
        hosts.close()


def test_buffered_logging_is_flushed_when_a_forked_attempt_ends(tmp_path):
    log = tmp_path / "worker.log"
    body = (
        f"""
import logging, logging.handlers
target = logging.FileHandler({str(log)!r})
logging.getLogger().addHandler(logging.handlers.MemoryHandler(100, target=target))
logging.getLogger().warning("kept until shutdown")
"""
        + REPORT
    )
    hosts = AttemptHosts(cache_dir=None)
    try:
        attempt(tmp_path, runtime_with(tmp_path, body), hosts=hosts)
    finally:
        hosts.close()
    assert log.read_text() == "kept until shutdown\n"


def host_children() -> dict[int, list[str]]:
    """This process's running attempt hosts: pid → command line."""
    found = {}
    for pid in children_of(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except FileNotFoundError:
            continue  # it exited since it was listed: not running
        if any(Path(part).name == "attempt_host.py" for part in command) and alive(pid):
            found[pid] = command
    return found


def children_of(pid: int) -> list[int]:
    """Every child of ``pid``, from each of its threads' lists. A thread that ends while they are
    read (an idle HTTP watchdog, a pool's worker) hands its children to another thread, so the
    lists are read again until one pass sees every thread it listed."""
    while True:
        try:
            return [
                int(child)
                for thread in os.listdir(f"/proc/{pid}/task")
                for child in Path(f"/proc/{pid}/task/{thread}/children").read_text().split()
            ]
        except FileNotFoundError:
            continue


def test_a_host_started_early_serves_the_first_attempt(tmp_path):
    runtime = runtime_with(tmp_path, REPORT)
    hosts = AttemptHosts(cache_dir=None)
    try:
        before = set(host_children())
        start_hosts(hosts=hosts, tasks=[TASK], runtime=runtime)
        # The host runs before any attempt asked for it; the first attempt forks from it.
        early = new_host(before)
        first = attempt(tmp_path, runtime, hosts=hosts)
        assert first["parent"] == early and (hosts.forked_attempts, hosts.fresh_attempts) == (1, 0)
        # Started twice is one host.
        start_hosts(hosts=hosts, tasks=[TASK, TASK], runtime=runtime)
        assert set(host_children()) - before == {early}
    finally:
        hosts.close()
    assert wait_dead([early]) == []


def test_install_compiles_the_gym_hosts_libraries_into_the_native_cache(tmp_path, monkeypatch):
    """make install primes the native bytecode cache: pandas and numpy compiled by this
    interpreter, where a host reads them (the cache mirrors each source's absolute path)."""
    import numpy
    import pandas.core.frame

    cache = tmp_path / "native-bytecode"
    monkeypatch.setenv(BYTECODE_CACHE_ENV, str(cache))
    prime_native_bytecode()
    tag = sys.implementation.cache_tag
    for module in (numpy, pandas.core.frame):
        source = Path(module.__file__)
        cached = cache / source.parent.relative_to("/") / f"{source.stem}.{tag}.pyc"
        assert cached.is_file()


def test_an_install_whose_interpreter_cannot_start_a_host_still_installs(tmp_path, monkeypatch):
    cache = tmp_path / "native-bytecode"
    monkeypatch.setenv(BYTECODE_CACHE_ENV, str(cache))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    prime_native_bytecode()  # nothing raised: the first run fills the cache
    assert not list(cache.rglob("*.pyc"))


def test_a_closed_host_ends_at_once_without_finalising_its_libraries(tmp_path):
    """Closing a host ends it as its attempts end (``os._exit``): the attempts it served have
    answered, and the exit work of what it imported (here an exit handler) is never run."""
    library = tmp_path / "lib"
    library.mkdir()
    finalised = tmp_path / "finalised"
    (library / "heavy.py").write_text(
        f"import atexit, pathlib\natexit.register(pathlib.Path({str(finalised)!r}).touch)\n"
    )
    runtime = runtime_with(tmp_path, REPORT)
    runtime["workers"]["custom"]["pythonpath"] = [str(library)]
    hosts = AttemptHosts(cache_dir=None)
    spec = host_spec(route=worker_route(route="custom", runtime=runtime))
    hosts.start(replace(spec, warm=("heavy",)))
    host = hosts.host_for(replace(spec, warm=("heavy",)))
    assert host is not None
    hosts.close()
    assert host.process.returncode == 0 and not finalised.exists()


def test_a_contract_workers_attempt_finds_the_http_client_imported(tmp_path):
    """Forked from its route's host, a worker of the contract finds the standard library's HTTP
    client already imported; in a fresh interpreter (the fallback) it imports it itself."""
    runtime = runtime_with(tmp_path, reporting("warm", "'urllib.request' in sys.modules"))
    hosts = AttemptHosts(cache_dir=None)
    try:
        assert attempt(tmp_path, runtime, hosts=hosts)["warm"] is True
    finally:
        hosts.close()
    assert attempt(tmp_path, runtime, hosts=None)["warm"] is False


def reporting(key: str, expression: str) -> str:
    """The reporting worker, its report also holding ``key``: ``expression`` evaluated before
    the worker imports anything beyond os, sys and gc (what the attempt found at its start)."""
    first = f"import gc, os, sys\nFOUND = {expression}\nimport json"
    body = REPORT.replace("import json, os, sys", first)
    return body.replace('"parent": os.getppid(),', f'"parent": os.getppid(), "{key}": FOUND,')


def test_a_forked_attempt_finds_what_its_host_imported_frozen(tmp_path):
    """What a warm host imported is out of the collector's walks in every attempt it forks:
    an attempt's collections neither walk those objects nor copy their pages."""
    runtime = runtime_with(tmp_path, reporting("frozen", "gc.get_freeze_count()"))
    hosts = AttemptHosts(cache_dir=None)
    try:
        assert attempt(tmp_path, runtime, hosts=hosts)["frozen"] > 1_000
    finally:
        hosts.close()


EARLY_START = """
import atexit, sys
from reviews.production.runtime.hosts import AttemptHosts
start, seen = AttemptHosts.start, []
def started(self, spec):
    seen.append("reviews.production.make_review.pipeline" in sys.modules)
    return start(self, spec)
AttemptHosts.start = started
atexit.register(lambda: print(*seen, file=sys.stderr))
sys.argv = ["manage.py", "make_review", *sys.argv[1:]]
import runpy
runpy.run_path("manage.py", run_name="__main__")
"""


def test_the_command_starts_the_sources_host_before_it_loads_the_pipeline(write_config, tmp_path):
    """Run from the command line, the host a prepared source implies starts importing the Gym
    library before make_review's process imports its pipeline, so the two overlap; the run's own
    starts find it started."""
    arguments = ["--config", str(write_config()), "--n", "1", "--output", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-c", EARLY_START, *arguments],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Saved 6 reviews")
    assert done.stderr.strip().splitlines()[-1].split()[0] == "False"


def test_the_route_a_format_implies_starts_before_any_row_is_read(tmp_path):
    """Prepared rows are Gym tasks, a folder of tasks Harbor's; a manifest names each record's
    route, so nothing is started for it before its records are read."""
    assert expected_routes(source={"format": "skyrl_prepared"}) == (GYM_ROUTE,)
    assert expected_routes(source={"format": "harbor_directory"}) == (HARBOR_ROUTE,)
    assert expected_routes(source={"format": "task_manifest"}) == ()
    runtime = runtime_with(tmp_path, REPORT)
    hosts = AttemptHosts(cache_dir=None)
    try:
        before = set(host_children())
        start_routes(hosts=hosts, routes=[TASK.route], runtime=runtime)
        early = new_host(before)
        # The sample's own start finds it started: one host, and the first attempt forks from it.
        start_hosts(hosts=hosts, tasks=[TASK], runtime=runtime)
        assert attempt(tmp_path, runtime, hosts=hosts)["parent"] == early
        assert set(host_children()) - before == {early}
    finally:
        hosts.close()


def test_a_file_changed_after_the_early_start_means_a_fresh_interpreter(tmp_path):
    runtime = runtime_with(tmp_path, REPORT)
    hosts = AttemptHosts(cache_dir=None)
    try:
        start_hosts(hosts=hosts, tasks=[TASK], runtime=runtime)
        # Edited while the host may still be importing it: the host cannot be trusted.
        script = Path(runtime["workers"]["custom"]["script"])
        script.write_text(script.read_text() + "\n# edited\n")
        attempt(tmp_path, runtime, hosts=hosts)
        assert (hosts.forked_attempts, hosts.fresh_attempts) == (0, 1)
    finally:
        hosts.close()


def test_closing_kills_a_host_still_importing_and_an_unrunnable_route_is_left(tmp_path):
    library = tmp_path / "lib"
    library.mkdir()
    imported = tmp_path / "imported"
    (library / "slow_import.py").write_text(
        f"import pathlib, time\ntime.sleep(20)\npathlib.Path({str(imported)!r}).touch()\n"
    )
    spec = HostSpec(
        python=sys.executable,
        script=str(tmp_path / "worker.py"),
        pythonpath=(str(library),),
        warm=("slow_import",),
    )
    hosts = AttemptHosts(cache_dir=None)
    before = set(host_children())
    hosts.start(spec)
    # A Gym task without runtime.gym_python: nothing starts; its attempt refuses as before.
    gym_task = replace(TASK, route=GYM_ROUTE)
    start_hosts(hosts=hosts, tasks=[gym_task], runtime={"marinskyrl_checkout": str(tmp_path)})
    importing = new_host(before)
    hosts.close()
    # Killed, not left to finish its import (which would mark it) and exit on its own.
    assert wait_dead([importing]) == []
    assert set(host_children()) == before and not imported.exists()


def test_a_forked_attempt_runs_the_hosts_compiled_script_as_main(tmp_path):
    """The host compiles the worker script once; each attempt runs it as ``__main__`` with the
    globals ``runpy.run_path`` gives a script file, in a module of its own."""
    expression = (
        "(__name__, __file__, __package__, __spec__, sys.modules['__main__'].__dict__ is "
        "globals(), sys.argv[0])"
    )
    runtime = runtime_with(tmp_path, reporting("main", expression))
    script = runtime["workers"]["custom"]["script"]
    hosts = AttemptHosts(cache_dir=None)
    try:
        forked = [attempt(tmp_path, runtime, hosts=hosts)["main"] for _ in range(2)]
    finally:
        hosts.close()
    assert hosts.forked_attempts == 2
    assert forked == [["__main__", script, "", None, True, script]] * 2


def test_a_worker_script_that_does_not_compile_fails_each_attempt_as_an_interpreter_would(
    tmp_path,
):
    runtime = runtime_with(tmp_path, "import sys\ndef broken(:\n    pass\n")
    hosts = AttemptHosts(cache_dir=None)
    try:
        with pytest.raises(ReviewProductionError, match="Native worker failed"):
            attempt(tmp_path, runtime, hosts=hosts)
    finally:
        hosts.close()
    with pytest.raises(ReviewProductionError, match="Native worker failed"):
        attempt(tmp_path, runtime, hosts=None)
    assert hosts.forked_attempts == 1
    logs = sorted((tmp_path / "run/tasks/0000").glob("execution-*/worker.stderr"))
    assert len(logs) == 2
    assert all("SyntaxError: invalid syntax" in log.read_text() for log in logs)
