"""Public review reads: GET /api/reviews/<id>/ and /api/reviews/<id>/artifacts/<path>."""

urlpatterns: list = []
