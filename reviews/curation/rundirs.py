"""The curators' run directories: created new (never resumed: a re-run costs seconds of native
execution and no model call), finished with the checks publication runs, and identified in
``run.json`` by the code that wrote them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from reviews.curation.errors import CurationRefused
from reviews.production.format.collection_checks import (
    SCHEMA_PATH,
    CollectionRejected,
    check_collection,
)
from reviews.production.runtime.identity import sha256_file
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    MANIFEST_FILE,
    RUN_FILE,
    SCHEMA_COPY,
    artifact_manifest,
    json_text,
    write_json_file,
    write_text_file,
)

PACKAGE_DIR = Path(__file__).resolve().parent
COMMANDS_DIR = PACKAGE_DIR.parent / "management" / "commands"
COMMANDS = (
    "reproduce_defect.py", "validate_fix.py", "fetch_review.py", "synthesise_source.py",
)  # fmt: skip


def checked_new(path: Path) -> Path:
    """``path`` made absolute, refused when it exists (checked first, before any other work)."""
    output = Path(os.path.abspath(os.path.expanduser(str(path))))
    if output.exists():
        raise CurationRefused(f"Output already exists; use a new output directory: {output}")
    return output


def new_output(path: Path) -> Path:
    """``path`` made absolute and created with mode 0700; an existing one is refused."""
    output = checked_new(path)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.mkdir(mode=0o700)
    os.chmod(output, 0o700)  # mkdir's mode is masked by the umask
    return output


def implementation_hashes() -> dict[str, str]:
    """Whole-file SHA-256 of the curation code and its commands."""
    hashes = {
        f"commands/{name}": sha256_file(COMMANDS_DIR / name)
        for name in COMMANDS
        if (COMMANDS_DIR / name).is_file()
    }
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        hashes[f"curation/{path.name}"] = sha256_file(path)
    return hashes


def write_run_file(output: Path, identity: dict[str, Any]) -> None:
    write_json_file(output / RUN_FILE, {**identity, "implementation": implementation_hashes()})


def finish(*, output: Path, collection: dict[str, Any]) -> Path:
    """Validate the collection as publication will (steps 2–6), then write it, the schema it
    was checked against and the artifact manifest."""
    try:
        check_collection(collection=collection, run_dir=output)
    except CollectionRejected as exc:
        raise CurationRefused(str(exc)) from None
    if not (output / SCHEMA_COPY).is_file():
        shutil.copyfile(SCHEMA_PATH, output / SCHEMA_COPY)
    path = output / COLLECTION_FILE
    write_text_file(path, json_text(collection))
    write_json_file(output / MANIFEST_FILE, artifact_manifest(run_dir=output))
    return path
