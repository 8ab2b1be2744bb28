"""Review API (/api/reviews/..., /api/verifier-issues/...). Filled by the reviews work."""

urlpatterns: list = []
