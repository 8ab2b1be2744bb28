"""The reviews app's vocabularies: one ``TextChoices`` per enum for values and labels (models,
constraints, API choices, filters and templates read these)."""

from __future__ import annotations

from django.db import models


class ReviewKind(models.TextChoices):
    RATING = "rating", "Rating"
    SUPPLEMENTAL = "supplemental", "Supplemental"
    IMPORTED = "imported", "Imported"


class IssueStatus(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"


class PublicationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PUBLISHED = "published", "Published"
    FAILED = "failed", "Failed"


class PublicationType(models.TextChoices):
    REVIEW = "review", "Review collection"
    DIFFICULTY = "difficulty", "Difficulty report"
