"""What a GitHub issue URL is: the one rule, free of Django, so the Atlas's
defect services and the curators' tools (``reviews.production.curation``) refuse the same URLs."""

from __future__ import annotations

import re

GITHUB_ISSUE_RE = re.compile(
    r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/issues/[1-9][0-9]*"
)


def is_github_issue_url(url: str | None) -> bool:
    # fullmatch, never match with ``$``: ``$`` also matches before a trailing newline, and a URL
    # ending in one was accepted.
    return bool(GITHUB_ISSUE_RE.fullmatch(url or ""))


def not_an_issue(url: str | None) -> str:
    return f"Verifier issues must link a GitHub issue: {url}"
