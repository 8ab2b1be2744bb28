"""The fast canonical form (orjson, escaped afterwards) is byte for byte the definition's
(``json.dumps`` with sorted keys, no whitespace, ASCII only), and the revision built from it is
the artifact's revision."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas.canonical_form import canonical_json, canonical_rows, catalog_revision, revision_of
from atlas.catalog_artifact import validate_bytes
from tests.conftest import make_row

# Every code point but lone surrogates (which a parsed artifact can hold too: see below), with
# the ones the escaping handles on purpose made likely.
TRICKY = st.sampled_from(["\x00", "\x1f", "\x7f", "\x80", "·", "\u2028", "\ufeff", "😀", '"', "\\"])
TEXT = st.text(alphabet=st.one_of(st.characters(exclude_categories=["Cs"]), TRICKY), max_size=30)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=20,
)
ROWS = st.lists(st.dictionaries(TEXT, VALUES, max_size=6), max_size=4)


@settings(max_examples=300, deadline=None)
@given(ROWS)
def test_fast_rows_are_the_definitions_bytes(rows):
    expected = [canonical_json(row).encode("ascii") for row in rows]
    assert canonical_rows(rows, has_floats=False) == expected
    assert revision_of(expected) == catalog_revision(rows)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(TEXT, st.one_of(VALUES, st.floats(allow_nan=False)), max_size=5)))
def test_documents_with_floats_take_the_definition(rows):
    assert canonical_rows(rows, has_floats=True) == [
        canonical_json(row).encode("ascii") for row in rows
    ]


def test_rows_orjson_refuses_take_the_definition():
    rows = [{"big": 2**70, "lone": "\ud800", "name": "ok"}]
    assert canonical_rows(rows, has_floats=False) == [canonical_json(rows[0]).encode("ascii")]


def test_an_artifact_with_floats_non_ascii_and_del_keeps_its_revision():
    """The revision a generator wrote (the definition) is the one the sync computes: a float that
    orjson would write differently (1e-05), characters beyond ASCII and DEL."""
    rows = [
        make_row(
            "MarinSkyRL:a",
            display_name="naïve · 数学 😀 \x7f",
            grading_scope={"task_assets": {"blend": {"x": 1e-05}}},
        )
    ]
    document = {"schema_version": 1, "revision": catalog_revision(rows), "sources": rows}
    validated = validate_bytes(json.dumps(document).encode("utf-8"))
    assert validated.revision == catalog_revision(rows)
    assert validated.snapshots[0].rows[0]["grading_scope"]["task_assets"]["blend"]["x"] == 1e-05
