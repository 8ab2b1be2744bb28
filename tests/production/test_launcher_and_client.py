"""The worker launcher and the model client against real processes and
the test model server."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from reviews.production.runtime.config import STRUCTURED_OUTPUT_KEYS, ModelConfig
from reviews.production.runtime.errors import ReviewProductionError, UsageError, require_positive
from reviews.production.runtime.launcher import run_attempt, worker_route
from reviews.production.runtime.model_client import ModelClient, ModelRefused, chat_body
from reviews.production.runtime.tasks import Task
from tests.model_server import ModelServer, Reply, completion, requested_dialect
from tests.waiting import DEADLINE_SECONDS, wait_until

pytestmark = pytest.mark.slow

TASK = Task(
    id="t1", route="custom", repository="org/x", dataset_revision=None, source_id="S:x",
    task_path="t1", row_index=0, prompt=[{"role": "user", "content": "hi"}], extras={},
    env_id=None,
)  # fmt: skip


def runtime_with(
    tmp_path: Path, body: str, *, timeout: float = 60, name: str = "worker.py"
) -> dict:
    script = tmp_path / name
    script.write_text(textwrap.dedent(body))
    return {
        "worker_timeout": timeout,
        "workers": {"custom": {"python": sys.executable, "script": str(script), "pythonpath": []}},
    }


def attempt(tmp_path: Path, runtime: dict, **kwargs) -> dict:
    return run_attempt(
        run_dir=tmp_path / "run", number=0, task=TASK, model={"name": "m"}, runtime=runtime,
        stop=kwargs.pop("stop", threading.Event()), **kwargs,
    )  # fmt: skip


def test_contract_arguments_group_and_done_marker(tmp_path):
    runtime = runtime_with(
        tmp_path,
        """
        import json, os, sys
        from pathlib import Path
        data = json.loads(Path(sys.argv[1]).read_text())
        out = Path(sys.argv[2])
        print("to stdout"); print("to stderr", file=sys.stderr)
        assert os.getpgid(0) == os.getpid()  # its own process group
        assert "api_key" not in json.dumps(data)
        (out / "attempt.json").write_text(json.dumps({"verification": {"status": "verified"},
            "verifier_executed": True, "done": True, "turns": 1, "task": data["task"]["id"],
            "cwd": os.getcwd()}))
        """,
    )
    outcome = attempt(tmp_path, runtime)
    execution = tmp_path / "run/tasks/0000/execution-000"
    assert outcome["execution_path"] == "tasks/0000/execution-000"
    assert outcome["task"] == "t1" and outcome["cwd"] == str(execution)
    assert (execution / "worker.stdout").read_text() == "to stdout\n"
    assert (execution / "worker.stderr").read_text() == "to stderr\n"
    assert json.loads((execution / "input.json").read_text())["config"] == runtime
    marker = json.loads((tmp_path / "run/tasks/0000/attempt.json").read_text())
    assert marker == json.loads((execution / "attempt.json").read_text()) == outcome


def test_missing_attempt_json_fails_and_a_retry_gets_a_new_directory(tmp_path):
    runtime = runtime_with(tmp_path, "print('forgot the attempt')\n")
    for number in (0, 1):
        with pytest.raises(ReviewProductionError) as failure:
            attempt(tmp_path, runtime)
        stderr = tmp_path / f"run/tasks/0000/execution-{number:03d}/worker.stderr"
        assert str(failure.value) == (
            f"Native worker failed; inspect {stderr}. Resume retries this unfinished task."
        )
    assert not (tmp_path / "run/tasks/0000/attempt.json").exists()


def test_timeout_sends_sigint_then_sigkill_to_the_whole_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    runtime = runtime_with(
        tmp_path,
        f"""
        import signal, subprocess, sys, time
        def on_interrupt(*_):
            print("got SIGINT", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, on_interrupt)  # ignores it: SIGKILL must follow
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        while True:
            time.sleep(0.05)
        """,
        timeout=1.0,
    )
    with pytest.raises(ReviewProductionError) as failure:
        attempt(tmp_path, runtime, grace_seconds=0.5)
    stderr = tmp_path / "run/tasks/0000/execution-000/worker.stderr"
    assert str(failure.value).startswith("Native worker timed out after 1 s; inspect")
    assert "got SIGINT" in stderr.read_text()
    child = int(pid_file.read_text())
    # The worker's own child died with the group (a SIGKILL lands asynchronously).
    wait_until(lambda: not alive(child), what="the worker's child killed")


def alive(pid: int) -> bool:
    """Running (a killed child left to a non-reaping init stays a zombie: not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.is_file() or "\nState:\tZ" not in status.read_text()


def test_a_stopped_run_interrupts_the_worker(tmp_path):
    runtime = runtime_with(tmp_path, "import time\ntime.sleep(60)\n")
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    with pytest.raises(KeyboardInterrupt):
        attempt(tmp_path, runtime, stop=stop, grace_seconds=5)


def test_builtin_routes(tmp_path):
    runtime = {"marinskyrl_checkout": "/c", "gym_python": "/py", "harbor_checkout": "/h",
               "harbor_python": "/hpy", "workers": {}}  # fmt: skip
    gym = worker_route(route="skyrl_gym", runtime=runtime)
    assert gym.python == "/py" and gym.script.endswith("workers/gym_worker.py")
    assert gym.pythonpath == ("/c/skyrl-gym", "/c/skyrl-train", "/c")
    harbor = worker_route(route="harbor", runtime=runtime)
    assert harbor.pythonpath == ("/h/src", "/c/skyrl-gym", "/c/skyrl-train", "/c")
    # A registry-installed Harbor is the interpreter's own: no checkout on the path.
    registry = worker_route(route="harbor", runtime={**runtime, "harbor_checkout": None})
    assert registry.python == "/hpy"
    assert registry.pythonpath == ("/c/skyrl-gym", "/c/skyrl-train", "/c")
    with pytest.raises(ReviewProductionError, match=r"runtime\.harbor_python is required"):
        worker_route(route="harbor", runtime={**runtime, "harbor_python": None})
    with pytest.raises(ReviewProductionError, match="No native worker for route other"):
        worker_route(route="other", runtime=runtime)
    for route in ("skyrl_gym", "harbor"):
        with pytest.raises(ReviewProductionError) as refused:
            worker_route(route=route, runtime={**runtime, "marinskyrl_checkout": ""})
        assert str(refused.value) == (
            "runtime.marinskyrl_checkout is required to run native workers"
        )


def test_counts_of_the_command_line_are_refused_by_name():
    require_positive(n=1, jobs=2, max_evidence_bytes=3)
    for arguments, message in [
        ({"n": 0, "jobs": 0}, "n must be positive"),
        ({"n": 1, "jobs": -1}, "jobs must be positive"),
        ({"max_evidence_bytes": 0}, "max-evidence-bytes must be positive"),
    ]:
        with pytest.raises(UsageError) as refused:
            require_positive(**arguments)
        assert str(refused.value) == message


# --- the model client ---


def model_config(server: ModelServer, **overrides) -> ModelConfig:
    values = dict(
        name="judge", base_url=server.base_url, timeout=5.0, revision=None,
        parameters={"temperature": 0.2}, review_parameters={"temperature": 0.0},
        api_key_env=None, response_format="json_schema", max_retries=2,
        retry_backoff_seconds=0.01,
    )  # fmt: skip
    values.update(overrides)
    return ModelConfig(**values)


def test_bounded_retries_each_in_its_own_call_dir(tmp_path):
    with ModelServer(default=lambda r: completion("{}")) as server:
        server.fail_first(3, status=500)
        client = ModelClient(model=model_config(server), stop=threading.Event())
        stage = tmp_path / "tasks/0002/judges/3"
        with pytest.raises(ReviewProductionError) as failure:
            client.complete(stage_dir=stage, body={"model": "judge"})
        assert str(failure.value) == (
            "task 0002 judge 3: the model endpoint failed after 3 attempts (HTTP 500: scripted "
            f"failure); raw calls saved in {stage}, the last in call-002. Check that the server "
            f"at model.base_url ({server.base_url}) is up (model.max_retries sets how often a "
            "call is tried), then run again with --resume (finished stages are kept)"
        )
        assert sorted(p.name for p in stage.iterdir()) == ["call-000", "call-001", "call-002"]
        # The next attempt continues the numbering and succeeds.
        _, call_dir = client.complete(stage_dir=stage, body={"model": "judge"})
        assert call_dir.name == "call-003"
        assert client.stats.calls == 4 and client.stats.retries == 2


def test_timeouts_are_retried(tmp_path):
    with ModelServer(default=lambda r: completion("{}"), latency=0.6) as server:
        client = ModelClient(
            model=model_config(server, timeout=0.3, max_retries=1), stop=threading.Event()
        )
        with pytest.raises(ReviewProductionError, match="failed after 2 attempts") as failed:
            client.complete(stage_dir=tmp_path, body={})
        # A deadline names the setting that helps a slow server.
        assert "raise model.timeout (now 0.3 s; time queued for model.max_concurrency" in str(
            failed.value
        )
        assert "within the 0.3 s deadline" in (tmp_path / "call-001/http-error.txt").read_text()
        assert len(server.chat_requests()) == 2


def test_the_timeout_is_a_deadline_for_the_whole_call(tmp_path):
    """A body trickled one byte at a time never trips a per-read timeout; the deadline holds."""
    with ModelServer() as server:
        server.enqueue(Reply(body=completion("x" * 200), trickle_seconds=0.05))
        client = ModelClient(
            model=model_config(server, timeout=1.0, max_retries=0), stop=threading.Event()
        )
        with pytest.raises(ReviewProductionError, match=r"within the 1 s deadline"):
            client.complete(stage_dir=tmp_path, body={})
        # The whole answer would take 20 s; the call ended at its deadline, part-way through.
        assert 0 < len((tmp_path / "call-000/response.partial").read_bytes()) < 200


@pytest.mark.parametrize("declared", [True, False])
def test_answers_over_the_size_cap_are_refused_and_saved_as_errors(tmp_path, declared):
    with ModelServer() as server:
        server.enqueue(Reply(size_bytes=64 * 1024 * 1024, declare_length=declared))
        client = ModelClient(
            model=model_config(server, max_response_bytes=1024 * 1024), stop=threading.Event()
        )
        with pytest.raises(ReviewProductionError) as failure:
            client.complete(stage_dir=tmp_path / "coalescer", body={})
        message = str(failure.value)
        assert message.startswith("coalescer: the model endpoint's answer was refused: the ")
        assert "1,048,576" in message and "(model.max_response_bytes)" in message
        assert len(server.chat_requests()) == 1  # refused, never retried
        error = (tmp_path / "coalescer/call-000/http-error.txt").read_text()
        assert error.startswith("refused: the answer")
        partial = tmp_path / "coalescer/call-000/response.partial"
        assert not partial.exists() if declared else partial.stat().st_size <= 1024 * 1024


def test_errors_carry_the_servers_reason_and_client_errors_are_not_retried(tmp_path):
    with ModelServer() as server:
        server.enqueue(Reply(status=401, body={"error": {"message": "Invalid API key\n(x)"}}))
        client = ModelClient(model=model_config(server), stop=threading.Event())
        with pytest.raises(ReviewProductionError) as failure:
            client.complete(stage_dir=tmp_path / "tasks/0000/judges/1", body={})
        assert str(failure.value) == (
            "task 0000 judge 1: the model endpoint answered HTTP 401: Invalid API key (x); raw "
            f"response saved in {tmp_path / 'tasks/0000/judges/1/call-000'}"
        )
        assert len(server.requests) == 1
        assert (
            (tmp_path / "tasks/0000/judges/1/call-000/http-error.txt")
            .read_text()
            .startswith("HTTP 401")
        )


def test_a_refused_structured_output_dialect_is_not_an_outage(tmp_path):
    # llama-cpp-python answers OpenAI's json_schema form with HTTP 500.
    with ModelServer(default=lambda r: completion("{}"), refused_formats={"json_schema": 500}) as (
        server
    ):
        client = ModelClient(model=model_config(server), stop=threading.Event())
        body = chat_body(model=client.model, messages=[], schema={"type": "object"})
        with pytest.raises(ModelRefused) as failure:
            client.complete(stage_dir=tmp_path / "tasks/0001/judges/2", body=body)
        message = str(failure.value)
        assert message.startswith(
            "task 0001 judge 2: the server refused the structured-output request "
            "(model.response_format json_schema; HTTP 500: response_format of this kind is not "
            "supported: json_schema); choose the dialect it speaks"
        )
        assert len(server.chat_requests()) == 1
        llama = model_config(server, response_format="json_object_schema")
        body = chat_body(model=llama, messages=[], schema={"type": "object"})
        answer, _ = ModelClient(model=llama, stop=threading.Event()).complete(
            stage_dir=tmp_path / "again", body=body
        )
        assert answer["choices"][0]["message"]["content"] == "{}"


@pytest.mark.parametrize("style", ["llama_cpp_python", "vllm", "llama_server"])
def test_a_prompt_over_the_servers_context_names_the_setting(tmp_path, style):
    with ModelServer(context_tokens=64, context_style=style) as server:
        client = ModelClient(model=model_config(server), stop=threading.Event())
        body = {"messages": [{"role": "user", "content": "word " * 100}], "max_tokens": 10}
        with pytest.raises(ModelRefused) as failure:
            client.complete(stage_dir=tmp_path / "tasks/0000/judges/1/segments/002", body=body)
        message = str(failure.value)
        assert message.startswith("task 0000 judge 1 segment 002: the prompt does not fit the ")
        assert "set model.context_tokens to 64 so that evidence is segmented to fit" in message
        assert len(server.chat_requests()) == 1


def test_stop_cancels_a_call_in_flight(tmp_path):
    asked, released = threading.Event(), threading.Event()

    def never_answers(request):
        asked.set()
        released.wait(600)  # answered only after the test: a call that waits for it fails
        return completion("{}")

    with ModelServer(default=never_answers) as server:
        stop = threading.Event()
        client = ModelClient(model=model_config(server, timeout=600, max_retries=0), stop=stop)
        seen: list = []

        def stop_while_asked() -> None:
            if asked.wait(DEADLINE_SECONDS):
                seen.extend(client.in_flight())
            stop.set()

        threading.Thread(target=stop_while_asked, daemon=True).start()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.complete(stage_dir=tmp_path / "tasks/0004/judges/1", body={})
        finally:
            released.set()
        assert [call.label for call in seen] == ["task 0004 judge 1"]
        assert client.in_flight() == []


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("json_schema", {"response_format": {"type": "json_schema", "json_schema": {
            "name": "quality_review", "strict": True, "schema": {"type": "object"}}}}),
        ("json_object_schema",
         {"response_format": {"type": "json_object", "schema": {"type": "object"}}}),
        ("guided_json", {"guided_json": {"type": "object"}}),
        ("structured_outputs", {"structured_outputs": {"json": {"type": "object"}}}),
        ("json_object", {"response_format": {"type": "json_object"}}),
        ("none", {}),
    ],
)  # fmt: skip
def test_structured_output_dialects(tmp_path, mode, expected):
    with ModelServer(default=lambda r: completion("{}")) as server:
        config = model_config(server, response_format=mode)
        body = chat_body(
            model=config, messages=[{"role": "user", "content": "x"}], schema={"type": "object"}
        )
        assert body["model"] == "judge" and body["stream"] is False and body["n"] == 1
        assert body["temperature"] == 0.0  # review_parameters over parameters
        fields = {k: v for k, v in body.items() if k in STRUCTURED_OUTPUT_KEYS}
        assert fields == expected
        assert requested_dialect(body) == mode


