""" "Current" is earned by identity (``reviews.identity``): on the real gsm8k verifier, a review
that executed another MarinSkyRL commit (and verifyit off) than the row pins publishes as covering
what it executed — rating hidden as for a changed revision, the page and the API saying which pin
differs and how to attest; with a verified native-revision attestation from the executed commit
to the pinned one it publishes as current; an attestation that does not bridge them is not
taken on trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas.artifact.catalog_artifact import write_document
from atlas.services.sync import sync_catalog
from tests.curation.conftest import command, pinned_catalog
from tests.production.conftest import SOURCE_ID, commit_all, git
from tests.production.helpers import load, make_review

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
PINNED = "e44c4bfcb62c489286a1264094e6d9c883aaf0d2"  # the packaged gsm8k row's MarinSkyRL pin


def publish(run_dir: Path) -> dict:
    return json.loads(command("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID))


def test_a_review_of_another_commit_publishes_as_not_current(
    buggy_run, defect_checkout, packaged_rows, client, tmp_path
):
    # The packaged catalog as shipped: gsm8k pins MarinSkyRL e44c4bfc… and grades with verifyit.
    packaged = tmp_path / "packaged.json"
    write_document(rows=packaged_rows, output=packaged)
    sync_catalog(catalog_path=packaged, force=False, trigger="command")
    result = publish(buggy_run)
    pins = {d["pin"]: d for d in result["identity_differences"]}
    assert set(pins) == {"MarinSkyRL commit", "verifyit mode"}
    assert (pins["MarinSkyRL commit"]["executed"], pins["MarinSkyRL commit"]["pinned"]) == (
        defect_checkout.buggy,
        PINNED,
    )
    assert (pins["verifyit mode"]["executed"], pins["verifyit mode"]["pinned"]) == (
        "legacy",
        "verifyit",
    )
    # The catalog hides the rating as for a changed revision and keeps the review linked.
    row = client.get(f"/api/sources/{SOURCE_ID}/").json()
    assert (row["quality"], row["review_applicability"]) == (None, "stale")
    assert row["review_verifier_revision"] == defect_checkout.buggy
    api = client.get(f"/api/reviews/{result['review_id']}/").json()
    assert api["source"]["review_applicability"] == "stale"
    assert [d["pin"] for d in api["identity_differences"]] == ["MarinSkyRL commit", "verifyit mode"]
    assert f"--attest-native-revision {PINNED}" in api["identity_differences"][0]["attest"]
    page = client.get(f"/reviews/{result['review_id']}/").content.decode()
    assert "Review applicability: Not current" in page
    assert (
        f"MarinSkyRL commit differs: executed <code>{defect_checkout.buggy}</code>, the source "
        f"pins <code>{PINNED}</code>"
    ) in page
    assert f"make_review --output RUN --attest-native-revision {PINNED}" in page


@pytest.fixture
def later_commit_run(tmp_path, checkout, write_config, packaged_rows) -> tuple[Path, str, str]:
    """A review at a commit after the pinned one that changed no native code (a README)."""
    pinned = git(checkout, "rev-parse", "HEAD").strip()
    (checkout / "README.md").write_text("Notes only.\n", encoding="utf-8")
    executed = commit_all(checkout, "Notes only")
    sync_catalog(
        catalog_path=pinned_catalog(tmp_path, packaged_rows, pinned),
        force=True,
        trigger="command",
    )
    output = tmp_path / "review-later"
    make_review("--config", str(write_config(rows=2)), "--n", "2", "--output", str(output))
    return output, pinned, executed


def test_an_attested_review_publishes_as_current(later_commit_run, client, tmp_path):
    output, pinned, executed = later_commit_run
    unattested = publish(output)
    assert [d["pin"] for d in unattested["identity_differences"]] == ["MarinSkyRL commit"]
    assert client.get(f"/api/sources/{SOURCE_ID}/").json()["review_applicability"] == "stale"
    # The curator attests on the executing machine and publishes the same run again.
    row = tmp_path / "row.json"
    row.write_text(json.dumps(client.get(f"/api/sources/{SOURCE_ID}/").json()), "utf-8")
    make_review(
        "--output", str(output), "--attest-native-revision", pinned, "--atlas-row", str(row)
    )
    attested = publish(output)
    assert attested["review_id"] == unattested["review_id"]
    assert attested["identity_differences"] == []
    api_row = client.get(f"/api/sources/{SOURCE_ID}/").json()
    assert (api_row["review_applicability"], api_row["quality"]) == ("current", "good")
    review = client.get(f"/api/reviews/{attested['review_id']}/").json()
    assert review["identity_differences"] == []
    assert executed != pinned


def test_an_attestation_that_does_not_bridge_is_not_taken_on_trust(
    later_commit_run, client, tmp_path
):
    output, pinned, _ = later_commit_run
    row = tmp_path / "row.json"
    row.write_text(json.dumps({"verifier_url": ""}), "utf-8")
    make_review(
        "--output", str(output), "--attest-native-revision", pinned, "--atlas-row", str(row)
    )
    attestation = output / "publication" / f"native-revision-attestation-{pinned}.json"
    document = load(attestation)
    # Hand-edited: one compared object no longer the same at both commits.
    document["objects"][0]["registry_object"] = "0" * 40
    attestation.write_text(json.dumps(document, indent=2), encoding="utf-8")
    result = publish(output)
    assert [d["pin"] for d in result["identity_differences"]] == ["MarinSkyRL commit"]
    assert client.get(f"/api/sources/{SOURCE_ID}/").json()["review_applicability"] == "stale"
