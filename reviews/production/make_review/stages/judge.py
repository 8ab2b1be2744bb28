"""The judge stage: three independent judges per attempt, run at the same time, the task's panel
validated as each finishes; the task's runtime and judge reviews; the partial panel file."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

from reviews.production.make_review import records
from reviews.production.make_review.evidence import evidence_bundle
from reviews.production.make_review.judges import (
    CONSOLIDATION_PROMPT,
    JUDGE_COUNT,
    JUDGE_PROMPT,
    JudgeOutcome,
    judge_payload,
    run_judge,
)
from reviews.production.make_review.run import Run, TaskOutcome
from reviews.production.make_review.stages.validate import validate
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.launcher import Interrupted
from reviews.production.runtime.rundir import (
    PANEL_FILE,
    task_folder,
    write_json_file,
)
from reviews.production.runtime.tasks import HARBOR_ROUTE


def judge(*, run: Run, outcome: TaskOutcome) -> TaskOutcome:
    """Ask the three judges about the attempt and complete the task's reviews."""
    number, task, attempt = outcome.number, outcome.task, outcome.attempt
    try:
        bundle = evidence_bundle(
            run_dir=run.output,
            execution_path=attempt["execution_path"],
            max_bytes=run.options.max_evidence_bytes,
        )
        payload = judge_payload(
            task=task.record(),
            attempt=attempt,
            evidence=bundle,
            max_bytes=run.options.max_evidence_bytes,
        )
    except ReviewProductionError as exc:  # the failure line names the task
        raise ReviewProductionError(f"task {number:04d}: {exc}") from None
    judges_dir = task_folder(run_dir=run.output, number=number) / "judges"
    # The three judges are independent sessions, so they run at the same time; each writes
    # only its own folder, so the files are those of a sequential run.
    futures = {
        run.judge_pool.submit(
            _judge, run=run, judge_dir=judges_dir / str(index), index=index, payload=payload
        ): index
        for index in range(1, JUDGE_COUNT + 1)
    }
    completed: dict[int, JudgeOutcome] = {}
    errors: dict[int, BaseException] = {}
    for future in concurrent.futures.as_completed(futures):
        index = futures[future]
        try:
            completed[index] = future.result()
        except BaseException as exc:  # the others finish and keep their calls for resume
            errors[index] = exc
            continue
        # The panel is validated after each judge — incrementally: the runtime review
        # with the first judge to finish, then each further judge with its tags.
        outcome.judges = [completed[k] for k in sorted(completed)]
        reviews, tags = task_reviews(run=run, outcome=outcome)
        fresh_ids = {f"{run.task_subject(task)['id']}/judge/{index}"}
        if len(completed) == 1:
            fresh_ids.add(reviews[0]["id"])
        fresh = [review for review in reviews if review["id"] in fresh_ids]
        fresh_tags = [tag for tag in tags if tag["target"]["id"] in fresh_ids]
        validate(collection=run.collection([task], fresh, fresh_tags), run_dir=run.output)
    if errors:
        real = {k: e for k, e in errors.items() if not isinstance(e, KeyboardInterrupt)}
        raise (real or errors)[min(real or errors)]
    outcome.reviews, outcome.tags = task_reviews(run=run, outcome=outcome)
    return outcome


def _judge(*, run: Run, judge_dir: Path, index: int, payload: dict[str, Any]) -> JudgeOutcome:
    if run.stop.is_set():
        raise Interrupted()
    return run_judge(
        client=run.client, judge_dir=judge_dir, index=index, payload=payload, room=run.room
    )


def write_panel(*, run: Run, done: dict[int, TaskOutcome]) -> None:
    """The finished tasks' panel so far, rewritten after every task."""
    outcomes = [done[number] for number in sorted(done)]
    reviews: list[dict[str, Any]] = []
    tags: list[dict[str, Any]] = []
    for outcome in outcomes:
        reviews += outcome.reviews
        tags += outcome.tags
    collection = run.collection([o.task for o in outcomes], reviews, tags)
    # Rewritten after every task, so n tasks write O(n²) bytes: written as every run file is,
    # by orjson (the standard library's encoder took ~8× its CPU for the same collection).
    write_json_file(run.output / PANEL_FILE, collection)