def test_bearer_key_is_sent_and_never_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CLIENT_KEY", "sk-client-secret")
    with ModelServer(default=lambda r: completion("{}")) as server:
        client = ModelClient(
            model=model_config(server, api_key_env="ATLAS_CLIENT_KEY"), stop=threading.Event()
        )
        client.complete(stage_dir=tmp_path, body={"model": "judge"})
        assert server.requests[0].headers["Authorization"] == "Bearer sk-client-secret"
        assert server.requests[0].path == "/v1/chat/completions"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-client-secret" not in path.read_bytes()


def test_the_test_server_cuts_answers_at_max_tokens_as_real_servers_do(tmp_path):
    with ModelServer(default=lambda r: completion("one two three four five"),
                     honour_max_tokens=True) as server:  # fmt: skip
        client = ModelClient(model=model_config(server), stop=threading.Event())
        answer, _ = client.complete(stage_dir=tmp_path, body={"max_tokens": 3, "messages": []})
        whole, _ = client.complete(stage_dir=tmp_path, body={"max_tokens": 99, "messages": []})
    assert answer["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": "one two"},
        "finish_reason": "length",
    }
    assert answer["usage"]["completion_tokens"] == 3
    assert whole["choices"][0]["finish_reason"] == "stop"
    assert whole["usage"]["completion_tokens"] == 9


