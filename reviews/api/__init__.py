"""The reviews app's part of the REST API: review collections and their artifacts, a source's
review pool, publication uploads and their state, and verifier issues (confirm, resolve)."""
