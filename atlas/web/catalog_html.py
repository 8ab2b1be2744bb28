"""The repeated parts of the catalog page (table rows, column headers, filter options), built in
Python rather than by the template engine.

Why not a template: the engine resolves every ``{{ row.x }}`` through its lookup machinery, about
0.1 ms per row here, which made a 500-row page spend most of its time in the loop, and the
headers and option lists most of the rest (the page's speed goal is set against a bare table of the
same rows); the selects' loop was then a fifth of what the template still rendered. This module is
the one place that markup lives; the templates print its output.

The markup escapes by construction: every piece is a template filled with values, and each
value is escaped unless it is already safe HTML (the marks below, and the difficulty cell the
difficulty app renders) — ``format_html``'s contract. The column headers and filter options use
``format_html_join`` itself; the rows use ``Markup``, the same contract at ``html.escape``'s cost
with each distinct value escaped once per page, one template filled per row. ``format_html``
(``conditional_escape`` through ``keep_lazy``, then ``str.format`` over safe strings) took 5–7×
as long as the rows' f-strings did before; ``Markup`` about 1.4× (``timeit`` over 500 rows: a
500-row page prints some 10,000 values).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeData, SafeString, mark_safe

from atlas.rules.vocabularies import SourceStatus
from atlas.web.catalog_rows import CatalogRow

BENCHMARK_MARK = mark_safe(
    '<span class="mark" title="Designated benchmark">✓'
    '<span class="visually-hidden"> Benchmark</span></span>'
)
EXAMPLE_MARK = mark_safe(' <span class="chip-mark">Example</span>')
NO_MARK = mark_safe("")
UNCLASSIFIED_CLASS = mark_safe(' class="u"')
UNAVAILABLE_CLASS = mark_safe(' class="x"')
SELECTED = mark_safe(" selected")

# A row's template, by its three shapes: the dataset linked or not, the quality chip linked or
# not, a review date (with its title) or none. One template per shape, so a row is filled once.
DATASET = {True: '<td><a href="{}">{}</a></td>', False: "<td>{}</td>"}
CHIP = {
    True: '<td><a class="chip {}" href="{}" title="{}">{}{}</a></td>',
    False: '<td><span class="chip {}">{}{}</span></td>',
}
REVIEW_DATE = {True: '<td title="{}">{}</td>', False: "<td>{}</td>"}
ROWS = {
    (linked, chip_linked, dated): (
        '<tr data-source-id="{}"><th scope="row"><a href="{}">{}</a> '
        '<a class="info" href="{}" aria-label="Details for {}">i</a></th>'
        "<td><span>{}</span></td>" + DATASET[linked] + '<td class="num">{}</td>'  # origin  # rows
        "<td>{}</td>"  # turns
        "<td><span{}>{}</span></td>"  # type
        "<td>{}</td>"  # benchmark
        "<td>{}</td>"  # family
        "<td>{}</td>"  # difficulty
         + CHIP[chip_linked] + REVIEW_DATE[dated] + "<td><span{}>{}</span></td>"  # status
        "</tr>\n"
    )
    for linked in (True, False)
    for chip_linked in (True, False)
    for dated in (True, False)
}


class Markup:
    """Fills templates (``{}`` placeholders) with values, each escaped unless it is safe HTML
    already. One per page: a page repeats few distinct values (origins, types, families, labels),
    so each is escaped once."""

    def __init__(self) -> None:
        self.escaped: dict[object, str] = {}

    def __call__(self, template: str, *values: object) -> SafeString:
        known = self.escaped.get
        return SafeString(
            template.format(
                *[
                    value if isinstance(value, SafeData) else known(value) or self._escape(value)
                    for value in values
                ]
            )
        )

    def _escape(self, value: object) -> str:
        text = self.escaped[value] = escape(str(value))
        return text


def row_html(row: CatalogRow, markup: Markup | None = None) -> SafeString:
    """One ``<tr>``: the name (linked to the source page, with its ⓘ link), then one cell per
    column of ``atlas.web.catalog_view.COLUMNS``."""
    markup = markup or Markup()
    linked, chip, dated = bool(row.dataset_url), row.chip, bool(row.review_date)
    if linked:
        dataset: tuple[object, ...] = (
            row.dataset_url,
            "Same as name ↗" if row.dataset_is_name else str(row.dataset),
        )
    else:
        dataset = ("Same as name" if row.dataset_is_name else row.dataset or "",)
    mark = EXAMPLE_MARK if row.example else NO_MARK
    if chip.href:
        quality: tuple[object, ...] = (chip.css_class, chip.href, chip.tooltip, chip.label, mark)
    else:
        quality = (chip.css_class, chip.label, mark)
    review = (row.review_date_title, row.review_date) if dated else ("",)
    return markup(
        ROWS[linked, bool(chip.href), dated],
        row.id, row.page_url, row.name, row.page_url, row.name,
        row.origin,
        *dataset,
        row.rows_text or row.rows_note,
        row.turns,
        NO_MARK if row.type_known else UNCLASSIFIED_CLASS, row.type_label,
        BENCHMARK_MARK if row.is_benchmark else NO_MARK,
        row.family,
        row.difficulty if row.difficulty else row.difficulty_fallback,
        *quality,
        *review,
        NO_MARK if row.status == SourceStatus.AVAILABLE else UNAVAILABLE_CLASS, row.status,
    )  # fmt: skip


def rows_html(rows: Iterable[CatalogRow]) -> SafeString:
    markup = Markup()
    return SafeString("".join([row_html(row, markup) for row in rows]))  # safe pieces, joined


def options_html(*, options: Iterable[tuple[str, str]], selected: str) -> SafeString:
    """A select's ``<option>`` list, the selected value marked. The same few lists are asked for
    on every page (a filter's choices, the vocabulary's families), so each is made once per
    process: escaping every option of six selects was a tenth of a page's own work."""
    return _options_html(tuple(options), selected)


