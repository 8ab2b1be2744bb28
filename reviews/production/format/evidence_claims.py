"""Claims held against the archived native evidence they rest on.

The collection's hashes prove that the files it cites are the files archived; they do not prove
that what a review *says* is what those files *show*. A curator who edits an attempt's verdict,
or a claim, and recomputes the hashes passes every shape check — so publication, defect
confirmation and resolution also ask here, before anything is written, whether each claim agrees
with the archived record it rests on:

- a runtime review's ``attributes.verification`` ``status`` and ``score``, its ``tests_executed``
  and its ``native_verifier_score`` metric: ``<execution_path>/attempt.json``, the native worker's
  own result (a Harbor attempt's score also: ``<execution_path>/harbor-result.json`` rewards);
  ``verified`` needs an attempt that ran the verifier (``verifier_executed: true``) and verified;
- a ``resolved_verifier_issues`` entry with ``fix_validated: true``: its validation record
  (``validation/validation.json``) — the same issue, ``fix_validated`` and
  ``validated_marinskyrl_commit`` (the commit the collection's review executed); each case's
  ``observed`` its archived ``attempt.json``; every failing input meeting its expectation, every
  incorrect-answer control rejected, every case of the archived reproductions re-run;
- a ``verifier_defect`` review's ``reproduction.json``: ``reproduced: true``, the same issue, and
  every case's archived ``attempt.json`` contradicting the case's expectation.

Pure: callers hand in the archive as a mapping of run-relative paths to text (the run directory's
files at publication, the stored artifacts at confirmation and resolution). A contradiction is
``ClaimContradicted`` with one line naming the file, the field and both values. Difficulty reports
are counted by ``difficulty.publication`` with ``observed_outcome`` from here.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Mapping
from typing import Any, NoReturn

ATTEMPT_FILE = "attempt.json"
HARBOR_RESULT_FILE = "harbor-result.json"
REPRODUCTION_FILE = "reproduction.json"
VALIDATION_FILE = "validation.json"
SCORE_METRIC = "native_verifier_score"
DEFECT_ROLE = "verifier_defect"
FAILING_INPUT = "failing_input"
CONTROL = "control"
# How close a Harbor reward and the attempt's score must be (the worker's own float arithmetic).
TOLERANCE = 1e-9
SHOWN_CHARACTERS = 80

Archive = Mapping[str, str]


class ClaimContradicted(Exception):
    """A claim disagrees with the archived evidence it rests on; the message is one line."""


def observed_outcome(attempt: Mapping[str, Any] | None) -> str:
    """What a native attempt record shows: ``accepted`` | ``rejected`` (it verified) | ``error``
    | ``unavailable`` | ``worker_failed`` (no record)."""
    if attempt is None:
        return "worker_failed"
    verification = _verification(attempt)
    status = verification.get("status")
    if status == "verified":
        return "accepted" if verification.get("passed") is True else "rejected"
    return "error" if status == "error" else "unavailable"


def meets(*, expected: str, outcome: str) -> bool:
    """Whether an observed outcome is what a case expected (``graded``: any verdict)."""
    if expected == "graded":
        return outcome in ("accepted", "rejected")
    return outcome == expected


def check_collection_claims(*, collection: Mapping[str, Any], archive: Archive) -> None:
    """Every claim of a collection that rests on archived native evidence (publication)."""
    check_runtime_reviews(collection=collection, archive=archive)
    check_fix_validations(collection=collection, archive=archive)
    check_reproductions(collection=collection, archive=archive, required=False)


# --- runtime reviews --------------------------------------------------------------------------


def check_runtime_reviews(*, collection: Mapping[str, Any], archive: Archive) -> None:
    for review in _reviews(collection):
        if review.get("method") == "runtime_execution":
            _check_runtime_review(review, archive)


def _check_runtime_review(review: Mapping[str, Any], archive: Archive) -> None:
    attributes = _attributes(review)
    claimed = attributes.get("verification")
    claimed = claimed if isinstance(claimed, dict) else {}
    who = f"review {review.get('id')}"
    execution = attributes.get("execution_path")
    claims_verified = claimed.get("status") == "verified"
    if not isinstance(execution, str) or not execution:
        if claims_verified:
            contradicted(
                f"{who} attributes.execution_path",
                field="verification.status",
                archived=None,
                claimed="verified",
                who=who,
            )
        return
    path = f"{execution}/{ATTEMPT_FILE}"
    attempt = _json(archive, path)
    if attempt is None:
        if claims_verified or review.get("tests_executed") is True:
            _refuse_absent(
                path, who=who, field="verification.status", claimed=claimed.get("status")
            )
        return
    native = _verification(attempt)
    _same(path, who=who, field="verification.status", archived=native.get("status"),
          claimed=claimed.get("status"))  # fmt: skip
    _same_number(path, who=who, field="verification.score", archived=native.get("score"),
                 claimed=claimed.get("score"))  # fmt: skip
    for metric in review.get("metrics") or []:
        if isinstance(metric, dict) and metric.get("key") == SCORE_METRIC:
            _same_number(path, who=f"{who} metric {SCORE_METRIC}", field="verification.score",
                         archived=native.get("score"), claimed=metric.get("value"))  # fmt: skip
    if isinstance(review.get("tests_executed"), bool):
        _same(path, who=who, field="verifier_executed", archived=attempt.get("verifier_executed"),
              claimed=review["tests_executed"])  # fmt: skip
    if claims_verified and attempt.get("verifier_executed") is not True:
        contradicted(path, field="verifier_executed", archived=attempt.get("verifier_executed"),
                claimed=True, who=who)  # fmt: skip
    _check_harbor_reward(execution, archive, attempt)


def _check_harbor_reward(execution: str, archive: Archive, attempt: Mapping[str, Any]) -> None:
    """A Harbor trial's reward is the attempt's score (MarinSkyRL's rule; the mean of component
    rewards in component mode)."""
    path = f"{execution}/{HARBOR_RESULT_FILE}"
    result = _json(archive, path)
    native = _verification(attempt)
    if result is None or native.get("status") != "verified":
        return
    rewards = (result.get("verifier_result") or {}).get("rewards")
    if not isinstance(rewards, dict) or not rewards:
        contradicted(path, field="verifier_result.rewards", archived=rewards,
                claimed=native.get("score"), who=f"{execution}/{ATTEMPT_FILE}")  # fmt: skip
    values = [rewards["reward"]] if "reward" in rewards else list(rewards.values())
    if not all(_is_number(value) for value in values):
        contradicted(path, field="verifier_result.rewards", archived=rewards,
                claimed=native.get("score"), who=f"{execution}/{ATTEMPT_FILE}")  # fmt: skip
    reward = sum(values) / len(values)
    score = native.get("score")
    if not _is_number(score) or abs(reward - score) > TOLERANCE:
        contradicted(path, field="verifier_result.rewards.reward", archived=reward, claimed=score,
                who=f"{execution}/{ATTEMPT_FILE}")  # fmt: skip


# --- fix validation ---------------------------------------------------------------------------


def check_fix_validations(
    *,
    collection: Mapping[str, Any],
    archive: Archive,
    issue_url: str | None = None,
    resolving: bool = False,
) -> None:
    """Every ``fix_validated: true`` entry (of ``issue_url`` when given) agrees with its archived
    validation record. A collection that executed nothing (a source synthesis copying the entry
    from the pool, without the runs it rests on) is held to it only when it is to ``resolve``:
    then it is refused, for the cases ran nowhere this collection records."""
    executed = (collection.get("execution_provenance") or {}).get("marinskyrl_commit")
    for review in _reviews(collection):
        for entry in _attributes(review).get("resolved_verifier_issues") or []:
            if not isinstance(entry, dict) or entry.get("fix_validated") is not True:
                continue
            if issue_url is not None and entry.get("issue_url") != issue_url:
                continue
            if executed is None and not resolving:
                continue
            _check_validation(review, entry, archive, executed_commit=executed)


def _check_validation(
    review: Mapping[str, Any],
    entry: Mapping[str, Any],
    archive: Archive,
    *,
    executed_commit: str | None,
) -> None:
    who = f"review {review.get('id')} resolved_verifier_issues"
    path = _validation_record(review, entry, archive)
    record = _json(archive, path)
    if path is None or record is None:
        _refuse_absent(path or "validation/validation.json", who=who, field="fix_validated",
                       claimed=True)  # fmt: skip
    # The entry's revisions are held against the row by the resolution's own rules; any one
    # valid entry suffices there, so an entry's revisions are not compared with the record here.
    for key in ("issue_url", "fix_validated"):
        _same(path, who=who, field=key, archived=record.get(key), claimed=entry.get(key))
    recorded = record.get("validated_marinskyrl_commit")
    if not isinstance(recorded, str) or not recorded:
        contradicted(path, field="validated_marinskyrl_commit", archived=recorded,
                claimed="the commit the cases ran at", who=who)  # fmt: skip
    if "validated_marinskyrl_commit" in entry:
        _same(path, who=who, field="validated_marinskyrl_commit", archived=recorded,
              claimed=entry["validated_marinskyrl_commit"])  # fmt: skip
    # The cases ran at the checkout the collection's own review executed.
    _same(path, who="the collection's execution_provenance.marinskyrl_commit",
          field="validated_marinskyrl_commit", archived=recorded,
          claimed=executed_commit)  # fmt: skip
    base = posixpath.dirname(path)
    cases = [case for case in record.get("cases") or [] if isinstance(case, dict)]
    failing = [case for case in cases if case.get("role") == FAILING_INPUT]
    controls = [case for case in cases if case.get("role") == CONTROL]
    if not failing or not controls:
        contradicted(path, field="cases", archived=f"{len(failing)} failing input(s), "
                f"{len(controls)} control(s)", claimed="fix_validated true", who=who)  # fmt: skip
    for index, case in enumerate(cases):
        expected = case.get("expected") if case.get("role") == FAILING_INPUT else "rejected"
        _check_case(archive, base=base, record_path=path, index=index, case=case,
                    expected=str(expected), holds=True,
                    claim=f"{expected} ({case.get('role')})")  # fmt: skip
    _check_failing_inputs_cover(archive, base=base, record_path=path, failing=failing)


def _validation_record(
    review: Mapping[str, Any], entry: Mapping[str, Any], archive: Archive
) -> str | None:
    """The record the entry names, as the review cites it: a review copied from the pool by
    synthesise_source cites it under the pool's prefix while the entry keeps its own name."""
    named = entry.get("validation_evidence")
    named = named if isinstance(named, str) and named else None
    if named is not None and named in archive:
        return named
    cited = [
        item["snapshot_path"]
        for item in review.get("evidence") or []
        if isinstance(item, dict)
        and isinstance(item.get("snapshot_path"), str)
        and posixpath.basename(item["snapshot_path"]) == VALIDATION_FILE
    ]
    if named is not None:
        cited = [path for path in cited if path.endswith("/" + named)] or [named]
    return cited[0] if cited else None


