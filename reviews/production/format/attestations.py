"""Dataset-content equivalence attestations: reuse of a judgment at a later data revision."""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path
from typing import Any

ATTESTATION_DIR = "publication"
ATTESTATION_NAME = re.compile(r"^dataset-revision-attestation-(?P<revision>.+)\.json$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class Bridge(enum.Enum):
    BRIDGED = "bridged"
    ABSENT = "absent"
    INVALID = "invalid"


def attestation_files(run_dir: Path) -> list[tuple[str, Path]]:
    """(revision named by the file, path) for every attestation file of the run directory."""
    folder = run_dir / ATTESTATION_DIR
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        match = ATTESTATION_NAME.match(path.name)
        if match and path.is_file():
            found.append((match["revision"], path))
    return found


def read_attestation(path: Path) -> dict[str, Any] | None:
    """The attestation document when it is well formed, else None."""
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # nested thousands deep: malformed too
        return None
    if not isinstance(document, dict):
        return None
    strings = ("file_path", "executed_revision", "current_revision")
    if not all(isinstance(document.get(key), str) and document[key] for key in strings):
        return None
    selector = document.get("component_selector", ...)
    population = document.get("population_count", ...)
    if selector is not None and not isinstance(selector, str):
        return None
    if population is not None and (type(population) is not int or population < 0):
        return None
    digest = document.get("file_sha256")
    if not isinstance(digest, str) or not SHA256.match(digest):
        return None
    return document


def bridges(
    *,
    named_revision: str,
    document: dict[str, Any],
    executed_revision: str | None,
    current_revision: str | None,
    synthesis_population: int | None,
    task_count: int | None,
) -> bool:
    if current_revision is None or not (
        named_revision == document["current_revision"] == current_revision
    ):
        return False
    if document["executed_revision"] != executed_revision:
        return False
    population = document["population_count"]
    if population is None:
        return True
    return (synthesis_population is None or population == synthesis_population) and (
        task_count is None or population == task_count
    )


def find_bridge(
    *,
    run_dir: Path,
    executed_revision: str | None,
    current_revision: str | None,
    synthesis_population: int | None,
    task_count: int | None,
) -> Bridge:
    files = attestation_files(run_dir)
    if not files:
        return Bridge.ABSENT
    for named_revision, path in files:
        document = read_attestation(path)
        if document is not None and bridges(
            named_revision=named_revision,
            document=document,
            executed_revision=executed_revision,
            current_revision=current_revision,
            synthesis_population=synthesis_population,
            task_count=task_count,
        ):
            return Bridge.BRIDGED
    return Bridge.INVALID


# --- native-revision attestations: an executed MarinSkyRL commit bridged to the pinned one ---

# What make_review --attest-native-revision compares at git object level, and says it compared.
NATIVE_REGISTRY_FILE = "infra/rl_data/sources.py"
NATIVE_GYM_LIBRARY = "skyrl-gym/skyrl_gym"
NATIVE_BINDINGS = "skyrl-train/skyrl_train/trajectory_runners"
NATIVE_SOURCE_REGISTRY = "marinskyrl"
NATIVE_REQUIRED_PATHS = (
    NATIVE_REGISTRY_FILE, NATIVE_SOURCE_REGISTRY, NATIVE_GYM_LIBRARY, NATIVE_BINDINGS,
)  # fmt: skip
NATIVE_SCOPE = (
    "Full Gym library, native bindings, source registry and captured MSkyRL modules are unchanged."
)
VERIFIER_TREE_URL = re.compile(r"/(?:tree|blob)/[0-9a-f]{40}/(.+?)/?$")


def native_attestation_path(registry_commit: str) -> str:
    return f"{ATTESTATION_DIR}/native-revision-attestation-{registry_commit}.json"


def native_attestation_bridges(
    *, text: str | None, executed_commit: str | None, pinned_commit: str, verifier_url: str | None
) -> bool:
    """Whether the archived attestation (its ``text``) bridges the executed commit to the pinned
    one: the Atlas holds no checkout, so it verifies what the file must say — the two commits,
    the scope, every compared path's object identical at both, and every path the tool must
    compare (the registry, the whole Gym library, the bindings, the source's verifier path)
    among them."""
    if text is None or executed_commit is None:
        return False
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(document, dict) or document.get("scope") != NATIVE_SCOPE:
        return False
    if (document.get("reviewed_commit"), document.get("registry_commit")) != (
        executed_commit,
        pinned_commit,
    ):
        return False
    objects = document.get("objects")
    if not isinstance(objects, list) or not all(
        isinstance(entry, dict)
        and isinstance(entry.get("path"), str)
        and entry.get("reviewed_object") == entry.get("registry_object")
        for entry in objects
    ):
        return False
    compared = {entry["path"] for entry in objects}
    required = set(NATIVE_REQUIRED_PATHS)
    match = VERIFIER_TREE_URL.search(verifier_url or "")
    if match:
        required.add(match.group(1))
    return required <= compared
