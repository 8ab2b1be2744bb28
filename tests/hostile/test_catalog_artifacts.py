"""Bad catalog artifacts: every one is refused with a message naming the row and field, through
the command, the API and the service alike; nothing but a failed refresh run is written, and the
public page keeps answering 200."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from atlas.artifact.catalog_artifact import catalog_revision
from atlas.models import RefreshRun
from atlas.services.sync import SyncRejected, sync_catalog
from tests.atlas.test_catalog_helpers import make_curator
from tests.conftest import make_row

pytestmark = pytest.mark.django_db
ID = "MarinSkyRL:victim"


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def artifact_text(rows: list[dict[str, Any]]) -> str:
    # Lone surrogates stay escaped, as a hostile exporter would write them; an infinite number is
    # written as 1e999, which parses to inf (a literal Infinity is refused as not JSON). The
    # revision is computed so every earlier rule passes.
    text = json.dumps({"schema_version": 1, "revision": catalog_revision(rows), "sources": rows})
    return text.replace("Infinity", "1e999")


CASES = [
    # (name, change to the victim row, field path the refusal names)
    ("nested-pipeline-files", {"pipeline": {"name": "p", "files": [["a", ["b"]]]}},
     "pipeline.files[0]"),
    ("nul-in-name", {"display_name": "bad\x00name"}, "display_name"),
    ("lone-surrogate", {"notes": "text \ud800 more"}, "notes"),
    ("int-beyond-64-bits", {"task_count": 2**70}, "task_count"),
    ("negative-traces", {"traces": -1}, "traces"),
    ("infinite-extra", {"extra": float("inf")}, "extra"),
    ("huge-float-task-count", {"task_count": float("inf")}, "task_count"),
    ("deep-extra", {"extra": nested(40)}, "extra" + "[0]" * 12),
    ("javascript-url", {"url": "javascript:alert(1)"}, "url"),
    ("data-verifier-url", {"verifier_url": "data:text/html,x"}, "verifier_url"),
    ("review-date-offset", {"review_date": "2025-01-01T00:00:00+25:00"}, "review_date"),
    # Valid RFC 3339 offsets the database cannot store (±15:59 at most).
    *(
        (f"review-date-{offset}", {"review_date": f"2025-01-01T00:00:00{offset}"}, "review_date")
        for offset in ("+23:59", "-16:00", "+16:00", "-23:59")
    ),
    ("tags-not-strings", {"tags": ["rlvr", 5]}, "tags"),
    ("grading-scope-junk", {"grading_scope": {"mode": "verifyit", "agents": [{"x": 1}]}},
     "grading_scope.agents[0]"),
    ("pipeline-not-object", {"pipeline": ["files"]}, "pipeline"),
    ("status-unknown", {"status": "Deleted"}, "status"),
    # A lone surrogate has no UTF-8 form: it must not reach the compiled schema engine (a 500), and
    # a key holding one is named escaped (no page, log or database text could hold it raw).
    ("surrogate-in-key", {"x\ud800": 1}, "x\\ud800"),
    ("surrogate-in-enum", {"type": "\ud800"}, "type"),
    ("surrogate-in-pipeline-key", {"pipeline": {"k\udc00": 1}}, "pipeline"),
    ("nul-in-key", {"x\x00": 1}, "x\\x00"),
]  # fmt: skip
ID_CASES = [
    ("MarinSkyRL:new\nline", "Catalog source MarinSkyRL:new\\nline has an invalid id"),
    ("MarinSkyRL:trailing/", "Catalog source MarinSkyRL:trailing/ has an invalid id"),
    ("MarinSkyRL:a//b", "Catalog source MarinSkyRL:a//b has an invalid id"),
    (" MarinSkyRL:lead", "Catalog source  MarinSkyRL:lead has an invalid id"),
    # Dot segments: a browser resolves them, so the source's link would open another page.
    *(
        (dotted, f"Catalog source {dotted} has an invalid id")
        for dotted in (
            "MarinSkyRL:a/../../api/sources",
            "MarinSkyRL:a/./b",
            "MarinSkyRL:a/..",
            "MarinSkyRL:x/.",
        )
    ),
]


@pytest.fixture
def synced(write_catalog):
    rows = [make_row(ID), make_row("MarinSkyRL:bystander")]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    return rows


def refuse_everywhere(path: Path, message: str, client, tables) -> None:
    tables.before(skip=("catalog_refresh_runs",))
    runs = RefreshRun.objects.count()
    with pytest.raises(SyncRejected) as refused:
        sync_catalog(catalog_path=path, force=True, trigger="command")
    assert str(refused.value) == message
    with pytest.raises(CommandError) as command:
        call_command("sync_catalog", "--catalog", str(path), "--force")
    assert str(command.value) == message and "\n" not in message
    client.force_login(make_curator())
    from django.test import override_settings

    with override_settings(ATLAS_CATALOG_PATH=path):
        answer = client.post("/api/refresh/?force=true")
    assert (answer.status_code, answer.json()) == (422, {"detail": message})
    tables.assert_unchanged()
    failed = RefreshRun.objects.order_by("-id")[:3]
    assert RefreshRun.objects.count() == runs + 3
    assert all(run.outcome == "failed" and run.error == message for run in failed)
    client.logout()
    assert client.get("/").status_code == 200
    assert client.get(f"/api/sources/{ID}/").status_code == 200


@pytest.mark.parametrize(("name", "change", "field"), CASES, ids=[case[0] for case in CASES])
def test_bad_rows_are_refused_with_their_field(
    name, change, field, synced, tmp_path, client, tables
):
    message = f"Catalog source {ID} has an invalid {field}"
    rows = copy.deepcopy(synced)
    rows[0].update(change)
    path = tmp_path / f"{name}.json"
    path.write_text(artifact_text(rows), encoding="utf-8")
    refuse_everywhere(path, message, client, tables)


@pytest.mark.parametrize(("source_id", "message"), ID_CASES)
def test_unreachable_ids_are_refused(source_id, message, synced, tmp_path, client, tables):
    rows = [*copy.deepcopy(synced), make_row(source_id)]
    path = tmp_path / "ids.json"
    path.write_text(artifact_text(rows), encoding="utf-8")
    refuse_everywhere(path, message, client, tables)


def test_a_document_nested_too_deeply_to_parse(synced, tmp_path, client, tables):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    refuse_everywhere(
        path,
        "Catalog artifact is not valid JSON: the document is nested too deeply",
        client,
        tables,
    )


def test_nan_is_not_json(synced, tmp_path, client, tables):
    path = tmp_path / "nan.json"
    path.write_text('{"schema_version": 1, "revision": NaN, "sources": []}', encoding="utf-8")
    refuse_everywhere(
        path, "Catalog artifact is not valid JSON: NaN is not a JSON value", client, tables
    )


def test_a_fifo_neither_hangs_nor_syncs(synced, tmp_path, client, tables):
    path = tmp_path / "catalog.fifo"
    os.mkfifo(path)
    refuse_everywhere(path, f"Catalog artifact is not a regular file: {path}", client, tables)


def test_a_device_is_not_read(synced, client, tables):
    refuse_everywhere(
        Path("/dev/zero"), "Catalog artifact is not a regular file: /dev/zero", client, tables
    )


def test_an_artifact_over_the_size_cap_is_not_read(synced, tmp_path, client, tables, settings):
    settings.ATLAS_MAX_CATALOG_BYTES = 10_000
    path = tmp_path / "big.json"
    with path.open("wb") as handle:
        handle.truncate(50_000_000)  # sparse: refused by its size, never read
    refuse_everywhere(path, f"Catalog artifact exceeds 10000 bytes: {path}", client, tables)
