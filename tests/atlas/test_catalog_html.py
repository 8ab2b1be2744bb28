"""The catalog's repeated markup escapes every value it prints (atlas.web.catalog_html)."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser

import pytest
from django.utils.safestring import SafeString, mark_safe

from atlas.rules import labels
from atlas.web import catalog_html
from atlas.web.catalog_rows import CatalogRow

HOSTILE = 'x<b>&amp;"y'  # a tag, an entity and a quote: each must arrive as text
ESCAPED = "x&lt;b&gt;&amp;amp;&quot;y"


class _Texts(HTMLParser):
    """Every text node and attribute value, as a browser would read them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.values: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.values.extend(value or "" for _, value in attrs)

    def handle_data(self, data):
        self.values.append(data)


def parsed(html: str) -> _Texts:
    texts = _Texts()
    texts.feed(html)
    texts.close()
    return texts


def hostile_row(**changes) -> CatalogRow:
    chip = labels.QualityChip(label=HOSTILE, css_class=HOSTILE, tooltip=HOSTILE, href=HOSTILE)
    fields = {
        field.name: HOSTILE
        for field in dataclasses.fields(CatalogRow)
        if field.type in ("str", "str | None")
    }
    fields.update(type_known=True, is_benchmark=False, dataset_is_name=False, difficulty=None,
                  chip=chip, example=False)  # fmt: skip
    fields.update(changes)
    return CatalogRow(**fields)


def test_every_value_of_a_row_is_escaped():
    row = hostile_row()
    html = catalog_html.row_html(row)
    assert "<b>" not in html and '&"' not in html
    texts = parsed(html)
    assert "b" not in texts.tags  # no value became markup
    # id, page url ×2, name ×2, origin, dataset url and text, rows, turns, type, family,
    # difficulty fallback, chip class/href/tooltip/label, review title and date, status
    assert html.count(ESCAPED) == 20
    # ... and a browser reads each of them back as the value itself
    assert sum(value.count(HOSTILE) for value in texts.values) == 20


def test_a_row_without_links_or_a_chip_href_escapes_the_same_values():
    chip = labels.QualityChip(label=HOSTILE, css_class=HOSTILE, tooltip=HOSTILE, href=None)
    row = hostile_row(dataset_url=None, chip=chip, review_date=None)
    html = catalog_html.row_html(row)
    assert "<b>" not in html and '&"' not in html
    assert "b" not in parsed(html).tags


def test_the_difficulty_cell_is_printed_as_the_safe_html_it_is():
    cell = SafeString('<span class="bar">50%</span>')
    html = catalog_html.row_html(hostile_row(difficulty=cell))
    assert '<td><span class="bar">50%</span></td>' in html


def test_options_and_headers_escape_every_value():
    options = catalog_html.options_html(options=[(HOSTILE, HOSTILE), ("b", "B")], selected=HOSTILE)
    assert options == (
        f'<option value="{ESCAPED}" selected>{ESCAPED}</option><option value="b">B</option>'
    )
    header = dict.fromkeys(("key", "aria_sort", "title", "url", "label", "icon"), HOSTILE)
    headers = catalog_html.headers_html([header])
    assert "<b>" not in headers and headers.count(ESCAPED) == 7
    assert parsed(headers).tags == ["th", "a", "span"]


def test_selects_and_their_help_escape_every_value():
    options = catalog_html.options_html(options=[("", "All"), ("a", "A")], selected="a")
    hostile = {"name": HOSTILE, "label": HOSTILE, "title": HOSTILE, "help": HOSTILE,
               "options_html": options}  # fmt: skip
    plain = {"name": "type", "label": "Type", "options_html": options}
    selects = catalog_html.selects_html([hostile, plain])
    assert "<b>" not in selects and selects.count(ESCAPED) == 6  # name ×4 (help's id), label, title
    assert parsed(selects).tags == ["div", "label", "select", "option", "option"] * 2
    assert '<select id="filter-type" name="type">' in selects  # no title, no help
    assert selects.count('<option value="a" selected>A</option>') == 2
    helps = catalog_html.filter_help_html([hostile, plain])
    assert helps == f'<p class="filter-help" id="filter-{ESCAPED}-help">{ESCAPED}</p>'
    assert f'aria-describedby="filter-{ESCAPED}-help"' in selects


def test_selects_are_made_once_per_set_and_keep_safe_apart_from_plain():
    """A view's selects are kept per process; the same text safe and unsafe is two sets."""
    options = catalog_html.options_html(options=[("", "All")], selected="")
    plain = {"name": "difficulty", "label": "Difficulty", "help": "<em>lower</em> is harder",
             "options_html": options}  # fmt: skip
    safe = {**plain, "help": mark_safe(plain["help"])}
    first = catalog_html.selects_html([dict(plain)])
    assert catalog_html.selects_html([dict(plain)]) is first
    assert catalog_html.selects_html([safe]) == first  # the help is only named, by its id
    help_html = catalog_html.filter_help_html([plain]), catalog_html.filter_help_html([safe])
    assert "&lt;em&gt;" in help_html[0] and "<em>" in help_html[1]
    titled = catalog_html.selects_html([{**plain, "title": "<b>"}])
    mark = catalog_html.selects_html([{**plain, "title": mark_safe("<b>")}])
    assert 'title="&lt;b&gt;"' in titled and 'title="<b>"' in mark


@pytest.mark.parametrize("benchmark", [True, False])
def test_row_markup_is_what_it_was_before_escaping_by_construction(benchmark):
    """The escaping changed how the markup is built, not the markup (same bytes as html.escape
    gave, for every cell shape)."""
    row = hostile_row(is_benchmark=benchmark, type_known=False, example=True,
                      status="Available", dataset_is_name=True)  # fmt: skip
    html = catalog_html.row_html(row)
    assert html.startswith(f'<tr data-source-id="{ESCAPED}"><th scope="row">')
    assert (catalog_html.BENCHMARK_MARK in html) is benchmark
    assert f'<td><span class="u">{ESCAPED}</span></td>' in html
    assert html.endswith("<td><span>Available</span></td></tr>\n")
    assert "Same as name ↗" in html and catalog_html.EXAMPLE_MARK in html
