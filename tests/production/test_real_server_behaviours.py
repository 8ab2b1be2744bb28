"""make_review meets the behaviours of the servers reviewers run, each scripted by the
test server: a context limit, a refused structured-output dialect, answers cut by their budget, a
slow call, Ctrl-C during it — and runs that converge."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from reviews.production.make_review.pipeline import MISSING_REVISION, RunOptions
from reviews.production.make_review.pipeline import make_review as run_pipeline
from tests.model_server import Reply, completion, prompt_tokens
from tests.production.helpers import load, make_review, review_fails
from tests.production.review_model import ReviewModel, opinion, request_kind
from tests.waiting import DEADLINE_SECONDS, wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def args(config: Path, output: Path, *extra: str, n: int = 1) -> list[str]:
    return ["--config", str(config), "--n", str(n), "--output", str(output), *extra]


def test_a_run_sized_to_the_servers_context_finishes(write_config, tmp_path, model_server):
    """llama-cpp-python reports its context nowhere: with model.context_tokens every judge and
    segment call fits (the server refuses any that does not, as llama-cpp-python does)."""
    model_server.context_tokens = 6000
    judging = {"temperature": 0.0, "max_tokens": 400}
    config = write_config(model={"context_tokens": 6000, "response_format": "json_object_schema",
                                 "review_parameters": judging})  # fmt: skip
    output = tmp_path / "run"
    stdout, _ = make_review(*args(config, output, n=2))
    assert stdout.startswith("Saved 11 reviews")
    requests = model_server.chat_requests()
    judged = [r for r in requests if request_kind(r) != "solver"]
    assert {request_kind(r) for r in judged} >= {"segment", "consolidation", "coalescer"}
    for request in judged:
        assert prompt_tokens(request.body) + request.body["max_tokens"] <= 6000
        assert request.body["response_format"]["type"] == "json_object"
        assert "schema" in request.body["response_format"]
    assert load(output / "endpoint.json")["context_tokens"] == 6000
    assert not list(output.rglob("http-error.txt"))
    # The three judges of a task send the same messages: a prefix cache evaluates them once.
    sent: dict[str, int] = {}
    for request in judged:
        if request_kind(request) == "segment":
            key = json.dumps(request.messages)
            sent[key] = sent.get(key, 0) + 1
    assert sent and all(count % 3 == 0 for count in sent.values())


def test_a_refused_dialect_stops_at_once_with_the_servers_reason(
    write_config, tmp_path, model_server
):
    model_server.refused_formats = {"json_schema": 500}
    output = tmp_path / "run"
    message = review_fails(*args(write_config(), output))
    assert message.startswith("task 0000 judge 1: the server refused the structured-output ")
    assert "(model.response_format json_schema; HTTP 500: response_format of this kind is not " in (
        message
    )
    judges = [r for r in model_server.chat_requests() if request_kind(r) == "judge"]
    assert len(judges) == 3  # one per judge: never retried as an outage


def test_answers_with_literal_newlines_are_accepted(write_config, tmp_path, model_server):
    def newlines(request):
        if request_kind(request) == "judge":
            text = json.dumps(
                opinion("The verifier compares the answer.\nIt is exact.", findings=[])
            )
            return completion(text.replace("\\n", "\n"))
        return ReviewModel()(request)

    model_server.default = newlines
    output = tmp_path / "run"
    make_review(*args(write_config(), output))
    parsed = load(output / "tasks/0000/judges/1/parsed.json")
    assert parsed["summary"] == "The verifier compares the answer.\nIt is exact."


def test_a_refused_answer_is_asked_again_and_the_run_converges(
    write_config, tmp_path, model_server
):
    asked: dict[str, int] = {}
    lock = threading.Lock()

    def salad_once(request):
        kind = request_kind(request)
        if kind == "judge":
            with lock:
                key = json.dumps(request.messages)[-200:]
                asked[key] = asked.get(key, 0) + 1
                first = sum(asked.values()) == 1
            if first:
                return completion(json.dumps(opinion("of_10, ")))
        return ReviewModel()(request)

    model_server.default = salad_once
    output = tmp_path / "run"
    stdout, stderr = make_review(*args(write_config(), output))
    assert stdout.startswith("Saved 6 reviews")
    rejected = list(output.rglob("rejected.txt"))
    assert [p.read_text() for p in rejected] == [
        "output is not about the evidence: the summary 'of_10, ' is not a sentence\n"
    ]
    assert "answer refused (output is not about the evidence" in stderr
    assert "re-asks 1" in stderr


def test_raising_the_judges_budget_on_resume_keeps_finished_stages(
    write_config, tmp_path, model_server
):
    config_small = {"review_parameters": {"temperature": 0.0, "max_tokens": 300}}
    cut = {"count": 0}
    lock = threading.Lock()

    def truncates_third(request):
        if request_kind(request) == "judge" and request.body.get("max_tokens") == 300:
            with lock:
                cut["count"] += 1
                third = cut["count"] >= 3
            if third:
                return completion('{"summary": "cut', finish_reason="length")
        return ReviewModel()(request)

    model_server.default = truncates_third
    output = tmp_path / "run"
    message = review_fails(*args(write_config(model=config_small), output, "--jobs", "1"))
    assert "raise model.review_parameters.max_tokens (now 300)" in message
    kept = {p: p.read_bytes() for p in output.glob("tasks/0000/judges/*/parsed.json")}
    assert len(kept) == 2
    before = len(model_server.chat_requests())
    larger = {"review_parameters": {"temperature": 0.0, "max_tokens": 2000}}
    stdout, _ = make_review(*args(write_config(model=larger), output, "--resume"))
    assert stdout.startswith("Saved 6 reviews")
    again = model_server.chat_requests()[before:]
    assert [request_kind(r) for r in again] == ["judge", "coalescer"]
    assert again[0].body["max_tokens"] == 2000
    assert {p: p.read_bytes() for p in kept} == kept  # the finished judges were kept


def test_the_coalescer_is_split_when_one_call_would_not_fit(write_config, tmp_path, model_server):
    budget = {"review_parameters": {"temperature": 0.0, "max_tokens": 700}}
    output = tmp_path / "run"
    stdout, _ = make_review(*args(write_config(model=budget), output, n=3))
    assert stdout.startswith("Saved 16 reviews")
    plan = load(output / "coalescer/plan.json")
    assert plan["mode"] == "batched"
    assert [len(batch["subject_ids"]) for batch in plan["batches"]] == [2, 1]
    coalescer = [r for r in model_server.chat_requests() if request_kind(r) == "coalescer"]
    assert [r.user_payload["required_synthesis_count"] for r in coalescer] == [2, 1, 1]
    source = coalescer[-1].user_payload
    assert all(rid.endswith(("/synthesis", "/runtime")) for rid in source["collection"]["reviews"])
    reviews = load(output / "quality-reviews.json")["reviews"]
    syntheses = {r["subject_id"]: r for r in reviews if r["method"] == "synthesis"}
    source_synthesis = next(r for r in syntheses.values() if "/task/" not in r["subject_id"])
    assert [e["snapshot_path"] for e in source_synthesis["evidence"]] == [
        "coalescer/source/parsed.json", "coalescer/plan.json"
    ]  # fmt: skip
    # Still derived from every runtime and judge review, set by the tool.
    assert len(source_synthesis["derived_from_review_ids"]) == 3 * 4
    last_task = [r for r in syntheses.values() if "/task/" in r["subject_id"]][-1]
    assert last_task["evidence"][0]["snapshot_path"] == "coalescer/batches/001/parsed.json"


def test_a_missing_dataset_revision_is_warned_about_before_any_work(
    write_config, tmp_path, model_server
):
    config = write_config(source={"revision": None})
    output = tmp_path / "run"
    _, stderr = make_review(*args(config, output))
    assert stderr.splitlines()[0] == MISSING_REVISION
    _, stderr = make_review(*args(write_config(), tmp_path / "pinned"))
    assert MISSING_REVISION not in stderr


def test_progress_shows_the_calls_in_flight(write_config, tmp_path, model_server):
    stream = io.StringIO()
    shown = {"solver": "running: task 0000 solving", "judge": "running: task 0000 judge",
             "coalescer": "running: coalescer"}  # fmt: skip

    def answered_once_shown(request):
        # Each call is answered only once a progress line has shown it in flight (or at the
        # deadline, when the assertions below say what was missing).
        expected = shown.get(request_kind(request))
        if expected is not None:
            with contextlib.suppress(AssertionError):
                wait_until(lambda: expected in stream.getvalue(), what=expected)
        return ReviewModel()(request)

    model_server.default = answered_once_shown
    run_pipeline(
        options=RunOptions(config=write_config(), n=1, output=tmp_path / "run", tick_seconds=0.2),
        stderr=stream,
    )
    lines = stream.getvalue().splitlines()
    assert any("running: task 0000 solving" in line for line in lines)
    judging = [line for line in lines if "running: task 0000 judge" in line]
    assert judging and "solver calls 1" in judging[-1]
    assert any("running: coalescer" in line for line in lines)


def test_a_one_slot_server_never_has_two_calls_in_flight(write_config, tmp_path, model_server):
    """llama.cpp reports one slot in /props: with --jobs 4 the solver and the three judges of
    each task queue in make_review, one call at the server at a time, and the progress line
    shows the queue."""
    model_server.total_slots = 1
    stream = io.StringIO()
    output = tmp_path / "run"
    with model_server.releasing_one_by_one():
        run_pipeline(
            options=RunOptions(config=write_config(), n=3, output=output, jobs=4, tick_seconds=0.2),
            stderr=stream,
        )
    assert model_server.flight().peak == 1
    assert len(model_server.chat_requests()) >= 3 * 4 + 1
    endpoint = load(output / "endpoint.json")
    assert endpoint["max_concurrency"] == 1
    assert endpoint["concurrency_source"] == "the server's /props total_slots"
    assert "(at most 1 in flight)" in stream.getvalue()
    # Every model judgment names its judge model and what served it.
    judged = [r for r in load(output / "quality-reviews.json")["reviews"]
              if r["reviewer"]["kind"] == "model"]  # fmt: skip
    assert len(judged) == 3 * 3 + 3 + 1
    assert {json.dumps(r["attributes"]["judge_model"]) for r in judged} == {
        json.dumps({"name": "test/solver-judge", "revision": "a" * 40,
                    "endpoint_kind": "llama.cpp server (answers /props)"})
    }  # fmt: skip


def test_max_concurrency_is_kept_against_a_server_that_takes_more(
    write_config, tmp_path, model_server
):
    model_server.total_slots = 8
    output = tmp_path / "run"
    with model_server.releasing_one_by_one():
        make_review(*args(write_config(model={"max_concurrency": 2}), output, "--jobs", "4", n=3))
    assert model_server.flight().peak <= 2
    assert load(output / "endpoint.json")["concurrency_source"] == "model.max_concurrency"


def test_ctrl_c_during_a_slow_call_stops_without_waiting_for_it(
    write_config, tmp_path, model_server
):
    slow, released = threading.Event(), threading.Event()

    def hangs_judges(request):
        if request_kind(request) == "judge":
            slow.set()
            released.wait(600)  # answered only after the run ended: it must not wait for it
        return ReviewModel()(request)

    model_server.default = hangs_judges
    config, output = write_config(model={"timeout": 600}), tmp_path / "run"
    command = [sys.executable, "manage.py", "make_review", *args(config, output)]
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert slow.wait(DEADLINE_SECONDS)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=DEADLINE_SECONDS)
    finally:
        released.set()
        if process.poll() is None:
            process.kill()
    text = stderr.decode()
    assert process.returncode == 1
    assert "Interrupted; saved files remain in place. Run again with --resume" in text
    assert "Traceback" not in text
    model_server.default = ReviewModel()
    stdout, _ = make_review(*args(config, output, "--resume"))
    assert stdout.startswith("Saved 6 reviews")


def test_a_slow_body_is_a_failed_call_not_a_hang(write_config, tmp_path, model_server):
    def trickles_first_judge(request):
        if request_kind(request) == "judge" and not trickled:
            trickled.append(1)
            return Reply(body=completion(json.dumps(opinion("A slow answer."))),
                         trickle_seconds=0.2)  # fmt: skip
        return ReviewModel()(request)

    trickled: list[int] = []
    model_server.default = trickles_first_judge
    output = tmp_path / "run"
    make_review(*args(write_config(model={"timeout": 2}), output))
    errors = [p.read_text() for p in output.rglob("http-error.txt")]
    assert errors == ["no complete answer within the 2 s deadline\n"]


STUBBORN_WORKER = """
import os, pathlib, signal, sys, time
out = pathlib.Path(sys.argv[2])
# A native worker that notes a SIGINT and goes on working.
signal.signal(signal.SIGINT, lambda *_: (out / "interrupted").touch())
(out / "started").write_text(str(os.getpid()))
time.sleep(600)
"""


def test_a_second_ctrl_c_ends_the_run_and_its_workers_at_once(write_config, tmp_path):
    """The first Ctrl-C gives a stubborn worker its grace period; the second one does not wait,
    and takes the worker with it."""
    script = tmp_path / "stubborn_worker.py"
    script.write_text(STUBBORN_WORKER, encoding="utf-8")
    worker = {"python": sys.executable, "script": str(script), "pythonpath": []}
    config = write_config(runtime={"workers": {"skyrl_gym": worker}})
    output = tmp_path / "run"
    command = [sys.executable, "manage.py", "make_review", *args(config, output)]
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    execution = output / "tasks/0000/execution-000"
    wait_until(
        lambda: (execution / "started").is_file() or process.poll() is not None,
        what="the worker started",
    )
    process.send_signal(signal.SIGINT)
    # The run passed the first Ctrl-C on to the worker, and waits out its grace period (15 s;
    # the returncode below says that the second Ctrl-C, not its end, stopped the run).
    wait_until(
        lambda: (execution / "interrupted").is_file() or process.poll() is not None,
        what="the worker interrupted",
    )
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=DEADLINE_SECONDS)
    assert process.returncode == 130
    assert "Interrupted again: stopping now; saved files remain in place." in stderr.decode()
    worker = int((execution / "started").read_text())
    wait_until(lambda: not running(worker), what="the worker killed")


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit may wait for a reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")
