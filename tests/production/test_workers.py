"""The native workers' own rules. The worker modules are standalone scripts; tests load
them the way their interpreter does, with their folder first on ``sys.path``."""

from __future__ import annotations

import ast
import base64
import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.identity import harbor_identity as harbor_identity_of
from tests.model_server import ModelServer, completion
from tests.production.conftest import gsm8k_rows, write_parquet
from tests.production.contract_checkout import add_probe_environment, add_verification_contract
from tests.production.helpers import load, make_review, review_fails
from tests.production.review_model import ReviewModel

WORKERS = Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers"


@pytest.fixture(scope="module")
def workers():
    sys.path.insert(0, str(WORKERS))
    try:
        yield (
            importlib.import_module("gym_worker"),
            importlib.import_module("harbor_worker"),
            importlib.import_module("worker_support"),
        )
    finally:
        sys.path.remove(str(WORKERS))


def test_workers_never_import_the_project():
    project = {"django", "reviews", "atlas", "difficulty", "tests"}
    for path in WORKERS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not {name.split(".")[0] for name in names} & project, (path, names)


def test_chat_options_from_environment_metadata(workers):
    gym, _, _ = workers
    params = {
        "model": "x", "input": [], "store": True, "temperature": 0.3,
        "max_output_tokens": 100,
        "tools": [{"type": "function", "name": "run", "description": "d", "parameters": {}},
                  {"type": "function", "function": {"name": "kept"}}],
    }  # fmt: skip
    metadata = {"chat_completion_params": params, "other": "not an option"}
    options = gym.chat_options(metadata=metadata, parameters={})
    assert options == {
        "temperature": 0.3,
        "max_completion_tokens": 100,
        "tools": [
            {"type": "function", "function": {"name": "run", "description": "d", "parameters": {}}},
            {"type": "function", "function": {"name": "kept"}},
        ],
    }
    assert "max_completion_tokens" not in gym.chat_options(
        metadata=metadata, parameters={"max_tokens": 10}
    )
    # Only chat_completion_params are options; an empty tool list is not sent.
    assert gym.chat_options(metadata={"temperature": 1.0}, parameters={}) == {}
    empty = {"chat_completion_params": {"tools": [], "top_p": 0.5}}
    assert gym.chat_options(metadata=empty, parameters={}) == {"top_p": 0.5}


def test_project_fold_follows_marinskyrls_rules(workers):
    contract = importlib.import_module("gym_contract")
    fold = contract.ProjectContract()
    legacy = fold.from_step({"reward": 0.5, "done": True, "metadata": {"m": 1}})
    assert legacy["status"] == "verified" and legacy["score"] == 0.5
    assert legacy["diagnostics"] == {"m": 1} and legacy["reason"] is None
    assert fold.from_step({"done": True})["status"] == "unavailable"
    assert fold.fold([])["reason"] == "environment produced no verification result"
    assert fold.fold([legacy]) is legacy
    tool_turn = contract.unavailable("a tool turn")
    assert fold.fold([legacy, tool_turn]) is tool_turn  # the last verdict has no score
    full = fold.from_step({"reward": 1.0, "metadata": {}})
    folded = fold.fold([legacy, full])
    assert folded["score"] == 0.75 and folded["passed"] is False
    assert folded["diagnostics"]["num_scored_steps"] == 2
    assert fold.fold([full, full])["passed"] is True
    # ``passed`` left open is decided by the normalised score, as the fold does per step.
    assert contract.plain_verification(legacy)["passed"] is False
    assert contract.plain_verification(full)["passed"] is True
    with pytest.raises(ValueError, match="not finite"):
        fold.from_step({"reward": math.inf})
    with pytest.raises(TypeError):
        contract.plain_verification({"status": "fine"})


