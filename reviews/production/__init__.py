"""Review production: local tasks → a review run directory.

No Django models, database or web code: ``make_review`` is a thin command over ``pipeline``, and
the native workers under ``workers/`` are standalone scripts run by another interpreter.
"""
