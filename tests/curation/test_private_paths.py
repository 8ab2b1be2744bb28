"""Nothing private leaves the machine in the curators' own records: every kind of run the tools
make — make_review with --reuse, reproduce_defect, validate_fix, synthesise_source, and the copy
fetch_review writes — is published, and the records the tools write themselves are read back
from the Atlas's API and scanned for the producing machine's home, temporary and working folders.
Runs are named by review id, role or a path relative to the run directory. (The run format's
identity records — make_review's ``run.json`` config path and checkout, ``input.json``, the
``file://`` evidence URIs the reference writes too — are not the tools' own and stay as the spec
has them.)"""

from __future__ import annotations

import json
import os
import tempfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command

from atlas.services.sync import sync_catalog
from tests.curation.conftest import ISSUE_URL, task_folder_of
from tests.curation.test_synthesis import write_imported
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load, make_review

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CURATOR_TOOLS = {"reproduce_defect", "validate_fix", "synthesise_source"}
# The records the curators' tools write themselves, wherever they sit in a published run.
TOOL_RECORDS = {"reproduction.json", "validation.json", "pool.json", "reuse.json", "replay.json"}


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def publish(run_dir: Path) -> str:
    printed = run("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    return json.loads(printed)["review_id"]


def private_folders(tmp_path: Path) -> dict[str, str]:
    return {
        "home": str(Path.home()),
        "temporary folder": tempfile.gettempdir(),
        "test folder": str(tmp_path),
        "working folder": os.getcwd(),
        "project folder": str(settings.BASE_DIR),
    }


def curators_records(client, review_id: str) -> dict[str, Any]:
    """What a published run holds that the curators' tools wrote: their records, their own
    ``run.json`` (a make_review ``run.json``'s reuse entry only), and the reviews they wrote
    into the collection without the ``file://`` evidence URIs of the run format."""
    index = client.get(f"/api/reviews/{review_id}/").json()

    def read(path: str) -> Any:
        response = client.get(f"/api/reviews/{review_id}/artifacts/{path}")
        assert response.status_code == 200, path
        return json.loads(response.content)

    found: dict[str, Any] = {}
    for artifact in index["artifacts"]:
        path = artifact["path"]
        name = path.rsplit("/", 1)[-1]
        if name in TOOL_RECORDS:
            found[path] = read(path)
        elif name == "run.json" and not path.startswith("pool/"):
            document = read(path)
            found[path] = document if document.get("tool") in CURATOR_TOOLS else {
                "reuse": document.get("reuse")
            }  # fmt: skip
    collection = read("quality-reviews.json")
    for review in collection["reviews"]:
        publisher = (review.get("publisher") or {}).get("id")
        if publisher in CURATOR_TOOLS or "copied_from" in (review.get("attributes") or {}):
            written = {k: v for k, v in review.items() if k != "evidence"}
            found[f"quality-reviews.json#{review['id']}"] = written
    return found


def test_the_curators_records_name_no_folder_of_this_machine(
    buggy_run,
    defect_checkout,
    separator_config,
    packaged_catalog,
    client,
    live_server,
    tmp_path,
    repin,
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    published = {"review": publish(buggy_run)}
    # The copy fetch_review makes (its own record: atlas-review.json).
    fetched = tmp_path / "fetched"
    run("fetch_review", "--atlas", live_server.url, "--review-id", published["review"],
        "--output", str(fetched))  # fmt: skip
    reproduction = tmp_path / "reproduction"
    run(
        "reproduce_defect", "--run-dir", str(fetched), "--attempt",
        task_folder_of(buggy_run, 2006), "--kind", "verifier", "--issue-url", ISSUE_URL,
        "--expect", "accepted", "--config", str(separator_config), "--output", str(reproduction),
    )  # fmt: skip
    published["reproduction"] = publish(reproduction)
    run("confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-run-dir", str(reproduction))  # fmt: skip
    # A fresh review at the repaired commit that reads the earlier run (--reuse, a folder).
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    fixed = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(fixed),
        "--reuse", str(buggy_run),
    )  # fmt: skip
    resolution = tmp_path / "resolution"
    run(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed),
        "--atlas", live_server.url, "--output", str(resolution),
    )  # fmt: skip
    published["resolution"] = publish(resolution)
    run("resolve_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--resolution-run-dir", str(resolution))  # fmt: skip
    publish(write_imported(tmp_path / "audit"))
    synthesis = tmp_path / "synthesis"
    run(
        "synthesise_source", "--atlas", live_server.url, "--atlas-id", SOURCE_ID,
        "--config", str(separator_config), "--output", str(synthesis),
    )  # fmt: skip
    published["synthesis"] = publish(synthesis)

    records = {
        f"{kind} {path}": document
        for kind, review_id in published.items()
        for path, document in curators_records(client, review_id).items()
    }
    records["fetch_review atlas-review.json"] = load(fetched / "atlas-review.json")
    # Every kind of record was read: the scan below is not vacuous.
    names = {key.split(" ", 1)[1].split("#")[0].rsplit("/", 1)[-1] for key in records}
    assert {"reproduction.json", "validation.json", "pool.json", "reuse.json", "replay.json",
            "run.json", "quality-reviews.json", "atlas-review.json"} <= names  # fmt: skip
    reuse = next(doc for key, doc in records.items() if key.endswith("/reuse.json")
                 or key.endswith(" reuse.json"))  # fmt: skip
    assert [c["source"] for c in reuse["collections"]] == ["run directory"]
    reproduced = records["reproduction reproduction.json"]
    assert reproduced["original_run"]["review_id"] == published["review"]
    leaks = [
        f"{where} names the {what} ({folder})"
        for where, document in records.items()
        for what, folder in private_folders(tmp_path).items()
        if folder in json.dumps(document, ensure_ascii=False)
    ]
    assert leaks == []