def test_gym_verification_rules(workers, tmp_path):
    gym, _, support = workers
    data = {"task": {"env_id": "gsm8k"}, "model": {}, "config": {}}
    attempt = gym.Attempt(
        data=data, execution_dir=tmp_path, events=support.EventLog(tmp_path / "t.jsonl")
    )
    verdict = attempt.contract.from_step({"reward": 1.0, "done": True, "metadata": {}})

    def rule(env_id="gsm8k", verdicts=(verdict,), done=True):
        return attempt._verification(env_id=env_id, verdicts=list(verdicts), done=done, max_turns=3)

    assert rule()["status"] == "verified" and rule()["passed"] is True
    for env_id in ("preference", "prompt_only"):
        assert rule(env_id=env_id)["status"] == "unavailable"
    assert rule(done=False) == {
        "status": "unavailable", "score": None, "passed": None,
        "reason": "Turn cap of 3 reached without a terminal verdict", "diagnostics": {},
    }  # fmt: skip
    pending = attempt.contract.from_step({"reward": 3.0, "metadata": {"cohort_reward_pending": 1}})
    assert (
        rule(verdicts=(pending, verdict))["reason"] == "The verdict's reward is pending its cohort"
    )


def test_component_rewards(workers):
    _, harbor, _ = workers
    result = harbor.component_verification({"a": 1.0, "b": 0.5})
    assert result == {
        "status": "verified", "score": 0.75, "passed": False, "score_min": 0.0,
        "score_max": 1.0, "reason": None,
        "diagnostics": {"native_rewards": {"a": 1.0, "b": 0.5},
                        "score_aggregation": "component_mean",
                        "pass_criterion": "all_components_equal_one"},
    }  # fmt: skip
    assert harbor.component_verification({"a": 1.0, "b": 1.0 - 1e-12})["passed"] is True
    for bad in ({}, {"a": 1.5}, {"a": math.nan}, {"a": True}, None):
        with pytest.raises(ValueError):
            harbor.component_verification(bad)


def trial_result(rewards=None, exception=None, **phases):
    document = {"verifier_result": None if rewards is None else {"rewards": rewards},
                "exception_info": exception}  # fmt: skip
    return document | {phase: {"started_at": "2026-01-01T00:00:00Z"} for phase in phases}


def test_harbor_verdicts_follow_marinskyrl(workers):
    _, harbor, _ = workers

    def verdict(document, components=False):
        return harbor.harbor_verification(document=document, components=components)

    zero = verdict(trial_result({"reward": 0}))
    assert (zero["status"], zero["score"], zero["passed"]) == ("verified", 0.0, False)
    # Passed when the score is above zero, not only at one.
    assert verdict(trial_result({"reward": 0.25}))["passed"] is True
    # A verdict reached before an agent timeout still counts.
    late = verdict(trial_result({"reward": 1.0}, {"exception_type": "AgentTimeoutError"}))
    assert late["status"] == "verified" and late["passed"] is True
    failed = verdict(trial_result(exception={"exception_type": "VerifierTimeoutError",
                                             "exception_message": "took too long"},
                                  environment_setup=1, agent_setup=1, verifier=1))  # fmt: skip
    assert failed == {
        "status": "error", "score": None, "passed": None,
        "reason": "verification unavailable after VerifierTimeoutError",
        "diagnostics": {"exception_type": "VerifierTimeoutError",
                        "exception_message": "took too long", "phase": "verifier"},
    }  # fmt: skip
    assert verdict(trial_result())["status"] == "unavailable"
    malformed = verdict(trial_result({"accuracy": 1.0}))
    assert malformed["status"] == "error"
    assert malformed["reason"] == "Harbor verifier result is malformed"
    assert malformed["diagnostics"]["missing_field"] == "rewards.reward"
    with pytest.raises(ValueError, match="not finite"):
        verdict(trial_result({"reward": math.inf}))
    assert verdict(trial_result({"a": 1.0, "b": 0.0}), components=True)["score"] == 0.5


