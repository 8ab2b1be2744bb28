"""Every admin list and change page renders for a superuser on published data."""

import datetime as dt

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from atlas.models import Refresh, RefreshRun, Source
from atlas.services.sync import sync_catalog
from reviews.models import ReviewArtifact, VerifierIssue
from reviews.services.defects import confirm_verifier_issue
from tests.conftest import make_row
from tests.reviews.factories import (
    ISSUE_URL,
    confirming_collection,
    fix_review,
    resolution_entry,
    runtime_review,
    store_collection,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(User.objects.create_superuser("root", password="admin-pass-1"))
    return client


def test_admin_lists_and_change_pages_render(admin_client, write_catalog):
    sync_catalog(
        catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False, trigger="command"
    )
    source = Source.objects.get()
    review = confirming_collection(source)
    confirm_verifier_issue(source_id=source.id, issue_url=ISSUE_URL, review_id=review.id)
    objects = [
        source, Refresh.objects.get(), RefreshRun.objects.get(), review,
        ReviewArtifact.objects.filter(review=review).first(), VerifierIssue.objects.get(),
    ]  # fmt: skip
    for obj in objects:
        meta = obj._meta
        listing = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert listing.status_code == 200, meta.model_name
        change = admin_client.get(
            reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
        )
        assert change.status_code == 200, meta.model_name
    resolve = admin_client.get(
        reverse("admin:reviews_verifierissue_resolve", args=[VerifierIssue.objects.get().pk])
    )
    assert resolve.status_code == 200 and "Resolve verifier defect" in resolve.content.decode()


def test_sources_changelist_columns_filters_and_links(admin_client, write_catalog):
    sync_catalog(
        catalog_path=write_catalog(
            [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b/long id", tags=["agentic"])]
        ),
        force=False,
        trigger="command",
    )
    source = Source.objects.get(id="MarinSkyRL:a")
    review = confirming_collection(source)
    confirm_verifier_issue(source_id=source.id, issue_url=ISSUE_URL, review_id=review.id)
    html = admin_client.get("/admin/atlas/source/").content.decode()
    for header in ["Source ID", "Quality", "Difficulty", "Open defects", "Review date", "Pages"]:
        assert f">{header}<" in html or header in html, header
    for title in ["open verifier defect", "review applicability", "type", "family", "origin"]:
        assert f"By {title}" in html, title
    assert 'href="/sources/MarinSkyRL:a/">Source page</a>' in html
    assert "atlas/admin.css" in html and 'class="atlas-source-id"' in html
    flagged = admin_client.get("/admin/atlas/source/?open_defect=yes").content.decode()
    assert "MarinSkyRL:a" in flagged and "MarinSkyRL:b/long id" not in flagged
    agentic = admin_client.get("/admin/atlas/source/?type=Agentic").content.decode()
    assert "MarinSkyRL:b/long id" in agentic and ">MarinSkyRL:a<" not in agentic
    change = admin_client.get(f"/admin/atlas/source/{source.pk}/change/")
    page = change.content.decode()
    assert '<pre class="atlas-payload">{\n  &quot;canonical_source&quot;' in page
    assert "difficulty" not in change.context["adminform"].form.fields


def test_a_verifier_issue_page_has_no_save_and_the_resolve_page_has_breadcrumbs(
    admin_client, write_catalog
):
    sync_catalog(
        catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False, trigger="command"
    )
    source = Source.objects.get()
    review = confirming_collection(source)
    issue = confirm_verifier_issue(source_id=source.id, issue_url=ISSUE_URL, review_id=review.id)
    page = admin_client.get(f"/admin/reviews/verifierissue/{issue.pk}/change/").content.decode()
    assert 'name="_save"' not in page and "Resolve verifier defect" in page
    resolve = admin_client.get(f"/admin/reviews/verifierissue/{issue.pk}/resolve/").content.decode()
    assert 'class="breadcrumbs"' in resolve
    assert 'href="/admin/reviews/verifierissue/"' in resolve
    options = admin_client.get(
        "/admin/reviews/verifierissue/defect-reviews/", {"source": source.id}
    ).json()
    assert [item["id"] for item in options["options"]] == [review.id]
    add = admin_client.get("/admin/reviews/verifierissue/add/").content.decode()
    assert 'type="url" name="issue_url"' in add
    assert "admin-autocomplete" in add and "reviews/defect_form.js" in add


def test_the_defect_admin_speaks_as_the_docs_do_and_offers_eligible_resolutions(
    admin_client, write_catalog
):
    sync_catalog(
        catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False, trigger="command"
    )
    source = Source.objects.get()
    listing = admin_client.get("/admin/reviews/verifierissue/").content.decode()
    assert 'class="addlink">Confirm verifier defect</a>' in listing
    add = admin_client.get("/admin/reviews/verifierissue/add/").content.decode()
    assert "<h1>Confirm verifier defect</h1>" in add
    assert 'value="Confirm verifier defect" class="default" name="_save"' in add
    assert "Add verifier issue" not in add
    review = confirming_collection(source)
    issue = confirm_verifier_issue(source_id=source.id, issue_url=ISSUE_URL, review_id=review.id)
    url = f"/admin/reviews/verifierissue/{issue.pk}/resolve/"
    # Nothing can resolve it yet: the page says so and offers no box to paste an id into.
    empty = admin_client.get(url).content.decode()
    assert 'id="no-resolution-review"' in empty and 'name="resolution_review_id"' not in empty
    later = issue.created_at + dt.timedelta(minutes=5)
    stale = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source, fix_validated=False)])],
        updated_at=later,
    )
    fix = store_collection(
        source,
        [runtime_review(), fix_review([resolution_entry(source)])],
        updated_at=later + dt.timedelta(minutes=1),
    )
    page = admin_client.get(url).content.decode()
    # The eligible collection is a choice; the other one is listed with the rule it fails.
    assert f'type="radio" name="resolution_review_id" value="{fix.id}"' in page
    assert f'value="{stale.id}"' not in page
    assert f"<code>{stale.id[:12]}</code></a>" in page and "cannot resolve it: " in page
    assert "Resolve verifier defects with a fresh native review" not in page.split("<h2>")[-1]
    # A crafted post of an ineligible collection gets the rule's message, not a generic one.
    refused = admin_client.post(url, {"resolution_review_id": stale.id}).content.decode()
    assert "Resolve verifier defects with a fresh native review" in refused
    done = admin_client.post(url, {"resolution_review_id": fix.id})
    assert done.status_code == 302
    issue.refresh_from_db()
    assert (issue.status, issue.resolution_review_id) == ("resolved", fix.id)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("staff", "codename", "reads"),
    [(True, "refresh_catalog", True), (True, "manage_verifier_issues", True),
     (True, "publish_review", True), (True, None, False), (False, "manage_verifier_issues", False)],
)  # fmt: skip
def test_any_curator_may_read_sources_in_the_admin(client, write_catalog, staff, codename, reads):
    """Confirming a defect picks its source by autocomplete: staff holding any curator permission
    read sources (atlas.permissions.is_any_curator), others not."""
    from django.contrib.auth.models import Permission

    sync_catalog(catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False,
                 trigger="command")  # fmt: skip
    user = User.objects.create_user(username="u", password="pw-for-tests-only", is_staff=staff)
    if codename:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)
    response = client.get("/admin/atlas/source/")
    assert (response.status_code == 200) is reads, response.status_code


