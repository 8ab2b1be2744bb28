"""Where an unstorable value sits is named by its field path."""

from __future__ import annotations

import json

import pytest

from atlas.jsonio.json_values import deeper_than, loads_storable, refusal_at, unstorable_path


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": [1, {"b": "x\x00"}]}, "a[1].b"),
        ({"a": {"b\x00": 1}}, "a.b\\x00"),  # a key a message cannot print is shown escaped
        ({"a": {"b\ud800": 1}}, "a.b\\ud800"),
        ({"é": {"line\nbreak": "\x00"}}, "é.line\\nbreak"),
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


@pytest.mark.parametrize(
    "text",
    [
        rb'{"a": [1, {"b": "x\u0000"}]}',
        rb'{"a": "\ud800"}',
        b'{"big": [0, 99999999999999999999]}',
        b'{"ok": {"deep": [[[["x"]]]], "z": 1}}',
        b'{"ok": [{"flat": "yes"}, [[[]]], [[[1, 2]]]]}',
        b'[{"a": 1}, 2]',
    ],
)
def test_a_document_read_for_storing_is_checked_as_thoroughly(text):
    # The per-value scan is skipped for text that cannot hold an unstorable value; the verdict and
    # the path named are the same as the full scan's.
    document = json.loads(text)
    for max_depth in (2, 3, 4, 32):
        assert loads_storable(text, max_depth=max_depth) == (
            document,
            unstorable_path(document, max_depth=max_depth),
        )


def test_depth_is_named_at_the_first_value_beyond_it_in_document_order():
    value = {"a": [["x"]], "b": [[["y"]]], "c": [[["z"]]]}
    assert deeper_than(value, max_depth=2) == "a[0][0]"
    assert deeper_than({"a": [[]], "b": {"c": {"d": 1}}}, max_depth=2) == "b.c.d"
    assert deeper_than({"a": [[]]}, max_depth=2) is None


@pytest.mark.parametrize(
    ("value", "path", "reason"),
    [
        ({"a": [[["x"]]]}, "a[0][0]", "nested deeper than 2 levels"),
        ({"a": "x\x00"}, "a", "text holding a NUL character or a lone surrogate"),
        ({"k\ud800": 1}, "k\\ud800", "a key holding a NUL character or a lone surrogate"),
        ([1, 2**64], "[1]", "an integer beyond 64 bits"),
        ({"f": [float("inf")]}, "f[0]", "a number that is not finite"),
    ],
)
def test_a_refused_value_is_named_with_why(value, path, reason):
    found = unstorable_path(value, max_depth=2)
    assert found == path and found.reason == reason
    assert refusal_at(found) == f"{path}: {reason}"
    if "nested" in reason:
        assert deeper_than(value, max_depth=2).reason == reason


def test_printable_escapes_what_no_page_can_hold_and_cuts_long_text():
    """The one message printer (ids in refusals too): printable text as it is, the rest escaped,
    bounded when asked."""
    from atlas.jsonio.json_values import printable

    assert printable("Task Trove:café 😀") == "Task Trove:café 😀"
    assert printable("a\nb\x00\ud800") == "a\\nb\\x00\\ud800"
    assert printable("x" * 301, limit=300) == "x" * 300 + "…"
    assert printable("\n" * 200, limit=300) == "\\n" * 150 + "…"
