"""A verifier defect end to end in the system Chromium: a curator confirms it in the admin,
the catalog and review page show the demotion, the resolve page offers no review until a valid
one is published, then offers it, and only a new rating publication restores Good."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.utils import timezone

from atlas.models import Source
from atlas.services.sync import sync_catalog
from difficulty.publication import publish_difficulty_run
from reviews.models import VerifierIssue
from reviews.services.publication import publish_run_directory
from tests.difficulty.example_reports import write_example_difficulty
from tests.production.conftest import pinned_catalog
from tests.reviews.builders import cite_fix_validation, cite_reproduction, rewrite_collection
from tests.reviews.example_runs import EXAMPLE_COMMIT, FindingSpec, RunSpec, write_run_directory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE_ID = "MarinSkyRL:gsm8k"
ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/9001"


def run_spec(source: Source, *, started_at: dt.datetime, **overrides) -> RunSpec:
    return RunSpec(
        source_id=source.id,
        dataset_revision=source.payload["dataset_revision"],
        repository=source.payload["dataset_id"],
        started_at=started_at,
        **overrides,
    )


def write_defect_run(root: Path, source: Source) -> Path:
    """A supplemental collection: a verifier_defect review naming the issue, with a native run."""
    run_dir = write_run_directory(
        output=root / "defect",
        spec=run_spec(
            source,
            started_at=timezone.now() - dt.timedelta(hours=1),
            source_findings=(FindingSpec("high", "Rejects correct integer answers."),),
        ),
    )

    def mark(collection):
        synthesis = next(r for r in collection["reviews"] if r["method"] == "synthesis"
                         and r["subject_id"].startswith("source:"))  # fmt: skip
        synthesis["attributes"].update(
            {"review_pool_role": "verifier_defect", "issue_url": ISSUE_URL}
        )
        cite_reproduction(run_dir, synthesis, issue_url=ISSUE_URL)

    rewrite_collection(run_dir, mark)
    return run_dir


def write_fix_run(root: Path, source: Source) -> Path:
    """A fresh rating collection proving the fix on the current revisions."""
    run_dir = write_run_directory(
        output=root / "fix",
        spec=run_spec(source, started_at=timezone.now() - dt.timedelta(hours=1)),
    )

    def resolve(collection):
        synthesis = next(r for r in collection["reviews"] if r["method"] == "synthesis"
                         and r["subject_id"].startswith("source:"))  # fmt: skip
        synthesis["attributes"]["resolved_verifier_issues"] = [
            {
                "issue_url": ISSUE_URL,
                "dataset_revision": source.payload["dataset_revision"],
                "verifier_revision": source.payload["verifier_revision"],
                "fix_validated": True,
                "validation_evidence": "validation/validation.json",
            }
        ]
        cite_fix_validation(run_dir, collection, synthesis, issue_url=ISSUE_URL)

    rewrite_collection(run_dir, resolve)
    return run_dir


def quality_chip(page, live_server) -> tuple[str, str | None, str]:
    page.goto(f"{live_server.url}/?q=gsm8k")
    row = page.locator(f'tr[data-source-id="{SOURCE_ID}"]')
    chip = row.locator("td .chip[class*='quality-']")
    cells = row.locator("td")  # the name is the row header, not a cell
    difficulty = cells.nth(7).inner_text().strip()
    label = chip.evaluate("node => node.firstChild.textContent").strip()
    tooltip = chip.get_attribute("title")
    # These runs are example collections: the chip says so, and its tooltip starts with it.
    assert chip.locator(".chip-mark").inner_text() == "Example"
    prefix = "Example review — not a real judgment. "
    return label, tooltip.removeprefix(prefix) if tooltip else tooltip, difficulty


def test_confirm_demote_refuse_resolve_and_restore_good(
    live_server, page, packaged_rows, tmp_path, screenshot
):
    # gsm8k pins the commit the example runs record, so their ratings are current.
    catalog = pinned_catalog(tmp_path, packaged_rows, EXAMPLE_COMMIT)
    sync_catalog(catalog_path=catalog, force=False, trigger="command")
    source = Source.objects.get(id=SOURCE_ID)
    good = write_run_directory(
        output=tmp_path / "good",
        spec=run_spec(source, started_at=timezone.now() - dt.timedelta(days=1)),
    )
    good_review = publish_run_directory(run_dir=good, atlas_id=SOURCE_ID)["review_id"]
    measured = tmp_path / "difficulty"
    measured.mkdir()
    write_example_difficulty(
        run_dir=measured, atlas_id=SOURCE_ID, source_revision=source.payload["dataset_revision"]
    )
    publish_difficulty_run(run_dir=measured, atlas_id=SOURCE_ID)
    label, _, difficulty = quality_chip(page, live_server)
    assert label == "Good" and "Withheld" not in difficulty and "Not measured" not in difficulty

    defect = publish_run_directory(run_dir=write_defect_run(tmp_path, source), atlas_id=SOURCE_ID)
    assert defect["kind"] == "supplemental"
    curator = User.objects.create_user("curator", password="walk-pass-1", is_staff=True)
    curator.user_permissions.add(
        *Permission.objects.filter(codename__in=["manage_verifier_issues", "view_verifierissue"])
    )

    page.goto(f"{live_server.url}/admin/login/?next=/admin/reviews/verifierissue/add/")
    page.fill("#id_username", "curator")
    page.fill("#id_password", "walk-pass-1")
    page.get_by_role("button", name="Log in").click()
    # The source is picked by autocomplete; the confirming review among its defect collections.
    page.locator(".field-source .select2-selection").click()
    page.locator(".select2-search__field").fill("gsm8k")
    page.locator(".select2-results__option", has_text=SOURCE_ID).first.click()
    page.wait_for_selector(
        f'#id_confirming_review option[value="{defect["review_id"]}"]', state="attached"
    )
    assert page.locator("#id_confirming_review option").count() == 2  # "---------" and the one
    # Each option says which issue its defect review names, not just a look-alike hash.
    option = page.locator(f'#id_confirming_review option[value="{defect["review_id"]}"]')
    assert option.inner_text().startswith("marin-community/MarinSkyRL#9001 · ")
    assert page.locator("#id_issue_url").get_attribute("type") == "url"
    page.fill("#id_issue_url", ISSUE_URL)
    page.select_option("#id_confirming_review", defect["review_id"])
    # The form is called what the docs call it.
    assert page.locator("h1").inner_text() == "Confirm verifier defect"
    page.get_by_role("button", name="Confirm verifier defect").click()
    page.wait_for_url("**/admin/reviews/verifierissue/**")
    issue = VerifierIssue.objects.get(source_id=SOURCE_ID)
    assert issue.status == "open" and issue.created_by == curator
    # As if the defect was confirmed two hours ago: the fix review's judgments (which may not lie
    # in the future) come after it.
    VerifierIssue.objects.filter(id=issue.id).update(
        created_at=timezone.now() - dt.timedelta(hours=2)
    )

    label, tooltip, difficulty = quality_chip(page, live_server)
    assert label == "Some issues"
    assert tooltip == (
        "Confirmed verifier defect remains unresolved. "
        "Open the source's review pool and GitHub issue."
    )
    assert difficulty == "Withheld · verifier issues"
    screenshot(page, "defect-catalog")

    page.goto(f"{live_server.url}/reviews/{good_review}/")
    panel = page.locator("details", has_text="Confirmed verifier defects remain unresolved").first
    assert panel.get_attribute("open") is not None
    assert (
        panel.get_by_role("link", name="Open verifier issue ↗").get_attribute("href") == ISSUE_URL
    )

    # An issue's page offers no Save; its breadcrumbs lead back; resolving is an action page.
    page.goto(f"{live_server.url}/admin/reviews/verifierissue/{issue.id}/change/")
    assert page.get_by_role("button", name="Save", exact=True).count() == 0
    page.get_by_role("link", name="Resolve verifier defect").click()
    breadcrumbs = page.locator(".breadcrumbs").inner_text()
    assert "Verifier issues" in breadcrumbs and "Resolve verifier defect" in breadcrumbs
    # Nothing can resolve it yet: the page says so instead of offering a box for an id.
    assert page.locator("#no-resolution-review").is_visible()
    assert page.locator('input[name="resolution_review_id"]').count() == 0
    issue.refresh_from_db()
    assert issue.status == "open"

    fix_dir = write_fix_run(tmp_path, source)
    capped = publish_run_directory(run_dir=fix_dir, atlas_id=SOURCE_ID)
    assert capped["capped_by_verifier_issues"] is True and capped["quality"] == "some_issues"
    # The fresh review is offered as the one eligible choice.
    page.reload()
    choice = page.get_by_role("radio", name=re.compile(capped["review_id"][:12]))
    assert "fix validated for marin-community/MarinSkyRL#9001" in (
        page.locator("label", has_text=capped["review_id"][:12]).inner_text()
    )
    assert choice.count() == 1
    choice.check()
    page.get_by_role("button", name="Resolve verifier defect").click()
    # Resolution never restores Good by itself: the message says what does.
    page.get_by_text(
        "Verifier defect resolved. Good returns only with a new rating publication: publish the "
        "resolution's review again to restore Good."
    ).wait_for()
    issue.refresh_from_db()
    assert (issue.status, issue.resolution_review_id) == ("resolved", capped["review_id"])
    assert page.get_by_role("button", name="Save", exact=True).count() == 0
    assert page.get_by_role("link", name="Resolve verifier defect").count() == 0

    label, _, difficulty = quality_chip(page, live_server)
    assert label == "Some issues"  # resolution alone never restores Good

    restored = publish_run_directory(run_dir=fix_dir, atlas_id=SOURCE_ID)
    assert restored["quality"] == "good" and restored["capped_by_verifier_issues"] is False
    label, _, difficulty = quality_chip(page, live_server)
    assert label == "Good"
    assert difficulty == "Not measured"  # a new current review starts unmeasured