def _check_failing_inputs_cover(
    archive: Archive, *, base: str, record_path: str, failing: list[dict[str, Any]]
) -> None:
    """Every case the archived reproductions claim is among the failing inputs re-run."""
    ran = {_case_identity(case) for case in failing}
    for path in sorted(archive):
        name = posixpath.basename(path)
        if posixpath.dirname(path) != base or not (
            name == REPRODUCTION_FILE
            or (name.startswith("reproduction-") and name.endswith(".json"))
        ):
            continue
        report = _json(archive, path) or {}
        for index, case in enumerate(report.get("cases") or []):
            if isinstance(case, dict) and _case_identity(case) not in ran:
                contradicted(record_path, field="cases", archived="no failing input for it",
                        claimed=f"{path} cases[{index}] (task {case.get('task_id')})",
                        who="the validation")  # fmt: skip


def _case_identity(case: Mapping[str, Any]) -> tuple[Any, ...]:
    answer = case.get("answer")
    answer = answer if isinstance(answer, dict) else {}
    return (case.get("task_id"), answer.get("source"), answer.get("origin"), case.get("expected"))


# --- reproductions ----------------------------------------------------------------------------


def check_reproductions(*, collection: Mapping[str, Any], archive: Archive, required: bool) -> None:
    """Each ``verifier_defect`` review's cited reproduction shows the contradiction on every
    case; ``required``: a defect review without one is refused (confirmation)."""
    for review in _reviews(collection):
        attributes = _attributes(review)
        if attributes.get("review_pool_role") != DEFECT_ROLE:
            continue
        cited = [
            item["snapshot_path"]
            for item in review.get("evidence") or []
            if isinstance(item, dict)
            and isinstance(item.get("snapshot_path"), str)
            and posixpath.basename(item["snapshot_path"]) == REPRODUCTION_FILE
        ]
        who = f"review {review.get('id')}"
        if not cited:
            if required:
                _refuse_absent(REPRODUCTION_FILE, who=who, field="reproduced", claimed=True)
            continue
        for path in cited:
            _check_reproduction(path, review, archive, who=who)


