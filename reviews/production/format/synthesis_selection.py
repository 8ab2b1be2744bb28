"""Which review of a collection is a source synthesis: a ``synthesis`` of a source-level subject.

Rating and publication (``reviews.rating.source_syntheses``), the review page's cards and the
curators' synthesis (which never copies a pool's source synthesis) all ask here. Django-free,
standard library only: the curators' tools run without the Atlas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_source_synthesis(review: Mapping[str, Any], subject: Mapping[str, Any] | None) -> bool:
    """``review`` is a synthesis and ``subject``, the subject it names, is of the source level."""
    return review.get("method") == "synthesis" and (subject or {}).get("level") == "source"
