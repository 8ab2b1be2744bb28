"""Run identity: checkout identities, file hashes and ``snapshot_id``.

``run.json`` pins everything a resume must find unchanged: the resolved configuration, the sample,
the schema, the production code and the native checkouts.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from reviews.production.format.collection_checks import SCHEMA_PATH
from reviews.production.git_commands import GitFailed, run_git
from reviews.production.runtime.errors import ReviewProductionError

MARINSKYRL_TREES = (
    "skyrl-gym/skyrl_gym",
    "skyrl-train/skyrl_train/trajectory_runners",
    "marinskyrl",
)
HARBOR_TREES = ("src/harbor",)
# Run by the Harbor interpreter: a registry-installed Harbor's package, version and file digest.
HARBOR_PACKAGE_PROBE = Path(__file__).resolve().parent.parent / "workers" / "harbor_identity.py"
PROBE_SECONDS = 120
# MarinSkyRL's verification contract: module → its file in the checkout.
GYM_CONTRACT_MODULES = {
    "skyrl_gym.verification": "skyrl-gym/skyrl_gym/verification.py",
    "skyrl_train.trajectory_runners.skyrl_gym_contracts": (
        "skyrl-train/skyrl_train/trajectory_runners/skyrl_gym_contracts.py"
    ),
}
PROJECT_FOLD = "reviews/production/workers/gym_contract.py"
WING_DIR = Path(__file__).resolve().parent.parent  # reviews/production, the producers' wing
COMMAND_MODULE = WING_DIR.parent / "management" / "commands" / "make_review.py"
# The rooms of the wing whose code decides what make_review writes; the curators' tools and the
# demo's examples are not among them, so editing those never invalidates a review's resume.
MAKE_REVIEW_ROOMS = ("format", "runtime", "make_review", "workers")
CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def git(*, checkout: Path, args: list[str]) -> str:
    """``git args`` in ``checkout``, disarmed (``git_commands``): its output, else one line."""
    try:
        done = run_git(checkout=checkout, args=args)
    except GitFailed as exc:
        raise ReviewProductionError(str(exc)) from None
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise ReviewProductionError(f"git {' '.join(args)} failed in {checkout}: {stderr}")
    return done.stdout.decode("utf-8", "replace")


def checkout_identity(*, checkout: Path, trees: tuple[str, ...]) -> dict[str, Any]:
    """``{checkout, commit, dirty, python_tree_sha256}``."""
    checkout = Path(checkout)
    if not (checkout / ".git").exists():
        raise ReviewProductionError(f"Native checkout is not a git repository: {checkout}")
    commit = git(checkout=checkout, args=["rev-parse", "HEAD"]).strip()
    # Untracked files count, as in the reference: an untracked importable module changes what
    # runs. (Workers never write bytecode into a checkout: their cache lives in the run.)
    status = git(checkout=checkout, args=["status", "--porcelain"])
    return {
        "checkout": str(checkout),
        "commit": commit,
        "dirty": bool(status.strip()),
        "python_tree_sha256": python_tree_sha256(checkout=checkout, trees=trees),
    }


def harbor_identity(*, runtime: dict[str, Any]) -> dict[str, Any]:
    """The Harbor the attempts run: a git checkout (``runtime.harbor_checkout``) by its commit and
    Python tree, else the package installed for ``runtime.harbor_python`` by name, version and a
    digest of its installed files (``workers/harbor_identity.py``) — a registry package has no
    commit, and none is recorded."""
    checkout = runtime.get("harbor_checkout")
    if checkout:
        return checkout_identity(checkout=Path(checkout), trees=HARBOR_TREES)
    python = runtime.get("harbor_python")
    if not python:
        raise ReviewProductionError("runtime.harbor_python is required for Harbor tasks")
    try:
        done = subprocess.run(
            [str(python), str(HARBOR_PACKAGE_PROBE)],
            capture_output=True, text=True, timeout=PROBE_SECONDS, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReviewProductionError(f"Cannot ask {python} which Harbor it runs: {exc}") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise ReviewProductionError(f"No Harbor for runtime.harbor_python {python}: {reason}")
    return json.loads(done.stdout)


def python_tree_sha256(*, checkout: Path, trees: tuple[str, ...]) -> str:
    """One SHA-256 fed, tree by tree in the given order, with each ``*.py`` file below it: its
    POSIX path relative to the checkout, then the raw 32-byte SHA-256 of the file. Files are
    ordered component by component, as the reference orders paths (``a/x.py`` before
    ``a-c/y.py``, where comparing the whole strings would put ``-`` before ``/``)."""
    digest = hashlib.sha256()
    for tree in trees:
        root = checkout / tree
        if not root.is_dir():
            continue
        files = sorted(
            (path for path in root.rglob("*.py") if path.is_file()),
            key=lambda path: path.relative_to(checkout).parts,
        )
        for path in files:
            digest.update(path.relative_to(checkout).as_posix().encode("utf-8"))
            digest.update(bytes.fromhex(sha256_file(path)))
    return digest.hexdigest()


def gym_verification_contract(*, checkout: Path) -> dict[str, Any]:
    """Which fold the Gym worker applies (``run.json`` ``gym_verification_contract``):
    MarinSkyRL's own when the checkout's Gym library has the contract, else the project's."""
    missing = [m for m, path in GYM_CONTRACT_MODULES.items() if not (checkout / path).is_file()]
    if not missing:
        return {"fold": "marinskyrl", "modules": list(GYM_CONTRACT_MODULES)}
    return {
        "fold": "project",
        "implementation": PROJECT_FOLD,
        "missing": missing,
        "reason": "The Gym library lacks MarinSkyRL's verification contract; the project's "
        "fold applies the same rules to the environment's step results.",
    }


def implementation_hashes() -> dict[str, str]:
    """Whole-file SHA-256 of the production code: any edit changes the run identity."""
    return {"make_review.py": sha256_file(COMMAND_MODULE), **wing_hashes(rooms=MAKE_REVIEW_ROOMS)}


def wing_hashes(*, rooms: tuple[str, ...]) -> dict[str, str]:
    """``{review_runtime/<room>/<file>.py: sha256}`` for every module of the named rooms."""
    hashes: dict[str, str] = {}
    for room in rooms:
        for path in sorted((WING_DIR / room).rglob("*.py")):
            if "__pycache__" not in path.parts:
                relative = path.relative_to(WING_DIR).as_posix()
                hashes[f"review_runtime/{relative}"] = sha256_file(path)
    return hashes


def folder_hashes(*, folder: Path) -> dict[str, str]:
    """``{absolute path: sha256}`` for every file in a task folder (symlinks followed)."""
    found: dict[str, str] = {}
    for root, _dirs, files in os.walk(folder, followlinks=True):
        for name in files:
            path = Path(root) / name
            found[str(path)] = sha256_file(path)
    return dict(sorted(found.items()))


def schema_sha256() -> str:
    return sha256_file(SCHEMA_PATH)


def snapshot_id(*, identity: dict[str, Any]) -> str:
    """SHA-256 of the run identity as JSON: non-ASCII kept, default separators, insertion order."""
    text = json.dumps(identity, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def round_trip(value: Any) -> Any:
    """What a JSON file written from ``value`` reads back as (tuples become lists, etc.)."""
    return json.loads(json.dumps(value, ensure_ascii=False))
