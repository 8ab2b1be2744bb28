"""The canonical form (``json.dumps`` with sorted keys, no whitespace, ASCII only) and the
revision: built row by row, it is the revision of the whole list."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas.artifact.canonical_form import (
    canonical_json,
    canonical_rows,
    catalog_revision,
    revision_of,
)
from atlas.artifact.catalog_artifact import validate_bytes
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
def test_a_revision_built_row_by_row_is_the_whole_lists(rows):
    parts = canonical_rows(rows)
    assert all(part.isascii() for part in parts)
    assert revision_of(parts) == catalog_revision(rows)


def test_the_canonical_bytes_sort_keys_and_escape_beyond_ascii():
    row = {"b": [1, -0.0, 1e-05, 2**70], "a": 'é 😀 \x7f \u2028 "\\', "c": None}
    assert canonical_rows([row]) == [
        b'{"a":"\\u00e9 \\ud83d\\ude00 \\u007f \\u2028 \\"\\\\","b":[1,-0.0,1e-05,'
        b'1180591620717411303424],"c":null}'
    ]


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


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.one_of(SCALARS, st.floats()),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_the_canonical_encoder_is_json_dumps_with_its_arguments(value):
    """The encoder made once writes what ``json.dumps`` with the canonical arguments writes, byte
    for byte (floats, escapes and key order included): the revision is a persisted identity."""
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert canonical_json(value) == expected
