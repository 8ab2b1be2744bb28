"""Publication API: POST /api/reviews/publications/ and GET /api/reviews/publications/<id>/."""

from django.urls import path

from reviews import api

urlpatterns = [
    path(
        "reviews/publications/", api.PublicationCreateView.as_view(), name="api-review-publications"
    ),
    path(
        "reviews/publications/<uuid:publication_id>/",
        api.PublicationDetailView.as_view(),
        name="api-review-publication",
    ),
]