def test_harbor_trial_settings(workers, tmp_path):
    _, harbor, _ = workers
    a = harbor.trial_name(execution_dir=tmp_path / "execution-000")
    b = harbor.trial_name(execution_dir=tmp_path / "execution-001")
    assert a.startswith("review-") and len(a) == 27 and a != b
    data = {
        "model": {"name": "Qwen/Q", "base_url": "http://m/v1", "parameters": {"top_p": 0.9}},
        "config": {"harbor_agent": {"name": "terminus-2", "kwargs": {"x": 1}},
                   "max_turns": 4, "agent_timeout": 90},
    }  # fmt: skip
    declared = frozenset({"x", "api_base", "llm_call_kwargs", "max_turns", "store_all_messages"})
    config, dropped = harbor.agent_config(data=data, declared=declared, uses_model=True)
    assert config == {
        "model_name": "openai/Qwen/Q",
        "name": "terminus-2",
        "override_timeout_sec": 90.0,
        "kwargs": {"x": 1, "api_base": "http://m/v1", "llm_call_kwargs": {"top_p": 0.9},
                   "max_turns": 4, "store_all_messages": True},
    }  # fmt: skip
    assert dropped == ["enable_episode_logging", "trajectory_dump_cadence"]
    # A Harbor without options models passes every option on; an agent without a model
    # connection gets no model name.
    config, dropped = harbor.agent_config(data=data, declared=None, uses_model=False)
    assert "model_name" not in config and dropped == []
    assert config["kwargs"]["trajectory_dump_cadence"] == "per_turn"
    data["config"]["harbor_agent"]["name"] = "offline_terminus:OfflineTerminus2"
    config, _ = harbor.agent_config(data=data, declared=declared, uses_model=True)
    assert config["import_path"] == "offline_terminus:OfflineTerminus2" and "name" not in config


def test_declared_options_read_field_names_and_aliases(workers):
    _, harbor, _ = workers

    class Choices:
        choices = ("max_turns", "episodes")

    class Field:
        def __init__(self, alias=None, validation_alias=None):
            self.alias, self.validation_alias = alias, validation_alias

    class Options:
        model_fields = {"max_turns": Field(validation_alias=Choices()),
                        "api_base": Field(alias="apiBase")}  # fmt: skip

    class Agent:
        options_model = Options

    class Modelless:
        options_model = None

    assert harbor.declared_options(Agent) == {"max_turns", "episodes", "api_base", "apiBase"}
    assert harbor.declared_options(Modelless) == frozenset()
    assert harbor.declared_options(object) is None


def test_packed_task_is_materialised(workers, tmp_path):
    _, harbor, _ = workers
    dataset = tmp_path / "packed.jsonl"
    dataset.write_text(
        json.dumps({"id": "t9", "files": {"instruction.md": "Do.", "tests/test.sh": "exit 0"}})
        + "\n"
    )
    target = harbor.materialize_packed_task(
        packed={"dataset_path": str(dataset), "key": "t9"}, execution_dir=tmp_path / "exe"
    )
    assert target == tmp_path / "exe/packed-task-cache/t9"
    assert (target / "tests/test.sh").read_text() == "exit 0"
    dataset.write_text(json.dumps({"id": "t9", "files": {"../escape": "x"}}) + "\n")
    with pytest.raises(ValueError, match="escapes"):
        harbor.materialize_packed_task(
            packed={"dataset_path": str(dataset), "key": "t9"}, execution_dir=tmp_path / "e2"
        )


@pytest.mark.slow
def test_multi_turn_environment_with_observations(tmp_path, write_config, model_server):
    model_server.default = ReviewModel(wrong=True)
    rows = [{**row, "env_class": "gsm8k_multi_turn"} for row in gsm8k_rows(1)]
    config = write_config(tasks_path=write_parquet(tmp_path / "mt.parquet", rows))
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    execution = output / "tasks/0000/execution-000"
    trace = load(execution / "solver-trace.json")
    assert trace["turns"] == 2 and trace["done"] is True
    assert [m["role"] for m in trace["messages"]] == ["user", "assistant", "user", "assistant"]
    assert (execution / "solver/turn-001/request.json").is_file()
    verification = load(execution / "attempt.json")["verification"]
    assert verification["status"] == "verified" and verification["passed"] is False
    assert verification["score"] == pytest.approx(0.1)
    events = [json.loads(line)["event"] for line in (execution / "verifier-trace.jsonl").open()]
    assert events == ["verify_start", "verify_end"] * 2


