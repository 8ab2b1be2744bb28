"""The Atom feed of the catalog history: one entry per catalog revision that changed a source and
one per curator's action (a review or difficulty publication, a defect confirmed or resolved)."""

from __future__ import annotations

from django.contrib.syndication.views import Feed
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from atlas.change_log import CurationEntry, TimelineEntry, timeline

FEED_ENTRIES = 50
LINES_PER_ENTRY = 20


class CatalogChangesFeed(Feed):
    feed_type = Atom1Feed
    title = "RL Data Atlas · catalog changes"
    subtitle = (
        "Sources added, retired, returned or changed by each catalog sync, and what each "
        "curator's publication, defect confirmation and resolution changed."
    )

    def link(self) -> str:
        return reverse("changes")

    def items(self) -> list[TimelineEntry]:
        return timeline(offset=0, size=FEED_ENTRIES, per_run=LINES_PER_ENTRY)

    def item_title(self, item: TimelineEntry) -> str:
        if isinstance(item, CurationEntry):
            line = item.line
            title = f"{line.kind_label}: {line.display_name} ({line.source_id})"
            return f"{title} — {line.summary}" if line.summary else title
        revision = (item.run.catalog_revision or "")[:8]
        return f"Catalog {revision}: {item.summary}"

    def item_description(self, item: TimelineEntry) -> str:
        if isinstance(item, CurationEntry):
            line = item.line
            parts = [f"{field.label}: {field.old} → {field.new}" for field in line.fields]
            if line.actor:
                parts.append(f"By {line.actor}")
            if line.review_id:
                parts.append(f"Review {line.review_id}")
            if line.issue_url:
                parts.append(f"Issue {line.issue_url}")
            if line.note:
                parts.append(line.note)
            return "\n".join(parts)
        lines = []
        for change in item.lines:
            fields = ", ".join(f"{f.name}: {f.old} → {f.new}" for f in change.fields)
            lines.append(
                f"{change.kind_label}: {change.display_name} ({change.source_id})"
                + (f" — {fields}" if fields else "")
            )
        if item.total > len(item.lines):
            lines.append(f"… and {item.total - len(item.lines):,} more")
        return "\n".join(lines)

    def item_link(self, item: TimelineEntry) -> str:
        return item.url

    def item_guid(self, item: TimelineEntry) -> str:
        if isinstance(item, CurationEntry):
            return f"rl-data-atlas:curation:{item.line.change_id}"
        return f"rl-data-atlas:catalog-run:{item.run.id}"

    item_guid_is_permalink = False

    def item_pubdate(self, item: TimelineEntry):
        return item.at

    def item_updateddate(self, item: TimelineEntry):
        return item.at if isinstance(item, CurationEntry) else item.run.finished_at
