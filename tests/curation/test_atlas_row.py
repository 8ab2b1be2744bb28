"""The curators' tools read the source's Atlas row one way: synthesise_source and validate_fix
refuse an unreadable or foreign row with the same words."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from reviews.production.curation import synthesise, validate
from reviews.production.curation.atlas_row import read_atlas_row
from reviews.production.runtime.errors import CurationRefused, UsageError

SOURCE_ID = "MarinSkyRL:a"


def rows_of_both_tools(saved: Path | None) -> list:
    """What each tool makes of the row saved at ``saved`` (its value or its refusal)."""
    synthesis_options = synthesise.SynthesiseOptions(
        atlas_id=SOURCE_ID, config=Path("c.toml"), output=Path("out"), atlas_row=saved
    )
    validate_options = validate.ValidateOptions(
        review=Path("review"), output=Path("out"), atlas_row=saved
    )
    review = SimpleNamespace(run={"config": {}})
    answers = []
    for read in (
        lambda: synthesise._row(synthesis_options),
        lambda: validate._atlas_row(options=validate_options, review=review, source_id=SOURCE_ID),
    ):
        try:
            answers.append(read())
        except (CurationRefused, UsageError) as exc:
            answers.append((type(exc).__name__, str(exc)))
    return answers


def test_both_tools_take_the_saved_row_and_refuse_the_same_ways(tmp_path):
    saved = tmp_path / "row.json"
    saved.write_text(json.dumps({"id": SOURCE_ID, "dataset_revision": "r"}), encoding="utf-8")
    assert rows_of_both_tools(saved) == [{"id": SOURCE_ID, "dataset_revision": "r"}] * 2
    saved.write_text(json.dumps({"id": "MarinSkyRL:other"}), encoding="utf-8")
    foreign = ("CurationRefused", f"The Atlas row is not the row of {SOURCE_ID}")
    assert rows_of_both_tools(saved) == [foreign, foreign]
    saved.write_text("[", encoding="utf-8")
    (one, other) = rows_of_both_tools(saved)
    assert one == other and one[1].startswith(f"Cannot read the Atlas row {saved}: ")
    missing = rows_of_both_tools(None)
    assert [kind for kind, _ in missing] == ["UsageError", "UsageError"]
    assert all("--atlas URL or --atlas-row PATH" in text for _, text in missing)


def test_a_row_that_is_not_an_object_is_foreign(tmp_path):
    saved = tmp_path / "row.json"
    saved.write_text("[1]", encoding="utf-8")
    with pytest.raises(CurationRefused, match="is not the row of"):
        read_atlas_row(source_id=SOURCE_ID, saved=saved, atlas=None, missing="-")
