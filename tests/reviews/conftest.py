"""Fixtures shared by the review tests."""

from tests.reviews.defect_walk import walked  # noqa: F401 (the verifier-defect walk)