def _check_reproduction(
    path: str, review: Mapping[str, Any], archive: Archive, *, who: str
) -> None:
    report = _json(archive, path)
    if report is None:
        _refuse_absent(path, who=who, field="reproduced", claimed=True)
    _same(path, who=who, field="reproduced", archived=report.get("reproduced"), claimed=True)
    named = _attributes(review).get("issue_url")
    if named is not None:
        _same(path, who=who, field="issue_url", archived=report.get("issue_url"), claimed=named)
    cases = [case for case in report.get("cases") or [] if isinstance(case, dict)]
    if not cases:
        contradicted(
            path, field="cases", archived=0, claimed="at least one reproduced case", who=who
        )
    base = posixpath.dirname(path)
    for index, case in enumerate(cases):
        expected = str(case.get("expected"))
        _check_case(archive, base=base, record_path=path, index=index, case=case,
                    expected=expected, holds=False, claim=f"not {expected}")  # fmt: skip


def _check_case(
    archive: Archive,
    *,
    base: str,
    record_path: str,
    index: int,
    case: Mapping[str, Any],
    expected: str,
    holds: bool,
    claim: str,
) -> None:
    """A recorded case: its native run archived, its ``observed`` what that run shows, and that
    outcome what the claim needs: meeting ``expected`` (``holds``) or, for a reproduced
    contradiction, not meeting it."""
    execution = case.get("execution_path")
    field = f"cases[{index}].observed"
    if not isinstance(execution, str) or not execution:
        contradicted(record_path, field=f"cases[{index}].execution_path", archived=None,
                claimed="an archived native run", who="the record")  # fmt: skip
    path = posixpath.join(base, execution, ATTEMPT_FILE) if base else f"{execution}/{ATTEMPT_FILE}"
    attempt = _json(archive, path)
    if attempt is None:
        _refuse_absent(path, who=f"{record_path} {field}", field="verification.status",
                       claimed=case.get("observed"))  # fmt: skip
    outcome = observed_outcome(attempt)
    _same(path, who=f"{record_path} {field}", field="verification", archived=outcome,
          claimed=case.get("observed"))  # fmt: skip
    if meets(expected=expected, outcome=outcome) != holds:
        contradicted(path, field="verification", archived=outcome, claimed=claim,
                who=f"{record_path} cases[{index}]")  # fmt: skip