@pytest.mark.slow
def test_an_exception_in_the_worker_is_an_error_verification(tmp_path, write_config):
    rows = [{**row, "env_class": "no_such_env"} for row in gsm8k_rows(1)]
    config = write_config(tasks_path=write_parquet(tmp_path / "x.parquet", rows))
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "error"
    assert attempt["verification"]["diagnostics"]["exception_type"]
    assert attempt["verifier_executed"] is False
    event = json.loads((output / "tasks/0000/execution-000/verifier-trace.jsonl").read_text())
    assert event["event"] == "execution_error" and "Traceback" in event["traceback"]
    runtime = next(
        r for r in load(output / "quality-reviews.json")["reviews"]
        if r["method"] == "runtime_execution"
    )  # fmt: skip
    assert runtime["verdict"] == "inconclusive" and runtime["tests_executed"] is False
    assert runtime["summary"].startswith("Native skyrl_gym verification: error.")


def tool_call_reply() -> dict:
    reply = completion(None)
    reply["choices"][0]["message"]["tool_calls"] = [
        {"id": "call-1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]
    reply["choices"][0]["finish_reason"] = "tool_calls"
    return reply


def probe_run(*, tmp_path, write_config, model_server, checkout) -> Path:
    """One tool_probe task: a tool call, a restarted conversation, a critic-graded answer."""
    add_probe_environment(checkout)
    model_server.enqueue(tool_call_reply(), completion("#### 7"), completion("1"))
    rows = [{**row, "env_class": "tool_probe"} for row in gsm8k_rows(1)]
    judge = {"base_url": model_server.base_url, "model": "critic/model"}
    config = write_config(
        tasks_path=write_parquet(tmp_path / "probe.parquet", rows),
        runtime={"gym_config": {"tool_probe": {"judges": {"general": judge}}}},
    )
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    return output


@pytest.mark.slow
def test_tool_calls_evidence_reset_and_critic_calls(tmp_path, write_config, model_server, checkout):
    output = probe_run(
        tmp_path=tmp_path, write_config=write_config, model_server=model_server, checkout=checkout
    )
    execution = output / "tasks/0000/execution-000"
    first = load(execution / "solver/turn-000/request.json")
    # The environment's options under the configured ones: temperature 0.0 and max_tokens are
    # configured; model/input/store are dropped; the tool is sent in function form.
    assert first["temperature"] == 0.0 and first["top_p"] == 0.5 and first["max_tokens"] == 512
    assert "max_completion_tokens" not in first and "store" not in first and "input" not in first
    assert first["model"] == "test/solver-judge"
    assert first["tools"] == [
        {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    ]
    # reset_conversation replaced the conversation; the tool-call message was kept whole.
    second = load(execution / "solver/turn-001/request.json")
    assert second["messages"] == [{"role": "user", "content": "Start again. Answer with the "
                                   "total after ####."}]  # fmt: skip
    trace = load(execution / "solver-trace.json")
    assert trace["turns"] == 2 and trace["done"] is True
    assert [m["role"] for m in trace["messages"]] == ["user", "assistant"]
    starts = [json.loads(line) for line in (execution / "verifier-trace.jsonl").open()]
    assert starts[0]["assistant_message"]["tool_calls"][0]["function"]["name"] == "lookup"
    # The critic's call went through the recorder to the configured endpoint.
    critic = execution / "verifier/critic/call-000"
    assert load(critic / "request.json")["model"] == "critic/model"
    assert load(critic / "response.json")["choices"][0]["message"]["content"] == "1"
    assert not (execution / "verifier/critic/call-001").exists()
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "verified"
    # Without the contract both steps' plain rewards are verdicts (0.0 for the tool turn, then
    # 1.0): MarinSkyRL's fold takes their mean and passes only when every step passed.
    assert attempt["verification"]["score"] == 0.5 and attempt["verification"]["passed"] is False
    assert attempt["verification"]["diagnostics"]["num_scored_steps"] == 2
    assert attempt["verification_contract"] == "project"
    contract = load(output / "run.json")["gym_verification_contract"]
    assert contract["fold"] == "project" and len(contract["missing"]) == 2


@pytest.mark.slow
def test_a_checkouts_own_verification_contract_is_used(
    tmp_path, write_config, model_server, checkout
):
    add_verification_contract(checkout)
    output = probe_run(
        tmp_path=tmp_path, write_config=write_config, model_server=model_server, checkout=checkout
    )
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification_contract"] == "marinskyrl"
    verification = attempt["verification"]
    # The checkout's VerificationResult declares a 0–2 range: a score of 1 is half-way, so the
    # open ``passed`` is decided false — the project's default range would have passed it.
    assert verification["score_range"] == [0.0, 2.0] and verification["passed"] is False
    assert verification["diagnostics"] == {"critic": "1"}
    assert load(output / "run.json")["gym_verification_contract"] == {
        "fold": "marinskyrl",
        "modules": ["skyrl_gym.verification", "skyrl_train.trajectory_runners.skyrl_gym_contracts"],
    }


@pytest.mark.slow
def test_an_unreachable_solver_is_no_finished_attempt(tmp_path, write_config, model_server):
    """A transport failure (a retryable status after every retry) leaves the task unfinished:
    the run stops with a resumable reason, no judge sees it, and --resume tries it again."""
    config = write_config(rows=1, model={"max_retries": 1})
    output = tmp_path / "run"
    model_server.fail_first(2, status=503)
    message = review_fails("--config", str(config), "--n", "1", "--output", str(output))
    assert message.startswith("Solver unavailable (HTTP 503 after 2 tries at ")
    assert "tasks/0000/execution-000 is not a finished attempt" in message
    assert message.endswith("Resume retries this unfinished task.")
    failed = output / "tasks/0000/execution-000"
    assert not (failed / "attempt.json").exists()
    assert not (output / "tasks/0000/attempt.json").exists()
    assert not (output / "tasks/0000/judges").exists()
    assert load(failed / "solver-unavailable.json")["reason"].startswith("HTTP 503 after 2 tries")
    events = [json.loads(line)["event"] for line in (failed / "verifier-trace.jsonl").open()]
    assert events == ["solver_unavailable"]
    make_review("--config", str(config), "--n", "1", "--output", str(output), "--resume")
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["execution_path"] == "tasks/0000/execution-001"
    assert attempt["verification"]["status"] == "verified"
    assert (output / "quality-reviews.json").is_file()


@pytest.mark.slow
def test_a_refused_connection_is_no_finished_attempt(tmp_path, write_config, model_server):
    closed = ModelServer().start()
    url = closed.base_url
    closed.stop()  # nothing listens there any more: connections are refused
    config = write_config(rows=1, model={"max_retries": 0})
    data = load(config)
    # Only the solver's endpoint is gone: the worker reads the model block from input.json.
    data["model"]["base_url"] = url
    config.write_text(json.dumps(data))
    message = review_fails("--config", str(config), "--n", "1", "--output", str(tmp_path / "r"))
    assert "Connection refused" in message and "Resume retries" in message


def test_an_echoed_key_is_redacted_in_every_form(workers):
    _, _, support = workers
    key = 'sk-a/b c"d'
    text = f"as is {key}, JSON {json.dumps(key)[1:-1]}, URL {'sk-a%2Fb%20c%22d'}."
    assert support.redact(text, secrets=[key]) == (
        "as is [REDACTED], JSON [REDACTED], URL [REDACTED]."
    )
    assert support.redact(text, secrets=[]) == text


def test_the_runtime_summary_names_a_verified_score():
    from reviews.production.make_review.records import runtime_summary

    verified = {"status": "verified", "score": 0.5, "passed": False, "reason": None}
    assert runtime_summary(route="skyrl_gym", verification=verified) == (
        "Native skyrl_gym verification: verified. Score 0.5, not passed."
    )
    error = {"status": "error", "score": None, "passed": None, "reason": "ValueError: x"}
    assert runtime_summary(route="harbor", verification=error) == (
        "Native harbor verification: error. ValueError: x"
    )


def fake_harbor_install(site: Path) -> Path:
    """A registry-style installation: the package and its dist-info with a RECORD of hashes."""
    files = {"harbor/__init__.py": b"VERSION = '0.25.0'\n", "harbor/verifier/verifier.py": b"x=1\n"}
    info = site / "harbor-0.25.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harbor\nVersion: 0.25.0\n")
    (info / "INSTALLER").write_text("uv\n")
    lines = []
    for relative, content in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_bytes(content)
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
        lines.append(f"{relative},sha256={digest.decode()},{len(content)}")
    lines += ["harbor-0.25.0.dist-info/METADATA,,", "harbor-0.25.0.dist-info/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return site


def harbor_identity(site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(WORKERS / "harbor_identity.py")],
        env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True,
    )  # fmt: skip


def test_a_registry_harbor_is_identified_by_package_and_installed_files(tmp_path):
    site = fake_harbor_install(tmp_path / "site")
    first = json.loads(harbor_identity(site).stdout)
    assert {k: first[k] for k in ("source", "package", "version", "installer", "direct_url")} == {
        "source": "package", "package": "harbor", "version": "0.25.0", "installer": "uv",
        "direct_url": None,
    }  # fmt: skip
    assert first["file_count"] == 3 and first["modified"] == []
    assert "commit" not in json.dumps(first)
    # An edited installation keeps its version but not its digest, and says which file changed.
    (site / "harbor/verifier/verifier.py").write_bytes(b"x=2\n")
    edited = json.loads(harbor_identity(site).stdout)
    assert edited["version"] == "0.25.0" and edited["files_sha256"] != first["files_sha256"]
    assert edited["modified"] == ["harbor/verifier/verifier.py"]


def test_no_installed_harbor_is_refused(tmp_path):
    done = harbor_identity(tmp_path)
    assert done.returncode == 1 and "No harbor distribution is installed" in done.stderr


def test_make_review_names_a_registry_harbor_by_its_package(tmp_path, monkeypatch):
    site = fake_harbor_install(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(site))
    identity = harbor_identity_of(runtime={"harbor_python": sys.executable})
    assert (identity["source"], identity["version"]) == ("package", "0.25.0")
    assert "commit" not in identity
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "empty"))
    with pytest.raises(ReviewProductionError, match="No harbor distribution is installed"):
        harbor_identity_of(runtime={"harbor_python": sys.executable})
    with pytest.raises(ReviewProductionError, match=r"runtime\.harbor_python is required"):
        harbor_identity_of(runtime={})


