"""Verifier-issue API (/api/verifier-issues/...)."""

urlpatterns: list = []
