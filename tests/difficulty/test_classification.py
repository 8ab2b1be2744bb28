from __future__ import annotations

import pytest

from difficulty.classification import (
    ARCHIVED_NOTE,
    LIMITS_MISMATCH,
    MODEL_MISMATCH,
    PARAMETERS_MISMATCH,
    ROLES_MISMATCH,
    Classification,
    apply_source_context,
    classify_report,
)
from difficulty.eligibility import (
    NOT_GOOD_NOTE,
    OPEN_DEFECT_NOTE,
    STALE_NOTE,
    SUPERSEDED_NOTE,
    Standing,
)
from difficulty.registry import DEFAULT_HISTORICAL_NOTE
from difficulty.reports import INCONSISTENT_COUNTS, NotAReportError, parse_report

CURRENT_NOTE = (
    "Matched Small, Large and Hosted models at 65,536 context and 16,384 output tokens. "
    "Nemotron's learned verifiers used Hosted GLM-5.3 with Low reasoning effort across all three "
    "arms."
)
VERIFIER_MESSAGE = (
    "Nemotron's learned verifiers lack the recorded Hosted GLM-5.3 Low reasoning configuration "
    "across all three arms."
)


def model(report, size):
    return next(m for m in report["models"] if m["size"] == size)


def test_conforming_report_is_current_with_the_verifier_note(report):
    assert classify_report(report=report) == Classification("current", CURRENT_NOTE)


def test_without_learned_verifiers_the_note_is_the_registry_note(report):
    for entry in report["models"]:
        entry["verifier_configuration"] = {}
    assert classify_report(report=report).note == (
        "Matched Small, Large and Hosted models at 65,536 context and 16,384 output tokens."
    )


def test_archived_path_is_historical(report):
    result = classify_report(report=report, path="difficulty/history/x.json")
    assert result == Classification("historical", ARCHIVED_NOTE)


def test_other_protocol_id_uses_its_note_or_the_default(report):
    report["protocol"]["id"] = "atlas-difficulty-v4-checklist-judge"
    assert classify_report(report=report) == Classification("historical", DEFAULT_HISTORICAL_NOTE)
    report["protocol"]["id"] = "never-registered"
    assert classify_report(report=report).status == "historical"


def _drop_model(r):
    r["models"].pop()


def _duplicate_size(r):
    r["models"][2]["size"] = "large"


def _wrong_model(r):
    model(r, "large")["model"] = "cyankiwi/GLM-5.3-AWQ-INT4"


def _wrong_provider(r):
    model(r, "hosted")["provider"] = "Elsewhere"


def _missing_parameter(r):
    del model(r, "small")["generation_parameters"]["top_k"]


def _different_parameter(r):
    model(r, "small")["generation_parameters"]["top_p"] = 0.8


def _string_for_number(r):
    model(r, "small")["generation_parameters"]["top_k"] = "20"


def _thinking_disabled(r):
    model(r, "large")["generation_parameters"]["chat_template_kwargs"]["enable_thinking"] = False


def _thinking_as_one(r):
    model(r, "large")["generation_parameters"]["chat_template_kwargs"]["enable_thinking"] = 1


def _effort_medium(r):
    model(r, "hosted")["generation_parameters"]["reasoning_effort"] = "medium"


def _verifier_missing_on_one_arm(r):
    model(r, "small")["verifier_configuration"] = {}


def _verifier_other_effort(r):
    model(r, "large")["verifier_configuration"]["learned_verifier"]["reasoning_effort"] = "high"


def _limits(r):
    r["protocol"]["max_output_tokens"] = 8192


def _inconsistent(r):
    model(r, "small")["solved"] = 5


def _negative(r):
    model(r, "small")["unverified"] = -1


def _missing_size(r):
    del model(r, "small")["size"]


def _float_count(r):
    model(r, "small")["verified"] = 3.0


@pytest.mark.parametrize(
    ("mutate", "note"),
    [
        (_limits, LIMITS_MISMATCH),
        (_drop_model, ROLES_MISMATCH),
        (_duplicate_size, ROLES_MISMATCH),
        (_missing_size, ROLES_MISMATCH),
        (_wrong_model, MODEL_MISMATCH),
        (_wrong_provider, "The Hosted model was not served through Together."),
        (_missing_parameter, PARAMETERS_MISMATCH),
        (_different_parameter, PARAMETERS_MISMATCH),
        (_string_for_number, PARAMETERS_MISMATCH),
        (_thinking_disabled, "The Large model's recorded configuration does not enable thinking."),
        (_thinking_as_one, "The Large model's recorded configuration does not enable thinking."),
        (_effort_medium,
         "The Hosted model's recorded configuration does not use Low reasoning effort."),
        (_verifier_missing_on_one_arm, VERIFIER_MESSAGE),
        (_verifier_other_effort, VERIFIER_MESSAGE),
        (_inconsistent, INCONSISTENT_COUNTS),
        (_negative, INCONSISTENT_COUNTS),
        (_float_count, INCONSISTENT_COUNTS),
    ],
)  # fmt: skip
def test_each_protocol_check_fails_with_its_message(report, mutate, note):
    mutate(report)
    assert classify_report(report=report) == Classification("invalid", note)


def test_numbers_compare_numerically_and_provider_case_insensitively(report):
    model(report, "small")["generation_parameters"]["repetition_penalty"] = 1.0
    model(report, "small")["generation_parameters"]["extra"] = "allowed"
    model(report, "hosted")["provider"] = "together"
    assert classify_report(report=report).status == "current"


def test_first_failure_wins(report):
    _limits(report)
    _wrong_model(report)
    assert classify_report(report=report).note == LIMITS_MISMATCH


GOOD = Standing(
    active=True, effective_quality="good", review_stale=False, open_defect=False,
    review_is_current=True,
)  # fmt: skip


def standing(open_defect: bool, stale: bool, current: bool, good: bool) -> Standing:
    return Standing(
        active=True,
        effective_quality="good" if good else "some_issues",
        review_stale=stale,
        open_defect=open_defect,
        review_is_current=current,
    )


@pytest.mark.parametrize(
    ("context", "note"),
    [
        (standing(True, True, False, False), OPEN_DEFECT_NOTE),
        (standing(False, True, False, False), STALE_NOTE),
        (standing(False, False, False, False), SUPERSEDED_NOTE),
        (standing(False, False, True, False), NOT_GOOD_NOTE),
    ],
)
def test_display_context_overrides_in_order(context, note):
    current = Classification("current", "n")
    assert apply_source_context(classification=current, standing=context) == Classification(
        "historical", note
    )


def test_display_context_keeps_current_and_invalid():
    current = Classification("current", "n")
    invalid = Classification("invalid", "bad")
    assert apply_source_context(classification=current, standing=GOOD) == current
    bad_context = standing(True, True, False, False)
    assert apply_source_context(classification=invalid, standing=bad_context) == invalid


@pytest.mark.parametrize("text", ["[]", "{}", '{"models": {}}', "not json", '"x"'])
def test_non_reports_are_rejected(text):
    with pytest.raises(NotAReportError, match="Artifact is not a model comparison report"):
        parse_report(text=text)
