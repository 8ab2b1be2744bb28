"""make_difficulty → publish_difficulty → catalog bars and the review page, with the real gsm8k
verifier and one scripted model per role."""

from __future__ import annotations

import io
import json
import re
import threading
from dataclasses import replace
from html import unescape

import pytest
from django.core.management import CommandError, call_command

from difficulty.classification import classify_report
from difficulty.production.pipeline import DifficultyOptions
from difficulty.production.pipeline import make_difficulty as run_make_difficulty
from difficulty.registry import current_protocol, get_registry
from difficulty.wilson import wilson_95
from tests.difficulty.production.conftest import HOSTED_KEY_ENV, SOURCE_ID, row_index
from tests.difficulty.production.helpers import make_difficulty
from tests.hostile.conftest import fingerprint
from tests.model_server import Reply

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def page_text(response) -> str:
    html = response.content.decode()
    html = re.sub(r"<(script|template)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def produced(tmp_path, write_config):
    output = tmp_path / "run"
    stdout, stderr = make_difficulty(
        "--config", str(write_config()), "--atlas-id", SOURCE_ID, "-n", "4",
        "--output", str(output), "--jobs", "4",
    )  # fmt: skip
    return output, stdout, stderr


def test_the_report_counts_each_role_on_the_shared_sample(produced, model_server):
    output, stdout, stderr = produced
    assert "small 1/4 solved; large 2/4 solved; hosted 4/4 solved" in stdout
    assert "make_difficulty: tasks 12/12" in stderr
    report = load(output / "difficulty.json")
    counts = {
        m["size"]: (m["solved"], m["verified"], m["unverified"], m["attempted"])
        for m in report["models"]
    }
    assert counts == {"small": (1, 4, 0, 4), "large": (2, 4, 0, 4), "hosted": (4, 4, 0, 4)}
    large = report["models"][1]
    assert large["solve_rate"] == 0.5 and large["wilson_95"] == [0.1500, 0.8500]
    # The fourth row's right answer came with finish_reason length: budget exhausted, unsolved.
    cut = large["task_outcomes"][3]
    assert cut["stop_reason"] == "length" and cut["attempt_complete"] is False
    assert cut["verification"]["passed"] is True and cut["counted_as"] == "unsolved"
    assert large["generation_qc"]["output_budget_exhausted"] == 1
    # One sample, shared: every arm attempted the same tasks in the same order.
    task_ids = [[o["task_id"] for o in m["task_outcomes"]] for m in report["models"]]
    assert task_ids == [["0", "1", "2", "3"]] * 3
    assert report["sampling"]["shared_by_roles"] == ["small", "large", "hosted"]
    context = load(output / "difficulty/context.json")["reviewer_rollout_baseline"]
    assert (context["solved"], context["verified"], context["attempted"]) == (2, 3, 3)
    for model in report["models"]:
        run = load(output / f"difficulty/{model['size']}/run.json")
        assert run["config"]["model"]["name"] == model["model"]
        assert run["config"]["model"]["parameters"] == model["generation_parameters"]
        for outcome in model["task_outcomes"]:
            execution = output / outcome["execution_path"]
            assert (execution / "solver/turn-000/request.json").is_file()
            assert (execution / "solver/turn-000/response.json").is_file()
            assert (execution / "verifier.stdout").exists()
            assert (execution / "attempt.json").is_file()


def test_every_solver_request_carries_exactly_the_protocol_parameters(produced, model_server):
    protocol = current_protocol()
    requests = model_server.chat_requests()
    assert len(requests) == 12
    by_model: dict[str, int] = {}
    for request in requests:
        role = get_registry().role_for_model(request.model)
        assert role is not None, request.model
        by_model[role.size] = by_model.get(role.size, 0) + 1
        sent = {k: v for k, v in request.body.items() if k not in ("model", "messages")}
        assert sent == {**protocol.applied_parameters(role), "stream": False, "n": 1}
        authorised = "Authorization" in request.headers
        assert authorised == (role.size == "hosted")
    assert by_model == {"small": 4, "large": 4, "hosted": 4}
    large = protocol.applied_parameters(protocol.required_role("large"))
    assert large["chat_template_kwargs"] == {"enable_thinking": True}
    hosted = protocol.applied_parameters(protocol.required_role("hosted"))
    assert hosted["reasoning_effort"] == "low" and hosted["max_tokens"] == 16384


def test_publish_difficulty_accepts_the_run_and_the_pages_show_its_counts(
    produced, client, good_source
):
    output, _, _ = produced
    call_command("publish_difficulty", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    result = load(output / "atlas-difficulty-publication.json")
    assert result["status"] == "current"
    assert result["difficulty"] == (
        "Current: Qwen/Qwen3-Coder-30B-A3B-Instruct 1/4 solved; Qwen/Qwen3.5-122B-A10B 2/4 "
        "solved; zai-org/GLM-5.3 4/4 solved"
    )
    catalog = client.get("/")
    html = catalog.content.decode()
    for css, width in (("bar-small", "25"), ("bar-large", "50"), ("bar-hosted", "100")):
        assert f'class="difficulty-bar {css}" style="width: {width}%"' in html
    text = page_text(catalog)
    assert "Qwen 30B 25%" in text and "Qwen 122B 50%" in text and "GLM 5.3 100%" in text
    review = page_text(client.get(f"/reviews/{good_source['review_id']}/"))
    assert "Difficulty · model solve rates and saved attempts" in review
    assert "Small · Qwen3-Coder-30B-A3B-Instruct · 1/4 solved" in review
    assert "Large · Qwen3.5-122B-A10B · 2/4 solved" in review
    assert "Hosted · GLM-5.3 · 4/4 solved" in review
    assert "Quality-review solver: 2/3 solved · 3 attempted · 0 unverified" in review
    assert "4 shared tasks" in review


def test_solver_failures_are_unverified_and_excluded(tmp_path, write_config, model_server):
    """A solver call the endpoint refuses ends the attempt as an error: unverified, not a
    failed solve, and counted in generation_qc."""
    small = current_protocol().required_role("small").model
    solver = model_server.models[small]

    def refuse_row_one(request):
        if row_index(request)[0] == 1:
            return Reply(status=400, body={"error": "context length exceeded"})
        return solver(request)

    model_server.models[small] = refuse_row_one
    output = tmp_path / "run"
    make_difficulty(
        "--config", str(write_config()), "--atlas-id", SOURCE_ID, "--n", "4",
        "--output", str(output), "--jobs", "4",
    )  # fmt: skip
    model = load(output / "difficulty.json")["models"][0]
    assert (model["solved"], model["verified"], model["unverified"], model["attempted"]) == (
        1, 3, 1, 4,
    )  # fmt: skip
    failed = model["task_outcomes"][1]
    assert failed["verification"]["status"] == "error"
    assert (failed["counted_as"], failed["attempt_complete"]) == ("unverified", False)
    assert model["generation_qc"]["solver_errors"] == 1
    assert model["wilson_95"] == wilson_95(solved=1, verified=3)


def test_a_learned_verifier_judge_is_recorded_alike_in_every_arm(
    tmp_path, write_config, model_server
):
    judge = {"base_url": model_server.base_url, "model": "zai-org/GLM-5.3", "timeout": 10,
             "provider": "Together", "api_key_env": HOSTED_KEY_ENV}  # fmt: skip
    output = tmp_path / "run"
    make_difficulty(
        "--config", str(write_config(change=lambda d: d.update({"learned_verifier": judge}))),
        "--atlas-id", SOURCE_ID, "--n", "1", "--output", str(output),
    )  # fmt: skip
    report = load(output / "difficulty.json")
    recorded = [model["verifier_configuration"]["learned_verifier"] for model in report["models"]]
    assert recorded == [
        {"model": "zai-org/GLM-5.3", "provider": "Together", "reasoning_effort": "low",
         "max_output_tokens": 16384}
    ] * 3  # fmt: skip
    classification = classify_report(report=report)
    assert classification.status == "current"
    assert classification.note.endswith(
        "Nemotron's learned verifiers used Hosted GLM-5.3 with Low reasoning effort across all "
        "three arms."
    )
    worker_input = load(output / report["models"][0]["task_outcomes"][0]["execution_path"]
                        / "input.json")  # fmt: skip
    assert worker_input["config"]["learned_verifier"]["parameters"] == {"reasoning_effort": "low"}


def test_a_worker_timeout_is_an_unverified_attempt_that_resume_keeps(
    tmp_path, write_config, model_server
):
    small = current_protocol().required_role("small").model
    solver = model_server.models[small]

    released = threading.Event()

    def hang_on_row_one(request):
        if row_index(request)[0] == 1:
            # Held until the run is over: past the worker timeout on any machine load.
            released.wait(timeout=300)
        return solver(request)

    model_server.models[small] = hang_on_row_one
    # The timeout leaves a loaded machine (CI beside other work) room to start the worker of the
    # row that does not hang; only row 1 may time out.
    options = DifficultyOptions(
        config=write_config(change=lambda d: d["runtime"].update({"worker_timeout": 30})),
        atlas_id=SOURCE_ID, n=2, output=tmp_path / "run", jobs=2, grace_seconds=0.5,
    )  # fmt: skip
    try:
        report = run_make_difficulty(options=options, stderr=io.StringIO()).report
    finally:
        released.set()
    model = report["models"][0]
    timed_out = [o for o in model["task_outcomes"] if o["stop_reason"] == "timeout"]
    assert [o["task_id"] for o in timed_out] == ["1"]
    assert timed_out[0]["verification"]["status"] == "error"
    assert timed_out[0]["counted_as"] == "unverified"
    assert (model["unverified"], model["generation_qc"]["worker_timeouts"]) == (1, 1)
    assert (tmp_path / "run" / timed_out[0]["execution_path"] / "worker.stderr").is_file()
    # The timeout is the attempt's outcome: a resume keeps it and calls nobody.
    (tmp_path / "run" / "difficulty.json").unlink()
    model_server.requests.clear()
    resumed = run_make_difficulty(options=replace(options, resume=True), stderr=io.StringIO())
    assert resumed.attempts_run == 0 and model_server.chat_requests() == []


def _solved_large_outcome(report: dict) -> tuple[int, dict]:
    large = next(m for m in report["models"] if m["size"] == "large")
    return next((i, o) for i, o in enumerate(large["task_outcomes"]) if o["counted_as"] == "solved")


def _claim_three_solved(output) -> str:
    report = load(output / "difficulty.json")
    large = next(m for m in report["models"] if m["size"] == "large")
    large.update(solved=3, solve_rate=0.75, wilson_95=wilson_95(solved=3, verified=4))
    (output / "difficulty.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return (
        "difficulty.json models[large].task_outcomes[].execution_path/attempt.json solved is 2, "
        "difficulty.json models[large] says 3"
    )


def _unsolve_an_attempt(output) -> str:
    index, outcome = _solved_large_outcome(load(output / "difficulty.json"))
    path = output / outcome["execution_path"] / "attempt.json"
    attempt = load(path)
    attempt["verification"]["passed"] = False
    path.write_text(json.dumps(attempt), encoding="utf-8")
    return (
        f'{outcome["execution_path"]}/attempt.json counted_as is "unsolved", '
        f'difficulty.json models[large] task_outcomes[{index}] says "solved"'
    )


@pytest.mark.parametrize("forge", [_claim_three_solved, _unsolve_an_attempt])
def test_counts_the_archived_attempts_do_not_add_up_to_are_refused(produced, good_source, forge):
    output, _, _ = produced
    expected = forge(output)
    before = fingerprint()
    with pytest.raises(CommandError) as failure:
        call_command("publish_difficulty", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    assert fingerprint() == before
    assert str(failure.value) == "Claim contradicts its archived evidence: " + expected