FORKED_CAPTURE = """
import json, os, sys
sys.path[:0] = [{workers!r}, {library!r}]
import worker_support, verifyit
before = worker_support.loaded_native_modules()  # not forked: every module is read

def child(change):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        change()
        os.write(write, json.dumps(worker_support.loaded_native_modules()).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    return json.loads(os.read(read, 65536))

def forget(name):
    return lambda: sys.modules.pop(name)

def import_sub():
    import verifyit.sub

def forget_last_then_import():
    sys.modules.pop(next(reversed(sys.modules)))
    import_sub()

print(json.dumps([before, child(lambda: None), child(import_sub), child(forget("verifyit")),
                  child(forget_last_then_import)]))
"""


def test_a_forked_attempt_lists_the_native_modules_an_interpreter_holds(tmp_path):
    """Forked from a host, an attempt reads only the modules imported since the fork, yet lists
    exactly the native modules in ``sys.modules``, whatever it imported or dropped."""
    package = tmp_path / "lib" / "verifyit"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub.py").write_text("")
    script = FORKED_CAPTURE.format(workers=str(WORKERS), library=str(tmp_path / "lib"))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    before, unchanged, imported, forgotten, forgot_last = json.loads(done.stdout)
    assert before == unchanged == ["verifyit"]
    assert imported == forgot_last == ["verifyit", "verifyit.sub"]
    assert forgotten == []
