"""The saved inventory: sources (synced payload + curated columns + display-state cache), refresh
status per origin, and the history of refresh runs."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from atlas.rules.vocabularies import (
    CURATION_KINDS,
    SYNC_CHANGE_KINDS,
    Applicability,
    ChangeKind,
    MeasurementStatus,
    Quality,
)


class SourceQuerySet(models.QuerySet["Source"]):
    def active(self) -> "SourceQuerySet":
        """The sources the catalog lists: every one not retired."""
        return self.filter(active=True)


class Source(models.Model):
    """One source ID ever seen. Never deleted: a source missing from the catalog is retired."""

    id = models.TextField(primary_key=True)
    origin = models.TextField(db_index=True)
    payload = models.JSONField()
    active = models.BooleanField(default=True)

    # Curated columns: written by publication, defect handling and guarded admin edits, never a
    # sync.
    quality = models.TextField(choices=Quality.choices, null=True, blank=True)
    difficulty = models.TextField(null=True, blank=True)
    traces = models.IntegerField(null=True, blank=True)
    review_date = models.DateTimeField(null=True, blank=True)
    review_id = models.TextField(null=True, blank=True)
    review_source_revision = models.TextField(null=True, blank=True)
    review_verifier_revision = models.TextField(null=True, blank=True)

    # Display-state cache, recomputed by atlas.rules.display_state on every write that
    # can change it; the page, API and CSV filter, sort and count on these columns in SQL.
    effective_quality = models.TextField(choices=Quality.choices, null=True, blank=True)
    review_applicability = models.TextField(choices=Applicability.choices, null=True, blank=True)
    review_stale = models.BooleanField(default=False)
    open_issue_count = models.IntegerField(default=0)
    # The open defects as rows list them (contributed by reviews).
    open_issues = models.JSONField(default=list, blank=True)
    difficulty_status = models.TextField(choices=MeasurementStatus.choices, null=True, blank=True)
    difficulty_text = models.TextField(null=True, blank=True)
    difficulty_summary = models.JSONField(null=True, blank=True)
    large_solve_rate = models.FloatField(null=True, blank=True)
    large_solved = models.IntegerField(null=True, blank=True)
    large_verified = models.IntegerField(null=True, blank=True)
    display_review_id = models.TextField(null=True, blank=True)
    display_review_date = models.DateTimeField(null=True, blank=True)
    display_review_date_text = models.TextField(null=True, blank=True)
    display_traces = models.IntegerField(null=True, blank=True)
    grading_tracking = models.TextField(default="legacy")
    review_grading_revision = models.TextField(null=True, blank=True)
    search_text = models.TextField(default="")
    display_name = models.TextField(default="")
    display_name_key = models.TextField(default="", db_index=True)
    task_count = models.BigIntegerField(null=True, blank=True)
    family = models.TextField(default="")
    type = models.TextField(default="")
    turns = models.TextField(default="")
    is_benchmark = models.BooleanField(default=False)
    status = models.TextField(default="Available")
    kind = models.TextField(default="Dataset")
    canonical_source = models.TextField(null=True, blank=True)
    display_review_is_example = models.BooleanField(default=False)
    # The tags as the CSV export writes them (atlas.rules.formula_guard.export_tags).
    export_tags = models.TextField(default="")

    objects = SourceQuerySet.as_manager()

    class Meta:
        db_table = "catalog_sources"
        ordering = ["id"]
        permissions = [("refresh_catalog", "Can synchronise the catalog with its artifact")]
        constraints = [
            models.CheckConstraint(
                condition=Q(quality__isnull=True) | Q(quality__in=Quality.values),
                name="catalog_sources_quality_valid",
            ),
            models.CheckConstraint(
                condition=Q(effective_quality__isnull=True)
                | Q(effective_quality__in=Quality.values),
                name="catalog_sources_effective_quality_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["active", "status"], name="catalog_src_active_status"),
            models.Index(fields=["active", "origin"], name="catalog_src_active_origin"),
            models.Index(fields=["effective_quality"], name="catalog_src_eff_quality"),
            models.Index(fields=["family"], name="catalog_src_family"),
            models.Index(fields=["large_solve_rate"], name="catalog_src_large_rate"),
            models.Index(fields=["task_count"], name="catalog_src_task_count"),
            models.Index(fields=["display_review_date"], name="catalog_src_review_date"),
        ]

    def __str__(self) -> str:
        return self.id


class Refresh(models.Model):
    """Sync status of one origin."""

    origin = models.TextField(primary_key=True)
    revision = models.TextField()
    revised_at = models.TextField(null=True, blank=True)
    checked_at = models.DateTimeField()
    synced_at = models.DateTimeField()
    error = models.TextField(null=True, blank=True)
    row_count = models.IntegerField(default=0)

    class Meta:
        db_table = "catalog_refreshes"
        ordering = ["origin"]

    def __str__(self) -> str:
        return f"{self.origin} @ {self.revision[:8]}"


class RefreshRun(models.Model):
    """One sync attempt that validated or failed (busy attempts write nothing)."""

    class Trigger(models.TextChoices):
        COMMAND = "command"
        TASK = "task"
        SCHEDULE = "schedule"
        PAGE_OPEN = "page_open"
        BUTTON = "button"
        API = "api"

    class Outcome(models.TextChoices):
        SYNCED = "synced"
        UNCHANGED = "unchanged"
        FAILED = "failed"

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    trigger = models.TextField(choices=Trigger.choices)
    forced = models.BooleanField(default=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.TextField(choices=Outcome.choices)
    catalog_revision = models.TextField(null=True, blank=True)
    results = models.JSONField(default=list)
    retired_origins = models.JSONField(default=list)
    rows_written = models.IntegerField(default=0)
    error = models.TextField(null=True, blank=True)

    class Meta:
        db_table = "catalog_refresh_runs"
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome__in=["synced", "unchanged", "failed"]),
                name="catalog_refresh_runs_outcome_valid",
            ),
            models.CheckConstraint(
                condition=~Q(outcome="failed") | Q(error__isnull=False),
                name="catalog_refresh_runs_failed_has_error",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.started_at:%Y-%m-%d %H:%M} {self.trigger} {self.outcome}"


class DisplayVersion(models.Model):
    """The version of what the catalog shows: one row, given a new random value in the
    transaction of every write of display columns (a sync, ``atlas.services.display``); null
    before the first. Reads that depend on those columns alone, such as the counts of a view, are
    kept per version (``atlas.selectors.kept``). Random rather than counted: a database restored
    from a backup, or a rolled-back test, must not give an earlier number to a different state."""

    version = models.BigIntegerField(null=True)

    class Meta:
        db_table = "catalog_display_version"

    def __str__(self) -> str:
        return f"display version {self.version}"


class SourceChange(models.Model):
    """One entry of the catalog history of one source. A sync's entries belong to its run:
    added, retired, returned, or which payload fields changed from what to what (``fields``:
    ``{name: [old, new]}``), written in bulk. A curator's action has no run: a review or
    difficulty publication, a defect confirmation or resolution, with the display fields it
    changed (``fields``), the review and issue it concerns and who did it. Both are written by
    ``atlas.services.changes`` only; ``/changes/``, the source page, ``/api/changes/`` and the feed
    read them."""

    Kind = ChangeKind

    # No index of their own for run and source: the (run, source) constraint and the
    # (source, at) index lead with them and serve every lookup by either. Their own three
    # indexes (source's with a LIKE twin) were a third of a first sync's history write.
    run = models.ForeignKey(
        RefreshRun,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="changes",
        db_index=False,
    )
    # The reference is checked per statement by triggers (migration 0009), not by a row-level
    # foreign key: that one checked and locked each of a 100,000-source first sync's rows at
    # commit, a tenth of the sync. The triggers also refuse deleting a source with a history.
    source = models.ForeignKey(
        Source,
        on_delete=models.PROTECT,
        related_name="changes",
        db_constraint=False,
        db_index=False,
    )
    kind = models.TextField(choices=ChangeKind.choices)
    # When it happened: the run's start for a sync's entries.
    at = models.DateTimeField()
    origin = models.TextField()
    display_name = models.TextField(default="")
    fields = models.JSONField(default=dict, blank=True)
    # A curator's action: who (the username, "" when unknown, e.g. a command), the review
    # collection and the GitHub issue it concerns, and a sentence of context.
    # Database defaults: the sync's COPY writes only the columns of a sync's entry.
    actor = models.TextField(db_default="", blank=True)
    review_id = models.TextField(null=True, blank=True)
    issue_url = models.TextField(null=True, blank=True)
    note = models.TextField(db_default="", blank=True)

    class Meta:
        db_table = "catalog_source_changes"
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=ChangeKind.values), name="catalog_source_changes_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(run__isnull=False, kind__in=SYNC_CHANGE_KINDS)
                | Q(run__isnull=True, kind__in=CURATION_KINDS),
                name="catalog_source_changes_run_iff_sync",
            ),
            models.UniqueConstraint(
                fields=["run", "source"], name="catalog_source_changes_one_per_run"
            ),
        ]
        indexes = [
            models.Index(fields=["source", "at"], name="catalog_changes_source_at"),
            models.Index(
                fields=["at"], name="catalog_changes_curation_at", condition=Q(run__isnull=True)
            ),
        ]

    def __str__(self) -> str:
        if self.run_id is None:
            return f"{self.source_id} {self.kind} ({self.at:%Y-%m-%d %H:%M})"
        return f"{self.source_id} {self.kind} (run {self.run_id})"
