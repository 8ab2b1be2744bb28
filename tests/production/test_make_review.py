"""make_review's run rules: errors leave saved files intact, resume makes only missing calls, and
--jobs writes what a sequential run writes."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from reviews.production.make_review.evidence import evidence_bundle
from reviews.production.runtime.prompt_room import json_size
from tests.model_server import ModelServer, Reply, completion
from tests.production.helpers import (
    TIMESTAMP,
    assert_intact,
    load,
    make_review,
    review_fails,
    snapshot_files,
    without_timestamps,
)
from tests.production.review_model import ReviewModel, opinion, request_kind
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SHA256 = re.compile(r"\b[0-9a-f]{64}\b")
GYM_WORKER = ROOT / "reviews" / "production" / "workers" / "gym_worker.py"


def args(config: Path, output: Path, *extra: str, n: int = 2) -> list[str]:
    return ["--config", str(config), "--n", str(n), "--output", str(output), *extra]


def test_n_must_be_positive(write_config, tmp_path):
    assert review_fails(*args(write_config(), tmp_path / "run", n=0)) == "n must be positive"
    assert not (tmp_path / "run").exists()


def test_existing_output_needs_resume(write_config, tmp_path):
    output = tmp_path / "run"
    output.mkdir()
    (output / "notes.txt").write_text("keep me", encoding="utf-8")
    message = review_fails(*args(write_config(), output))
    assert message == "Output already exists; use --resume or a new output directory"
    assert (output / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_concurrent_run_fails_at_once(write_config, tmp_path):
    output = tmp_path / "run"
    output.mkdir()
    with open(output / ".run.lock", "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        message = review_fails(*args(write_config(), output, "--resume"))
    assert message == "Another make_review run holds this output directory"
    assert sorted(p.name for p in output.iterdir()) == [".run.lock"]


def test_too_few_tasks(write_config, tmp_path):
    message = review_fails(*args(write_config(rows=3), tmp_path / "run", n=5))
    assert message == "Requested 5 tasks but source contains only 3"


def test_resume_after_a_failed_call_makes_only_the_missing_calls(
    write_config, tmp_path, model_server
):
    config, output = write_config(), tmp_path / "run"
    model_server.default = FailFirstJudgeOf(task_row=None)
    message = review_fails(*args(config, output, "--jobs", "1"))
    [failed_call] = [p.parent for p in output.glob("tasks/*/judges/*/call-000/http-error.txt")]
    judge = f"task {failed_call.parts[-4]} judge {failed_call.parts[-2]}"
    assert message == (
        f"{judge}: the model endpoint answered HTTP 400: scripted bad request; raw response saved "
        f"in {failed_call}"
    )
    assert (failed_call / "http-error.txt").read_text().startswith("HTTP 400")
    assert not (failed_call.parent / "parsed.json").exists()
    # The task's other judges finished and kept their answers.
    judged = sorted(output.glob(f"{failed_call.parent.parent.relative_to(output)}/*/parsed.json"))
    assert len(judged) == 2
    saved = snapshot_files(output)
    first_run = len(model_server.chat_requests())
    model_server.default = ReviewModel()
    stdout, _ = make_review(*args(config, output, "--jobs", "1", "--resume"))
    assert stdout.startswith("Saved 11 reviews")
    resumed = model_server.chat_requests()[first_run:]
    assert [request_kind(r) for r in resumed] == ["judge", "coalescer"]
    assert (failed_call.parent / "call-001/response.json").is_file()
    assert_intact(saved, output)
    # A finished run is re-validated and returned; nothing else runs.
    before = len(model_server.chat_requests())
    stdout, _ = make_review(*args(config, output, "--resume"))
    assert stdout.startswith("Saved 11 reviews") and len(model_server.chat_requests()) == before


class FailFirstJudgeOf:
    """Fails the first judge call made for the second task to be judged (HTTP 400)."""

    def __init__(self, task_row: int | None) -> None:
        self.tasks_seen: list[str] = []
        self.failed = False
        self.model = ReviewModel()
        self._lock = threading.Lock()

    def __call__(self, request):
        if request_kind(request) == "judge":
            task = request.user_payload["task"]["id"]
            with self._lock:
                if task not in self.tasks_seen:
                    self.tasks_seen.append(task)
                fail = not self.failed and self.tasks_seen.index(task) == 1
                self.failed = self.failed or fail
            if fail:
                return Reply(status=400, body={"error": "scripted bad request"})
        return self.model(request)


def test_resume_refuses_changed_inputs(write_config, tmp_path):
    output = tmp_path / "run"
    make_review(*args(write_config(), output))
    (output / "quality-reviews.json").unlink()
    saved = snapshot_files(output)
    changed = write_config(model={"parameters": {"temperature": 0.5}})
    message = review_fails(*args(changed, output, "--resume"))
    # The refusal names the key that differs, and what to do.
    assert message == (
        "Cannot resume: config.model.parameters.temperature was 0.0, now 0.5 since this run "
        "started; a resume needs the same inputs. Restore it, or give --output a new folder for "
        "a run with the change"
    )
    message = review_fails(*args(write_config(), output, "--resume", "--seed", "1"))
    assert message.startswith("Cannot resume: seed (--seed) was 42, now 1 since")
    assert_intact(saved, output)


def test_a_config_copied_elsewhere_with_another_endpoint_resumes(write_config, tmp_path):
    """Identity is the content that matters: the config file's folder is not part of it, nor
    the endpoint's URL (a resume may talk to another server) or a "$comment"."""
    output = tmp_path / "run"
    config = write_config()
    make_review(*args(config, output))
    (output / "quality-reviews.json").unlink()
    copied = json.loads(config.read_text(encoding="utf-8"))
    with ModelServer(default=ReviewModel()) as elsewhere:
        copied["model"]["base_url"] = elsewhere.base_url
        copied["model"]["$comment"] = "moved to the other machine's server"
        moved = tmp_path / "elsewhere" / "review-config.json"
        moved.parent.mkdir()
        moved.write_text(json.dumps(copied), encoding="utf-8")
        stdout, _ = make_review(*args(moved, output, "--resume"))
        assert stdout.startswith("Saved ")
        # Every finished stage was kept: no attempt or judge was asked again.
        assert {request_kind(r) for r in elsewhere.chat_requests()} <= {"coalescer"}


