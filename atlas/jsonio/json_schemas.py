"""Validation against the project's JSON Schemas (catalog artifact rows, review collections).

One format rule per format, the project's own: ``date-time`` and ``date`` by
``atlas.rules.timestamps`` (a value a schema accepts is a value every page can read), ``uri`` by
RFC 3986.

Two engines, one verdict: ``jsonschema-rs`` (compiled) decides whether an instance is valid — a
pure-Python check of every row cost milliseconds each, minutes for a 100,000-source sync — and only
for an instance it refuses does the reference ``jsonschema`` package find the best error, whose
path names the offending value itself (inside ``anyOf`` alternatives too). Building the Python
checker imports none of jsonschema's optional format libraries, one of which took seconds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from atlas.rules import timestamps


def _date_time(value: object) -> bool:
    return not isinstance(value, str) or timestamps.is_valid(value)


def _date(value: object) -> bool:
    return not isinstance(value, str) or timestamps.is_valid_date(value)


def _uri(value: object) -> bool:
    from rfc3986_validator import validate_rfc3986

    return not isinstance(value, str) or bool(validate_rfc3986(value, rule="URI"))


def _remembered(check: Callable[[object], bool]) -> Callable[[object], bool]:
    """``check`` with its verdict remembered per string. The compiled engine calls back into Python
    for every formatted value, and a review collection repeats the same few timestamps and URIs
    across thousands of evidence items (10,000 of them: ~100 ms of checks otherwise)."""
    verdicts = functools.lru_cache(maxsize=4096)(check)

    def remembered(value: object) -> bool:
        return verdicts(value) if isinstance(value, str) else check(value)

    return remembered


FORMATS = {
    "date-time": _remembered(_date_time),
    "date": _remembered(_date),
    "uri": _remembered(_uri),
}


@functools.cache
def format_checker() -> Any:
    """The reference engine's checker of exactly ``FORMATS``."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name, check in FORMATS.items():
        checker.checks(name)(check)
    return checker


@dataclass(frozen=True)
class SchemaError:
    path: tuple[Any, ...]  # keys and indexes from the instance's root
    message: str


class SchemaValidator:
    """A Draft 2020-12 schema, compiled once."""

    def __init__(self, schema: dict[str, Any]) -> None:
        import jsonschema_rs

        self.schema = schema
        self._fast = jsonschema_rs.Draft202012Validator(
            schema, formats=dict(FORMATS), validate_formats=True
        )

    @functools.cached_property
    def reference(self) -> Any:
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(self.schema)
        return Draft202012Validator(self.schema, format_checker=format_checker())

    def is_valid(self, instance: Any) -> bool:
        try:
            return bool(self._fast.is_valid(instance))
        except UnicodeEncodeError:
            # A string with a lone surrogate has no UTF-8 form to hand the compiled engine (it
            # raised, and a sync answered 500); the reference engine reads any Python string.
            return next(iter(self.reference.iter_errors(instance)), None) is None

    def first_error(self, instance: Any) -> SchemaError | None:
        if self.is_valid(instance):
            return None
        from jsonschema.exceptions import best_match

        error = best_match(self.reference.iter_errors(instance))
        if error is not None:
            return SchemaError(path=tuple(error.absolute_path), message=error.message)
        # The engines disagree (they should not): report what the fast one found.
        fast = next(iter(self._fast.iter_errors(instance)))
        return SchemaError(path=tuple(fast.instance_path), message=fast.message)
