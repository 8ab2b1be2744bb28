"""Review pages (/reviews/...)."""

from django.urls import path

from reviews.pages import views

urlpatterns = [
    path("review.html", views.legacy_review_link, name="legacy-review-link"),
    path("reviews/<str:review_id>/", views.review_page, name="review-page"),
    path("reviews/<str:review_id>/tasks/<str:task_key>/", views.review_task, name="review-task"),
    path("reviews/<str:review_id>/evidence/", views.saved_evidence, name="review-evidence"),
    path(
        "reviews/<str:review_id>/artifacts/<path:path>",
        views.artifact_page,
        name="review-artifact-page",
    ),
]