def test_resume_refuses_a_changed_native_checkout(write_config, checkout, tmp_path):
    output = tmp_path / "run"
    config = write_config()
    make_review(*args(config, output))
    (output / "quality-reviews.json").unlink()
    utils = checkout / "skyrl-gym/skyrl_gym/envs/gsm8k/utils.py"
    utils.write_text(utils.read_text() + "\n# edited\n", encoding="utf-8")
    message = review_fails(*args(config, output, "--resume"))
    assert message.startswith("Cannot resume: marinskyrl.dirty was false, now true since")


def normalized_run(root: Path) -> dict[str, str]:
    """Each file's text with the run path, timestamps, and the hashes of files that hold
    timestamps (so their hash differs between runs) replaced by placeholders."""
    files = {path: data.decode() for path, data in snapshot_files(root).items()}
    timestamped: set[str] = set()
    # Transitively: a file citing the hash of a timestamped file differs between runs too.
    while True:
        found = {
            hashlib.sha256(text.encode()).hexdigest()
            for text in files.values()
            if TIMESTAMP.search(text) or set(SHA256.findall(text)) & timestamped
        }
        if found == timestamped:
            break
        timestamped = found
    normalized = {}
    for path, data in files.items():
        text = without_timestamps(data.replace(str(root), "<run>"))
        normalized[path] = SHA256.sub(
            lambda m: "<timestamped-sha>" if m.group(0) in timestamped else m.group(0), text
        )
    return normalized


def test_jobs_write_what_a_sequential_run_writes(write_config, tmp_path):
    config = write_config(rows=8)
    sequential, concurrent = tmp_path / "sequential", tmp_path / "concurrent"
    make_review(*args(config, sequential, "--jobs", "1", n=4))
    make_review(*args(config, concurrent, "--jobs", "4", n=4))
    first, second = normalized_run(sequential), normalized_run(concurrent)
    assert sorted(first) == sorted(second)
    assert [path for path in first if first[path] != second[path]] == []
    assert len(load(sequential / "quality-reviews.json")["reviews"]) == 4 * 5 + 1


def test_evidence_over_the_limit_fails_and_keeps_the_attempt(write_config, tmp_path):
    output = tmp_path / "run"
    message = review_fails(*args(write_config(), output, "--max-evidence-bytes", "2000", n=1))
    assert message == (
        "task 0000: Evidence exceeds 2000 bytes; saved artifacts remain intact. "
        "Increase --max-evidence-bytes or use a smaller source sample."
    )
    assert (output / "tasks/0000/attempt.json").is_file()