def task_reviews(*, run: Run, outcome: TaskOutcome) -> tuple[list[dict], list[dict]]:
    """The task's runtime review and one review per finished judge, with the judges' tags."""
    subject = run.task_subject(outcome.task)
    folder = f"tasks/{outcome.number:04d}"
    attempt = outcome.attempt
    execution = attempt["execution_path"]
    verification = attempt["verification"]
    coverage = records.single_task_coverage(task=outcome.task.record(), seed=run.options.seed)
    imported_at = run.imported_at
    evidence_paths = [f"{folder}/attempt.json", f"{execution}/verifier-trace.jsonl"]
    for optional in ("solver-trace.json", "harbor-result.json"):
        if (run.output / execution / optional).is_file():
            evidence_paths.append(f"{execution}/{optional}")
    attributes: dict[str, Any] = {
        "verification": verification,
        "execution_path": execution,
        "route": outcome.task.route,
    }
    if outcome.task.route != HARBOR_ROUTE:
        attributes["verifyit_enabled"] = bool(
            run.runtime["gym_config"].get(outcome.task.env_id or "", {}).get("verifyit_enabled")
        )
    runtime_review = records.review(
        review_id=f"{subject['id']}/runtime",
        subject_id=subject["id"],
        reviewer=records.NATIVE_VERIFIER,
        reviewed_at=run.evidence.reviewed_at(evidence_paths[0]),
        imported_at=imported_at,
        method="runtime_execution",
        tests_executed=bool(attempt.get("verifier_executed")),
        coverage=coverage,
        summary=records.runtime_summary(route=outcome.task.route, verification=verification),
        verdict="unrated" if verification.get("status") == "verified" else "inconclusive",
        metrics=[
            {"key": "native_verifier_score", "value": verification.get("score"), "scale": None}
        ],
        findings=[],
        evidence=[run.evidence.item(path) for path in evidence_paths],
        derived_from=[],
        attributes=attributes,
    )
    reviews = [runtime_review]
    tags: list[dict[str, Any]] = []
    actor = records.model_actor(run.config.model.name)
    for judged in outcome.judges:
        judge_dir = f"{folder}/judges/{judged.index}"
        paths = [f"{judge_dir}/parsed.json", f"{folder}/attempt.json"]
        paths += [
            f"{judge_dir}/segments/{segment.name}/parsed.json" for segment in judged.segment_dirs
        ]
        if judged.segment_dirs:
            paths.append(f"{judge_dir}/segments.json")
        review_id = f"{subject['id']}/judge/{judged.index}"
        reviews.append(
            records.review(
                review_id=review_id,
                subject_id=subject["id"],
                reviewer=actor,
                reviewed_at=run.evidence.reviewed_at(paths[0]),
                imported_at=imported_at,
                method="model_judgment",
                tests_executed=bool(attempt.get("verifier_executed")),
                coverage=coverage,
                derived_from=[],
                evidence=[run.evidence.item(path) for path in paths],
                attributes={
                    "judge_model": run.judge_model(),
                    "judge_index": judged.index,
                    "independent_session": True,
                    "prompt": JUDGE_PROMPT,
                    "evidence_segments": judged.segments,
                    "segment_consolidation_prompt": (
                        CONSOLIDATION_PROMPT if judged.segment_dirs else None
                    ),
                },
                **records.opinion_fields(judged.opinion),
            )
        )
        tags += records.tag_assignments(
            review_id=review_id,
            tags=judged.opinion["tags"],
            assigned_by=actor,
            assigned_at=imported_at,
        )
    return reviews, tags
