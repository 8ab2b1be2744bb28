"""RFC 3339 timestamps: the one parser and formatter of the project.

Every reader of a date-time — catalog artifact validation, definitions, the display state, review
validation and pages, difficulty publication — goes through here, so a value accepted in one place
reads the same everywhere (a lowercase ``t``/``z`` collection once published but showed "Review date
unknown"). The grammar is RFC 3339 §5.6 as JSON Schema's ``date-time`` format checks it: ``T`` or
``t`` between date and time, ``Z``/``z`` or a ``±HH:MM`` offset, any number of fraction digits
(kept to microseconds). The offset is narrower than RFC 3339's day: PostgreSQL stores a zone
displacement only within ±15:59, and a valid ``+23:59`` once reached it and broke a sync, a refresh
and a publication with a bare ``DataError``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_RFC3339 = re.compile(
    r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})[Tt]"
    r"(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?:\.(?P<fraction>\d+))?"
    r"(?P<offset>[Zz]|(?P<sign>[+-])(?P<off_hour>\d{2}):(?P<off_minute>\d{2}))$"
)
_DATE = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$")
MAX_OFFSET = dt.timedelta(hours=15, minutes=59)  # what PostgreSQL's timestamptz input takes


class InvalidTimestamp(ValueError):
    """Not an RFC 3339 date-time (or date, where one is allowed)."""


def parse(text: Any) -> dt.datetime:
    """An aware datetime from an RFC 3339 date-time string; ``InvalidTimestamp`` otherwise."""
    match = _RFC3339.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidTimestamp(f"not an RFC 3339 date-time: {text!r}")
    part = match.groupdict()
    offset = dt.timedelta(0)
    if part["sign"]:
        hours, minutes = int(part["off_hour"]), int(part["off_minute"])
        if hours > 23 or minutes > 59:
            raise InvalidTimestamp(f"offset out of range: {text!r}")
        offset = dt.timedelta(hours=hours, minutes=minutes)
        if offset > MAX_OFFSET:
            raise InvalidTimestamp(
                f"UTC offset beyond ±15:59, which the database cannot store: {text!r}"
            )
        if part["sign"] == "-":
            offset = -offset
    fraction = (part["fraction"] or "")[:6].ljust(6, "0")
    try:
        moment = dt.datetime(
            int(part["year"]),
            int(part["month"]),
            int(part["day"]),
            int(part["hour"]),
            int(part["minute"]),
            int(part["second"]),
            int(fraction),
            tzinfo=dt.timezone(offset),
        )
    except ValueError as exc:
        raise InvalidTimestamp(f"not a valid date-time: {text!r}") from exc
    if offset and moment.year in (dt.MINYEAR, dt.MAXYEAR):
        # ``9999-12-31T23:59:59-23:59`` names an instant after the last one a datetime holds in
        # UTC: accepted, it crashed every formatting of it (a publication's future check raised
        # OverflowError instead of refusing).
        try:
            moment.astimezone(dt.UTC)
        except OverflowError:
            raise InvalidTimestamp(f"outside the range of dates: {text!r}") from None
    return moment


def parse_or_none(value: Any) -> dt.datetime | None:
    """``parse`` for display paths: None (shown as unknown) instead of an error."""
    if value is None:  # most sources: no review date (a raised and caught error per row before)
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    try:
        return parse(value)
    except InvalidTimestamp:
        return None


def parse_date_or_datetime(value: Any) -> dt.datetime | None:
    """A catalog review date: an RFC 3339 date-time, or a full date read as midnight UTC."""
    if value is None or isinstance(value, dt.datetime):
        return parse_or_none(value)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(), tzinfo=dt.UTC)
    if isinstance(value, str) and (match := _DATE.match(value)):
        try:
            return dt.datetime(
                int(match["year"]), int(match["month"]), int(match["day"]), tzinfo=dt.UTC
            )
        except ValueError:
            return None
    return parse_or_none(value)


def is_valid_date(value: Any) -> bool:
    """A full date, ``2025-03-03``."""
    if not isinstance(value, str) or not _DATE.match(value):
        return False
    return parse_date_or_datetime(value) is not None


def latest_acceptable(*, now: dt.datetime | None = None) -> dt.datetime:
    """The latest judgment or measurement time accepted: now plus the clock-skew allowance
    (``ATLAS_CLOCK_SKEW_SECONDS``, default 300)."""
    from django.conf import settings
    from django.utils import timezone

    skew = int(getattr(settings, "ATLAS_CLOCK_SKEW_SECONDS", 300))
    return (now or timezone.now()) + dt.timedelta(seconds=skew)


def is_valid(value: Any) -> bool:
    try:
        parse(value)
    except InvalidTimestamp:
        return False
    return True


def format_utc(value: dt.datetime, *, seconds: bool = False) -> str:
    """``2025-03-03T12:00:00Z`` (microseconds kept unless ``seconds``)."""
    utc = value.astimezone(dt.UTC)
    if seconds:
        utc = utc.replace(microsecond=0)
    return utc.isoformat().replace("+00:00", "Z")


def compact_stamp(value: dt.datetime) -> str:
    """``20250303T120000Z``, for file names."""
    return value.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def text_of(value: Any) -> str | None:
    """The stored text of a review date: datetimes formatted in UTC, strings kept as written."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return format_utc(value)
    return str(value)
