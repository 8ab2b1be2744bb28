"""The judge evidence bundle: every file of one attempt, inspected or
accounted for, within ``--max-evidence-bytes``."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.prompt_room import json_size
from reviews.production.runtime.rundir import read_json

UNCALLED_REASON = (
    "Imported module was not called during this attempt; full source retained in artifacts."
)
# Two files of every execution restate what the judge payload holds already: the worker's input
# (the task, and the run's own model and runtime configuration, which is no evidence about the
# task) and the attempt record (the payload's native_outcome, byte for byte). They are accounted
# for, not repeated: on a small context they were a tenth of a judge prompt.
WORKER_INPUT = "input.json"
WORKER_INPUT_REASON = (
    "The worker's input: the task (given in full as task) and the run's model and runtime "
    "configuration (run.json); retained in artifacts."
)
ATTEMPT_RECORD = "attempt.json"
ATTEMPT_REASON = "The attempt record, given in full as native_outcome; retained in artifacts."
# Captured native modules: the code every attempt of a route calls, shown once per prompt
# under route_code with paths relative to the execution directory.
ROUTE_CODE_DIR = "native-code/"


def evidence_bundle(*, run_dir: Path, execution_path: str, max_bytes: int) -> list[dict[str, Any]]:
    """``{path, sha256, bytes}`` plus exactly one of ``text``, ``not_inspected_reason``,
    ``duplicate_content_of`` or ``binary_not_inspected`` for each file, sorted by path."""
    execution = run_dir / execution_path
    uncalled = _uncalled_captures(execution, execution_path)
    restated = {
        f"{execution_path}/{WORKER_INPUT}": WORKER_INPUT_REASON,
        f"{execution_path}/{ATTEMPT_RECORD}": ATTEMPT_REASON,
    }
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
        elif relative in restated:
            item["not_inspected_reason"] = restated[relative]
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


def split_route_code(
    *, evidence: list[dict[str, Any]], execution_path: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The captured native modules (paths relative to the execution, so every attempt of the
    route that called the same code shows the same bytes) and the attempt's other files."""
    prefix = f"{execution_path}/"
    code_prefix = prefix + ROUTE_CODE_DIR
    route_code: list[dict[str, Any]] = []
    specific: list[dict[str, Any]] = []
    for item in evidence:
        if not item["path"].startswith(code_prefix):
            specific.append(item)
            continue
        shared = {**item, "path": item["path"].removeprefix(prefix)}
        duplicate = item.get("duplicate_content_of")
        if isinstance(duplicate, str) and duplicate.startswith(code_prefix):
            shared["duplicate_content_of"] = duplicate.removeprefix(prefix)
        route_code.append(shared)
    return route_code, specific


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
