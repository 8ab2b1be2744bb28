"""The JSON Schema format checker of the project's schemas (catalog artifact, review collections).

Only the formats the schemas use are checked, each by the project's own rule: ``date-time`` and
``date`` by ``atlas.timestamps`` (so a value the schema accepts is a value every page can read),
``uri`` by RFC 3986. Building it does not pull in jsonschema's optional format libraries, one of
which took seconds to import in every process that validated anything.
"""

from __future__ import annotations

import functools
from typing import Any

from atlas import timestamps


@functools.cache
def format_checker() -> Any:
    from jsonschema import FormatChecker
    from rfc3986_validator import validate_rfc3986

    checker = FormatChecker(formats=())

    @checker.checks("date-time")
    def date_time(value: object) -> bool:
        return not isinstance(value, str) or timestamps.is_valid(value)

    @checker.checks("date")
    def date(value: object) -> bool:
        return not isinstance(value, str) or timestamps.is_valid_date(value)

    @checker.checks("uri")
    def uri(value: object) -> bool:
        return not isinstance(value, str) or bool(validate_rfc3986(value, rule="URI"))

    return checker
