"""Review pages (/reviews/...)."""

from django.urls import path

from reviews.pages import views

urlpatterns = [
    path("review.html", views.legacy_review_link, name="legacy-review-link"),
    path("reviews/<str:review_id>/", views.review_page, name="review-page"),
    path(
        "reviews/<str:review_id>/artifacts/<path:path>",
        views.artifact_page,
        name="review-artifact-page",
    ),
]
