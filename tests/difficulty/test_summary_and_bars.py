from __future__ import annotations

from fractions import Fraction

import pytest

from atlas.filters import DIFFICULTY_CHOICES
from atlas.rules.labels import MEASUREMENT_LABELS
from difficulty import bars
from difficulty.classification import Classification
from difficulty.followups import is_complete, is_hosted, section_title
from difficulty.review_sections import RUN_PREFIXES
from difficulty.summary import build_summary, ordering_warning

CURRENT = Classification("current", "note")


def followup(**overrides):
    entry = {
        "id": "f1", "state": "complete", "kind": "recheck", "model": None,
        "provider": None, "solved": 1, "verified": 2, "unverified": 0, "attempted": 2,
    }  # fmt: skip
    entry.update(overrides)
    return entry


def test_summary_fields_and_text(report):
    summary = build_summary(report=report, classification=CURRENT)
    assert set(summary) == {
        "models", "estimated_at", "sampling", "status", "status_note", "ordering_warning",
        "protocol", "text",
    }  # fmt: skip
    assert summary["text"] == (
        "Current: Qwen/Qwen3-Coder-30B-A3B-Instruct 1/3 solved; "
        "Qwen/Qwen3.5-122B-A10B 2/3 solved; zai-org/GLM-5.3 3/3 solved"
    )
    assert all(m["measurement_status"] == "current" for m in summary["models"])
    assert "task_outcomes" not in summary["models"][0]


def test_complete_followups_enter_the_summary_as_historical(report):
    report["protocol_followups"] = [
        followup(id="g", changed_parameter={"name": "max_tokens"}, model="m/Gen"),
        followup(id="h", kind="alternate_checkpoint", model=None),
        followup(id="n"),
        followup(id="p", state="pending"),
    ]
    summary = build_summary(report=report, classification=Classification("invalid", "x"))
    extra = summary["models"][3:]
    assert [(e["followup_id"], e["size"], e["display_name"]) for e in extra] == [
        ("g", "followup", "Generation setting follow-up"),
        ("h", "hosted", "Hosted model follow-up"),
        ("n", "followup", "Native verifier recheck"),
    ]
    assert {e["measurement_status"] for e in extra} == {"historical"}
    # The status reads as the bar, the chip and the filter read it (and so does the CSV).
    assert summary["text"].startswith("Protocol mismatch: ")
    # Follow-ups are historical arms: listed under "Historical", each saying what it changed.
    assert summary["text"].endswith(
        "; Historical: m/Gen (max_tokens) 1/2 solved; Hosted model follow-up 1/2 solved; "
        "Native verifier recheck 1/2 solved"
    )
    assert extra[0]["changed_setting"] == "max_tokens"


def test_followup_titles_and_notes():
    assert section_title(followup(kind="alternate_checkpoint")) == "Hosted comparison · Complete"
    assert section_title(followup(state="pending")) == "Additional settings comparison · Pending"
    # The hosted note goes with a changed checkpoint only; a comparison shows its attempts only
    # once it is complete (until then the section says it has none).
    assert is_hosted(followup(kind="alternate_checkpoint"))
    assert not is_hosted(followup(kind="recheck"))
    assert is_complete(followup()) and not is_complete(followup(state="pending"))


def test_ordering_warning_needs_an_ordering_audit(report):
    report["limitations"] = ["first", "Order of arms may bias results."]
    assert ordering_warning(report=report) is None
    report["protocol"]["artifacts"] = [{"path": "difficulty/ordering-audit.json"}]
    assert ordering_warning(report=report) == "Order of arms may bias results."
    report["limitations"] = []
    assert ordering_warning(report=report) is None


@pytest.mark.parametrize(
    ("solved", "verified", "width", "text"),
    [
        (1, 8, Fraction(25, 2), "13% · 1/8"),  # 12.5 rounds half up
        (1, 3, Fraction(100, 3), "33% · 1/3"),
        (5, 8, Fraction(125, 2), "63% · 5/8"),
        (0, 0, Fraction(0), "No scores"),
        (0, None, Fraction(0), "No scores"),
        (4, 4, Fraction(100), "100% · 4/4"),
    ],
)
def test_width_and_score_text(solved, verified, width, text):
    entry = {"solved": solved, "verified": verified}
    assert bars.width_percent(entry=entry) == width
    # The counts are text beside every bar, compact or full (touch screens have no tooltips).
    assert bars.score_text(entry=entry, mode=bars.FULL) == text
    assert bars.score_text(entry=entry, mode=bars.COMPACT) == text


def test_bars_order_labels_and_classes(report):
    report["models"].reverse()
    report["protocol_followups"] = [followup(id="g", changed_parameter={}, model="m/Gen")]
    summary = build_summary(report=report, classification=CURRENT)
    full = bars.bars_for(summary=summary, mode=bars.FULL)
    assert [b.label for b in full] == [
        "Small · Qwen3-Coder-30B-A3B-Instruct", "Large · Qwen3.5-122B-A10B",
        "Hosted · GLM-5.3", "Follow-up · Gen",
    ]  # fmt: skip
    assert [b.css_class for b in full] == ["bar-small", "bar-large", "bar-hosted", "bar-followup"]
    compact = bars.bars_for(summary=summary, mode=bars.COMPACT)
    # An unknown model's follow-up names the model it ran; no role matches it.
    assert [b.label for b in compact] == [
        "Qwen 30B", "Qwen 122B", "GLM 5.3", "Follow-up · Gen",
    ]  # fmt: skip
    assert full[3].label == compact[3].label
    assert full[0].width == "33.33"


