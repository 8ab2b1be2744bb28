"""Refusals of the curators' tools: the message is the one line the command prints."""

from __future__ import annotations

from reviews.production.runtime.errors import ReviewProductionError, UsageError


class CurationRefused(ReviewProductionError):
    """A curator's tool cannot go on; nothing that could confirm or resolve a defect was written."""


__all__ = ["CurationRefused", "UsageError"]
