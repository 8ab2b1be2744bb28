"""Kept for the apps above that import from here (``reviews.api.serializers``,
``difficulty.examples`` and their tests): the API's views live in a module per concern (``sources``,
``refresh``, ``changes``) and the row in ``row_fields`` and ``row_values``."""

from atlas.api.row_fields import OpenVerifierIssueSerializer
from atlas.api.row_values import source_row

__all__ = ["OpenVerifierIssueSerializer", "source_row"]
