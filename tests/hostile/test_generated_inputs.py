"""Generated inputs against the rules this corpus found broken: every source id the rule accepts
links to its own page under any URL parser, every accepted timestamp is one PostgreSQL stores,
and the artifact viewers render any JSON at any nesting."""

from __future__ import annotations

import datetime as dt
import json
import re
from urllib.parse import unquote, urljoin

import pytest
from django.db import connection
from django.urls import resolve, reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas.rules import source_ids, timestamps
from reviews.pages.trace_viewers import RENDER_DEPTH, render_artifact

QUICK = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
# Ids built from the characters that matter to URLs: dots and slashes, mostly.
ID_TEXT = st.text(alphabet="ab.:/ %?#\\", min_size=1, max_size=24).map(lambda t: "Marin:" + t)


@QUICK
@given(ID_TEXT)
def test_an_accepted_id_links_to_its_own_page_under_any_url_parser(source_id):
    if not source_ids.is_valid(source_id):
        return
    path = reverse("source-page", kwargs={"source_id": source_id})
    # A browser resolves dot segments (also %2E) before asking: the path must survive it.
    resolved = urljoin("https://atlas.test/catalog/", path)
    assert resolved == "https://atlas.test" + path
    assert resolve(unquote(path)).kwargs == {"source_id": source_id}


def test_the_generator_reaches_dot_segments():
    assert not source_ids.is_valid("Marin:a/../b") and source_ids.is_valid("Marin:a/..b")


OFFSETS = st.tuples(st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59))


@pytest.mark.django_db
@QUICK
@given(OFFSETS, st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2999, 1, 1)))
def test_an_accepted_timestamp_is_one_the_database_stores(offset, moment):
    sign, hours, minutes = offset
    text = moment.replace(microsecond=0).isoformat() + f"{sign}{hours:02d}:{minutes:02d}"
    accepted = timestamps.is_valid(text)
    assert accepted == ((hours, minutes) <= (15, 59))
    if accepted and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::text::timestamptz", [text])
            assert cursor.fetchone()[0] == timestamps.parse(text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@QUICK
@given(JSON, st.integers(0, 3000), st.sampled_from(["x.json", "a/response.json", "y.log"]))
def test_any_json_at_any_nesting_renders(value, depth, path):
    text = json.dumps(value)
    embedded = json.dumps({"content": "[" * depth + text + "]" * depth})
    for content in (text, embedded, "[" * depth + text + "]" * depth):
        html = render_artifact(path=path, content=content)
        assert container_depth(html) <= RENDER_DEPTH + 6  # the viewer's own wrappers: a few


def container_depth(html: str) -> int:
    """How deep the viewer nests its containers (objects, lists, entry groups, wrappers)."""
    depth = deepest = 0
    for closing, _tag in re.findall(r"<(/?)(dl|ol|div)\b", html):
        depth += -1 if closing else 1
        deepest = max(deepest, depth)
    return deepest


def test_an_id_ending_in_a_newline_is_refused():
    # ``$`` matches before a final newline: the rule matches the whole id.
    assert not source_ids.is_valid("Marin:trailing-newline\n")
    assert source_ids.is_valid("Marin:trailing-newline")
