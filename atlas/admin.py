"""Admin of the catalog: sources (readable lists with their display state, filters and links;
only the curated quality is editable, through its guarded service), refresh status and runs, and
the catalog history."""

import json

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.html import format_html

from atlas.contributions import CuratedEditRefused, check_curated_edit
from atlas.models import Refresh, RefreshRun, Source, SourceChange
from atlas.permissions import is_any_curator
from atlas.rules import labels
from atlas.rules.vocabularies import Quality
from atlas.services.curation import edit_curated_quality

# The admin's lists are wide (long source IDs, states, links): the index lists every model, so
# the side navigation is not needed on every page and leaves the lists readable at 1440 px.
admin.site.enable_nav_sidebar = False


class ReadOnlyAdmin(admin.ModelAdmin):
    """A list and change pages no one may add, change or delete through (every app's admin of
    what its services write)."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class CuratedQualityForm(forms.ModelForm):
    """Only the curated quality is editable here, and only within the rules of the upper apps.
    Difficulty is not: it is written by ``publish_difficulty`` from a report the Atlas can show,
    and a free-text value would show nowhere."""

    quality = forms.ChoiceField(choices=[("", "— none —"), *Quality.choices], required=False)

    class Meta:
        model = Source
        fields = ["quality"]

    def clean(self):
        cleaned = super().clean()
        try:
            check_curated_edit(source_id=self.instance.pk, quality=cleaned.get("quality") or None)
        except CuratedEditRefused as exc:
            raise ValidationError(str(exc)) from None
        return cleaned


class OpenDefectFilter(admin.SimpleListFilter):
    title = "open verifier defect"
    parameter_name = "open_defect"

    def lookups(self, request, model_admin):
        return (("yes", "Open defect"), ("no", "No open defect"))

    def queryset(self, request, queryset: QuerySet[Source]) -> QuerySet[Source]:
        if self.value() == "yes":
            return queryset.filter(open_issue_count__gt=0)
        if self.value() == "no":
            return queryset.filter(open_issue_count=0)
        return queryset


class TypeFilter(admin.SimpleListFilter):
    title = "type"
    parameter_name = "type"

    def lookups(self, request, model_admin):
        return (("RLVR", "RLVR"), ("Agentic", "Agentic"), ("Alignment", "Alignment"),
                ("unknown", labels.UNCLASSIFIED))  # fmt: skip

    def queryset(self, request, queryset: QuerySet[Source]) -> QuerySet[Source]:
        if self.value():
            return queryset.filter(type="" if self.value() == "unknown" else self.value())
        return queryset


class FamilyFilter(admin.SimpleListFilter):
    title = "family"
    parameter_name = "family"

    def lookups(self, request, model_admin):
        families = Source.objects.order_by("family").values_list("family", flat=True).distinct()
        return [(family or "unknown", family or "Unknown / unclassified") for family in families]

    def queryset(self, request, queryset: QuerySet[Source]) -> QuerySet[Source]:
        if self.value():
            return queryset.filter(family="" if self.value() == "unknown" else self.value())
        return queryset


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    form = CuratedQualityForm
    # The origin is the prefix of every ID (and a filter), so it has no column of its own.
    list_display = [
        "source_id", "display_name", "quality_state", "difficulty_state", "open_defects",
        "review_date_column", "pages",
    ]  # fmt: skip
    list_display_links = ["source_id"]
    list_filter = [
        OpenDefectFilter, "review_applicability", TypeFilter, FamilyFilter, "origin",
        "effective_quality", "difficulty_status", "status", "active",
    ]  # fmt: skip
    search_fields = ["id", "display_name", "search_text"]
    ordering = ["display_name_key", "id"]
    show_full_result_count = False
    list_per_page = 100
    fields = [
        "id", "origin", "active", "pages", "quality", "difficulty", "traces", "review_id",
        "review_date", "review_source_revision", "review_verifier_revision", "effective_quality",
        "review_applicability", "open_issue_count", "difficulty_text", "pretty_payload",
    ]  # fmt: skip
    readonly_fields = [name for name in fields if isinstance(name, str) and name != "quality"]

    def get_queryset(self, request):
        # The list shows display columns only; payloads and summaries load on a change page.
        queryset = super().get_queryset(request)
        if request.resolver_match and request.resolver_match.url_name.endswith("changelist"):
            queryset = queryset.defer("payload", "difficulty_summary", "open_issues")
        return queryset

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return is_any_curator(request.user) or super().has_view_permission(request, obj)

    @admin.display(description="Source ID", ordering="id")
    def source_id(self, source: Source) -> str:
        return format_html('<span class="atlas-source-id">{}</span>', source.id)

    @admin.display(description="Quality", ordering="effective_quality")
    def quality_state(self, source: Source) -> str:
        chip = labels.quality_chip(
            effective_quality=source.effective_quality,
            review_stale=source.review_stale,
            review_id=source.display_review_id,
            open_issue_count=source.open_issue_count,
            review_url=None,
            example=source.display_review_is_example,
        )
        suffix = " · example" if chip.example else ""
        return format_html('<span class="chip {}">{}{}</span>', chip.css_class, chip.label, suffix)

    @admin.display(description="Difficulty", ordering="difficulty_status")
    def difficulty_state(self, source: Source) -> str:
        if source.difficulty_status:
            return labels.MEASUREMENT_LABELS.get(source.difficulty_status, source.difficulty_status)
        return labels.difficulty_fallback_text(
            open_issue_count=source.open_issue_count, review_stale=source.review_stale
        )

    @admin.display(description="Open defects", ordering="open_issue_count")
    def open_defects(self, source: Source) -> int:
        return source.open_issue_count

    @admin.display(description="Review date", ordering="display_review_date")
    def review_date_column(self, source: Source) -> str:
        return labels.review_date_label(source.display_review_date) or "—"

    @admin.display(description="Pages")
    def pages(self, source: Source) -> str:
        source_url = reverse("source-page", kwargs={"source_id": source.id})
        if not source.display_review_id:
            return format_html('<a href="{}">Source page</a>', source_url)
        return format_html(
            '<a href="{}">Source page</a> · <a href="{}">Review page</a>',
            source_url,
            labels.review_page_url(review_id=source.display_review_id),
        )

    @admin.display(description="Payload (as synced)")
    def pretty_payload(self, source: Source) -> str:
        text = json.dumps(source.payload, indent=2, sort_keys=True, ensure_ascii=False)
        return format_html('<pre class="atlas-payload">{}</pre>', text)

    def save_model(self, request, obj, form, change):
        edit_curated_quality(source_id=obj.pk, quality=form.cleaned_data.get("quality") or None)


@admin.register(Refresh)
class RefreshAdmin(ReadOnlyAdmin):
    list_display = ["origin", "revision", "checked_at", "synced_at", "row_count"]


@admin.register(RefreshRun)
class RefreshRunAdmin(ReadOnlyAdmin):
    list_display = [
        "started_at",
        "trigger",
        "forced",
        "outcome",
        "catalog_revision",
        "rows_written",
    ]
    list_filter = ["outcome", "trigger", "forced"]
    readonly_fields = [f.name for f in RefreshRun._meta.fields]


@admin.register(SourceChange)
class SourceChangeAdmin(ReadOnlyAdmin):
    list_display = ["at", "run", "source", "kind", "actor", "origin", "display_name"]
    list_filter = ["kind", "origin"]
    search_fields = ["source__id", "display_name", "actor", "review_id", "issue_url"]
    raw_id_fields = ["run", "source"]
    readonly_fields = [
        "at", "run", "source", "kind", "origin", "display_name", "fields", "actor", "review_id",
        "issue_url", "note",
    ]  # fmt: skip

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("run").defer("source__payload")