@functools.lru_cache(maxsize=512)
def _options_html(options: tuple[tuple[str, str], ...], selected: str) -> SafeString:
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        ((value, SELECTED if value == selected else NO_MARK, label) for value, label in options),
    )


# What a select's markup is made of; each value with whether it is safe HTML already, since a
# safe string equals the same text unescaped as a key.
SELECT_PARTS = ("name", "label", "title", "help", "options_html")
SelectParts = tuple[tuple[tuple[Any, bool], ...], ...]


def selects_html(selects: Iterable[Mapping[str, Any]]) -> SafeString:
    """The filters' selects, each with its label, its title and the id of its help when it has
    them, and its options (``options_html``). A view's selects repeat from page to page (the
    same values chosen, the same vocabulary), so each set is made once per process, as their
    options are: escaping the selects' values was about a tenth of a millisecond of every page."""
    parts = tuple(
        tuple((value := select.get(key), isinstance(value, SafeData)) for key in SELECT_PARTS)
        for select in selects
    )
    return _selects_html(parts)


@functools.lru_cache(maxsize=256)
def _selects_html(parts: SelectParts) -> SafeString:
    return format_html_join(
        "",
        '\n  <div class="control">\n    <label for="filter-{}">{}</label>\n'
        '    <select id="filter-{}" name="{}"{}{}>\n      {}\n    </select>\n  </div>',
        (
            (
                name,
                label,
                name,
                name,
                format_html(' title="{}"', title) if title else NO_MARK,
                format_html(' aria-describedby="filter-{}-help"', name) if help_ else NO_MARK,
                options,
            )
            for name, label, title, help_, options in (
                tuple(value for value, _ in select) for select in parts
            )
        ),
    )


def filter_help_html(selects: Iterable[Mapping[str, Any]]) -> SafeString:
    """The help paragraphs of the selects that have one (their ``aria-describedby``)."""
    return format_html_join(
        "",
        '<p class="filter-help" id="filter-{}-help">{}</p>',
        ((select["name"], select["help"]) for select in selects if select.get("help")),
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
