"""The catalog's pages: views, their view models and HTML parts, the feed, error pages
and the request-level middleware."""
