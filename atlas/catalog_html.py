"""The repeated parts of the catalog page (table rows, column headers, filter options), built in
Python rather than by the template engine.

Why not a template: the engine resolves every ``{{ row.x }}`` through its lookup machinery, about
0.1 ms per row here, which made a 500-row page spend most of its time in the loop, and the
headers and option lists most of the rest (issue 12 sets the page against a bare table of the
same rows). This module is the one place that markup lives; the templates print its output.

Every value is escaped with ``html.escape`` (what Django's ``escape`` does), except the difficulty
cell, which the difficulty app renders as safe HTML.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape

from django.utils.safestring import SafeString, mark_safe

from atlas.catalog_rows import CatalogRow
from atlas.vocabularies import SourceStatus

BENCHMARK_MARK = (
    '<span class="mark" title="Designated benchmark">✓'
    '<span class="visually-hidden"> Benchmark</span></span>'
)
EXAMPLE_MARK = ' <span class="chip-mark">Example</span>'
UNCLASSIFIED_CLASS = ' class="u"'
UNAVAILABLE_CLASS = ' class="x"'


def _dataset_cell(row: CatalogRow) -> str:
    if row.dataset_url:
        text = "Same as name ↗" if row.dataset_is_name else escape(str(row.dataset))
        return f'<a href="{escape(row.dataset_url)}">{text}</a>'
    if row.dataset_is_name:
        return "Same as name"
    return escape(row.dataset or "")


def _quality_cell(row: CatalogRow) -> str:
    chip = row.chip
    label = escape(chip.label) + (EXAMPLE_MARK if row.example else "")
    css = escape(chip.css_class)
    if chip.href:
        return (
            f'<a class="chip {css}" href="{escape(chip.href)}" '
            f'title="{escape(chip.tooltip)}">{label}</a>'
        )
    return f'<span class="chip {css}">{label}</span>'


def row_html(row: CatalogRow) -> str:
    """One ``<tr>``: the name (linked to the source page, with its ⓘ link), then one cell per
    column of ``atlas.catalog_view.COLUMNS``."""
    name = escape(row.name)
    page_url = escape(row.page_url)
    review_title = f' title="{escape(row.review_date_title)}"' if row.review_date else ""
    cells = (
        f"<td><span>{escape(row.origin)}</span></td>",
        f"<td>{_dataset_cell(row)}</td>",
        f'<td class="num">{escape(row.rows_text or row.rows_note)}</td>',
        f"<td>{escape(row.turns)}</td>",
        f"<td><span{'' if row.type_known else UNCLASSIFIED_CLASS}>"
        f"{escape(row.type_label)}</span></td>",
        f"<td>{BENCHMARK_MARK if row.is_benchmark else ''}</td>",
        f"<td>{escape(row.family)}</td>",
        f"<td>{row.difficulty if row.difficulty else escape(row.difficulty_fallback)}</td>",
        f"<td>{_quality_cell(row)}</td>",
        f"<td{review_title}>{escape(row.review_date or '')}</td>",
        f"<td><span{'' if row.status == SourceStatus.AVAILABLE else UNAVAILABLE_CLASS}>"
        f"{escape(row.status)}</span></td>",
    )
    return (
        f'<tr data-source-id="{escape(row.id)}"><th scope="row"><a href="{page_url}">{name}</a> '
        f'<a class="info" href="{page_url}" aria-label="Details for {name}">i</a></th>'
        + "".join(cells)
        + "</tr>\n"
    )


def rows_html(rows: Iterable[CatalogRow]) -> SafeString:
    # Safe: row_html escapes every value it prints.
    return mark_safe("".join(row_html(row) for row in rows))


def options_html(*, options: Iterable[tuple[str, str]], selected: str) -> SafeString:
    """A select's ``<option>`` list, the selected value marked."""
    parts = []
    for value, label in options:
        mark = " selected" if value == selected else ""
        parts.append(f'<option value="{escape(str(value))}"{mark}>{escape(str(label))}</option>')
    # Safe: every value and label escaped.
    return mark_safe("".join(parts))


def headers_html(headers: Iterable[Mapping[str, str]]) -> SafeString:
    """The table's column headers: sort links with their state for assistive technology."""
    parts = []
    for header in headers:
        key = escape(header["key"])
        title = f' title="{escape(header["title"])}"' if header["title"] else ""
        parts.append(
            f'<th scope="col" class="col-{key}" aria-sort="{escape(header["aria_sort"])}"{title}>'
            f'<a class="sort-link" href="{escape(header["url"])}" data-sort="{key}">'
            f"{escape(header['label'])} "
            f'<span class="sort-icon" aria-hidden="true">{escape(header["icon"])}</span></a></th>'
        )
    # Safe: every value escaped.
    return mark_safe("".join(parts))
