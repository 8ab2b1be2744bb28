"""Bulk readers of the display-state context: open verifier defects, grading bindings and the
difficulty summary of each source's current review. Apps that own those tables extend this."""

from __future__ import annotations

from atlas.display_state import DisplayContext


def contexts_for(*, source_ids: list[str]) -> dict[str, DisplayContext]:
    return {source_id: DisplayContext() for source_id in source_ids}
