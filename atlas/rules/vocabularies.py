"""The catalog's vocabularies: one ``TextChoices`` per enum, for stored values *and* their labels.

Models, database constraints, filters, API choices, artifact validation, definitions, summaries
and templates all read these, so a value and its label are written once. The reviews app keeps
its own (``reviews.vocabularies``); difficulty's measurement status lives here because the catalog
filters and sorts on it.
"""

from __future__ import annotations

from django.db import models


class Quality(models.TextChoices):
    GOOD = "good", "Good"
    SOME_ISSUES = "some_issues", "Some issues"
    BAD = "bad", "Bad"


class Applicability(models.TextChoices):
    CURRENT = "current", "Current"
    STALE = "stale", "Stale"
    UNKNOWN = "unknown", "Unknown"


class MeasurementStatus(models.TextChoices):
    CURRENT = "current", "Current"
    HISTORICAL = "historical", "Historical"
    # Measured under another protocol than the registered one: one label on the bar, the chip,
    # the filter, the summary text and so the CSV.
    INVALID = "invalid", "Protocol mismatch"


class SourceType(models.TextChoices):
    RLVR = "RLVR", "RLVR"
    ALIGNMENT = "Alignment", "Alignment"
    AGENTIC = "Agentic", "Agentic"


class Turns(models.TextChoices):
    SINGLE = "Single-turn", "Single-turn"
    MULTI = "Multi-turn", "Multi-turn"


class SourceKind(models.TextChoices):
    DATASET = "Dataset", "Dataset"
    GENERATOR = "Generator", "Generator"


class SourceStatus(models.TextChoices):
    AVAILABLE = "Available", "Available"
    EXCLUDED = "Excluded", "Excluded"


class GradingTracking(models.TextChoices):
    LEGACY = "legacy", "Legacy (revision comparison)"
    SOURCE_SPECIFIC = "source-specific", "Source-specific grading binding"


class ChangeKind(models.TextChoices):
    """What happened to one source (the catalog history): what a sync did to it, or what a
    curator did (the curation kinds, recorded by ``atlas.services.changes.record_curation``)."""

    ADDED = "added", "Added"
    RETIRED = "retired", "Retired"
    RETURNED = "returned", "Returned"
    CHANGED = "changed", "Changed"
    REVIEW_PUBLISHED = "review_published", "Review published"
    DEFECT_CONFIRMED = "defect_confirmed", "Defect confirmed"
    DEFECT_RESOLVED = "defect_resolved", "Defect resolved"
    DIFFICULTY_PUBLISHED = "difficulty_published", "Difficulty published"


# What a sync records (a row of a sync run) and what a curator's action records (no run).
SYNC_CHANGE_KINDS = (ChangeKind.ADDED, ChangeKind.RETIRED, ChangeKind.RETURNED, ChangeKind.CHANGED)
CURATION_KINDS = (
    ChangeKind.REVIEW_PUBLISHED,
    ChangeKind.DEFECT_CONFIRMED,
    ChangeKind.DEFECT_RESOLVED,
    ChangeKind.DIFFICULTY_PUBLISHED,
)


# An unclassified source stores "" for its type and interaction.
UNCLASSIFIED = ""
