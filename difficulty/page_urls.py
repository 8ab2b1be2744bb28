"""Difficulty pages under a review (/reviews/<id>/difficulty/...)."""

from django.urls import path

from difficulty.pages import difficulty_run

urlpatterns = [
    path(
        "reviews/<str:review_id>/difficulty/runs/<int:number>/",
        difficulty_run,
        name="review-difficulty-run",
    ),
]