# --- calls in flight per endpoint ---


def test_calls_beyond_max_concurrency_queue_before_their_deadline_starts(tmp_path):
    """With model.max_concurrency 2, five concurrent calls put two at the server and queue three
    in the client, where no deadline runs (they are not in flight); each answer lets one in."""
    with ModelServer(default=lambda r: completion("{}")) as server:
        server.hold()
        client = ModelClient(
            model=model_config(server, max_concurrency=2, timeout=600), stop=threading.Event()
        )
        threads = [
            threading.Thread(
                target=client.complete,
                kwargs={"stage_dir": tmp_path / f"tasks/000{n}/judges/1", "body": {}},
            )
            for n in range(5)
        ]
        for thread in threads:
            thread.start()
        wait_until(lambda: client.concurrency().queued == 3, what="three calls queued")
        assert server.wait_for_flight(lambda f: f.held == 2, what="two held").in_flight == 2
        assert len(client.in_flight()) == 2  # the queued three have no deadline running
        for answered in range(1, 4):
            server.release(1)
            wait_until(
                lambda answered=answered: client.concurrency().queued == 3 - answered,
                what=f"{answered} answered, one more let in",
            )
            assert server.wait_for_flight(lambda f: f.held == 2, what="two held").in_flight == 2
        server.release_all()
        for thread in threads:
            thread.join(DEADLINE_SECONDS)
        assert server.flight().peak == 2
        assert len(server.chat_requests()) == 5
        assert client.concurrency_record() == {
            "max_concurrency": 2, "concurrency_source": "model.max_concurrency"
        }  # fmt: skip


