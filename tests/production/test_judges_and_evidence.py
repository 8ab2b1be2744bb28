"""Evidence bundle, judges with segmentation above 48,000 bytes and records."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest

from reviews.production.make_review.evidence import (
    ATTEMPT_REASON,
    UNCALLED_REASON,
    WORKER_INPUT_REASON,
    evidence_bundle,
)
from reviews.production.make_review.judges import citations as judge_citations
from reviews.production.make_review.judges import judge_payload, run_judge, task_identity
from reviews.production.make_review.opinions import (
    Citations,
    OutputRejected,
    check_opinion,
    parse_answer,
    run_stage,
)
from reviews.production.make_review.records import source_subject
from reviews.production.runtime.config import ModelConfig
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.model_client import ModelClient, dumps
from reviews.production.runtime.prompt_room import (
    SEGMENT_LIMIT_BYTES,
    TEMPLATE_TOKENS,
    estimated_tokens,
    json_size,
)
from tests.model_server import ModelServer, completion, prompt_tokens
from tests.production.helpers import load, make_review
from tests.production.review_model import ReviewModel, opinion, request_kind

EXECUTION = "tasks/0000/execution-000"


def execution_dir(tmp_path: Path, big_text: str = "", execution_path: str = EXECUTION) -> Path:
    run = tmp_path / "run"
    execution = run / execution_path
    (execution / "native-code/skyrl_gym").mkdir(parents=True)
    (execution / "__pycache__").mkdir()
    (execution / "__pycache__/x.pyc").write_bytes(b"\x00")
    (execution / "attempt.json").write_text('{"done": true}\n')
    (execution / "input.json").write_text('{"task": {}, "model": {}, "config": {}}\n')
    (execution / "copy.json").write_text('{"done": true}\n')
    (execution / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    (execution / "run.lock").write_text("")
    (execution / "native-code/skyrl_gym/core.py").write_text("def f():\n    return 1\n")
    (execution / "native-code/skyrl_gym/unused.py").write_text("def g():\n    return 2\n")
    (execution / "native-code-index.json").write_text(
        json.dumps(
            [
                {
                    "module": "skyrl_gym.core",
                    "path": "native-code/skyrl_gym/core.py",
                    "called_in_attempt": True,
                },
                {
                    "module": "skyrl_gym.unused",
                    "path": "native-code/skyrl_gym/unused.py",
                    "called_in_attempt": False,
                },
            ]
        )
    )
    if big_text:
        (execution / "verifier.stdout").write_text(big_text, encoding="utf-8")
    return run


def test_bundle_accounts_for_every_file(tmp_path):
    run = execution_dir(tmp_path)
    bundle = {item["path"].removeprefix(EXECUTION + "/"): item for item in evidence_bundle(
        run_dir=run, execution_path=EXECUTION, max_bytes=10**6)}  # fmt: skip
    assert sorted(bundle) == [
        "attempt.json", "blob.bin", "copy.json", "input.json", "native-code-index.json",
        "native-code/skyrl_gym/core.py", "native-code/skyrl_gym/unused.py",
    ]  # fmt: skip
    # The attempt record and the worker's input restate the payload: accounted for, not repeated.
    assert bundle["attempt.json"]["not_inspected_reason"] == ATTEMPT_REASON
    assert bundle["input.json"]["not_inspected_reason"] == WORKER_INPUT_REASON
    assert bundle["copy.json"]["duplicate_content_of"] == f"{EXECUTION}/attempt.json"
    assert bundle["blob.bin"]["binary_not_inspected"] is True
    assert bundle["native-code/skyrl_gym/unused.py"]["not_inspected_reason"] == UNCALLED_REASON
    assert "text" in bundle["native-code/skyrl_gym/core.py"]
    for item in bundle.values():
        data = (run / item["path"]).read_bytes()
        assert item["sha256"] == hashlib.sha256(data).hexdigest() and item["bytes"] == len(data)
        assert len({"text", "not_inspected_reason", "duplicate_content_of",
                    "binary_not_inspected"} & set(item)) == 1  # fmt: skip


def test_bundle_and_payload_limits(tmp_path):
    run = execution_dir(tmp_path, big_text="x" * 5000)
    with pytest.raises(ReviewProductionError, match=r"^Evidence exceeds 4000 bytes; saved"):
        evidence_bundle(run_dir=run, execution_path=EXECUTION, max_bytes=4000)
    bundle = evidence_bundle(run_dir=run, execution_path=EXECUTION, max_bytes=10**6)
    with pytest.raises(ReviewProductionError, match="nothing was silently truncated"):
        judge_payload(task={"id": "t"}, attempt={}, evidence=bundle, max_bytes=json_size(bundle))


def model(server: ModelServer, **overrides) -> ModelConfig:
    values = dict(
        name="judge", base_url=server.base_url, timeout=5.0, revision=None, parameters={},
        review_parameters={}, api_key_env=None, response_format="json_schema", max_retries=0,
        retry_backoff_seconds=0.0,
    )  # fmt: skip
    return ModelConfig(**{**values, **overrides})


def attempt_at(execution_path: str) -> dict:
    return {"verification": {"status": "verified", "score": 1.0, "passed": True, "reason": "ok",
            "diagnostics": {}}, "verifier_executed": True, "execution_path": execution_path,
            "done": True, "turns": 1}  # fmt: skip


def test_the_payload_puts_what_a_route_shares_first(tmp_path):
    """Prefix caches: the captured native code is the same bytes for every task of the route,
    and comes before anything task-specific."""
    payloads = []
    for number in (1, 2):
        execution = f"tasks/{number:04d}/execution-001"
        run = execution_dir(tmp_path, execution_path=execution)
        bundle = evidence_bundle(run_dir=run, execution_path=execution, max_bytes=10**6)
        payloads.append(judge_payload(task={"id": f"t{number}"}, attempt=attempt_at(execution),
                                      evidence=bundle, max_bytes=10**6))  # fmt: skip
    first, second = payloads
    assert list(first) == ["route_code", "task", "native_outcome", "evidence"]
    assert [item["path"] for item in first["route_code"]] == [
        "native-code/skyrl_gym/core.py", "native-code/skyrl_gym/unused.py"
    ]  # fmt: skip
    assert first["route_code"] == second["route_code"]
    assert not any("native-code/" in item["path"] for item in first["evidence"])
    texts = [dumps(payload) for payload in payloads]
    shared = next(i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b)
    assert texts[0][:shared].endswith('"task": {"id": "t')
    assert shared > len(dumps({"route_code": first["route_code"]})) - 1


def test_segmentation_above_48000_bytes(tmp_path):
    # Characters that JSON escapes (quotes, newlines) or encodes in several bytes (é, 𝛑).
    big_text = "".join(f'line {i}: "quoted" é 𝛑 \\ tab\t\n' for i in range(6000))
    run = execution_dir(tmp_path, big_text=big_text)
    bundle = evidence_bundle(run_dir=run, execution_path=EXECUTION, max_bytes=10**7)
    attempt = {"verification": {"status": "verified", "score": 1.0, "passed": True,
               "reason": "ok", "diagnostics": {}}, "verifier_executed": True,
               "execution_path": EXECUTION, "done": True, "turns": 1}  # fmt: skip
    payload = judge_payload(
        task={"id": "t1", "prompt": []}, attempt=attempt, evidence=bundle, max_bytes=10**7
    )
    assert json_size(payload) > SEGMENT_LIMIT_BYTES
    with ModelServer(default=ReviewModel()) as server:
        client = ModelClient(model=model(server), stop=threading.Event())
        judges = [
            run_judge(client=client, judge_dir=run / f"tasks/0000/judges/{k}", index=k,
                      payload=payload)
            for k in (1, 2)
        ]  # fmt: skip
        requests = server.chat_requests()
    manifest = load(run / "tasks/0000/judges/1/segments.json")
    count = manifest["segment_count"]
    assert count >= 3 and manifest["segment_budget_bytes"] == 48_000
    assert judges[0].segments == count and len(judges[0].segment_dirs) == count
    # Segments count from 000; the manifest is the evidence without its text (bytes included).
    assert [d.name for d in judges[0].segment_dirs] == [f"{n:03d}" for n in range(count)]
    entries = manifest["evidence_manifest"]
    assert sorted({entry["segment"] for entry in entries}) == list(range(count))
    sizes = {item["path"]: item["bytes"] for item in bundle}
    assert all("text" not in e and e["bytes"] == sizes[e["path"]] for e in entries)
    kinds = [request_kind(r) for r in requests]
    assert kinds == (["segment"] * count + ["consolidation"]) * 2
    segments = [r.user_payload for r in requests[:count]]
    for segment in segments:
        assert json_size(segment) <= SEGMENT_LIMIT_BYTES
        assert segment["scope"] == "One segment of a complete task-evidence review"
        assert segment["native_outcome"] == {
            "verification": {"status": "verified", "score": 1.0, "passed": True},
            "verifier_executed": True,
            "execution_path": EXECUTION,
        }
        assert segment["task"]["id"] == "t1"
    pieces = [
        item for segment in segments for item in segment["evidence"]
        if item["path"].endswith("verifier.stdout")
    ]  # fmt: skip
    assert len(pieces) >= 2
    assert "".join(p["text"] for p in pieces) == big_text
    assert pieces[0]["character_start"] == 0 and pieces[-1]["character_end"] == len(big_text)
    assert all(p["total_characters"] == len(big_text) for p in pieces)
    consolidation = requests[count].user_payload
    assert consolidation["segment_count"] == count
    assert len(consolidation["own_segment_opinions"]) == count
    # Judge 2 sees its own segments only, never judge 1's opinions.
    for request in requests[count + 1 :]:
        assert "Scripted segment opinion" not in json.dumps(request.user_payload) or (
            request_kind(request) == "consolidation"
        )
    for number in range(count):
        assert (run / f"tasks/0000/judges/2/segments/{number:03d}/parsed.json").is_file()


def test_segments_fit_the_endpoints_context(tmp_path):
    big_text = "".join(f"step {i}: reward=0.0 é {'x' * (i % 7)}\n" for i in range(1200))
    run = execution_dir(tmp_path, big_text=big_text)
    bundle = evidence_bundle(run_dir=run, execution_path=EXECUTION, max_bytes=10**7)
    payload = judge_payload(task={"id": "t1", "prompt": []}, attempt=attempt_at(EXECUTION),
                            evidence=bundle, max_bytes=10**7)  # fmt: skip
    assert json_size(payload) < SEGMENT_LIMIT_BYTES  # one call without a known context
    with ModelServer(default=ReviewModel(), context_tokens=4096, honour_max_tokens=True) as server:
        config = model(server, context_tokens=4096, review_parameters={"max_tokens": 512})
        client = ModelClient(model=config, stop=threading.Event())
        room = client.prompt_room()
        assert (room.context_tokens, room.context_source) == (4096, "model.context_tokens")
        judge = run_judge(client=client, judge_dir=run / "tasks/0000/judges/1", index=1,
                          payload=payload, room=room)  # fmt: skip
        requests = server.chat_requests()
    manifest = load(run / "tasks/0000/judges/1/segments.json")
    assert judge.segments == manifest["segment_count"] >= 3
    assert manifest["context_tokens"] == 4096 and manifest["segment_budget_bytes"] is None
    assert manifest["segment_budget_tokens"] < 4096 - 512
    for request in requests:  # every call fits with room for its answer (the server agreed)
        text = "".join(m["content"] for m in request.messages)
        assert estimated_tokens(text) + TEMPLATE_TOKENS + 512 <= 4096
        assert prompt_tokens(request.body) + 512 <= 4096
    stdout = f"{EXECUTION}/verifier.stdout"
    pieces = [p for segment in requests[:-1] for p in segment.user_payload["evidence"]
              if p["path"] == stdout]  # fmt: skip
    assert "".join(p["text"] for p in pieces) == big_text
    # Route code comes first, relative to the execution; the manifest names the run's files.
    first = requests[0].user_payload
    assert list(first) == ["scope", "evidence", "task", "native_outcome"]
    assert first["evidence"][0]["path"] == "native-code/skyrl_gym/core.py"
    assert manifest["evidence_manifest"][0]["path"] == f"{EXECUTION}/native-code/skyrl_gym/core.py"


@pytest.mark.parametrize(
    ("advertise", "configured", "expected"),
    [
        ("models", None, (2048, "the server's /v1/models max_model_len")),
        ("props", None, (2048, "the server's /props n_ctx")),
        ("models", 8192, (2048, "the server's /v1/models max_model_len (smaller than "
                                "model.context_tokens 8,192)")),
        ("props", 1024, (1024, "model.context_tokens (the server reports 2,048 in /props n_ctx)")),
        (None, None, (None, "unknown")),
    ],
)  # fmt: skip
def test_the_context_is_read_from_the_server(advertise, configured, expected):
    with ModelServer(context_tokens=2048, advertise_context=advertise) as server:
        server.models["judge"] = ReviewModel()
        client = ModelClient(model=model(server, context_tokens=configured), stop=threading.Event())
        room = client.prompt_room()
    assert (room.context_tokens, room.context_source) == expected


def test_a_context_too_small_for_the_prompt_is_named(tmp_path):
    run = execution_dir(tmp_path, big_text="y " * 5000)
    bundle = evidence_bundle(run_dir=run, execution_path=EXECUTION, max_bytes=10**7)
    payload = judge_payload(task={"id": "t1"}, attempt=attempt_at(EXECUTION), evidence=bundle,
                            max_bytes=10**7)  # fmt: skip
    with ModelServer(default=ReviewModel()) as server:
        config = model(server, context_tokens=1500, review_parameters={"max_tokens": 512})
        client = ModelClient(model=config, stop=threading.Event())
        with pytest.raises(ReviewProductionError) as failure:
            run_judge(client=client, judge_dir=run / "tasks/0000/judges/2", index=2,
                      payload=payload, room=client.prompt_room())  # fmt: skip
        assert server.chat_requests() == []
    assert str(failure.value).startswith(
        "task 0000 judge 2: the endpoint's context (1,500 tokens, model.context_tokens) leaves "
    )
    assert str(failure.value).endswith(
        "for evidence beside the prompt and the 512-token answer; raise model.context_tokens or "
        "lower the judges' max_tokens"
    )


@pytest.mark.slow
def test_a_segmented_judge_in_a_real_run(tmp_path, write_config):
    from tests.production.conftest import gsm8k_rows, write_parquet

    rows = gsm8k_rows(2)
    rows[0]["prompt"][0]["content"] += " " + ("Context paragraph. " * 4000)
    config = write_config(tasks_path=write_parquet(tmp_path / "big.parquet", rows))
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "2", "--output", str(output))
    reviews = load(output / "quality-reviews.json")["reviews"]
    judge = next(r for r in reviews if r["id"].endswith("/task/0/judge/1"))
    count = load(output / "tasks/0000/judges/1/segments.json")["segment_count"]
    assert judge["attributes"]["evidence_segments"] == count > 1
    for request in (output / "tasks/0000/judges/1/segments").glob("*/call-000/request.json"):
        segment = load(request)["messages"][1]["content"]
        assert len(segment.encode()) <= SEGMENT_LIMIT_BYTES
        # The segment names the task; the long prompt arrives as (cut) evidence only.
        assert "Context paragraph" not in json.dumps(json.loads(segment)["task"])
    assert count <= 12
    assert judge["attributes"]["segment_consolidation_prompt"]
    paths = [e["snapshot_path"] for e in judge["evidence"]]
    assert paths[:2] == ["tasks/0000/judges/1/parsed.json", "tasks/0000/attempt.json"]
    assert paths[-1] == "tasks/0000/judges/1/segments.json"
    assert len(paths) == count + 3
    small = next(r for r in reviews if r["id"].endswith("/task/1/judge/1"))
    assert small["attributes"]["evidence_segments"] == 1
    assert small["attributes"]["segment_consolidation_prompt"] is None


def test_source_subject_identifier():
    subject = source_subject(repository="org/x", dataset_revision=None, source_id="S:é",
                             snapshot="abc")  # fmt: skip
    text = json.dumps(["org/x", "snapshot:abc", "S:é"], ensure_ascii=False)
    assert subject["id"] == "source:" + hashlib.sha256(text.encode()).hexdigest()[:20]
    pinned = source_subject(repository="org/x", dataset_revision="r1", source_id="S:é",
                            snapshot="abc")  # fmt: skip
    text = json.dumps(["org/x", "r1", "S:é"], ensure_ascii=False)
    assert pinned["id"] == "source:" + hashlib.sha256(text.encode()).hexdigest()[:20]


def test_segment_task_identity_names_the_selected_agent():
    ultra = {"uuid": "u-1", "agent": "math_with_judge_simple_agent", "route": "skyrl_gym"}
    task = {"id": "u-1", "route": "skyrl_gym", "prompt": [{"role": "user", "content": "x"}],
            "extras": {"extra_info": {"nemotron_ultra": ultra}}}  # fmt: skip
    identity = task_identity(task)
    assert identity["selected_agent"] == "math_with_judge_simple_agent"
    assert "prompt" not in identity and "extras" not in identity
    assert "selected_agent" not in task_identity({"id": "t", "extras": {"extra_info": {}}})


# --- answers: lenient parsing, strict validation, bounded re-asks ---


def valid_opinion(**changes) -> dict:
    return {**opinion("The verifier compares the final answer."), **changes}


@pytest.mark.parametrize(
    "content",
    [
        # A literal newline inside a string (what strict JSON refuses).
        '{"summary": "Line one.\nLine two of the summary.", "verdict": "keep", "metrics": [], '
        '"findings": [], "tags": []}',
        'Here is my opinion:\n```json\n{"summary": "The verifier is sound here.", '
        '"verdict": "keep", "metrics": [], "findings": [], "tags": []}\n```\nThanks.',
        'Opinion: {"summary": "The verifier is sound here.", "verdict": "keep", '
        '"metrics": [], "findings": [], "tags": []} (end)',
    ],
)
def test_answers_are_parsed_leniently_and_validated_strictly(content):
    answer = parse_answer(content)
    check_opinion(answer)
    assert answer["verdict"] == "keep"


def test_answers_that_are_not_json_or_not_the_schema_are_refused():
    with pytest.raises(OutputRejected, match=r"^output is not JSON \("):
        parse_answer("I think the task is fine.")
    with pytest.raises(
        OutputRejected, match=r"^output is not JSON \(number out of range: 0\.128e3"
    ):
        parse_answer('{"summary": "Fine.", "metrics": [{"value": 0.128e31564798125}]}')
    with pytest.raises(OutputRejected, match=r"NaN is not a JSON number"):
        parse_answer('{"value": NaN}')
    with pytest.raises(OutputRejected, match=r"^output does not match its schema at "):
        check_opinion(parse_answer('{"summary": "A fine task overall.", "verdict": "keep"}'))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"summary": "of_10, "}, "the summary 'of_10, ' is not a sentence"),
        ({"findings": [{"dimension": "x", "text": "I, 1, ", "severity": None,
                        "kind": "observation"}]}, "the finding 'I, 1, ' is not a sentence"),
        ({"summary": "See tasks/0001/execution-001/verifier.log for the failure."},
         "it cites 'tasks/0001/execution-001/verifier.log', which is not in its evidence"),
    ],
)  # fmt: skip
def test_an_opinion_must_be_about_the_evidence(changes, reason):
    cited = Citations.of(["tasks/0001/execution-001/native-code/skyrl_gym/envs/gsm8k/utils.py"])
    with pytest.raises(OutputRejected) as refused:
        check_opinion(valid_opinion(**changes), cited=cited)
    assert refused.value.reason == f"output is not about the evidence: {reason}"
    # Cited by a tail of a real path, beside a URL: accepted.
    check_opinion(
        valid_opinion(summary="gsm8k/utils.py parses the answer (https://example.org/a/b.py)."),
        cited=cited,
    )


JUDGED_EXECUTION = "tasks/0001/execution-001"
JUDGED_PAYLOAD = {
    "route_code": [{"path": "native-code/skyrl_gym/envs/gsm8k/utils.py", "text": "def f(): ..."}],
    "task": {"id": "gsm8k-train-00017", "route": "skyrl_gym", "env_id": "gsm8k",
             "task_path": "data/train.parquet#17",
             "extras": {"links": ["https://huggingface.co/datasets/openai/gsm8k"]}},
    "native_outcome": {"verification": {"status": "verified", "score": 0.0, "passed": False},
                       "verifier_executed": True, "execution_path": JUDGED_EXECUTION},
    "evidence": [{"path": f"{JUDGED_EXECUTION}/verifier.log",
                  "text": "compared 41 with 42; see https://github.com/openai/grade-school-math"}],
}  # fmt: skip
GROUNDED = {"dimension": "verifier", "severity": "info", "kind": "observation",
            "text": "The verifier failed the answer 41 (verifier.log)."}  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        # What a 135M model wrote, verdicts against the outcome, made-up links and alarms.
        ({"summary": "Find the best 3 random numbers between 1 and 50, see "
                     "https://github.com/example/random-numbers for the list."},
         "it cites the URL 'https://github.com/example/random-numbers', which is neither in its "
         "evidence nor one of the task's links"),
        ({"findings": [{**GROUNDED, "severity": "critical", "kind": "issue",
                        "text": "Somebody has taken over your system."}]},
         "the finding 'Somebody has taken over your system.' cites no file of its evidence"),
        ({"findings": [{**GROUNDED, "text": "Unusual formatting appears in utils.py here."}]},
         "the finding 'Unusual formatting appears in utils.py here.' names neither the task "
         "nor its outcome"),
        ({"verdict": "keep", "summary": "A lovely task about arithmetic overall."},
         "the verdict keep disagrees with the native outcome (the verifier failed the attempt) "
         "and the summary does not say why"),
    ],
)  # fmt: skip
def test_a_judges_opinion_must_be_grounded_in_its_attempt(changes, reason):
    cited = judge_citations(JUDGED_PAYLOAD)
    with pytest.raises(OutputRejected) as refused:
        check_opinion(valid_opinion(**{"findings": [GROUNDED], **changes}), cited=cited)
    assert refused.value.reason == f"output is not about the evidence: {reason}"
    assert "larger or instruction-tuned model" in refused.value.help


def test_grounded_opinions_pass_the_guards():
    cited = judge_citations(JUDGED_PAYLOAD)
    for opinion_ in [
        # A URL of the evidence and one of the task's own links; a finding naming the task.
        valid_opinion(
            verdict="keep",
            summary="The solver's answer was wrong, the task is sound "
            "(https://github.com/openai/grade-school-math).",
            findings=[{**GROUNDED, "text": "gsm8k-train-00017 comes from "
                       "https://huggingface.co/datasets/openai/gsm8k as gsm8k/utils.py reads it."}],
        ),
        # A reject that agrees with the failed outcome needs no reason.
        valid_opinion(verdict="reject", summary="A confusing task about arithmetic.",
                      findings=[GROUNDED]),
        # An inconclusive verdict takes no side.
        valid_opinion(verdict="inconclusive", summary="Hard to say much about this.", findings=[]),
    ]:  # fmt: skip
        check_opinion(opinion_, cited=cited)
    passed = {**JUDGED_PAYLOAD, "native_outcome": {
        **JUDGED_PAYLOAD["native_outcome"], "verification": {"status": "verified", "passed": True}
    }}  # fmt: skip
    with pytest.raises(OutputRejected, match="the verdict reject disagrees"):
        check_opinion(valid_opinion(verdict="reject", summary="A bad and confusing task.",
                                    findings=[]), cited=judge_citations(passed))  # fmt: skip
    check_opinion(valid_opinion(verdict="reject", summary="It passes a wrong answer: a bypass.",
                                findings=[]), cited=judge_citations(passed))  # fmt: skip


def stage_client(server: ModelServer, **overrides) -> ModelClient:
    config = model(server, max_reasks=2, retry_backoff_seconds=0.01, **overrides)
    return ModelClient(model=config, stop=threading.Event())


def test_refused_answers_are_asked_again_within_the_run(tmp_path):
    with ModelServer() as server:
        server.enqueue(
            completion(json.dumps(opinion("..."))),
            completion('{"summary": "cut', finish_reason="length"),
            completion(json.dumps(valid_opinion())),
        )
        client = stage_client(server)
        notes: list[str] = []
        client.on_note = notes.append
        stage = tmp_path / "tasks/0003/judges/2"
        answer = run_stage(
            client=client, stage_dir=stage, messages=[{"role": "user", "content": "x"}]
        )
    assert answer == valid_opinion()
    assert [p.name for p in sorted(stage.glob("call-*"))] == ["call-000", "call-001", "call-002"]
    assert (stage / "call-000/rejected.txt").read_text() == "output is a placeholder\n"
    assert (stage / "call-001/rejected.txt").read_text() == (
        "output was truncated (finish_reason length)\n"
    )
    assert not (stage / "call-002/rejected.txt").exists()
    assert client.stats.reasks == 2
    assert notes[0] == "task 0003 judge 2: answer refused (output is a placeholder); asking again"


def test_a_stage_that_always_exhausts_its_budget_says_how_to_raise_it(tmp_path):
    with ModelServer(default=lambda r: completion('{"summary": "cut', finish_reason="length")) as (
        server
    ):
        client = stage_client(server, review_parameters={"max_tokens": 256})
        stage = tmp_path / "tasks/0000/judges/1"
        with pytest.raises(OutputRejected) as failure:
            run_stage(client=client, stage_dir=stage, messages=[{"role": "user", "content": "x"}])
        assert len(server.chat_requests()) == 3
    assert str(failure.value) == (
        "task 0000 judge 1: output was truncated (finish_reason length); 3 of 3 answers refused, "
        f"raw responses saved in {stage} (the last in call-002); the stage remains incomplete. "
        "Every answer ran out of its output budget: raise model.review_parameters.max_tokens "
        "(now 256) and run again with --resume; finished stages are kept"
    )
    assert not (stage / "parsed.json").exists()
