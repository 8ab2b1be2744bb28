"""Where an unstorable value sits is named by its field path."""

from __future__ import annotations

import pytest

from atlas.json_values import unstorable_path


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": [1, {"b": "x\x00"}]}, "a[1].b"),
        ({"a": {"b\x00": 1}}, "a.b\x00"),
        ([0, 2**63], "[1]"),
        ({"n": float("nan")}, "n"),
        ("\ud800", ""),
        ({"ok": [1, "two", None, True, 2.5, -(2**63)]}, None),
    ],
)
def test_the_first_unstorable_value_is_named_by_its_path(value, path):
    assert unstorable_path(value) == path


def test_nesting_beyond_the_bound_is_named_where_it_exceeds_it():
    value: list = []
    deep = value
    for _ in range(5):
        deep.append([])
        deep = deep[0]
    assert unstorable_path(value, max_depth=3) == "[0][0][0][0]"
    assert unstorable_path(value, max_depth=5) is None
