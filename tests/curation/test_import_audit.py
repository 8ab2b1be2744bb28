"""How an audit written outside the Atlas enters a source's review pool: import_audit checks the
curator's note and the files it cites and writes the imported collection; publish_review
publishes it as kind imported (it never rates the source), the work queue then lists the source
for a synthesis, and synthesise_source cites it. A note that is not whole is refused with one line
and nothing is written."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.pages.work_queue import need_queryset
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load

pytestmark = pytest.mark.django_db(transaction=True)


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        run("import_audit", *args)
    return str(failure.value)


def note(**changes) -> dict:
    """A Task Trove dashboard note about the source, as a curator writes it down."""
    document = {
        "atlas_source_id": SOURCE_ID,
        "upstream": {
            "name": "tasktrove-dashboard:gsm8k",
            "repository": "openai/gsm8k",
            "dataset_revision": None,
        },
        "mapping": {"applicability": "historical", "note": "The dashboard's gsm8k entry."},
        "reviewer": {"label": "Task Trove dashboard", "kind": "organization"},
        "reviewed_at": None,
        "method": "static_inspection",
        "summary": "Dashboard note: answers with units are graded wrong.",
        "verdict": "conditional",
        "findings": [
            {
                "text": "Units fail the grader.",
                "dimension": "verifier",
                "severity": "medium",
                "kind": "issue",
            },
        ],
        "evidence": ["dashboard-note.md"],
        "tasks": [
            {
                "task_id": "17",
                "task_path": "data/train.parquet",
                "row_index": 17,
                "summary": "Row 17's answer '12 cm' was rejected.",
                "verdict": "reject",
                "findings": [],
            },
        ],
    }
    document.update(changes)
    return document


def write_note(folder: Path, document: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dashboard-note.md").write_text("# gsm8k\nUnits fail the grader.\n", "utf-8")
    path = folder / "note.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_an_audit_note_enters_the_review_pool_and_is_synthesised(
    packaged_catalog, live_server, write_config, model_server, checkout, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    audit = tmp_path / "audit"
    printed = run(
        "import_audit", "--note", str(write_note(tmp_path / "notes", note())),
        "--output", str(audit),
    )  # fmt: skip
    assert printed.splitlines()[1] == (
        f"Next: python manage.py publish_review --run-dir {audit} --atlas-id {SOURCE_ID}"
    )
    collection = load(audit / "quality-reviews.json")
    (mapping,) = collection["source_mappings"]
    assert (mapping["atlas_source_ids"], mapping["status"]) == ([SOURCE_ID], "confirmed")
    assert [r["id"] for r in collection["reviews"]] == ["audit:source", "audit:task/17"]
    assert collection["reviews"][0]["reviewed_at"] is None  # an unknown date stays unknown
    assert (audit / "audit" / "dashboard-note.md").is_file()
    assert (audit / "audit" / "note.json").is_file()
    before = Source.objects.get(id=SOURCE_ID).effective_quality

    published = json.loads(run("publish_review", "--run-dir", str(audit), "--atlas-id", SOURCE_ID))
    assert published["kind"] == "imported"
    assert Source.objects.get(id=SOURCE_ID).effective_quality == before  # never rates
    assert need_queryset("synthesise_imported").filter(id=SOURCE_ID).exists()
    page = run(
        "synthesise_source",
        "--atlas",
        live_server.url,
        "--atlas-id",
        SOURCE_ID,
        "--config",
        str(write_config()),
        "--output",
        str(tmp_path / "synthesis"),
    )
    assert page.startswith(f"Synthesised {SOURCE_ID} from 1 pool collection(s)")
    synthesis = load(tmp_path / "synthesis" / "quality-reviews.json")["reviews"]
    copied = [r["attributes"]["copied_from"]["review_id"] for r in synthesis[:-1]]
    assert copied == ["audit:source", "audit:task/17"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"verdict": "fine"}, "The audit note's verdict must be one of keep, reject, conditional"),
        ({"summary": " "}, "The audit note's summary must be text"),
        ({"colour": "red"}, "The audit note has unknown keys: colour"),
        ({"evidence": ["../outside.md"]}, "The audit note's evidence[0] must be a relative path"),
        ({"evidence": ["missing.md"]}, "The audit note's evidence[0] is not a file beside"),
        ({"evidence": []}, "The audit note's evidence must name at least one file it cites"),
        ({"reviewed_at": "March"}, "The audit note's reviewed_at must be an RFC 3339 time"),
        (
            {
                "findings": [
                    {"text": "x", "dimension": "d", "severity": "high", "kind": "observation"}
                ]
            },
            "The audit note's findings[0].severity of an observation must be info or null",
        ),
        (
            {
                "tasks": [
                    {
                        "task_id": "1",
                        "task_path": "p",
                        "row_index": -1,
                        "summary": "s",
                        "verdict": "keep",
                        "findings": [],
                    }
                ]
            },
            "The audit note's tasks[0].row_index must be a whole number",
        ),
    ],
)
def test_a_note_that_is_not_whole_is_refused_with_nothing_written(tmp_path, changes, message):
    output = tmp_path / "audit"
    path = write_note(tmp_path / "notes", note(**changes))
    assert refused("--note", str(path), "--output", str(output)).startswith(message)
    assert not output.exists()


def test_a_missing_key_is_named_with_what_it_must_hold(tmp_path):
    document = note()
    del document["mapping"]
    path = write_note(tmp_path / "notes", document)
    assert refused("--note", str(path), "--output", str(tmp_path / "out")) == (
        "The audit note lacks mapping: {applicability, note}: how far the audit applies to the "
        "Atlas source"
    )
