"""Review API (/api/reviews/..., /api/verifier-issues/...)."""

from django.urls import include, path

urlpatterns: list = [
    path("", include("reviews.publication_api_urls")),
    path("", include("reviews.read_api_urls")),
    path("", include("reviews.defects_api_urls")),
]
