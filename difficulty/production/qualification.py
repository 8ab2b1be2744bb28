"""Whether the configured source may be measured: the Atlas row (saved as the config's
``source.grading_snapshot`` or read from ``<source.atlas_url>/api/sources/<id>/``) must qualify
under ``difficulty.eligibility`` — the rule and words the Atlas itself uses — and the configured
current review must be the row's current review, so the reviewer baseline describes it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from difficulty.eligibility import Standing, refusal
from difficulty.production.errors import DifficultyProductionError
from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.errors import ReviewProductionError

ROW_TIMEOUT_SECONDS = 30.0
# One source row is a few kilobytes; anything far larger is not the Atlas answering.
ROW_MAX_BYTES = 4 * 1024 * 1024


def atlas_row(
    *, source: dict[str, Any], atlas_id: str, timeout: float = ROW_TIMEOUT_SECONDS
) -> dict[str, Any]:
    """The source's Atlas row: the saved snapshot, else the API's answer."""
    if source.get("source_id") != atlas_id:
        raise DifficultyProductionError(
            f"source.source_id is {source.get('source_id')}, not the measured Atlas source "
            f"{atlas_id}"
        )
    if source.get("grading_snapshot"):
        try:
            row = json.loads(Path(source["grading_snapshot"]).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DifficultyProductionError(f"Cannot read the Atlas row snapshot: {exc}") from None
    elif source.get("atlas_url"):
        row = _read_row(source=source, atlas_id=atlas_id, timeout=timeout)
    else:
        raise DifficultyProductionError(
            "Save the source's Atlas row as source.grading_snapshot or set source.atlas_url: "
            "only a qualifying source is measured"
        )
    if not isinstance(row, dict) or row.get("id") != atlas_id:
        raise DifficultyProductionError("The Atlas row identifies a different source")
    return row


def _read_row(*, source: dict[str, Any], atlas_id: str, timeout: float) -> Any:
    """``<atlas_url>/api/sources/<id>/`` through the Atlas client every tool uses (a deadline
    for the whole read, a size cap, redirects on the Atlas only); every failure is one line
    naming the URL (never a traceback)."""
    base = source["atlas_url"]
    if not isinstance(base, str) or not base.startswith(("http://", "https://")):
        raise DifficultyProductionError("source.atlas_url must be an http(s) URL")
    try:
        with AtlasClient(base, timeout=timeout, max_bytes=ROW_MAX_BYTES) as client:
            return client.json(f"/api/sources/{quote(atlas_id, safe='')}/")
    except ReviewProductionError as exc:
        raise DifficultyProductionError(f"The Atlas row: {exc}") from None


def check_qualifies(*, row: dict[str, Any]) -> None:
    """Refuse with the Atlas's words unless the row is active, Good on current revisions, with
    a current review and no open verifier defect."""
    refused = refusal(
        Standing(
            active=row.get("active") is True,
            effective_quality=row.get("quality"),
            review_stale=row.get("review_stale") is not False,
            open_defect=bool(row.get("verifier_issues")),
            review_is_current=bool(row.get("review_id")),
        )
    )
    if refused:
        raise DifficultyProductionError(refused)


def current_review_collection(*, source: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The published collection of the row's current review (a review's id is the SHA-256 of
    its ``quality-reviews.json``), read from ``source.current_review``."""
    path = source.get("current_review")
    if not path:
        raise DifficultyProductionError(
            "Set source.current_review to the current review's quality-reviews.json: the "
            "reviewer solve baseline is read from it"
        )
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DifficultyProductionError(f"Cannot read the current review: {exc}") from None
    if hashlib.sha256(raw).hexdigest() != row.get("review_id"):
        raise DifficultyProductionError(
            f"{path} is not the source's current review {row.get('review_id')}"
        )
    return json.loads(raw)