def test_the_servers_slots_bound_the_calls_when_max_concurrency_is_unset(tmp_path):
    with ModelServer(default=lambda r: completion("{}"), total_slots=1) as server:
        client = ModelClient(model=model_config(server), stop=threading.Event(), connections=12)
        assert client.concurrency().limit == 12  # the pool, until the server says
        assert client.concurrency_record()["max_concurrency"] is None
        room = client.prompt_room()
        assert room.server_slots == 1
        assert client.concurrency_record() == {
            "max_concurrency": 1, "concurrency_source": "the server's /props total_slots"
        }  # fmt: skip
        configured = ModelClient(
            model=model_config(server, max_concurrency=3), stop=threading.Event()
        )
        configured.prompt_room()
        assert configured.concurrency().limit == 3  # the setting wins over the server


def test_a_queued_call_ends_when_the_run_is_stopped(tmp_path):
    with ModelServer(default=lambda r: completion("{}")) as server:
        server.hold()
        stop = threading.Event()
        client = ModelClient(model=model_config(server, max_concurrency=1, timeout=600), stop=stop)
        stopped: dict[str, BaseException] = {}

        def call(name: str) -> None:
            try:
                client.complete(stage_dir=tmp_path / name, body={})
            except BaseException as exc:
                stopped[name] = exc

        first = threading.Thread(target=call, args=("first",))
        first.start()
        server.wait_for_flight(lambda f: f.held == 1, what="the first call at the server")
        queued = threading.Thread(target=call, args=("second",))
        queued.start()
        wait_until(lambda: client.concurrency().queued == 1, what="the second call queued")
        stop.set()
        queued.join(DEADLINE_SECONDS)
        first.join(DEADLINE_SECONDS)
        # The call in flight is cancelled; the queued one ends without reaching the server.
        assert {name: type(exc).__name__ for name, exc in stopped.items()} == {
            "first": "Interrupted", "second": "Interrupted"
        }  # fmt: skip
        assert len(server.chat_requests()) == 1


def test_a_retry_is_counted_while_it_runs(tmp_path):
    """The progress line's retries include a retry still waiting for its answer."""
    with ModelServer(default=lambda r: completion("{}")) as server:
        server.fail_first(1, status=503)
        server.hold()
        server.release(1)  # the failure is answered; the retry stays held
        client = ModelClient(model=model_config(server, timeout=600), stop=threading.Event())
        thread = threading.Thread(
            target=client.complete, kwargs={"stage_dir": tmp_path / "coalescer", "body": {}}
        )
        thread.start()
        server.wait_for_flight(
            lambda f: f.held == 1 and len(server.chat_requests()) == 2, what="the retry held"
        )
        assert (client.stats.calls, client.stats.retries) == (1, 1)
        server.release_all()
        thread.join(DEADLINE_SECONDS)
        assert (client.stats.calls, client.stats.retries) == (2, 1)
