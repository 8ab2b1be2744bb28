"""What a resume must find unchanged (``difficulty/run.json``), and the execution-implementation
attestation a resume writes when only the production code changed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from difficulty.attestation import ATTESTATION_PATH
from difficulty.production import execution
from difficulty.production.errors import DifficultyProductionError
from difficulty.production.implementation_attestation import attest_execution
from reviews.production.runtime.rundir import read_json, write_json_file

IDENTITY_FILE = "difficulty/run.json"
ORIGINAL_EXECUTION_COPY = "difficulty/implementation/execution.py"
EXECUTED_EXECUTION_COPY = "difficulty/implementation/executed/execution.py"
CHANGED_INPUTS = (
    "Config, protocol, task sample, Atlas row or native code changed; resume requires identical "
    "inputs"
)


def check_or_record_identity(*, output: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """A first run records its identity and a copy of its execution code; a resume must
    find the same inputs. Changed production code alone is allowed: the attestation then
    says whether the execution definitions changed."""
    path = output / IDENTITY_FILE
    saved = read_json(path)
    if saved is None:
        write_json_file(path, identity)
        copy = output / ORIGINAL_EXECUTION_COPY
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(execution.__file__, copy)
        return None
    if saved == identity:
        return None
    if not isinstance(saved, dict):
        raise DifficultyProductionError(CHANGED_INPUTS)
    saved_code = {**saved.get("code", {}), "implementation": None}
    code = {**identity["code"], "implementation": None}
    if {**saved, "code": saved_code} != {**identity, "code": code}:
        raise DifficultyProductionError(CHANGED_INPUTS)
    # The executed script is saved beside the original: anyone can repeat the comparison
    # from the published evidence (attest_execution with the two run-relative paths).
    executed = output / EXECUTED_EXECUTION_COPY
    executed.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(execution.__file__, executed)
    document = attest_execution(original=output / ORIGINAL_EXECUTION_COPY, executed=executed)
    document["original"]["path"] = ORIGINAL_EXECUTION_COPY
    document["executed"]["path"] = EXECUTED_EXECUTION_COPY
    write_json_file(output / ATTESTATION_PATH, document)
    return document
