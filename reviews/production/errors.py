"""Errors of review production: the message is the one-line reason the command prints."""

from __future__ import annotations


class ReviewProductionError(Exception):
    """A run cannot go on; the message is the spec's exact text (review-production.md)."""


class UsageError(ReviewProductionError):
    """A command-line argument is invalid (e.g. ``n must be positive``)."""
