"""What difficulty contributes to the catalog's display state (through ``atlas.contributions``):
the difficulty summary of each eligible source's current report. Registered in
``DifficultyConfig.ready()``, after the reviews provider whose open defects and grading bindings
the eligibility gate reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from atlas.rules.display_state import DisplayContext, SourceSnapshot
from difficulty.selectors import summaries_for


def difficulty_summaries(
    *, sources: Sequence[SourceSnapshot], contexts: Mapping[str, DisplayContext]
) -> dict[str, dict[str, Any]]:
    summaries = summaries_for(sources=sources, contexts=contexts)
    # A source without a summary keeps the empty context's (none); see the reviews provider.
    return {
        source_id: {"difficulty": summary}
        for source_id, summary in summaries.items()
        if summary is not None
    }
