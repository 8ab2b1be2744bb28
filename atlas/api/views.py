"""Kept for the apps above that import from here (``reviews.serializers``, ``difficulty.examples``
and their tests)."""

from atlas.api.row_fields import OpenVerifierIssueSerializer, source_row

__all__ = ["OpenVerifierIssueSerializer", "source_row"]
