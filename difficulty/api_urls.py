"""Difficulty API routes (/api/reviews/<id>/difficulty/)."""

from django.urls import path

from difficulty.api import DifficultyReportView

urlpatterns: list = [
    path(
        "reviews/<str:review_id>/difficulty/",
        DifficultyReportView.as_view(),
        name="review-difficulty",
    ),
]
