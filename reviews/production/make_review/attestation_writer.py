"""Attestations for reuse at a later revision, written into a
finished run's ``publication/`` folder on the machine that holds the checkouts and snapshots."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from atlas.artifact import input_counts
from reviews.production.format.attestations import (
    NATIVE_REQUIRED_PATHS,
    NATIVE_SCOPE,
    VERIFIER_TREE_URL,
    native_attestation_path,
)
from reviews.production.git_commands import GitFailed, run_git
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.rundir import RUN_FILE, read_json, write_json_file

# The attestation's contract (what it compares, what publication verifies) is the format's.
COMMIT_ARGUMENT = re.compile(r"^[0-9a-fA-F]{4,40}$")


def _run(run_dir: Path) -> dict[str, Any]:
    run = read_json(Path(run_dir) / RUN_FILE)
    if not isinstance(run, dict):
        raise ReviewProductionError(f"No run.json in {run_dir}")
    return run


def _git_bytes(checkout: Path, *args: str) -> bytes | None:
    try:
        done = run_git(checkout=checkout, args=list(args))
    except GitFailed as exc:
        raise ReviewProductionError(str(exc)) from None
    return done.stdout if done.returncode == 0 else None


def _object(checkout: Path, commit: str, path: str) -> str | None:
    found = _git_bytes(checkout, "rev-parse", "--verify", "--quiet", f"{commit}:{path}")
    return found.decode().strip() if found else None


def attest_native_revision(*, run_dir: Path, registry_commit: str, atlas_row: Path | None) -> Path:
    """The registry commit keeps, at git object level, the native code the run executed."""
    run_dir = Path(run_dir)
    run = _run(run_dir)
    native = run["marinskyrl"]
    if native["dirty"]:
        raise ReviewProductionError("Cannot attest a dirty native checkout")
    checkout = Path(native["checkout"])
    reviewed = native["commit"]
    if (
        not COMMIT_ARGUMENT.match(registry_commit)
        or _git_bytes(checkout, "cat-file", "-e", f"{registry_commit}^{{commit}}") is None
    ):
        raise ReviewProductionError(f"Unknown registry commit: {registry_commit}")
    paths = list(NATIVE_REQUIRED_PATHS)
    if atlas_row is not None:
        row = read_json(Path(atlas_row))
        match = VERIFIER_TREE_URL.search((row or {}).get("verifier_url") or "")
        if match:
            paths.append(match.group(1))
    for entry in _captured(run_dir, checkout):
        relative = entry["relative"]
        content = _git_bytes(checkout, "show", f"{reviewed}:{relative}")
        if content is None or hashlib.sha256(content).hexdigest() != entry["sha256"]:
            raise ReviewProductionError(
                f"Captured native code differs from its recorded commit at {relative}"
            )
        paths.append(relative)
    objects = []
    for path in dict.fromkeys(paths):
        before = _object(checkout, reviewed, path)
        after = _object(checkout, registry_commit, path)
        if before != after:
            raise ReviewProductionError(
                f"Native code changed at {path}; review must execute the new revision"
            )
        objects.append({"path": path, "reviewed_object": before, "registry_object": after})
    target = run_dir / native_attestation_path(registry_commit)
    write_json_file(
        target,
        {
            "reviewed_commit": reviewed,
            "registry_commit": registry_commit,
            "objects": objects,
            "scope": NATIVE_SCOPE,
        },
    )
    return target


def _captured(run_dir: Path, checkout: Path) -> list[dict[str, Any]]:
    """Every captured module whose origin lies inside the checkout, once per path."""
    found: dict[str, dict[str, Any]] = {}
    root = checkout.resolve()
    for index_path in sorted(run_dir.glob("tasks/*/execution-*/native-code-index.json")):
        index = read_json(index_path)
        for entry in index if isinstance(index, list) else []:
            origin = Path(entry.get("origin", "")).resolve()
            if origin.is_relative_to(root):
                relative = origin.relative_to(root).as_posix()
                found.setdefault(relative, {"relative": relative, "sha256": entry["sha256"]})
    return [found[key] for key in sorted(found)]


def check_download_revision(*, snapshot: Path, name: str, revision: str) -> None:
    """The snapshot's Hugging Face download record names ``revision`` (``count_inputs``' rule)."""
    try:
        input_counts.check_download_revision(snapshot=snapshot, name=name, revision=revision)
    except input_counts.InputCountError as exc:
        raise ReviewProductionError(str(exc)) from None


def attest_dataset_revision(
    *,
    run_dir: Path,
    current_revision: str,
    dataset_file: str,
    executed_snapshot: Path,
    current_snapshot: Path,
    component_selector: str | None,
) -> Path:
    """The dataset file is byte-identical at the executed and the current revision."""
    run_dir = Path(run_dir)
    run = _run(run_dir)
    source = run["config"]["source"]
    executed_revision = source.get("revision")
    if not executed_revision:
        raise ReviewProductionError("The run recorded no executed dataset revision")
    check_download_revision(
        snapshot=Path(executed_snapshot), name=dataset_file, revision=executed_revision
    )
    check_download_revision(
        snapshot=Path(current_snapshot), name=dataset_file, revision=current_revision
    )
    executed = Path(executed_snapshot) / dataset_file
    current = Path(current_snapshot) / dataset_file
    if (
        not executed.is_file()
        or not current.is_file()
        or executed.read_bytes() != current.read_bytes()
    ):
        raise ReviewProductionError(
            f"Dataset file differs between the executed and current revisions: {dataset_file}"
        )
    population = _source_population(run)
    target = run_dir / "publication" / f"dataset-revision-attestation-{current_revision}.json"
    write_json_file(
        target,
        {
            "file_path": dataset_file,
            "executed_revision": executed_revision,
            "current_revision": current_revision,
            "component_selector": component_selector,
            "population_count": population,
            "file_sha256": hashlib.sha256(executed.read_bytes()).hexdigest(),
        },
    )
    return target


def _source_population(run: dict[str, Any]) -> int | None:
    collection_tasks = run.get("tasks") or []
    source = run["config"]["source"]
    if all(
        task.get("source_id") == source["source_id"]
        and task.get("dataset_revision") == source.get("revision")
        for task in collection_tasks
    ):
        return run.get("population")
    return None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
