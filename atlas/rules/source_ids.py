"""What a source id may be: one pattern for definitions, the catalog artifact, the sync and routes.

Ids name a population across the whole system (``Origin:name`` with ``/`` for nested components,
spaces allowed as in "Task Trove:…"). A control character, a leading or trailing space or slash, an
empty path segment, or a ``.``/``..`` segment (which every URL parser resolves, so the source's link
would open another page) would make a source unreachable by URL or invisible in a list, so they are
refused wherever an id enters.
"""

from __future__ import annotations

import re
from typing import Any

MAX_LENGTH = 255
# First a letter or digit, last a word character or closing punctuation; inside, letters, digits
# (any script), spaces and a few separators — nothing URLs, CSV or terminals treat specially, no
# control character. ``is_valid`` also refuses "//" (an empty path segment) and dot segments; the
# artifact schema repeats this pattern.
PATTERN = r"^[^\W_](?:[\w .:/+@()\[\]=,-]{0,253}[\w.)\]-])?$"
_COMPILED = re.compile(PATTERN)


_DOT_SEGMENTS = frozenset({".", ".."})
# The refusal of a publication (review or difficulty) whose id names no listed source.
ABSENT_OR_INACTIVE = "Atlas source is absent or inactive"


def is_valid(value: Any) -> bool:
    return (
        isinstance(value, str)
        and _COMPILED.fullmatch(value) is not None
        and not any(segment in _DOT_SEGMENTS or not segment for segment in value.split("/"))
    )
