"""The Atom feed of the catalog history: one entry per catalog revision that changed a source."""

from __future__ import annotations

from django.contrib.syndication.views import Feed
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from atlas.change_log import RevisionEntry, changed_runs, revision_entries

FEED_ENTRIES = 50
LINES_PER_ENTRY = 20


class CatalogChangesFeed(Feed):
    feed_type = Atom1Feed
    title = "RL Data Atlas · catalog changes"
    subtitle = "Sources added, retired, returned or changed by each catalog sync."

    def link(self) -> str:
        return reverse("changes")

    def items(self) -> list[RevisionEntry]:
        runs = list(changed_runs()[:FEED_ENTRIES])
        return revision_entries(runs=runs, per_run=LINES_PER_ENTRY)

    def item_title(self, item: RevisionEntry) -> str:
        revision = (item.run.catalog_revision or "")[:8]
        return f"Catalog {revision}: {item.summary}"

    def item_description(self, item: RevisionEntry) -> str:
        lines = []
        for line in item.lines:
            fields = ", ".join(f"{f.name}: {f.old} → {f.new}" for f in line.fields)
            lines.append(
                f"{line.kind_label}: {line.display_name} ({line.source_id})"
                + (f" — {fields}" if fields else "")
            )
        if item.total > len(item.lines):
            lines.append(f"… and {item.total - len(item.lines):,} more")
        return "\n".join(lines)

    def item_link(self, item: RevisionEntry) -> str:
        return item.url

    def item_guid(self, item: RevisionEntry) -> str:
        return f"rl-data-atlas:catalog-run:{item.run.id}"

    item_guid_is_permalink = False

    def item_pubdate(self, item: RevisionEntry):
        return item.run.started_at

    def item_updateddate(self, item: RevisionEntry):
        return item.run.finished_at
