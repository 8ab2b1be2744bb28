"""make_difficulty's refusals share make_review's error type: the command prints the message."""

from __future__ import annotations

from reviews.production.runtime.errors import ReviewProductionError, UsageError

DifficultyProductionError = ReviewProductionError

__all__ = ["DifficultyProductionError", "UsageError"]
