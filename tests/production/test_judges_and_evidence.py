"""Evidence bundle (§7), judges with segmentation above 48,000 bytes (§8.3) and records (§10)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest

from reviews.production.config import ModelConfig
from reviews.production.errors import ReviewProductionError
from reviews.production.evidence import UNCALLED_REASON, evidence_bundle, json_size
from reviews.production.judges import (
    SEGMENT_LIMIT_BYTES,
    judge_payload,
    run_judge,
    task_identity,
)
from reviews.production.model_client import ModelClient
from reviews.production.records import source_subject
from tests.model_server import ModelServer
from tests.production.helpers import load, make_review
from tests.production.review_model import ReviewModel, request_kind

EXECUTION = "tasks/0000/execution-000"


def execution_dir(tmp_path: Path, big_text: str = "") -> Path:
    run = tmp_path / "run"
    execution = run / EXECUTION
    (execution / "native-code/skyrl_gym").mkdir(parents=True)
    (execution / "__pycache__").mkdir()
    (execution / "__pycache__/x.pyc").write_bytes(b"\x00")
    (execution / "attempt.json").write_text('{"done": true}\n')
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
        "attempt.json", "blob.bin", "copy.json", "native-code-index.json",
        "native-code/skyrl_gym/core.py", "native-code/skyrl_gym/unused.py",
    ]  # fmt: skip
    assert bundle["attempt.json"]["text"] == '{"done": true}\n'
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


def model(server: ModelServer) -> ModelConfig:
    return ModelConfig(
        name="judge", base_url=server.base_url, timeout=5.0, revision=None, parameters={},
        review_parameters={}, api_key_env=None, response_format="json_schema", max_retries=0,
        retry_backoff_seconds=0.0,
    )  # fmt: skip


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
