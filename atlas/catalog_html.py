"""The repeated parts of the catalog page (table rows, column headers, filter options), built in
Python rather than by the template engine.

Why not a template: the engine resolves every ``{{ row.x }}`` through its lookup machinery, about
0.1 ms per row here, which made a 500-row page spend most of its time in the loop, and the
headers and option lists most of the rest (issue 12 sets the page against a bare table of the
same rows). This module is the one place that markup lives; the templates print its output.

The markup escapes by construction: every piece is a template filled with values, and each
value is escaped unless it is already safe HTML (the marks below, and the difficulty cell the
difficulty app renders) — ``format_html``'s contract. The column headers and filter options use
``format_html_join`` itself; the rows use ``markup()``, the same contract at ``html.escape``'s
cost: ``format_html`` (``conditional_escape`` through ``keep_lazy``, then ``str.format`` over safe
strings) took 5–7× as long as the rows' markup did before (measured with ``timeit`` over 500 rows:
a 500-row page prints some 10,000 values).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeData, SafeString, mark_safe

from atlas.catalog_rows import CatalogRow
from atlas.vocabularies import SourceStatus

BENCHMARK_MARK = mark_safe(
    '<span class="mark" title="Designated benchmark">✓'
    '<span class="visually-hidden"> Benchmark</span></span>'
)
EXAMPLE_MARK = mark_safe(' <span class="chip-mark">Example</span>')
NO_MARK = mark_safe("")
UNCLASSIFIED_CLASS = mark_safe(' class="u"')
UNAVAILABLE_CLASS = mark_safe(' class="x"')
SELECTED = mark_safe(" selected")

ROW = (
    '<tr data-source-id="{}"><th scope="row"><a href="{}">{}</a> '
    '<a class="info" href="{}" aria-label="Details for {}">i</a></th>'
    "<td><span>{}</span></td>"  # origin
    "<td>{}</td>"  # dataset
    '<td class="num">{}</td>'  # rows
    "<td>{}</td>"  # turns
    "<td><span{}>{}</span></td>"  # type
    "<td>{}</td>"  # benchmark
    "<td>{}</td>"  # family
    "<td>{}</td>"  # difficulty
    "<td>{}</td>"  # quality
    "<td{}>{}</td>"  # review date
    "<td><span{}>{}</span></td>"  # status
    "</tr>\n"
)


def markup(template: str, *values: object) -> SafeString:
    """``template`` (``{}`` placeholders) filled with ``values``, each escaped unless it is safe
    HTML already."""
    return SafeString(
        template.format(
            *[value if isinstance(value, SafeData) else escape(str(value)) for value in values]
        )
    )


def _dataset_cell(row: CatalogRow) -> SafeString | str:
    if row.dataset_url:
        text = "Same as name ↗" if row.dataset_is_name else str(row.dataset)
        return markup('<a href="{}">{}</a>', row.dataset_url, text)
    if row.dataset_is_name:
        return "Same as name"
    return row.dataset or ""


def _quality_cell(row: CatalogRow) -> SafeString:
    chip = row.chip
    mark = EXAMPLE_MARK if row.example else NO_MARK
    if chip.href:
        return markup(
            '<a class="chip {}" href="{}" title="{}">{}{}</a>',
            chip.css_class, chip.href, chip.tooltip, chip.label, mark,
        )  # fmt: skip
    return markup('<span class="chip {}">{}{}</span>', chip.css_class, chip.label, mark)


def row_html(row: CatalogRow) -> SafeString:
    """One ``<tr>``: the name (linked to the source page, with its ⓘ link), then one cell per
    column of ``atlas.catalog_view.COLUMNS``."""
    review_title = markup(' title="{}"', row.review_date_title) if row.review_date else NO_MARK
    return markup(
        ROW,
        row.id, row.page_url, row.name, row.page_url, row.name,
        row.origin,
        _dataset_cell(row),
        row.rows_text or row.rows_note,
        row.turns,
        NO_MARK if row.type_known else UNCLASSIFIED_CLASS, row.type_label,
        BENCHMARK_MARK if row.is_benchmark else NO_MARK,
        row.family,
        row.difficulty if row.difficulty else row.difficulty_fallback,
        _quality_cell(row),
        review_title, row.review_date or "",
        NO_MARK if row.status == SourceStatus.AVAILABLE else UNAVAILABLE_CLASS, row.status,
    )  # fmt: skip


def rows_html(rows: Iterable[CatalogRow]) -> SafeString:
    return SafeString("".join([row_html(row) for row in rows]))  # safe pieces, joined


def options_html(*, options: Iterable[tuple[str, str]], selected: str) -> SafeString:
    """A select's ``<option>`` list, the selected value marked."""
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        ((value, SELECTED if value == selected else NO_MARK, label) for value, label in options),
    )


def headers_html(headers: Iterable[Mapping[str, str]]) -> SafeString:
    """The table's column headers: sort links with their state for assistive technology."""
    return format_html_join(
        "",
        '<th scope="col" class="col-{}" aria-sort="{}"{}><a class="sort-link" href="{}" '
        'data-sort="{}">{} <span class="sort-icon" aria-hidden="true">{}</span></a></th>',
        (
            (
                header["key"],
                header["aria_sort"],
                format_html(' title="{}"', header["title"]) if header["title"] else NO_MARK,
                header["url"],
                header["key"],
                header["label"],
                header["icon"],
            )
            for header in headers
        ),
    )
