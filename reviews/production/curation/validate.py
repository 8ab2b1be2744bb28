"""``validate_fix``: prove a repaired verifier against the saved failing inputs and
incorrect-answer controls, by native execution at the repaired checkout, and write the resolution
collection ``resolve_verifier_issue`` accepts.

Inputs: the defect's reproductions (``reproduce_defect`` outputs — the confirming collection and
any added to the open defect since — or fetched from the Atlas by its issue URL), a fresh
``make_review`` run at the repaired checkout (the new source review the seed asks for: Good
returns only through it), and the source's current Atlas row (the revisions the resolution entry
must name). Cases run first, in ``<output>/validation/``; only when every failing
input now holds and every control is rejected is the review copied beside them and the collection
written: the review's own reviews, one runtime review per validation case, and the curator's
review carrying ``resolved_verifier_issues``. Otherwise the refusal names every case that failed
and nothing is kept (``rundir.StagedOutput``): the output exists only for a validated fix.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviews.production.curation import harbor_cases, records
from reviews.production.curation.atlas_row import read_atlas_row
from reviews.production.curation.cases import (
    CONTROL_KINDS,
    Answer,
    Case,
    Observation,
    generated_controls,
    supplied,
)
from reviews.production.curation.execution import check_checkout, local_runtime, run_cases
from reviews.production.curation.reproduce import DEFECT_ROLE, REPORT_FILE
from reviews.production.curation.saved_runs import (
    PUBLISHED_FILE,
    SavedAttempt,
    SavedRun,
    completion_of,
)
from reviews.production.format.collection_checks import CollectionRejected, check_collection
from reviews.production.format.github_issues import is_github_issue_url, not_an_issue
from reviews.production.make_review import records as production_records
from reviews.production.runtime.atlas_client import FETCHED_FILE, AtlasClient
from reviews.production.runtime.errors import CurationRefused, UsageError
from reviews.production.runtime.progress import progress_printer
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    LOCK_FILE,
    MANIFEST_FILE,
    StagedOutput,
    checked_new,
    finish,
    read_json,
    write_json_file,
)

TOOL = "validate_fix"
VALIDATION_DIR = "validation"
VALIDATION_FILE = "validation.json"
NOT_COPIED = frozenset({LOCK_FILE, COLLECTION_FILE, MANIFEST_FILE, PUBLISHED_FILE, FETCHED_FILE})


@dataclass(frozen=True)
class ValidateOptions:
    review: Path
    output: Path
    confirming: tuple[Path, ...] = ()
    atlas: str | None = None
    atlas_row: Path | None = None
    issue_url: str | None = None
    skip_controls: tuple[str, ...] = ()
    control_answers: tuple[str, ...] = ()
    curator: str | None = None
    config: Path | None = None  # this machine's runtime (required for a review fetched here)


@dataclass
class ValidateResult:
    output: Path
    source_id: str
    issue_url: str
    observations: list[Observation] = field(default_factory=list)

    @property
    def collection_path(self) -> Path:
        return self.output / COLLECTION_FILE


@dataclass(frozen=True)
class Confirming:
    """What one reproduction of the defect says (the confirming collection, or one added to the
    open defect later): the issue, the claim, the cases it reproduced."""

    root: Path
    report: dict[str, Any]
    review_id: str  # the SHA-256 of its collection: its review id once published

    @property
    def issue_url(self) -> str:
        return str(self.report["issue_url"])

    @property
    def source_id(self) -> str:
        return str(self.report["source_id"])


def read_confirming(root: Path) -> Confirming:
    report = read_json(root / REPORT_FILE)
    collection = read_json(root / COLLECTION_FILE)
    if not isinstance(report, dict) or not isinstance(collection, dict):
        raise CurationRefused(
            f"{root} is not a confirming collection: it needs {REPORT_FILE} and "
            f"{COLLECTION_FILE} as reproduce_defect writes them"
        )
    defect = [
        review
        for review in collection.get("reviews") or []
        if (review.get("attributes") or {}).get("review_pool_role") == DEFECT_ROLE
    ]
    if not defect or report.get("reproduced") is not True or not report.get("cases"):
        raise CurationRefused(f"{root} holds no reproduced verifier defect")
    if defect[0]["attributes"].get("issue_url") != report.get("issue_url"):
        raise CurationRefused(f"{root}: its report and its collection name different issues")
    review_id = hashlib.sha256((root / COLLECTION_FILE).read_bytes()).hexdigest()
    return Confirming(root=root, report=report, review_id=review_id)


def _attempt_of(
    confirming: Confirming, entry: dict[str, Any], *, review: SavedRun | None
) -> SavedAttempt:
    """A saved input recorded in ``reproduction.json`` as the attempt it came from; a Harbor
    input on its task as the fresh review ran it."""
    saved = _recorded_attempt(confirming, entry)
    if review is not None and harbor_cases.is_harbor(saved):
        return harbor_cases.repaired(saved, review=review)
    return saved


def _recorded_attempt(confirming: Confirming, entry: dict[str, Any]) -> SavedAttempt:
    saved_input = entry["input"]
    messages = entry["answer"]["messages"]
    return SavedAttempt(
        run_dir=confirming.root,
        task_folder=str(entry["original_attempt"]).rsplit("/", 1)[0],
        execution_path=str(entry["original_attempt"]),
        task=saved_input["task"],
        model={"parameters": saved_input.get("model_parameters") or {}},
        config=saved_input.get("config") or {},
        attempt={"verification": entry.get("verification")},
        responses=tuple(completion_of(message) for message in messages),
    )


def validation_cases(
    *, reproductions: list[Confirming], options: ValidateOptions, review: SavedRun | None = None
) -> list[Case]:
    """(a) every saved failing input of every reproduction with its expectation, then (b) the
    incorrect-answer controls: generated from each failing input that claims a correct answer,
    the run's saved wrong answers (less those another reproduction claims), and the curator's
    control answers — each to be rejected. A Harbor input runs on its task as the fresh
    ``review`` ran it (the task's tests are its verifier)."""
    unknown = set(options.skip_controls) - set(CONTROL_KINDS)
    if unknown:
        raise UsageError(f"--skip-control takes {', '.join(CONTROL_KINDS)}")
    cases: list[Case] = []
    controls: list[tuple[SavedAttempt, Answer]] = []
    claimed = [
        (confirming, entry) for confirming in reproductions for entry in confirming.report["cases"]
    ]
    for confirming, entry in claimed:
        attempt = _attempt_of(confirming, entry, review=review)
        harbor = harbor_cases.is_harbor(attempt)
        answer = Answer(
            source=entry["answer"]["source"],
            responses=attempt.responses,
            origin=entry["answer"]["origin"],
            agent=entry["answer"].get("agent"),
        )
        cases.append(
            Case(
                number=len(cases),
                attempt=attempt,
                answer=answer,
                expectation=entry["expected"],
                role="failing_input",
            )
        )
        if entry["expected"] == "accepted":
            generated = (
                [("empty", harbor_cases.no_action(origin=attempt.execution_path))]
                if harbor
                else generated_controls(answer, origin=attempt.execution_path)
            )
            for kind, control in generated:
                if kind not in options.skip_controls:
                    controls.append((attempt, control))
        for text in options.control_answers:
            control = (
                harbor_cases.typed_answer(text, source="control:curator")
                if harbor
                else supplied(text, source="control:curator")
            )
            controls.append((attempt, control))
    saved_wrong = [
        (confirming, entry)
        for confirming in reproductions
        for entry in confirming.report.get("saved_rejected_answers") or []
    ]
    if "saved_wrong" not in options.skip_controls:
        for confirming, entry in saved_wrong:
            attempt = _attempt_of(confirming, entry, review=review)
            controls.append(
                (
                    attempt,
                    Answer(
                        source="control:saved_wrong",
                        responses=attempt.responses,
                        origin=attempt.execution_path,
                        agent=entry["answer"].get("agent"),
                    ),
                )
            )
    if not controls:
        raise CurationRefused(
            "No incorrect-answer control applies to these failing inputs; name answers that "
            "must still be rejected with --control-answer"
        )
    # A saved answer one reproduction claims is a failing input, never another's control.
    seen = {(c.attempt.task.get("id"), c.answer.text) for c in cases}
    for attempt, control in controls:
        if (attempt.task.get("id"), control.text) in seen:
            continue  # the same answer to the same task proves nothing twice
        seen.add((attempt.task.get("id"), control.text))
        cases.append(
            Case(
                number=len(cases),
                attempt=attempt,
                answer=control,
                expectation="rejected",
                role="control",
            )
        )
    return cases


def validate_fix(*, options: ValidateOptions, stderr: TextIO | None = None) -> ValidateResult:
    if not options.confirming and not (options.atlas and options.issue_url):
        raise UsageError(
            "Name the defect's reproductions: --confirming DIR for each, or --atlas and --issue-url"
        )
    if options.issue_url is not None and not is_github_issue_url(options.issue_url):
        raise UsageError(not_an_issue(options.issue_url))
    checked_new(options.output)
    review = SavedRun(options.review)
    if review.run is None:
        raise CurationRefused(f"{options.review} is not a make_review run (it has no run.json)")
    try:
        check_collection(collection=review.collection, run_dir=review.root)
    except CollectionRejected as exc:
        raise CurationRefused(f"The review run does not validate: {exc}") from None
    source_id = review.source_id
    local = local_runtime(config=options.config, run=review)
    # Every check runs before the output folder exists (reproductions named by their issue are
    # fetched into scratch space): a refused command leaves no folder behind.
    with tempfile.TemporaryDirectory(prefix="validate-fix-") as scratch:
        reproductions = _reproductions(options=options, source_id=source_id, scratch=Path(scratch))
        row = _atlas_row(options=options, review=review, source_id=source_id)
        issue_url = reproductions[0].issue_url
        revisions = _current_revisions(row=row, review=review, issue_url=issue_url)
        identity = check_checkout(
            runtime=local,
            expected=review.executed_checkout,
            purpose="Validate the fix at the checkout the review ran",
        )
        cases = validation_cases(reproductions=reproductions, options=options, review=review)
        with StagedOutput(options.output, command=TOOL) as stage:
            result = _validate(
                stage=stage, review=review, reproductions=reproductions, cases=cases, local=local,
                identity=identity, revisions=revisions, curator=options.curator, stderr=stderr,
            )  # fmt: skip
            result.output = stage.publish()
        return result


def _validate(
    *,
    stage: StagedOutput,
    review: SavedRun,
    reproductions: list[Confirming],
    cases: list[Case],
    local: dict[str, Any],
    identity: dict[str, Any],
    revisions: dict[str, Any],
    curator: str | None,
    stderr: TextIO | None,
) -> ValidateResult:
    """The cases run in ``<staging>/validation/``; all hold → the review copied beside them and
    the resolution collection written. Any case that fails refuses (the staging is removed)."""
    output = stage.path
    source_id = review.source_id
    confirming = reproductions[0]
    reproduced = {
        "confirming_review_id": confirming.review_id,
        "reproduction_review_ids": [item.review_id for item in reproductions],
    }
    validation = output / VALIDATION_DIR
    validation.mkdir()
    records.write_run_file(
        validation,
        {
            "tool": TOOL,
            "source_id": source_id,
            "issue_url": confirming.issue_url,
            **reproduced,
            "review_run": review.named(),
            "marinskyrl": records.checkout_record(identity),
        },
    )
    for number, item in enumerate(reproductions):
        shutil.copyfile(item.root / REPORT_FILE, validation / report_copy(number))
    progress = progress_printer(command=TOOL, total=len(cases), stream=stderr)
    observations = run_cases(
        run_dir=validation, cases=cases, local=local, progress=progress, command=TOOL
    )
    offenders = [o for o in observations if not o.met]
    if offenders:
        raise CurationRefused(
            "Fix not validated: "
            + "; ".join(_offence(o) for o in offenders)
            + "; nothing was kept"
            + _saved_wrong_hint(offenders, reproductions)
        )
    result = ValidateResult(
        output=output, source_id=source_id, issue_url=confirming.issue_url,
        observations=observations,
    )  # fmt: skip
    write_json_file(
        validation / VALIDATION_FILE,
        {
            "schema_version": 1,
            "tool": TOOL,
            "source_id": source_id,
            "issue_url": confirming.issue_url,
            **reproduced,
            "validated_marinskyrl_commit": identity["commit"],
            "reproduced_marinskyrl_commit": confirming.report.get("executed_marinskyrl_commit"),
            **revisions,
            "fix_validated": True,
            "cases": [o.record() for o in observations],
        },
    )
    _copy_review(review=review.root, output=output)
    finish(
        output=output,
        collection=_collection(
            review=review,
            reproductions=reproductions,
            result=result,
            final=stage.output,
            identity=identity,
            revisions=revisions,
            curator=curator,
        ),
    )
    return result


def _saved_wrong_hint(offenders: list[Observation], reproductions: list[Confirming]) -> str:
    """A saved answer the reviewed verifier rejected is a control only because it was rejected:
    accepted by the repaired verifier, it may be correct — another instance of the defect. The
    way on, as commands: reproduce it at the reviewed commit, add that reproduction to the open
    defect, validate again with every reproduction; or leave saved answers out."""
    accepted = [o for o in offenders if o.case.answer.source == "control:saved_wrong"]
    if not accepted:
        return ""
    report = reproductions[0].report
    issue, source = shlex.quote(str(report["issue_url"])), shlex.quote(str(report["source_id"]))
    original = report.get("original_run")
    reviewed = original.get("review_id") if isinstance(original, dict) else None
    run = f"RUN your copy of review {reviewed[:12]}" if isinstance(reviewed, str) else "RUN the run"
    attempts = " ".join(f"--attempt {o.case.attempt.execution_path}" for o in accepted)
    manage = "python manage.py"
    return (
        ". A saved-wrong control is an answer the reviewed verifier rejected: if it is correct, "
        f"it is another instance of the defect — add it to the defect, at the reviewed commit, "
        f"with {run} reviewed and NEW a new folder: {manage} reproduce_defect --run-dir RUN "
        f"{attempts} --kind {report['defect_kind']} --expect {report['expected']} --issue-url "
        f"{issue} --output NEW; {manage} publish_review --run-dir NEW --atlas-id {source}; "
        f"{manage} confirm_verifier_issue --atlas-id {source} --issue-url {issue} "
        "--review-run-dir NEW (it adds the reproduction to the open defect); then validate_fix "
        f"again with --confirming for every reproduction (or --issue-url {issue} --atlas URL, "
        "which reads them all). If it is wrong after all, leave saved answers out "
        "(--skip-control saved_wrong)"
    )


def _offence(observation: Observation) -> str:
    case = observation.case
    if case.role == "failing_input":
        return f"failing input {case.name} is still {observation.described}"
    return f"control {case.name} was {observation.described}, not rejected"


def report_copy(number: int) -> str:
    """Where the validation keeps the ``number``-th reproduction's record (the first where a
    single reproduction's always was)."""
    return REPORT_FILE if number == 0 else REPORT_FILE.replace(".json", f"-{number + 1}.json")


def _reproductions(*, options: ValidateOptions, source_id: str, scratch: Path) -> list[Confirming]:
    """The defect's reproductions: each ``--confirming`` folder, or every one the Atlas records
    for ``--issue-url`` (the confirming collection and those added since), fetched. All of the
    review's source and of one issue."""
    if options.confirming:
        found = [read_confirming(Path(root)) for root in options.confirming]
    else:
        assert options.atlas and options.issue_url
        found = []
        with AtlasClient(options.atlas) as atlas:
            issue = atlas.verifier_issue(source_id=source_id, issue_url=options.issue_url)
            ids = issue.get("reproduction_review_ids") or [issue["review_id"]]
            for number, review_id in enumerate(ids):
                target = scratch / f"reproduction-{number}"
                atlas.fetch_review(review_id=str(review_id), output=target)
                found.append(read_confirming(target))
    for item in found:
        if item.source_id != source_id:
            raise CurationRefused(
                f"The reproduction {item.root} is of {item.source_id}, the review of {source_id}"
            )
        wanted = options.issue_url or found[0].issue_url
        if item.issue_url != wanted:
            raise CurationRefused(
                f"The reproduction {item.root} names {item.issue_url}, not {wanted}"
            )
    return found


def _atlas_row(*, options: ValidateOptions, review: SavedRun, source_id: str) -> dict[str, Any]:
    """The source's current Atlas row: saved (``--atlas-row`` or the review config's
    ``source.grading_snapshot``), else read from ``--atlas``."""
    config = (review.run or {}).get("config") or {}
    snapshot = options.atlas_row or (config.get("source") or {}).get("grading_snapshot")
    return read_atlas_row(
        source_id=source_id,
        saved=snapshot or None,
        atlas=options.atlas,
        missing=(
            "validate_fix needs the source's current Atlas row (its revisions): pass --atlas "
            "URL or --atlas-row PATH saved from /api/sources/<id>/"
        ),
    )


def _current_revisions(*, row: dict[str, Any], review: SavedRun, issue_url: str) -> dict[str, Any]:
    """The revisions the resolution entry names: the row's, which the review must cover."""
    reviewed = review.source_subject.get("dataset_revision")
    if row.get("dataset_revision") is None or row.get("dataset_revision") != reviewed:
        raise CurationRefused(
            f"The review covers dataset revision {reviewed}; the Atlas source is at "
            f"{row.get('dataset_revision')}: review the current revision"
        )
    issues = row.get("verifier_issues")
    if isinstance(issues, list) and issue_url not in {i.get("issue_url") for i in issues}:
        raise CurationRefused(f"The Atlas row lists no open verifier issue {issue_url}")
    return {
        "dataset_revision": row.get("dataset_revision"),
        "verifier_revision": row.get("verifier_revision"),
    }


def _copy_review(*, review: Path, output: Path) -> None:
    """The fresh review's files beside the validation (its collection is rewritten)."""
    for path in sorted(review.rglob("*")):
        relative = path.relative_to(review)
        if relative.parts[0] in NOT_COPIED or not path.is_file() or path.is_symlink():
            continue
        if relative.parts[0] == VALIDATION_DIR:
            raise CurationRefused(f"The review run already has a {VALIDATION_DIR}/ folder")
        target = output / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _collection(
    *,
    review: SavedRun,
    reproductions: list[Confirming],
    result: ValidateResult,
    final: Path,
    identity: dict[str, Any],
    revisions: dict[str, Any],
    curator: str | None,
) -> dict[str, Any]:
    collection = json.loads(json.dumps(review.collection))
    source = review.source_subject
    evidence = production_records.EvidenceWriter(result.output, url_root=final)
    imported_at = records.now_stamp()
    publisher = records.tool_actor(TOOL)
    subject_ids = {subject["id"] for subject in collection["subjects"]}
    case_reviews = []
    for observation in result.observations:
        subject = production_records.task_subject(source=source, task=observation.case.attempt.task)
        if subject["id"] not in subject_ids:
            collection["subjects"].append(subject)
            subject_ids.add(subject["id"])
        case_reviews.append(
            records.case_review(
                observation=observation,
                review_id=f"{subject['id']}/fix-validation/{observation.case.number:04d}",
                subject_id=subject["id"],
                evidence=evidence,
                prefix=f"{VALIDATION_DIR}/",
                imported_at=imported_at,
                publisher=publisher,
            )
        )
    confirming = reproductions[0]
    failing = [o for o in result.observations if o.case.role == "failing_input"]
    controls = [o for o in result.observations if o.case.role == "control"]
    report = f"{VALIDATION_DIR}/{VALIDATION_FILE}"
    copies = [f"{VALIDATION_DIR}/{report_copy(n)}" for n in range(len(reproductions))]
    summary = (
        f"Fix validated for {confirming.issue_url} at MarinSkyRL {identity['commit'][:12]}: "
        f"{len(failing)} saved failing input(s) now {_expected_words(failing)}, and "
        f"{len(controls)} incorrect-answer control(s) rejected by the native verifier."
    )
    resolution = records.curator_review(
        review_id=f"{source['id']}/fix-validation",
        subject_id=source["id"],
        curator=records.curator_actor(curator),
        publisher=publisher,
        samples=records.samples_of(result.observations),
        summary=summary,
        verdict="keep",
        findings=[
            {
                "dimension": "verifier",
                "text": "; ".join(f"{o.case.name}: {o.described}" for o in result.observations),
                "severity": "info",
                "kind": "observation",
            }
        ],
        evidence=[evidence.item(report), *(evidence.item(copy) for copy in copies)],
        derived_from=[review["id"] for review in case_reviews],
        attributes={
            "resolved_verifier_issues": [
                {
                    "issue_url": confirming.issue_url,
                    "dataset_revision": revisions["dataset_revision"],
                    "verifier_revision": revisions["verifier_revision"],
                    "fix_validated": True,
                    "confirming_review_id": confirming.review_id,
                    "reproduction_review_ids": [item.review_id for item in reproductions],
                    "validated_marinskyrl_commit": identity["commit"],
                    "validation_evidence": report,
                }
            ],
        },
        imported_at=imported_at,
    )
    example = records.is_example(review.collection) or any(
        records.is_example(read_json(item.root / COLLECTION_FILE) or {}) for item in reproductions
    )
    collection["reviews"] += records.labelled([*case_reviews, resolution], example=example)
    return collection


def _expected_words(observations: list[Observation]) -> str:
    words = {"accepted": "accepted", "rejected": "rejected", "graded": "graded without an error"}
    return " or ".join(words[key] for key in sorted({o.case.expectation for o in observations}))
