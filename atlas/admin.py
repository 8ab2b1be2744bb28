from django.contrib import admin

from atlas.models import Refresh, RefreshRun, Source


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Source)
class SourceAdmin(ReadOnlyAdmin):
    list_display = ["id", "display_name", "origin", "status", "active", "effective_quality"]
    list_filter = ["origin", "active", "status", "effective_quality"]
    search_fields = ["id", "display_name", "search_text"]
    show_full_result_count = False
    fields = [
        "id", "origin", "active", "payload", "quality", "difficulty", "traces", "review_id",
        "review_date", "review_source_revision", "review_verifier_revision", "effective_quality",
        "review_applicability", "open_issue_count",
    ]  # fmt: skip


@admin.register(Refresh)
class RefreshAdmin(ReadOnlyAdmin):
    list_display = ["origin", "revision", "checked_at", "synced_at", "row_count"]


@admin.register(RefreshRun)
class RefreshRunAdmin(ReadOnlyAdmin):
    list_display = ["started_at", "trigger", "forced", "outcome", "catalog_revision", "rows_written"]
    list_filter = ["outcome", "trigger", "forced"]
    readonly_fields = [f.name for f in RefreshRun._meta.fields]
