"""The field guide shown above the catalog and review pages."""

from __future__ import annotations

import functools

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from atlas.contributions import field_guide_intro

DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Quality", "The rating of a source's current sample-based review: Good, Some issues or Bad; "
     "Unrated, Unreviewed or Needs re-review when no rating applies."),
    ("Confirmed verifier defect", "A curator-confirmed fault in the verifier, task import or judge "
     "output. While open it caps Good at Some issues and withholds difficulty."),
    ("Task attempt / verifier", "One model's attempt at a task, graded by the source's native "
     "verifier."),
    ("Independent judge", "A model that assesses a task without seeing the other judgments."),
    ("Synthesis", "The combined conclusion drawn from the judgments of a task or a source."),
    ("Superseded opinion", "A judgment replaced by a later one; kept for the record, not counted."),
    ("MarinSkyRL reference / execution commit", "The MarinSkyRL commit whose code defined or ran "
     "the review."),
    ("Verdict", "Keep, Reject, Conditional, Inconclusive or Unrated: the outcome of a judgment."),
    ("Issue / observation", "An issue is a defect that counts against the data; an observation is "
     "context that does not."),
    ("Severity", "How serious a defect is (Info to Critical) — never the judge's confidence."),
    ("Difficulty", "Solve rates of the Small, Large and Hosted models under the current protocol."),
    ("Reviewer solve baseline", "How often the review's own attempts solved the sampled tasks."),
    ("Historical difficulty evidence", "Measurements from earlier models or budgets, shown with "
     "their actual model names and never merged into current ones."),
    ("Reasoning effort / output budget", "The model's reasoning control and its output token "
     "limit; the output budget includes thinking tokens."),
    ("Context budget / token accounting", "The shared context, input and output token limits and "
     "how each attempt used them."),
    ("Serving precision / attention cache", "The numeric precision and cache settings a model was "
     "served with."),
    ("Attempt complete / stop reason", "Whether an attempt finished and why generation stopped."),
    ("Generation setting follow-up", "A re-run that changes one generation parameter."),
    ("Hosted model follow-up", "A re-run on an alternate hosted checkpoint."),
    ("Verifier judge configuration", "The model, provider and reasoning effort of a learned "
     "verifier."),
    ("Evidence / traces", "The stored requests, responses and verifier logs behind a review."),
    ("Revision / SHA", "The pinned commit or content hash of a dataset or verifier."),
    ("Dataset content equivalence", "Proof that a later dataset revision holds the same selected "
     "content, so a review still applies."),
    ("Execution implementation applicability", "Whether the code that graded a review is the code "
     "that grades the source now."),
    ("Canonical source / family", "The upstream dataset a source draws from, and its task domain."),
    ("Environment / interaction", "The gym environment that runs the tasks, and whether they are "
     "single- or multi-turn."),
    ("RLVR / Alignment / Agentic", "Verifiable-reward tasks, preference or safety data, and "
     "multi-step tool or terminal tasks."),
    ("Tags / applicability", "Discovery labels and source-specific aliases; all are searchable."),
    ("Imported review / runtime review", "A review imported from an earlier audit, versus one "
     "executed by the review pipeline."),
)  # fmt: skip


def intro_text() -> str:
    """The protocol sentence, contributed by the difficulty app (``atlas.contributions``)."""
    return field_guide_intro()


def definitions() -> tuple[tuple[str, str], ...]:
    return DEFINITIONS


def field_guide_html() -> SafeString:
    """The field guide's markup, rendered once per intro (the definitions are fixed): its 29
    terms were a seventh of what the catalog page's template rendered per request."""
    return _field_guide_html(intro_text())


@functools.lru_cache(maxsize=8)
def _field_guide_html(intro: str) -> SafeString:
    return SafeString(
        render_to_string(
            "atlas/_field_guide.html",
            {"field_guide_intro": intro, "field_guide_terms": definitions()},
        )
    )
