"""Review pages (/reviews/...). Filled by the reviews work."""

urlpatterns: list = []