def test_a_followup_has_one_name_everywhere_role_model_and_change(report):
    large, hosted = report["models"][1]["model"], report["models"][2]["model"]
    report["protocol_followups"] = [
        followup(id="g", model=large, changed_parameter={"name": "max_tokens", "earlier": 1,
                                                          "new": 2}),
        followup(id="h", kind="alternate_checkpoint", model=hosted,
                 checkpoint_change={"earlier": None, "new": "glm-5.3-0701"}),
        followup(id="n", model=large),
    ]  # fmt: skip
    summary = build_summary(report=report, classification=CURRENT)
    full = bars.bars_for(summary=summary, mode=bars.FULL)
    compact = bars.bars_for(summary=summary, mode=bars.COMPACT)
    names = [
        "Large follow-up · Qwen 122B · max_tokens 1 → 2",
        "Hosted follow-up · GLM 5.3 · checkpoint glm-5.3-0701",
        "Native verifier recheck · Qwen 122B",
    ]
    assert [bar.label for bar in full[3:]] == names == [bar.label for bar in compact[3:]]
    # A hosted follow-up never reads like the current Hosted arm.
    assert full[2].label == "Hosted · GLM-5.3" and compact[2].label == "GLM 5.3"
    assert not any(bar.label in (full[2].label, compact[2].label) for bar in full[3:])
    # The Historical chip the legend promises, on each historical arm of a current comparison.
    assert [bar.status_label for bar in full] == [
        "",
        "",
        "",
        "Historical",
        "Historical",
        "Historical",
    ]
    assert all(bar.is_followup for bar in full[3:]) and not any(bar.is_followup for bar in full[:3])
    assert "Historical · Generation setting follow-up: max_tokens 1 → 2" in compact[3].tooltip
    assert full[3].detail == "95% interval not recorded · 0 unverified"
    assert summary["text"].endswith(
        "; Historical: Qwen/Qwen3.5-122B-A10B (max_tokens 1 → 2) 1/2 solved; "
        "zai-org/GLM-5.3 (Hosted model follow-up) 1/2 solved; "
        "Qwen/Qwen3.5-122B-A10B (Native verifier recheck) 1/2 solved"
    )
    # A stored summary from before checkpoints were recorded still never borrows the label.
    del summary["models"][4]["changed_checkpoint"]
    assert bars.bars_for(summary=summary, mode=bars.COMPACT)[4].label == (
        "Hosted follow-up · GLM 5.3 · alternate checkpoint"
    )


def test_a_historical_comparison_needs_no_chip_per_arm(report):
    summary = build_summary(report=report, classification=Classification("historical", "h"))
    assert [bar.status_label for bar in bars.bars_for(summary=summary, mode=bars.FULL)] == [
        "", "", "",
    ]  # fmt: skip
    assert bars.status_chip(summary=summary).label == "Historical"


def test_historical_models_show_actual_names(report):
    report["models"][0]["model"] = "Qwen/Qwen3.5-9B"
    summary = build_summary(report=report, classification=Classification("historical", "h"))
    full = bars.bars_for(summary=summary, mode=bars.FULL)
    assert [b.label for b in full] == ["Qwen3.5-9B", "Qwen3.5-122B-A10B", "GLM-5.3"]
    assert bars.bars_for(summary=summary, mode=bars.COMPACT)[0].label == "Small"


def test_tooltips():
    entry = {
        "model": "zai-org/GLM-5.3", "provider": "Together", "solved": 2, "verified": 3,
        "unverified": 1, "wilson_95": [0.2077, 0.93855], "measurement_status": "invalid",
    }  # fmt: skip
    assert bars.tooltip(entry=entry, mode=bars.FULL) == (
        "zai-org/GLM-5.3 · Together · Protocol mismatch · 2/3 solved · 1 unverified · "
        "95% interval 20.8–93.9%"
    )
    bare = {"display_name": "Native verifier recheck", "solved": 0, "verified": 0,
            "unverified": 0, "measurement_status": "historical"}  # fmt: skip
    assert bars.tooltip(entry=bare, mode=bars.COMPACT) == (
        "Native verifier recheck · Provider recorded in run settings · Historical · 0/0 solved · "
        "0 unverified · 95% interval not recorded; open the review for attempts and verifier "
        "results"
    )


def test_each_measurement_state_has_one_word_everywhere():
    assert MEASUREMENT_LABELS == {
        "current": "Current", "historical": "Historical", "invalid": "Protocol mismatch",
    }  # fmt: skip
    filter_words = dict(DIFFICULTY_CHOICES)
    for status in ("historical", "invalid"):
        word = MEASUREMENT_LABELS[status]
        assert filter_words[status] == word
        assert bars.status_chip(summary={"status": status}).label == word
        assert RUN_PREFIXES[status] == f"{word} · "
    assert [name for name, _ in bars.STATE_EXPLANATIONS[:3]] == list(MEASUREMENT_LABELS.values())


def test_status_chip():
    assert bars.status_chip(summary={"status": "current"}) is None
    chip = bars.status_chip(summary={"status": "invalid", "status_note": "why"})
    assert (chip.label, chip.tooltip) == ("Protocol mismatch", "why")
    assert bars.status_chip(summary={"status": "historical", "status_note": "h"}).label == (
        "Historical"
    )
