"""The one RFC 3339 parser and formatter (atlas.rules.timestamps) and the places that read it."""

from __future__ import annotations

import datetime as dt

import pytest

from atlas.rules import timestamps

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-03-03T12:00:00Z", dt.datetime(2025, 3, 3, 12, tzinfo=UTC)),
        ("2025-03-03t12:00:00z", dt.datetime(2025, 3, 3, 12, tzinfo=UTC)),
        ("2025-03-03T12:00:00.1234567Z", dt.datetime(2025, 3, 3, 12, 0, 0, 123456, tzinfo=UTC)),
        ("2025-03-03T14:30:00+02:30", dt.datetime(2025, 3, 3, 12, tzinfo=UTC)),
        ("2025-03-03T00:00:00-15:59", dt.datetime(2025, 3, 3, 15, 59, tzinfo=UTC)),
        ("2025-03-03T23:59:00+15:59", dt.datetime(2025, 3, 3, 8, 0, tzinfo=UTC)),
    ],
)
def test_parses_rfc3339_date_times(text, expected):
    assert timestamps.parse(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2025-03-03", "2025-03-03 12:00:00Z", "20250303T120000Z", "2025-03-03T12:00Z",
        "2025-03-03T12:00:00", "2025-03-03T12:00:00+24:00", "2025-02-30T12:00:00Z",
        "2025-03-03T12:00:60Z", "", None, 5,
        # Valid RFC 3339, beyond what PostgreSQL stores.
        "2025-03-03T00:00:00-23:59", "2025-03-03T00:00:00+16:00", "2025-03-03T00:00:00-16:00",
    ],
)  # fmt: skip
def test_refuses_what_rfc3339_does_not_allow(text):
    with pytest.raises(timestamps.InvalidTimestamp):
        timestamps.parse(text)
    assert timestamps.parse_or_none(text) is None
    assert not timestamps.is_valid(text)


def test_review_dates_accept_a_full_date_as_midnight_utc():
    assert timestamps.parse_date_or_datetime("2025-03-03") == dt.datetime(2025, 3, 3, tzinfo=UTC)
    assert timestamps.parse_date_or_datetime("2025-13-03") is None
    assert timestamps.parse_date_or_datetime(None) is None


def test_formats_in_utc():
    moment = dt.datetime(2025, 3, 3, 14, 30, 0, 500, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert timestamps.format_utc(moment) == "2025-03-03T12:30:00.000500Z"
    assert timestamps.format_utc(moment, seconds=True) == "2025-03-03T12:30:00Z"
    assert timestamps.compact_stamp(moment) == "20250303T123000Z"
    assert timestamps.text_of("2025-03-03") == "2025-03-03"


def test_the_schemas_date_time_format_is_this_parser():
    """The catalog and review schemas check date-time with this module, so whatever the schema
    accepts, every page can read (a lowercase collection once published undated)."""
    from atlas.jsonio.json_schemas import format_checker

    checker = format_checker()
    for text in ("2025-03-03t12:00:00z", "2025-03-03T12:00:00.5+01:00", "2025-03-03T12:00:00Z"):
        assert checker.conforms(text, "date-time") and timestamps.is_valid(text)
    for text in ("2025-03-03T12:00:00+24:00", "2025-03-03 12:00:00Z", "2025-02-30T00:00:00Z"):
        assert not checker.conforms(text, "date-time") and not timestamps.is_valid(text)
    assert checker.conforms("2025-03-03", "date") and not checker.conforms("2025-3-3", "date")
    assert checker.conforms("https://example.org/a?b", "uri")
    assert not checker.conforms("not a uri", "uri")
