"""The strict reader: the fast path (no hooks) and the reference reader agree, and every number
that could be unstorable still reaches the per-value check exactly as written."""

from __future__ import annotations

import json

import pytest

from atlas import json_values

AGREE = [
    b'{"a": 1, "a": 2, "b": [0.1, -5, 2.5e-3, true, null], "c": "0000000000000000000000x"}',
    b'{"revision": "00000000000000000000000000000000000012ab", "n": 123456789012345678}',
    '{"name": "Zürich ✓", "nested": {"k": [[], {}]}}'.encode(),
]


@pytest.mark.parametrize("text", AGREE)
def test_the_fast_reader_returns_what_the_reference_reader_returns(text):
    document, suspicious = json_values.loads_checked(text)
    assert document == json.loads(text) and suspicious is False


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (b'{"n": 9223372036854775808}', 9223372036854775808),
        (b'{"n": [-18446744073709551616]}', [-18446744073709551616]),
        (b'{"n": 1e400}', float("inf")),
        (b'{"s": "a\\u0000b"}', "a\x00b"),
    ],
)
def test_numbers_and_escapes_that_may_be_unstorable_are_flagged_and_kept_exact(text, value):
    document, suspicious = json_values.loads_checked(text)
    assert suspicious is True
    assert document[next(iter(document))] == value  # an int beyond 64 bits never became a float


@pytest.mark.parametrize("text", [b'{"a": NaN}', b'{"a": 1', b"\xff", b"\xef\xbb\xbf{}"])
def test_unreadable_documents_are_worded_by_the_reference_reader(text):
    with pytest.raises(json_values.UnreadableJson) as fast:
        json_values.loads_checked(text)
    with pytest.raises(json_values.UnreadableJson) as reference:
        json_values.loads(text)
    assert str(fast.value) == str(reference.value)
