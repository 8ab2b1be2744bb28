"""Public review reads: GET /api/reviews/<id>/ and /api/reviews/<id>/artifacts/<path>.

reviews.api_urls includes the publication API first, so /api/reviews/publications/ never reaches
the review detail below."""

from django.urls import path

from reviews import read_api

urlpatterns = [
    path("reviews/<str:review_id>/", read_api.ReviewDetailView.as_view(), name="api-review"),
    path(
        "reviews/<str:review_id>/artifacts/<path:path>",
        read_api.ReviewArtifactView.as_view(),
        name="api-review-artifact",
    ),
]