def test_judge_input_over_the_limit_is_never_truncated(write_config, tmp_path, model_server):
    config, output = write_config(), tmp_path / "run"
    review_fails(*args(config, output, "--max-evidence-bytes", "2000", n=1))
    saved = snapshot_files(output)
    bundle = evidence_bundle(
        run_dir=output, execution_path="tasks/0000/execution-000", max_bytes=10**9
    )
    limit = json_size(bundle)
    calls = len(model_server.chat_requests())
    message = review_fails(
        *args(config, output, "--resume", "--max-evidence-bytes", str(limit), n=1)
    )
    assert message == (
        "task 0000: Judge/coalescer input exceeds --max-evidence-bytes; nothing was silently "
        "truncated"
    )
    assert len(model_server.chat_requests()) == calls  # no judge was asked
    assert_intact(saved, output)


def test_truncated_judge_output_leaves_the_stage_incomplete(write_config, tmp_path, model_server):
    output = tmp_path / "run"

    def truncated(request):
        if request_kind(request) == "judge":
            return completion('{"summary": "cut', finish_reason="length")
        return ReviewModel()(request)

    model_server.default = truncated
    message = review_fails(*args(write_config(), output, n=1))
    stage = output / "tasks/0000/judges/1"
    # Asked again within the run (model.max_reasks, default 2), then stopped, naming the budget.
    assert message == (
        "task 0000 judge 1: output was truncated (finish_reason length); 3 of 3 answers refused, "
        f"raw responses saved in {stage} (the last in call-002); the stage remains incomplete. "
        "Every answer ran out of its output budget: raise model.review_parameters.max_tokens "
        "(now 4096) and run again with --resume; finished stages are kept"
    )
    assert (output / "tasks/0000/judges/1/call-000/response.json").is_file()
    assert not (output / "tasks/0000/judges/1/parsed.json").exists()


def test_placeholder_opinions_are_rejected_fresh_and_cached(write_config, tmp_path, model_server):
    config, output = write_config(), tmp_path / "run"

    def placeholder(request):
        if request_kind(request) == "judge":
            return completion(json.dumps(opinion("...", findings=[])))
        return ReviewModel()(request)

    model_server.default = placeholder
    message = review_fails(*args(config, output, n=1))
    assert message.startswith("task 0000 judge 1: output is a placeholder; 3 of 3 answers refused")
    assert message.endswith(
        ". What helps: the model's answers are not about the task's evidence: use a larger or "
        "instruction-tuned model, or raise model.max_reasks to ask more times; run again with "
        "--resume to ask again (finished stages are kept)"
    )
    assert not (output / "tasks/0000/judges/1/parsed.json").exists()
    model_server.default = ReviewModel()
    make_review(*args(config, output, "--resume", n=1))
    # A placeholder left as parsed.json is not reused on resume: the stage is asked again.
    (output / "quality-reviews.json").unlink()
    parsed = output / "tasks/0000/judges/2/parsed.json"
    parsed.write_text(json.dumps(opinion("Fine.", findings=[
        {"dimension": "x", "text": "-- ..", "severity": None, "kind": "observation"}
    ])))  # fmt: skip
    before = len(model_server.chat_requests())
    model_server.default = ReviewModel(verdict="conditional")
    make_review(*args(config, output, "--resume", n=1))
    again = model_server.chat_requests()[before:]
    # The new opinion changes the coalescer's input, so the synthesis is asked again too.
    assert [request_kind(r) for r in again] == ["judge", "coalescer"]
    assert load(parsed)["verdict"] == "conditional"
    assert (output / "tasks/0000/judges/2/call-001").is_dir()


def test_coalescer_must_cover_every_subject(write_config, tmp_path, model_server):
    output = tmp_path / "run"

    def partial(request):
        if request_kind(request) == "coalescer":
            subject = request.user_payload["required_syntheses"][0]
            answer = {"syntheses": [{**opinion("Only one synthesis here."), "subject_id": subject}]}
            return completion(json.dumps(answer))
        return ReviewModel()(request)

    model_server.default = partial
    message = review_fails(*args(write_config(), output))
    assert message.startswith(
        "coalescer: Coalescer must produce exactly one synthesis per sampled task and source; "
        "3 of 3 answers refused"
    )
    assert not (output / "coalescer/parsed.json").exists()
    assert (output / "coalescer/call-000/response.json").is_file()
    panel = load(output / "panel-reviews.partial.json")
    assert len(panel["reviews"]) == 8 and not any(
        r["method"] == "synthesis" for r in panel["reviews"]
    )


