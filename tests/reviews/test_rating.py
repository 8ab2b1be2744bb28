"""The rating rule table and the open-defect cap (Good becomes Some issues, Bad stays)."""

import json

import pytest

from atlas.rules.display_state import capped_for_open_defect
from reviews.rating import derive_rating
from tests.reviews.builders import FindingSpec, build_run, review_by_id
from tests.reviews.example_runs import JUDGE_MODELS

UNRATED = "model:Qwen/Qwen3-Coder-30B-A3B-Instruct"


def collection(tmp_path, **overrides):
    run_dir = build_run(tmp_path, **overrides)
    return json.loads((run_dir / "quality-reviews.json").read_text())


def issue(severity):
    return {
        "id": f"x-{severity}",
        "dimension": "verifier",
        "text": "t",
        "severity": severity,
        "kind": "issue",
    }


BAD = {
    "source_verdict": "reject",
    "judge_verdicts": ("reject", "reject", "keep"),
    "source_findings": (FindingSpec("high", "Wrong references."),),
}


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "good"),
        ({"judge_findings": (FindingSpec("low", "Minor."),)}, "good"),
        ({"judge_findings": (FindingSpec(None, "Unrated severity."),)}, "good"),
        ({"judge_findings": (FindingSpec("medium", "Units."),)}, "some_issues"),
        ({"source_findings": (FindingSpec("critical", "Broken."),)}, "some_issues"),
        ({"source_verdict": "conditional"}, "some_issues"),
        ({"verification_status": "error"}, "some_issues"),
        ({"verification_status": "unavailable"}, "some_issues"),
        (BAD, "bad"),
        ({**BAD, "source_findings": (FindingSpec("critical", "Broken."),)}, "bad"),
        ({**BAD, "source_findings": (FindingSpec("medium", "Only medium."),)}, "some_issues"),
        ({**BAD, "source_verdict": "conditional"}, "some_issues"),
        ({**BAD, "judge_verdicts": ("reject", "keep", "keep")}, "some_issues"),
        ({"judge_models": (UNRATED, *JUDGE_MODELS[1:])}, None),
        ({**BAD, "judge_models": (*JUDGE_MODELS[:2], UNRATED)}, None),
    ],
)
def test_rule_table(tmp_path, overrides, expected):
    assert derive_rating(collection(tmp_path, **overrides)) == expected


def test_exactly_half_rejecting_judges_is_not_bad(tmp_path):
    document = collection(tmp_path, **BAD)
    verdicts = ["reject", "reject", "reject", "keep", "keep", "keep"]
    judges = [r for r in document["reviews"] if r["method"] == "model_judgment"]
    for judge, verdict in zip(judges, verdicts, strict=True):
        judge["verdict"] = verdict
    assert derive_rating(document) == "some_issues"
    judges[3]["verdict"] = "reject"
    assert derive_rating(document) == "bad"


def test_good_needs_a_runtime_review(tmp_path):
    document = collection(tmp_path)
    document["reviews"] = [r for r in document["reviews"] if r["method"] != "runtime_execution"]
    assert derive_rating(document) == "some_issues"


def test_every_runtime_review_must_be_verified(tmp_path):
    document = collection(tmp_path)
    review_by_id(document, "runtime-0001")["attributes"]["verification"]["status"] = "error"
    assert derive_rating(document) == "some_issues"


def test_only_judge_and_source_synthesis_issues_count(tmp_path):
    document = collection(tmp_path)
    review_by_id(document, "task-synthesis-0000")["findings"].append(issue("critical"))
    review_by_id(document, "runtime-0000")["findings"].append(issue("critical"))
    assert derive_rating(document) == "good"
    review_by_id(document, "judge-0001-3")["findings"].append(issue("medium"))
    assert derive_rating(document) == "some_issues"


def test_unrated_judge_models_come_from_the_setting(tmp_path, settings):
    settings.ATLAS_UNRATED_JUDGE_MODELS = [JUDGE_MODELS[0]]
    assert derive_rating(collection(tmp_path)) is None
    settings.ATLAS_UNRATED_JUDGE_MODELS = []
    assert (
        derive_rating(collection(tmp_path, name="again", judge_models=(UNRATED, *JUDGE_MODELS[1:])))
        == "good"
    )


@pytest.mark.parametrize(
    ("derived", "capped"),
    [
        ("good", "some_issues"),
        ("some_issues", "some_issues"),
        (None, "some_issues"),
        ("bad", "bad"),
    ],
)
def test_cap_while_a_verifier_issue_is_open(derived, capped):
    assert capped_for_open_defect(derived) == capped


def test_the_source_synthesis_is_chosen_in_one_place():
    """Rating and publication's one-synthesis check read the same selection: syntheses of a
    source-level subject, in the collection's order."""
    from reviews.rating import source_syntheses, source_synthesis

    collection = {
        "subjects": [{"id": "s", "level": "source"}, {"id": "t", "level": "task"}],
        "reviews": [
            {"id": "j", "method": "model_judgment", "subject_id": "s"},
            {"id": "task-synthesis", "method": "synthesis", "subject_id": "t"},
            {"id": "one", "method": "synthesis", "subject_id": "s"},
            {"id": "two", "method": "synthesis", "subject_id": "s"},
        ],
    }
    assert [review["id"] for review in source_syntheses(collection)] == ["one", "two"]
    assert source_synthesis(collection)["id"] == "one"
    collection["reviews"] = collection["reviews"][:2]
    assert source_syntheses(collection) == [] and source_synthesis(collection) is None


def test_a_source_synthesis_is_a_synthesis_of_a_source_level_subject():
    """The one rule rating, the review page's cards and the curators' synthesis ask."""
    from reviews.production.format.synthesis_selection import is_source_synthesis

    source, task = {"id": "s", "level": "source"}, {"id": "t", "level": "task"}
    assert is_source_synthesis({"method": "synthesis"}, source)
    assert not is_source_synthesis({"method": "synthesis"}, task)
    assert not is_source_synthesis({"method": "synthesis"}, None)
    assert not is_source_synthesis({"method": "model_judgment"}, source)
    assert not is_source_synthesis({}, source)
