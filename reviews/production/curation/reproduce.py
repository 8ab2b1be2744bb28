"""``reproduce_defect``: re-run the saved native inputs a curator suspects through
the same native worker at the recorded verifier revision, and — only when every claimed case is
contradicted by the native verifier — write the supplemental collection that can confirm the
defect.

Refusals happen before anything runs when the request itself is wrong (an unknown attempt, the
wrong checkout, a bad issue URL); once cases ran, a refusal names the first case that was not
contradicted and what the verifier did, and leaves nothing (``rundir.StagedOutput``): the output
exists only when the defect was reproduced on every case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviews.production.curation import harbor_cases, records
from reviews.production.curation.cases import (
    DEFECT_KINDS,
    EXPECTATIONS,
    Answer,
    Case,
    Observation,
    reference_answer,
    saved_answer,
    supplied,
)
from reviews.production.curation.execution import (
    LOCAL_RUNTIME_KEYS,
    check_checkout,
    local_runtime,
    run_cases,
)
from reviews.production.curation.saved_runs import SavedAttempt, SavedRun
from reviews.production.format.github_issues import is_github_issue_url, not_an_issue
from reviews.production.make_review import records as production_records
from reviews.production.runtime.errors import CurationRefused, UsageError
from reviews.production.runtime.progress import progress_printer
from reviews.production.runtime.rundir import StagedOutput, checked_new, finish, write_json_file

REPORT_FILE = "reproduction.json"
SEVERITIES = ("low", "medium", "high", "critical")
TOOL = "reproduce_defect"
DEFECT_ROLE = "verifier_defect"


@dataclass(frozen=True)
class ReproduceOptions:
    run_dir: Path
    attempts: tuple[str, ...]
    kind: str
    issue_url: str
    expect: str
    output: Path
    saved_answer: bool = False
    reference_answer: bool = False
    answers: tuple[str, ...] = ()
    answer_files: tuple[Path, ...] = ()
    answer_template: str = "{reference}"
    statement: str | None = None
    severity: str = "high"
    curator: str | None = None
    config: Path | None = None
    failed_attempts: bool = False  # every finished attempt the run's verifier rejected
    except_attempts: tuple[str, ...] = ()


@dataclass
class ReproduceResult:
    output: Path
    source_id: str
    observations: list[Observation] = field(default_factory=list)
    # The run's other attempts the verifier rejected, not claimed: validate_fix's saved-wrong
    # controls (a correct one among them is another instance of the defect).
    unclaimed: list[tuple[SavedAttempt, Answer]] = field(default_factory=list)

    @property
    def collection_path(self) -> Path:
        return self.output / "quality-reviews.json"


def check_options(options: ReproduceOptions) -> None:
    if not options.attempts and not options.failed_attempts:
        raise UsageError("Name at least one --attempt under suspicion, or --failed-attempts")
    if options.kind not in DEFECT_KINDS:
        raise UsageError(f"--kind must be one of {', '.join(DEFECT_KINDS)}")
    if options.expect not in EXPECTATIONS:
        raise UsageError(f"--expect must be one of {', '.join(EXPECTATIONS)}")
    if options.severity not in SEVERITIES:
        raise UsageError(f"--severity must be one of {', '.join(SEVERITIES)}")
    if not is_github_issue_url(options.issue_url):
        raise UsageError(not_an_issue(options.issue_url))


def answers_for(attempt: SavedAttempt, options: ReproduceOptions) -> list[Answer]:
    """The answers a curator names for an attempt; its saved answer when none is named."""
    texts = list(options.answers)
    for path in options.answer_files:
        try:
            texts.append(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"Cannot read --answer-file {path}: {exc}") from None
    harbor = harbor_cases.is_harbor(attempt)
    answers: list[Answer] = []
    if options.saved_answer or not (texts or options.reference_answer):
        answers.append(harbor_cases.saved_answer(attempt) if harbor else saved_answer(attempt))
    if options.reference_answer:
        answers.append(
            harbor_cases.reference_answer(attempt)
            if harbor
            else reference_answer(attempt, template=options.answer_template)
        )
    answers += [
        harbor_cases.typed_answer(text, source="curator") if harbor
        else supplied(text, source="curator")
        for text in texts
    ]  # fmt: skip
    return answers


def replayable_answer(attempt: SavedAttempt) -> Answer | None:
    """A saved attempt's own answer, as a control can replay it: its solver turns, or a Harbor
    attempt's terminal commands; None when it saved none."""
    if not harbor_cases.is_harbor(attempt):
        return saved_answer(attempt) if attempt.responses else None
    try:
        return harbor_cases.saved_answer(attempt)
    except CurationRefused:
        return None


