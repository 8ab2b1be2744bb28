"""Reviews API routes: /api/reviews/... and /api/verifier-issues/...

The publication routes come first, so /api/reviews/publications/ never reaches the review detail.
"""

from django.urls import path
from rest_framework.routers import SimpleRouter

from reviews.api import views as api

router = SimpleRouter()
router.register("verifier-issues", api.VerifierIssueViewSet, basename="verifier-issue")

urlpatterns = [
    path(
        "reviews/publications/", api.PublicationCreateView.as_view(), name="api-review-publications"
    ),
    path(
        "reviews/publications/<uuid:publication_id>/",
        api.PublicationDetailView.as_view(),
        name="api-review-publication",
    ),
    path("reviews/", api.SourcePoolView.as_view(), name="api-reviews"),
    path("reviews/<str:review_id>/", api.ReviewDetailView.as_view(), name="api-review"),
    path(
        "reviews/<str:review_id>/artifacts/<path:path>",
        api.ReviewArtifactView.as_view(),
        name="api-review-artifact",
    ),
    *router.urls,
]