def test_synthesis_derivation_is_set_by_the_tool(write_config, tmp_path, model_server):
    output = tmp_path / "run"

    def claims_derivation(request):
        if request_kind(request) == "coalescer":
            required = request.user_payload["required_syntheses"]
            answer = {
                "syntheses": [
                    {**opinion("Combined."), "subject_id": s, "derived_from_review_ids": ["x"]}
                    for s in required
                ]
            }
            return completion(json.dumps(answer))
        return ReviewModel()(request)

    model_server.default = claims_derivation
    # An extra key is outside the schema: refused, nothing written.
    assert "does not match its schema" in review_fails(*args(write_config(), output, n=1))
    model_server.default = ReviewModel()
    make_review(*args(write_config(), output, "--resume", n=1))
    reviews = {r["id"]: r for r in load(output / "quality-reviews.json")["reviews"]}
    task_synthesis = next(
        r for r in reviews.values() if "/task/" in r["id"] and r["method"] == "synthesis"
    )
    base = task_synthesis["subject_id"]
    assert task_synthesis["derived_from_review_ids"] == [
        f"{base}/runtime", f"{base}/judge/1", f"{base}/judge/2", f"{base}/judge/3"
    ]  # fmt: skip


FLAKY_WORKER = """
import runpy, sys
from pathlib import Path
if Path({marker!r}).exists():
    print("scripted worker failure", file=sys.stderr)
    sys.exit(3)
sys.path.insert(0, {workers!r})
sys.argv = [{gym!r}, *sys.argv[1:]]
runpy.run_path({gym!r}, run_name="__main__")
"""


def test_failed_worker_attempt_is_kept_and_resume_retries(write_config, checkout, tmp_path):
    marker = tmp_path / "fail-now"
    script = tmp_path / "flaky_worker.py"
    script.write_text(
        FLAKY_WORKER.format(marker=str(marker), workers=str(GYM_WORKER.parent), gym=str(GYM_WORKER))
    )
    config = write_config(
        runtime={
            "workers": {
                "skyrl_gym": {
                    "python": sys.executable,
                    "script": str(script),
                    "pythonpath": [
                        str(checkout / "skyrl-gym"), str(checkout / "skyrl-train"), str(checkout)
                    ],
                }
            }
        }
    )  # fmt: skip
    output = tmp_path / "run"
    marker.touch()
    message = review_fails(*args(config, output, "--jobs", "1", n=1))
    stderr = output / "tasks/0000/execution-000/worker.stderr"
    assert message == (
        f"Native worker failed; inspect {stderr}. Resume retries this unfinished task."
    )
    assert "scripted worker failure" in stderr.read_text()
    assert not (output / "tasks/0000/attempt.json").exists()
    saved = snapshot_files(output)
    marker.unlink()
    make_review(*args(config, output, "--resume", n=1))
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["execution_path"] == "tasks/0000/execution-001"
    assert_intact(saved, output)


def test_ctrl_c_stops_workers_and_resume_finishes(write_config, tmp_path, model_server):
    model_server.latency = 0.5
    config, output = write_config(), tmp_path / "run"
    command = [sys.executable, "manage.py", "make_review", *args(config, output, "--jobs", "2")]
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # Interrupted while its workers wait on the model (each answer takes 0.5 s).
    wait_until(
        lambda: model_server.chat_requests() or process.poll() is not None,
        what="a worker calling the model",
    )
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "Interrupted; saved files remain in place. Run again with --resume" in stderr.decode()
    model_server.latency = 0.0
    stdout, _ = make_review(*args(config, output, "--resume"))
    assert stdout.startswith("Saved 11 reviews")


def test_progress_lines_when_stderr_is_not_a_terminal(write_config, tmp_path):
    _, stderr = make_review(*args(write_config(), tmp_path / "run", n=1))
    lines = stderr.strip().splitlines()
    assert "\r" not in stderr and len(lines) >= 3
    assert lines[-2].startswith("make_review: tasks 1/1 · calls 3 · retries 0 · ")


def test_retries_are_counted_and_saved(write_config, tmp_path, model_server):
    config, output = write_config(), tmp_path / "run"
    # The first two judge calls fail with 503 and 429, then every call succeeds.
    answers = [Reply(status=503, body={"error": "busy"}), Reply(status=429, body={})]
    lock = threading.Lock()

    def flaky(request):
        if request_kind(request) == "judge":
            with lock:
                reply = answers.pop(0) if answers else None
            if reply is not None:
                return reply
        return ReviewModel()(request)

    model_server.default = flaky
    _, stderr = make_review(*args(config, output, "--jobs", "1", n=1))
    judges = output / "tasks/0000/judges"
    calls = sorted(judges.glob("*/call-*"))
    assert len(calls) == 5 and len(list(judges.glob("*/parsed.json"))) == 3
    errors = sorted(p.read_text().split("\n")[0] for p in judges.glob("*/call-*/http-error.txt"))
    assert errors == ["HTTP 429", "HTTP 503"]
    for judge in judges.iterdir():
        # Each failed attempt kept its own folder; the last call of each judge succeeded.
        numbered = sorted(judge.glob("call-*"))
        assert [p.name for p in numbered] == [f"call-{i:03d}" for i in range(len(numbered))]
        assert not (numbered[-1] / "http-error.txt").exists()
    assert "retries 2" in stderr.strip().splitlines()[-1]


