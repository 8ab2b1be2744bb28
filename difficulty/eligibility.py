"""Which sources may hold a current difficulty estimate — the one home of that rule.

A source qualifies when it is active, its review is current (not stale, and the report belongs to
the source's current review), it has no open verifier defect and its effective quality is Good.
The catalog summary gate, the display-context overrides of a shown report, ``publish_difficulty``
and ``make_difficulty`` all ask here, so they refuse with the same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from atlas.rules.source_ids import ABSENT_OR_INACTIVE

INACTIVE = ABSENT_OR_INACTIVE
OPEN_DEFECT = (
    "Open verifier defects withhold difficulty; resolve them and publish a new Good rating first"
)
NOT_GOOD = (
    "Difficulty collection selects only Good sources; this source is not rated Good on its "
    "current revisions"
)

# the note a current report takes when shown for a source that cannot hold it, in order.
OPEN_DEFECT_NOTE = "An unresolved verifier defect prevents a current difficulty estimate."
STALE_NOTE = (
    "The source's data or verifier changed since this measurement; it is retained as historical "
    "evidence."
)
SUPERSEDED_NOTE = (
    "This review is no longer the source's current review; its measurement is historical."
)
NOT_GOOD_NOTE = "Only sources rated Good receive a current difficulty estimate."


@dataclass(frozen=True)
class Standing:
    """A source's standing as the display state computed it (``effective_quality`` already
    carries the stale and open-defect rules)."""

    active: bool
    effective_quality: str | None
    review_stale: bool
    open_defect: bool
    review_is_current: bool = True


def refusal(standing: Standing) -> str | None:
    """Why the source cannot be measured or published now (first failure 3–5), or None."""
    if not standing.active:
        return INACTIVE
    if standing.open_defect:
        return OPEN_DEFECT
    if (
        standing.effective_quality != "good"
        or standing.review_stale
        or not standing.review_is_current
    ):
        return NOT_GOOD
    return None


def is_eligible(standing: Standing) -> bool:
    return refusal(standing) is None


def historical_note(standing: Standing) -> str | None:
    """The note that turns a current report historical for this source, or None."""
    for applies, note in (
        (standing.open_defect, OPEN_DEFECT_NOTE),
        (standing.review_stale, STALE_NOTE),
        (not standing.review_is_current, SUPERSEDED_NOTE),
        (standing.effective_quality != "good", NOT_GOOD_NOTE),
    ):
        if applies:
            return note
    return None