def reproduce_defect(*, options: ReproduceOptions, stderr: TextIO | None = None) -> ReproduceResult:
    check_options(options)
    checked_new(options.output)
    saved = SavedRun(options.run_dir)
    attempts = claimed_attempts(saved, options)
    for attempt in attempts.values():
        saved.task_subject(str(attempt.task.get("id")))  # the task is one the run reviewed
    cases = [
        Case(number=0, attempt=attempt, answer=answer, expectation=options.expect)
        for attempt in attempts.values()
        for answer in answers_for(attempt, options)
    ]
    cases = [
        Case(number=i, attempt=c.attempt, answer=c.answer, expectation=c.expectation)
        for i, c in enumerate(cases)
    ]
    unclaimed = unclaimed_rejections(saved, claimed=set(attempts))
    local = local_runtime(config=options.config, run=saved)
    identity = check_checkout(
        runtime=local,
        expected=saved.executed_checkout,
        purpose="Reproduce at the recorded verifier revision",
    )
    with StagedOutput(options.output, command=TOOL) as stage:
        run_dir = stage.path
        records.write_run_file(run_dir, _identity(saved=saved, options=options, identity=identity))
        progress = progress_printer(command=TOOL, total=len(cases), stream=stderr)
        observations = run_cases(
            run_dir=run_dir, cases=cases, local=local, progress=progress, command=TOOL
        )
        refusal = _refusal(observations)
        if refusal is not None:
            raise CurationRefused(refusal)
        report = _report(
            saved=saved, options=options, identity=identity, observations=observations,
            unclaimed=unclaimed,
        )  # fmt: skip
        report["reproduced"] = True
        write_json_file(run_dir / REPORT_FILE, report)
        result = ReproduceResult(
            output=run_dir, source_id=saved.source_id, observations=observations,
            unclaimed=unclaimed,
        )  # fmt: skip
        finish(
            output=run_dir,
            collection=_collection(
                saved=saved,
                options=options,
                identity=identity,
                result=result,
                final=stage.output,
            ),
        )
        result.output = stage.publish()
    return result


def claimed_attempts(saved: SavedRun, options: ReproduceOptions) -> dict[str, SavedAttempt]:
    """The attempts under suspicion by execution path: each ``--attempt``, and with
    ``--failed-attempts`` every finished attempt the run's verifier rejected, less each
    ``--except-attempt``."""
    named = [saved.attempt(selector) for selector in options.attempts]
    if options.failed_attempts:
        named += [attempt for attempt in saved.finished_attempts() if _rejected(attempt)]
    left_out = {saved.attempt(selector).execution_path for selector in options.except_attempts}
    attempts: dict[str, SavedAttempt] = {}
    for attempt in named:
        if attempt.execution_path not in left_out:
            attempts.setdefault(attempt.execution_path, attempt)
    if not attempts:
        raise CurationRefused(
            "No attempt is left to reproduce: the run's verifier rejected no finished attempt, "
            "or --except-attempt left out every one"
            if options.failed_attempts
            else "Every named attempt is left out by --except-attempt"
        )
    return attempts


def _rejected(attempt: SavedAttempt) -> bool:
    verification = attempt.verification
    return verification.get("status") == "verified" and verification.get("passed") is False


def unclaimed_rejections(
    saved: SavedRun, *, claimed: set[str]
) -> list[tuple[SavedAttempt, Answer]]:
    """The run's other finished attempts the verifier rejected that saved an answer, with it:
    what ``validate_fix`` replays as saved wrong answers, which must stay rejected."""
    return [
        (attempt, answer)
        for attempt in saved.finished_attempts()
        if attempt.execution_path not in claimed
        and _rejected(attempt)
        and (answer := replayable_answer(attempt)) is not None
    ]


def _refusal(observations: list[Observation]) -> str | None:
    """The first case that does not reproduce the defect, as one line (nothing is kept)."""
    for observation in observations:
        name = observation.case.name
        if observation.outcome == "worker_failed":
            return (
                f"Not reproduced: the native worker failed on {name} ({observation.worker_error}); "
                "nothing was kept"
            )
        if observation.met:
            return (
                f"Not reproduced: {name} was {observation.described}, as expected; nothing was kept"
            )
    return None


def _identity(
    *, saved: SavedRun, options: ReproduceOptions, identity: dict[str, Any]
) -> dict[str, Any]:
    return {
        "tool": TOOL,
        "original_run": saved.named(),
        "original_review_id": saved.review_id,
        "source_id": saved.source_id,
        "issue_url": options.issue_url,
        "defect_kind": options.kind,
        "expected": options.expect,
        "attempts": list(options.attempts),
        "marinskyrl": records.checkout_record(identity),
    }