def test_harbor_route_through_a_configured_worker(write_config, tmp_path, model_server, checkout):
    """Harbor needs a container provider; its route is exercised through the worker contract."""
    harbor = tmp_path / "harbor"
    (harbor / "src/harbor/verifier").mkdir(parents=True)
    (harbor / "src/harbor/__init__.py").write_text("")
    (harbor / "src/harbor/verifier/__init__.py").write_text("")
    (harbor / "src/harbor/verifier/check.py").write_text(
        "def grade(text):\n    return {'reward': 1.0 if 'done' in text else 0.0}\n"
    )
    subprocess.run(["git", "init", "-q", str(harbor)], check=True)
    from tests.production.conftest import commit_all

    commit_all(harbor, "harbor")
    tasks = tmp_path / "harbor-tasks"
    for name in ("hello", "world"):
        (tasks / name / "tests").mkdir(parents=True)
        (tasks / name / "instruction.md").write_text(f"Write {name} to out.txt and say done.")
        (tasks / name / "tests/test.sh").write_text("#!/bin/sh\ngrep -q done out.txt\n")
        (tasks / name / "task.toml").write_text('version = "1.0"\n')
    script = tmp_path / "contract_harbor_worker.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys, urllib.request
            from pathlib import Path
            from harbor.verifier.check import grade
            data = json.loads(Path(sys.argv[1]).read_text())
            out = Path(sys.argv[2])
            task = Path(data["task"]["task_dir"])
            assert (task / "tests/test.sh").is_file()
            body = {"model": data["model"]["name"], "messages": data["task"]["prompt"]}
            request = urllib.request.Request(
                data["model"]["base_url"] + "/chat/completions",
                data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            reply = json.loads(urllib.request.urlopen(request).read())
            text = reply["choices"][0]["message"]["content"]
            (out / "verifier-trace.jsonl").write_text(
                json.dumps({"at": "2026-01-01T00:00:00Z", "event": "trial_start"}) + "\\n")
            (out / "harbor-result.json").write_text(json.dumps({"verifier_result": grade(text)}))
            verification = {"status": "verified", "score": grade(text)["reward"],
                            "passed": True, "reason": "contract worker", "diagnostics": {}}
            (out / "attempt.json").write_text(json.dumps({"verification": verification,
                "verifier_executed": True, "done": True, "turns": 1}))
            """
        )
    )
    config = write_config(
        tasks_path=tasks,
        source={"format": "harbor_directory"},
        runtime={
            "harbor_checkout": str(harbor),
            "harbor_python": sys.executable,
            "workers": {
                "harbor": {
                    "python": sys.executable,
                    "script": str(script),
                    "pythonpath": [str(harbor / "src")],
                }
            },
        },
    )
    output = tmp_path / "run"
    make_review(*args(config, output))
    collection = load(output / "quality-reviews.json")
    run = load(output / "run.json")
    assert collection["execution_provenance"]["harbor_commit"] == run["harbor"]["commit"]
    runtime = [r for r in collection["reviews"] if r["method"] == "runtime_execution"]
    assert [r["attributes"]["route"] for r in runtime] == ["harbor", "harbor"]
    assert all("verifyit_enabled" not in r["attributes"] for r in runtime)
    assert [e["snapshot_path"].rsplit("/", 1)[-1] for e in runtime[0]["evidence"]] == [
        "attempt.json", "verifier-trace.jsonl", "harbor-result.json"
    ]  # fmt: skip
    assert (output / "tasks/0000/execution-000/task/tests/test.sh").is_file()
    assert set(run["selected_task_files"]) == {
        str(path) for path in tasks.rglob("*") if path.is_file()
    }


def test_resume_revalidates_a_finished_collection(write_config, tmp_path, model_server):
    config, output = write_config(), tmp_path / "run"
    make_review(*args(config, output, n=1))
    calls = len(model_server.chat_requests())
    parsed = output / "tasks/0000/judges/2/parsed.json"
    parsed.write_text(parsed.read_text().replace("Scripted", "Edited"), encoding="utf-8")
    assert review_fails(*args(config, output, "--resume", n=1)) == (
        "Review evidence path/hash mismatch: tasks/0000/judges/2/parsed.json"
    )
    assert len(model_server.chat_requests()) == calls
