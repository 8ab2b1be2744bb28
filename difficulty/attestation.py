"""Execution-implementation attestation: verification and display line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reviews.production.format.path_safety import resolved

ATTESTATION_PATH = "publication-execution-implementation-attestation.json"
INCONSISTENT = "Execution implementation attestation is inconsistent"
CHANGED_WITHOUT_VALIDATION = (
    "Execution implementation differs from the original run; publish validation of the changed "
    "execution code"
)
MATCHING_LINE = "Execution implementation: matching definitions within the recorded scope"
CHANGED_LINE = "Execution implementation: changed; validation evidence published"
SCOPE_NOTE = (
    "Matching definitions establish unchanged code within the recorded scope only; they do not "
    "establish that external services or task data were unchanged."
)


class AttestationError(ValueError):
    pass


def verify_attestation(*, text: str, run_dir: Path) -> dict[str, Any]:
    """Check an attestation; returns the parsed document or raises AttestationError with the
    reason."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:  # nested thousands deep: as unreadable
        raise AttestationError(INCONSISTENT) from error
    if not _consistent(document):
        raise AttestationError(INCONSISTENT)
    if not document["matching"] and not _validation_published(document=document, run_dir=run_dir):
        raise AttestationError(CHANGED_WITHOUT_VALIDATION)
    return document


def _consistent(document: Any) -> bool:
    if not isinstance(document, dict) or document.get("schema_version") != 1:
        return False
    original, executed = document.get("original"), document.get("executed")
    definitions = document.get("definitions")
    matching = document.get("matching")
    if not (isinstance(original, dict) and isinstance(executed, dict)):
        return False
    if not isinstance(matching, bool) or not isinstance(definitions, list):
        return False
    digests = (original.get("definitions_sha256"), executed.get("definitions_sha256"))
    if not all(isinstance(digest, str) and digest for digest in digests):
        return False
    if matching != (digests[0] == digests[1]):
        return False
    if not all(isinstance(item, dict) for item in definitions):
        return False
    # A differing comparison may differ only in imports, so only a matching one constrains pairs.
    return not matching or all(
        item.get("original_sha256") == item.get("executed_sha256") for item in definitions
    )


def _validation_published(*, document: dict[str, Any], run_dir: Path) -> bool:
    entries = document.get("changed_code_validation")
    if not isinstance(entries, list) or not entries:
        return False
    root = run_dir.resolve()
    for entry in entries:
        if not isinstance(entry, dict):
            return False
        url, path = entry.get("url"), entry.get("path")
        if isinstance(url, str) and url.startswith("https://"):
            continue
        if not isinstance(path, str) or not path:
            return False
        target = resolved(root / path)
        if target is None or not target.is_relative_to(root):
            return False
        try:
            if not target.is_file():
                return False
        except (OSError, ValueError):
            # A path the system cannot name (a lone surrogate, a name too long) names no
            # published evidence; it raised instead of refusing.
            return False
    return True


def validation_paths(*, document: dict[str, Any]) -> list[str]:
    """Run-relative files that validate changed execution code; publication archives them."""
    entries = document.get("changed_code_validation")
    if not isinstance(entries, list):
        return []
    return [
        entry["path"]
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry["path"]
    ]


def attestation_line(*, document: dict[str, Any] | None) -> str | None:
    """The "Sampling and scope" line, or None when no valid attestation is saved."""
    if not isinstance(document, dict) or not isinstance(document.get("matching"), bool):
        return None
    return MATCHING_LINE if document["matching"] else CHANGED_LINE
