"""Settings for the test suite: the configured shape (SQLite, or PostgreSQL and Redis from the
environment) served over plain HTTP by the test client and the live server."""

import os

# With DATABASE_URL set the production shape is assumed (DEBUG off, HTTPS only, a real secret).
# Tests speak plain HTTP to a local server and need no secret of their own.
if not os.environ.get("SECRET_KEY"):
    os.environ["SECRET_KEY"] = "test-only-secret-key-not-used-outside-the-test-suite-0123"
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")

from config.settings import *  # noqa: F403

SECURE_HSTS_SECONDS = 0  # a browser that saw HSTS for localhost would refuse the live server
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False

# Django's documented speed-up for test suites: the default hasher spends ~0.26 s of CPU on every
# password a test sets or logs in with (a million PBKDF2 rounds), a few hundred times per run.
# No test depends on the algorithm; the served shapes (config.settings) keep the default.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