# --- helpers ----------------------------------------------------------------------------------


def _reviews(collection: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [review for review in collection.get("reviews") or [] if isinstance(review, dict)]


def _attributes(review: Mapping[str, Any]) -> dict[str, Any]:
    attributes = review.get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _verification(attempt: Mapping[str, Any]) -> dict[str, Any]:
    verification = attempt.get("verification")
    return verification if isinstance(verification, dict) else {}


def _json(archive: Archive, path: str | None) -> dict[str, Any] | None:
    """The archived file as a JSON object; None when absent (or not an object)."""
    return json_object(archive.get(path) if path else None)


def json_object(text: str | None) -> dict[str, Any] | None:
    """An archived file's text as a JSON object; None when absent, unreadable or not an
    object (the checks then refuse it as not archived)."""
    if text is None:
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _same(path: str, *, who: str, field: str, archived: Any, claimed: Any) -> None:
    if archived != claimed or isinstance(archived, bool) != isinstance(claimed, bool):
        contradicted(path, field=field, archived=archived, claimed=claimed, who=who)


def _same_number(path: str, *, who: str, field: str, archived: Any, claimed: Any) -> None:
    if _is_number(archived) and _is_number(claimed):
        if abs(archived - claimed) <= TOLERANCE:
            return
    elif archived == claimed and not isinstance(archived, bool):
        return
    contradicted(path, field=field, archived=archived, claimed=claimed, who=who)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…"


def contradicted(path: str, *, field: str, archived: Any, claimed: Any, who: str) -> NoReturn:
    """Refuse a claim (``who`` says ``claimed``) that ``path``'s ``field`` contradicts; the one
    line every evidence check refuses with (difficulty's counts too)."""
    _raise(f"{path} {field} is {_shown(archived)}, {who} says {_shown(claimed)}")


def _refuse_absent(path: str, *, who: str, field: str, claimed: Any) -> NoReturn:
    _raise(f"{path} is not archived, {who} says {field} {_shown(claimed)}")


def _raise(detail: str) -> NoReturn:
    # Paths and review ids come from the collection: one line whatever they hold.
    raise ClaimContradicted(
        "Claim contradicts its archived evidence: " + " ".join(detail.splitlines())
    )
