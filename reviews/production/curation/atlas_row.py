"""The source's current Atlas row for a curators' tool (its revisions, issues, grading manifest):
a saved copy of ``/api/sources/<id>/`` or the public API's answer, refused unless it is the row
of that source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.errors import CurationRefused, UsageError


def read_atlas_row(
    *, source_id: str, saved: str | Path | None, atlas: str | None, missing: str
) -> dict[str, Any]:
    """The row saved at ``saved``, else the one ``atlas`` serves; neither is a ``UsageError``
    saying ``missing`` (each tool names its own options)."""
    if saved is not None:
        try:
            row = json.loads(Path(saved).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CurationRefused(f"Cannot read the Atlas row {saved}: {exc}") from None
    elif atlas:
        with AtlasClient(atlas) as client:
            row = client.source_row(source_id)
    else:
        raise UsageError(missing)
    if not isinstance(row, dict) or row.get("id") != source_id:
        raise CurationRefused(f"The Atlas row is not the row of {source_id}")
    return row
