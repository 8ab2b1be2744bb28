"""Every admin list and change page renders for a superuser on published data."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from atlas.models import Refresh, RefreshRun, Source
from atlas.services.sync import sync_catalog
from reviews.defects import confirm_verifier_issue
from reviews.models import ReviewArtifact, VerifierIssue
from tests.conftest import make_row
from tests.reviews.factories import ISSUE_URL, confirming_collection

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