def _report(
    *,
    saved: SavedRun,
    options: ReproduceOptions,
    identity: dict[str, Any],
    observations: list[Observation],
    unclaimed: list[tuple[SavedAttempt, Answer]],
) -> dict[str, Any]:
    """``reproduction.json``: expected against observed for every case, each case's saved input
    and answers (what ``validate_fix`` re-runs), and the run's other rejected answers (the saved
    wrong answers it uses as controls)."""
    return {
        "schema_version": 1,
        "tool": TOOL,
        "source_id": saved.source_id,
        "issue_url": options.issue_url,
        "defect_kind": options.kind,
        "expected": options.expect,
        "expectation": EXPECTATIONS[options.expect],
        "statement": options.statement,
        "original_run": saved.named(),
        "original_review_id": saved.review_id,
        "executed_marinskyrl_commit": identity["commit"],
        "cases": [{**o.record(), "input": saved_input(o.case.attempt)} for o in observations],
        "saved_rejected_answers": [
            {
                "original_attempt": attempt.execution_path,
                "task_id": attempt.task.get("id"),
                "verification": attempt.verification,
                "answer": answer.record(),
                "input": saved_input(attempt),
            }
            for attempt, answer in unclaimed
        ],
    }


def saved_input(attempt: SavedAttempt) -> dict[str, Any]:
    """What the worker was given, minus the endpoint (never a credential: the key is never in
    an input file) and minus where this machine keeps its checkouts and interpreters (a re-run
    takes them from its own runtime, ``execution.case_runtime``)."""
    config = {k: v for k, v in attempt.config.items() if k not in LOCAL_RUNTIME_KEYS}
    return {
        "task": attempt.task,
        "config": config,
        "model_parameters": attempt.model.get("parameters") or {},
    }


def _collection(
    *,
    saved: SavedRun,
    options: ReproduceOptions,
    identity: dict[str, Any],
    result: ReproduceResult,
    final: Path,
) -> dict[str, Any]:
    output = result.output
    source = saved.source_subject
    evidence = production_records.EvidenceWriter(output, url_root=final)
    imported_at = records.now_stamp()
    publisher = records.tool_actor(TOOL)
    subjects = [source]
    reviews = []
    for observation in result.observations:
        subject = saved.task_subject(str(observation.case.attempt.task.get("id")))
        if subject not in subjects:
            subjects.append(subject)
        reviews.append(
            records.case_review(
                observation=observation,
                review_id=f"{subject['id']}/reproduction/{observation.case.number:04d}",
                subject_id=subject["id"],
                evidence=evidence,
                prefix="",
                imported_at=imported_at,
                publisher=publisher,
            )
        )
    statement = options.statement or (
        f"Expected {EXPECTATIONS[options.expect]}; the native verifier did not."
    )
    observed = "; ".join(f"{o.case.name}: {o.described}" for o in result.observations)
    finding = {
        "dimension": DEFECT_KINDS[options.kind],
        "text": (
            f"{statement} Reproduced on {len(result.observations)} re-executed saved native "
            f"input(s) at MarinSkyRL {identity['commit'][:12]} — expected "
            f"{options.expect}, observed {observed}."
        ),
        "severity": options.severity,
        "kind": "issue",
    }
    reviews.append(
        records.curator_review(
            review_id=f"{source['id']}/verifier-defect",
            subject_id=source["id"],
            curator=records.curator_actor(options.curator),
            publisher=publisher,
            samples=records.samples_of(result.observations),
            summary=(
                f"Confirmed {options.kind.replace('_', ' ')} defect {options.issue_url}: "
                f"{statement}"
            ),
            verdict="conditional",
            findings=[finding],
            evidence=[evidence.item(REPORT_FILE)],
            derived_from=[review["id"] for review in reviews],
            attributes={
                "review_pool_role": DEFECT_ROLE,
                "issue_url": options.issue_url,
                "defect_kind": options.kind,
                "expected": options.expect,
                "reproduced_attempts": sorted(
                    {o.case.attempt.execution_path for o in result.observations}
                ),
                "original_review_id": saved.review_id,
            },
            imported_at=imported_at,
        )
    )
    return {
        "schema_version": production_records.SCHEMA_VERSION,
        "execution_provenance": records.provenance(identity),
        "created_at": imported_at,
        "subjects": subjects,
        "reviews": records.labelled(reviews, example=records.is_example(saved.collection)),
        "tag_assignments": [],
        "source_mappings": [],
    }
