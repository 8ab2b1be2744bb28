"""Difficulty API routes (/api/reviews/<id>/difficulty/). Filled by the difficulty work."""

urlpatterns: list = []
