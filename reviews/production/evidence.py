"""The judge evidence bundle (review-production.md §7): every file of one attempt, inspected or
accounted for, within ``--max-evidence-bytes``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from reviews.production.errors import ReviewProductionError
from reviews.production.rundir import read_json

UNCALLED_REASON = (
    "Imported module was not called during this attempt; full source retained in artifacts."
)


def json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def evidence_bundle(*, run_dir: Path, execution_path: str, max_bytes: int) -> list[dict[str, Any]]:
    """``{path, sha256, bytes}`` plus exactly one of ``text``, ``not_inspected_reason``,
    ``duplicate_content_of`` or ``binary_not_inspected`` for each file, sorted by path."""
    execution = run_dir / execution_path
    uncalled = _uncalled_captures(execution, execution_path)
    items: list[dict[str, Any]] = []
    first_by_hash: dict[str, str] = {}
    size = 2  # the enclosing brackets of the serialised list
    for path in _files(execution):
        relative = path.relative_to(run_dir).as_posix()
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        item: dict[str, Any] = {"path": relative, "sha256": digest, "bytes": len(data)}
        if relative in uncalled:
            item["not_inspected_reason"] = UNCALLED_REASON
        elif digest in first_by_hash:
            item["duplicate_content_of"] = first_by_hash[digest]
        else:
            try:
                item["text"] = data.decode("utf-8")
            except UnicodeDecodeError:
                item["binary_not_inspected"] = True
        first_by_hash.setdefault(digest, relative)
        size += json_size(item) + (2 if items else 0)
        if size > max_bytes:
            raise ReviewProductionError(
                f"Evidence exceeds {max_bytes} bytes; saved artifacts remain intact. "
                "Increase --max-evidence-bytes or use a smaller source sample."
            )
        items.append(item)
    return items


def _files(execution: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(execution):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith((".pyc", ".lock", ".tmp")):
                continue
            found.append(Path(root) / name)
    return sorted(found, key=lambda path: path.relative_to(execution).as_posix())


def _uncalled_captures(execution: Path, execution_path: str) -> set[str]:
    index = read_json(execution / "native-code-index.json")
    if not isinstance(index, list):
        return set()
    return {
        f"{execution_path}/{entry['path']}"
        for entry in index
        if isinstance(entry, dict) and entry.get("path") and not entry.get("called_in_attempt")
    }
