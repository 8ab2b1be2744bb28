"""The synthesise stage: once every task is judged, the grading code checked unchanged, the
provenance with the verifyit package, the coalescer's syntheses (one per task, one for the
source) and the final collection."""

from __future__ import annotations

from typing import Any

from reviews.production.make_review import records
from reviews.production.make_review.reuse import REUSE_FILE
from reviews.production.make_review.run import Run, TaskOutcome
from reviews.production.make_review.stages.sample import grading_of
from reviews.production.make_review.synthesis import Synthesis, run_coalescer
from reviews.production.runtime.errors import ReviewProductionError


def synthesise(*, run: Run, outcomes: list[TaskOutcome]) -> dict[str, Any]:
    """The final collection: every task's panel and synthesis, then the source's synthesis."""
    if run.grading is not None:
        # The checkout and its dependencies must still be what was verified at start.
        try:
            unchanged = grading_of(run=run, sample=run.sample) == run.grading
        except ReviewProductionError:
            unchanged = False
        if not unchanged:
            raise ReviewProductionError(
                "Native grading code or dependency versions changed during the review"
            )
    provenance = run.provenance(outcomes)
    panel: list[dict[str, Any]] = []
    tags: list[dict[str, Any]] = []
    per_task: list[list[dict[str, Any]]] = []
    for outcome in outcomes:
        per_task.append(outcome.reviews)
        panel += outcome.reviews
        tags += outcome.tags
    subjects = [run.source_subject, *(run.task_subject(o.task) for o in outcomes)]
    run.progress.update("synthesising")
    syntheses = run_coalescer(
        client=run.client,
        run_dir=run.output,
        subjects=subjects,
        provenance=provenance,
        reviews=panel,
        room=run.room,
    )
    reviews: list[dict[str, Any]] = []
    for outcome, task_reviews in zip(outcomes, per_task, strict=True):
        subject = run.task_subject(outcome.task)
        reviews += task_reviews
        reviews.append(
            _synthesis(
                run,
                subject_id=subject["id"],
                synthesis=syntheses[subject["id"]],
                contributing=task_reviews,
                coverage=records.single_task_coverage(
                    task=outcome.task.record(), seed=run.options.seed
                ),
                tags=tags,
            )
        )
    population = run.sample.population_of(
        repository=run.source["repository"],
        revision=run.source["revision"],
        source_id=run.source["source_id"],
    )
    reviews.append(
        _synthesis(
            run,
            subject_id=run.source_subject["id"],
            synthesis=syntheses[run.source_subject["id"]],
            contributing=panel,
            coverage=records.source_coverage(
                tasks=[o.task.record() for o in outcomes],
                seed=run.options.seed,
                population=population or run.sample.population,
            ),
            tags=tags,
            cited=(REUSE_FILE,) if run.reuse is not None else (),
        )
    )
    return run.collection([o.task for o in outcomes], reviews, tags, provenance)


def _synthesis(
    run: Run,
    *,
    subject_id: str,
    synthesis: Synthesis,
    contributing: list[dict[str, Any]],
    coverage: dict[str, Any],
    tags: list[dict[str, Any]],
    cited: tuple[str, ...] = (),
) -> dict[str, Any]:
    review_id = f"{subject_id}/synthesis"
    actor = records.model_actor(run.config.model.name)
    opinion = synthesis.opinion
    tags += records.tag_assignments(
        review_id=review_id, tags=opinion["tags"], assigned_by=actor,
        assigned_at=run.imported_at,
    )  # fmt: skip
    return records.review(
        review_id=review_id,
        subject_id=subject_id,
        reviewer=actor,
        reviewed_at=run.evidence.reviewed_at(synthesis.evidence[0]),
        imported_at=run.imported_at,
        method="synthesis",
        tests_executed=all(review["tests_executed"] is True for review in contributing),
        coverage=coverage,
        evidence=[run.evidence.item(p) for p in (*synthesis.evidence, *cited)],
        # Set by the tool, never taken from the model.
        derived_from=[review["id"] for review in contributing],
        attributes={"judge_model": run.judge_model()},
        **records.opinion_fields(opinion),
    )