@pytest.mark.parametrize(
    ("staff", "codename"),
    [(True, None), (True, "publish_review"), (True, "manage_verifier_issues"),
     (False, "publish_review"), (False, "manage_verifier_issues")],
)  # fmt: skip
def test_the_curator_pages_ask_atlas_permissions(client, write_catalog, staff, codename):
    """Publishing and binding need ``reviews.publish_review``, confirming and resolving defects
    ``reviews.manage_verifier_issues``; staff read the work queue and the verifier issues
    (atlas.permissions.may and is_staff_member); the admin turns non-staff away first."""
    from django.contrib.auth.models import Permission

    sync_catalog(catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False,
                 trigger="command")  # fmt: skip
    source = Source.objects.get()
    review = confirming_collection(source)
    issue = confirm_verifier_issue(source_id=source.id, issue_url=ISSUE_URL, review_id=review.id)
    user = User.objects.create_user(username="u", password="pw-for-tests-only", is_staff=staff)
    if codename:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)

    def status(url: str) -> int:
        return client.get(url).status_code

    publishes = staff and codename == "publish_review"
    manages = staff and codename == "manage_verifier_issues"
    refused = 403 if staff else 302  # the admin sends non-staff to its login page
    assert status("/admin/reviews/review/publish/") == (200 if publishes else refused)
    bind = f"/admin/reviews/review/{review.id}/bind-grading/"
    assert status(bind) == (200 if publishes else refused)
    assert status(f"/admin/reviews/verifierissue/{issue.pk}/resolve/") == (
        200 if manages else refused
    )
    assert status("/admin/reviews/verifierissue/defect-reviews/") == (200 if manages else refused)
    assert status("/admin/reviews/verifierissue/add/") == (200 if manages else refused)
    assert status("/admin/reviews/verifierissue/") == (200 if staff else 302)
    assert status("/admin/reviews/review/queue/") == (200 if staff else 302)
    if staff:  # the list itself needs the view permission of reviews
        user.user_permissions.add(Permission.objects.get(codename="view_review"))
        listing = client.get("/admin/reviews/review/")
        offered = "Publish run archive" in listing.content.decode()
        assert offered is publishes, listing.status_code


def test_the_admin_names_the_product(admin_client, client):
    for url in ("/admin/", "/admin/atlas/source/"):
        html = admin_client.get(url).content.decode()
        assert "RL Data Atlas administration" in html, url
        assert "Django administration" not in html and "Django site admin" not in html, url
    admin_client.logout()
    login = client.get("/admin/login/").content.decode()
    assert "<title>Log in | RL Data Atlas administration</title>" in login
