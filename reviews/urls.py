"""Review pages (/reviews/...)."""

from django.urls import path

from reviews import views

urlpatterns = [
    path("reviews/<str:review_id>/", views.review_page, name="review-page"),
    path(
        "reviews/<str:review_id>/artifacts/<path:path>",
        views.artifact_page,
        name="review-artifact-page",
    ),
]
