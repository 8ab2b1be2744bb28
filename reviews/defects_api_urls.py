"""Verifier-issue API (/api/verifier-issues/...)."""

from rest_framework.routers import SimpleRouter

from reviews.defects_api import VerifierIssueViewSet

router = SimpleRouter()
router.register("verifier-issues", VerifierIssueViewSet, basename="verifier-issue")

urlpatterns = router.urls
