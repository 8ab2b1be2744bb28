from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from atlas.contributions import CuratedEditRefused, check_curated_edit
from atlas.models import Refresh, RefreshRun, Source
from atlas.services.curation import edit_curated_quality
from atlas.vocabularies import Quality


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
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


# Plain field names, kept outside the class: there ``fields`` has ModelAdmin's type, whose items
# may also be field groups, so readonly_fields could not be derived from it.
SOURCE_FIELDS = [
    "id", "origin", "active", "payload", "quality", "difficulty", "traces", "review_id",
    "review_date", "review_source_revision", "review_verifier_revision", "effective_quality",
    "review_applicability", "open_issue_count",
]  # fmt: skip


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    form = CuratedQualityForm
    list_display = ["id", "display_name", "origin", "status", "active", "effective_quality"]
    list_filter = ["origin", "active", "status", "effective_quality"]
    search_fields = ["id", "display_name", "search_text"]
    show_full_result_count = False
    fields = list(SOURCE_FIELDS)
    readonly_fields = [name for name in SOURCE_FIELDS if name != "quality"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

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
