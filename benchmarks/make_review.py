"""Benchmark: make_review against a local model server with a fixed 100 ms latency per call.

n = 24 tasks, --jobs 8. Reports the wall time against the ideal ``calls × latency / jobs`` (target:
ideal / wall ≥ 0.7 on both routes) measured as a reviewer runs it: a fresh process,
``python manage.py make_review …`` (Django's set-up, the imports, the task file's read, the attempt
host's start and the process's exit included), the median of ``--repeat`` runs, each with the
machine's load average beside it. The tool's own overhead per task, excluding model time and the
native verifier's own time (target ≤ 50 ms), is the CPU of an in-process run.

Two native routes are measured:

- ``gym``: the real ``skyrl_gym`` gsm8k environment in a MarinSkyRL-shaped checkout. Each attempt is
  a process forked from the run's warm attempt host, which imported the Gym library (and pandas)
  once. Reported too: native CPU per attempt — every worker and host process —
  beyond the environment's own verification work (target ≤ 100 ms), and the wall time against
  the ideal (target ≥ 0.5× on a 2-core machine).
- ``contract``: a standard-library worker speaking the same worker contract (one solver call, a
  string comparison as verifier). It isolates make_review's own orchestration from the verifier.

Run: ``DJANGO_SETTINGS_MODULE=config.settings_test .venv/bin/python benchmarks/make_review.py``
(no database is used; the fresh processes run as a reviewer's do, where ``manage.py`` runs
make_review without the project's settings or apps).

The gym route also reports its judge prompts: prompt tokens per judge call (median,
max) and the share of them a prefix cache can reuse across the three judges of a task and from the
previous task, without a known context and with an 8,192-token one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.report import Row, emit, emit_against_ideal, emit_limit  # noqa: E402
from reviews.production.make_review.pipeline import RunOptions, make_review  # noqa: E402
from reviews.production.runtime.hosts import (  # noqa: E402
    BYTECODE_CACHE_ENV,
    AttemptHosts,
    native_bytecode_cache,
)
from reviews.production.runtime.launcher import host_spec, worker_route  # noqa: E402
from tests.model_server import approximate_tokens  # noqa: E402
from tests.production.conftest import (  # noqa: E402
    build_checkout,
    gsm8k_blocks,
    gsm8k_rows,
    write_parquet,
)

CONTRACT_WORKER = textwrap.dedent(
    """
    import json, re, sys, time, urllib.request
    from datetime import datetime, timezone
    from pathlib import Path
    data = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    now = lambda: datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    body = {**data["model"]["parameters"], "model": data["model"]["name"],
            "messages": data["task"]["prompt"], "stream": False, "n": 1}
    (out / "solver/turn-000").mkdir(parents=True)
    (out / "solver/turn-000/request.json").write_text(json.dumps(body))
    request = urllib.request.Request(data["model"]["base_url"] + "/chat/completions",
        data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    raw = urllib.request.urlopen(request).read().decode()
    (out / "solver/turn-000/response.json").write_text(raw)
    answer = json.loads(raw)["choices"][0]["message"]["content"]
    started = time.perf_counter()
    found = re.search("#### (\\\\-?[0-9.,]+)", answer)
    truth = data["task"]["extras"]["reward_spec"]["ground_truth"]
    score = 1.0 if found and found.group(1) == truth else 0.0
    verify_seconds = time.perf_counter() - started
    (out / "verifier-trace.jsonl").write_text(
        json.dumps({"at": now(), "event": "verify_start"}) + "\\n"
        + json.dumps({"at": now(), "event": "verify_end", "reward": score}) + "\\n")
    (out / "attempt.json").write_text(json.dumps({"verification": {"status": "verified",
        "score": score, "passed": score == 1.0, "reason": None, "diagnostics": {}},
        "verifier_executed": True, "done": True, "turns": 1}))
    """
)


def write_config(
    root: Path, server: ServerProcess, checkout: Path, route: str, model: dict | None = None
) -> Path:
    tasks = write_parquet(root / "data" / "train.parquet", gsm8k_rows(200))
    blocks = gsm8k_blocks(checkout=checkout, tasks=tasks, worker_timeout=600)
    if route == "contract":
        script = root / "contract_worker.py"
        script.write_text(CONTRACT_WORKER)
        blocks["runtime"]["workers"] = {
            "skyrl_gym": {"python": sys.executable, "script": str(script), "pythonpath": []}
        }
    config = {
        "model": {
            "name": "bench/model",
            "base_url": server.base_url,
            "timeout": 30,
            "parameters": {"temperature": 0.0},
            **(model or {}),
        },
        **blocks,
    }
    path = root / f"config-{route}{'-context' if model else ''}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def worker_seconds(run_dir: Path) -> list[float]:
    """Each attempt's worker wall time: from its input.json to its attempt.json."""
    times = []
    for execution in sorted(run_dir.glob("tasks/*/execution-*")):
        start = (execution / "input.json").stat().st_mtime
        end = (execution / "attempt.json").stat().st_mtime
        times.append(end - start)
    return times


SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.model_server import ModelServer
from tests.production.review_model import ReviewModel
server = ModelServer(default=ReviewModel(), latency={latency!r}).start()
print(server.base_url, flush=True)
sys.stdin.read()
"""


class ServerProcess:
    """The test model server in its own process, so its JSON work does not compete with
    make_review for this interpreter's GIL (a real endpoint is another machine)."""

    def __init__(self, latency: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(root=str(ROOT), latency=latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self.process.stdout.readline().strip()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


def startup_seconds() -> float:
    """One-time start-up paid by any process that validates collections: importing jsonschema
    with its format checkers (publication uses the same checks)."""
    code = (
        "import time; t = time.process_time(); "
        "from reviews.production.format.collection_checks import shipped_validator; "
        "shipped_validator(); "
        "print(time.process_time() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def call_count(run_dir: Path) -> int:
    """Model calls made for a run: every call-NNN folder and every solver turn."""
    return len(list(run_dir.rglob("call-*"))) + len(list(run_dir.rglob("solver/turn-*")))


def fresh_run(*, config: Path, n: int, jobs: int, output: Path) -> tuple[float, float]:
    """One ``manage.py make_review`` as a reviewer starts it, in a process of its own: its wall
    time from start to exit and the 1-minute load average when it ended. The reviewer's
    environment names no settings and no database (make_review needs none; `make bench` sets
    both for the benchmarks that do, and the default settings refuse a database URL without a
    secret key)."""
    unset = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL")
    env = {key: value for key, value in os.environ.items() if key not in unset}
    command = [sys.executable, "manage.py", "make_review", "--config", str(config), "--n",
               str(n), "--jobs", str(jobs), "--output", str(output)]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - started, os.getloadavg()[0]


def measure(
    *, route: str, n: int, jobs: int, latency: float, root: Path, checkout: Path, repeat: int
) -> dict:
    server = ServerProcess(latency)
    try:
        config = write_config(root / route, server, checkout, route)
        host = host_startup(config=config)
        fresh = [
            fresh_run(config=config, n=n, jobs=jobs, output=root / route / f"run-fresh-{index}")
            for index in range(repeat)
        ]
        fresh_calls = call_count(root / route / "run-fresh-0")
        results = {}
        for label, job_count in (("concurrent", jobs), ("sequential", 1)):
            output = root / route / f"run-{label}"
            started, cpu = time.perf_counter(), time.process_time()
            native = children_cpu()
            make_review(
                options=RunOptions(config=config, n=n, output=output, jobs=job_count),
                stderr=io.StringIO(),
            )
            wall = time.perf_counter() - started
            native = children_cpu() - native
            results[label] = {
                "wall": wall,
                # This process's CPU only: workers are child processes, the model another.
                "cpu": time.process_time() - cpu,
                "calls": call_count(output),
                "workers": worker_seconds(output),
                "native": native_figures(run_dir=output, cpu=native - host["warm"], n=n),
            }
    finally:
        server.close()
    concurrent, sequential = results["concurrent"], results["sequential"]
    ideal = concurrent["calls"] * latency / jobs
    walls = [wall for wall, _ in fresh]
    fresh_wall = statistics.median(walls)
    # make_review's own work (sampling, evidence bundles, validation, files, launching workers) is
    # the CPU time of this process: native workers are child processes and the model is another
    # process, so neither is counted. The one-time jsonschema import is reported apart.
    startup = startup_seconds()
    own = concurrent["cpu"] - startup
    verifier_own = (sum(sequential["workers"]) - n * latency) / n
    return {
        "route": route,
        "n": n,
        "jobs": jobs,
        "latency_ms": latency * 1000,
        "calls": fresh_calls,
        "fresh_wall_s": round(fresh_wall, 2),
        "fresh_walls_s": [round(wall, 2) for wall in walls],
        "loads": [round(load, 1) for _, load in fresh],
        "ideal_s": round(ideal, 2),
        "ideal_over_fresh_wall": round(ideal / fresh_wall, 2),
        "in_process_wall_s": round(concurrent["wall"], 2),
        "ideal_over_in_process_wall": round(ideal / concurrent["wall"], 2),
        "sequential_wall_s": round(sequential["wall"], 2),
        "native_worker_s_per_task": round(verifier_own, 3),
        "startup_cpu_s": round(startup, 2),
        "ideal_over_wall_after_startup": round(ideal / (concurrent["wall"] - startup), 2),
        "own_cpu_ms_per_task": round(own / n * 1000, 1),
        **concurrent["native"],
        "host_startup_cpu_s": host,
    }


def emit_rows(*, report: dict) -> None:
    """The route's figures for the `make bench` table: throughput against the ideal (every call
    waiting its latency, ``jobs`` at a time — the floor) and make_review's own CPU per task."""
    route = f"{report['route']} route, n={report['n']}, jobs={report['jobs']}"
    loads = "–".join(f"{load:g}" for load in (min(report["loads"]), max(report["loads"])))
    emit_against_ideal(
        benchmark="make_review",
        figure=f"model calls per second, fresh `manage.py make_review` process (median of "
        f"{len(report['fresh_walls_s'])}, load {loads}), {route}",
        calls=report["calls"],
        wall=report["fresh_wall_s"],
        ideal=report["ideal_s"],
    )
    emit(row=Row(benchmark="make_review", figure=f"wall time against the ideal, in process "
                 f"(no start-up or exit), {route}", value=report["ideal_over_in_process_wall"],
                 unit="× ideal"))  # fmt: skip
    emit_limit(benchmark="make_review", figure=f"own CPU per task, {route}",
               value=report["own_cpu_ms_per_task"], unit="ms", at_most=50)  # fmt: skip
    emit_native_rows(report=report, route=route)


def children_cpu() -> float:
    """CPU seconds of this process's ended children and theirs: the attempt hosts (reaped when a
    run closes them) with every attempt they forked. The model server is reaped only later."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def host_startup(*, config: Path) -> dict:
    """CPU of starting the route's attempt host (once per route per run): with a cold bytecode
    cache (the first run on a machine) and a warm one (every later run, as the measured ones)."""
    runtime = json.loads(config.read_text(encoding="utf-8"))["runtime"]
    spec = host_spec(route=worker_route(route="skyrl_gym", runtime=runtime))
    figures = {}
    for label in ("cold", "warm"):
        before = children_cpu()
        hosts = AttemptHosts(cache_dir=native_bytecode_cache())
        hosts.host_for(spec)
        hosts.close()
        figures[label] = round(children_cpu() - before, 3)
    return figures


def environment_seconds(*, run_dir: Path) -> float:
    """The environments' own work: every ``verify_start`` → ``verify_end`` span of the run."""
    total = 0.0
    for trace in run_dir.glob("tasks/*/execution-*/verifier-trace.jsonl"):
        started = None
        for line in trace.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            at = dt.datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()
            if event["event"] == "verify_start":
                started = at
            elif event["event"] == "verify_end" and started is not None:
                total, started = total + at - started, None
    return total


def native_figures(*, run_dir: Path, cpu: float, n: int) -> dict:
    """Native CPU per attempt (every attempt process, with the route's host start-up on a warm
    bytecode cache shared out) and the part of it beyond the environment's own work."""
    environment = environment_seconds(run_dir=run_dir)
    return {
        "native_cpu_ms_per_attempt": round(cpu / n * 1000, 1),
        "environment_ms_per_attempt": round(environment / n * 1000, 1),
        "native_cpu_beyond_environment_ms": round((cpu - environment) / n * 1000, 1),
    }


def emit_native_rows(*, report: dict, route: str) -> None:
    """Native CPU per attempt beyond the environment's own work (≤ 100 ms) and,
    for the Gym route, throughput against the ideal at the native goal (≥ 0.5× on 2 cores)."""
    emit_limit(benchmark="make_review", figure=f"native CPU per attempt beyond the environment, "
               f"{route}", value=report["native_cpu_beyond_environment_ms"], unit="ms",
               at_most=100)  # fmt: skip
    if report["route"] == "gym":
        for label, value in report["host_startup_cpu_s"].items():
            figure = f"attempt host start-up CPU, {label} bytecode cache, once per run, {route}"
            emit(row=Row(benchmark="make_review", figure=figure, value=value, unit="s"))


def judge_prompts(run_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    """Each judge stage's prompt as the server renders it (system, then user), grouped by task
    and stage — ``(tasks/NNNN, call or segments/NNN)`` → judge index → text — from the last
    call of each stage (the one answered)."""
    groups: dict[tuple[str, str], dict[str, str]] = {}
    for judge in sorted(run_dir.glob("tasks/*/judges/*")):
        stages = [judge, *sorted((judge / "segments").glob("*"))]
        for stage in stages:
            requests = sorted(stage.glob("call-*/request.json"))
            if not requests:
                continue
            body = json.loads(requests[-1].read_text(encoding="utf-8"))
            text = "\n".join(str(m.get("content")) for m in body["messages"])
            where = stage.relative_to(judge).as_posix() if stage != judge else "call"
            task = judge.parent.parent.relative_to(run_dir).as_posix()
            groups.setdefault((task, where), {})[judge.name] = text
    return groups


def common_prefix(first: str, second: str) -> int:
    """How many leading characters two prompts share."""
    for index, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return index
    return min(len(first), len(second))


def prompt_figures(run_dir: Path) -> dict:
    """Prompt tokens per judge call (the scripted server's count, as ``usage`` reports it) and
    the share of them a prefix cache can reuse: across the three judges of a task (each later
    judge's prompt prefix shared with an earlier one), and across tasks (a task's first judge
    prompt prefix shared with the previous task's)."""
    groups = judge_prompts(run_dir)
    counts = [approximate_tokens(text) for group in groups.values() for text in group.values()]
    reusable = total = 0
    for group in groups.values():
        texts = [group[index] for index in sorted(group)]
        total += sum(approximate_tokens(text) for text in texts)
        for position, text in enumerate(texts[1:], start=1):
            shared = max(common_prefix(text, earlier) for earlier in texts[:position])
            reusable += approximate_tokens(text[:shared])
    # A task's first judge prompt: its first segment when segmented (its judge folder's own
    # call is then the consolidation), else its one call.
    tasks = sorted({task for task, _ in groups})
    firsts = [
        groups.get((task, "segments/000"), groups.get((task, "call"), {})).get("1", "")
        for task in tasks
    ]
    across = sum(
        approximate_tokens(text[: common_prefix(text, before)])
        for before, text in itertools.pairwise(firsts)
    )
    return {
        "judge_calls": len(counts),
        "prompt_tokens_median": statistics.median(counts) if counts else None,
        "prompt_tokens_max": max(counts) if counts else None,
        "judges_reusable_share": round(reusable / total, 3) if total else None,
        "tasks_reusable_share": round(across / sum(approximate_tokens(t) for t in firsts[1:]), 3)
        if len(firsts) > 1
        else None,
    }


def measure_prompts(*, n: int, jobs: int, root: Path, checkout: Path, context: int) -> dict:
    """The gym route's judge prompts without a known context (48,000-byte segments) and with
    an 8,192-token one (segments sized to it, 1,024 tokens kept for the answer)."""
    server = ServerProcess(0.0)
    try:
        figures = {}
        for label, model in (
            ("no context", None),
            (f"{context:,}-token context", {
                "context_tokens": context,
                "review_parameters": {"temperature": 0.0, "max_tokens": 1024},
            }),
        ):  # fmt: skip
            config = write_config(root / "prompts", server, checkout, "gym", model)
            output = root / "prompts" / f"run-{len(figures)}"
            make_review(
                options=RunOptions(config=config, n=n, output=output, jobs=jobs),
                stderr=io.StringIO(),
            )
            figures[label] = prompt_figures(output)
    finally:
        server.close()
    return figures


def emit_prompt_rows(*, figures: dict, n: int) -> None:
    for label, values in figures.items():
        where = f"gym route, n={n}, {label}"
        for key, text in (("prompt_tokens_median", "median"), ("prompt_tokens_max", "max")):
            emit(row=Row(benchmark="make_review", figure=f"prompt tokens per judge call ({text}), "
                         f"{where}", value=values[key], unit="tokens"))  # fmt: skip
        # Three judges send the same prompt: two of every three prompts' tokens are reusable.
        emit(row=Row(benchmark="make_review", figure=f"prefix-cache reusable share across a "
                     f"task's three judges, {where}", value=values["judges_reusable_share"],
                     unit="share", goal_operator=">=", goal=0.6))  # fmt: skip
        emit(row=Row(benchmark="make_review", figure=f"prefix-cache reusable share from the "
                     f"previous task's judge prompt, {where}",
                     value=values["tasks_reusable_share"], unit="share"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--route", choices=("gym", "contract", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per route")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-make-review-") as temporary:
        root = Path(temporary)
        # A bytecode cache of the benchmark's own: the first host start-up finds it cold.
        os.environ[BYTECODE_CACHE_ENV] = str(root / "native-bytecode")
        checkout = build_checkout(root / "MarinSkyRL")
        routes = ("contract", "gym") if options.route == "both" else (options.route,)
        for route in routes:
            report = measure(
                route=route,
                n=options.n,
                jobs=options.jobs,
                latency=options.latency,
                root=root,
                checkout=checkout,
                repeat=options.repeat,
            )
            print(json.dumps(report))
            emit_rows(report=report)
        if "gym" in routes:
            figures = measure_prompts(n=min(options.n, 4), jobs=options.jobs, root=root,
                                      checkout=checkout, context=8192)  # fmt: skip
            print(json.dumps(figures))
            emit_prompt_rows(figures=figures, n=min(options.n, 4))


if __name__ == "__main__":
    main()
