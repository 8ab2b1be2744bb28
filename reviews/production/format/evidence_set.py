"""Which files of a run directory a publication archives and how they are read."""

from __future__ import annotations

import os
import re

from reviews.production.format.run_files import RunDirectory

COLLECTION_FILE = "quality-reviews.json"
PUBLICATION_RESULT_FILE = "atlas-publication.json"
GRADING_CLAIM_PATH = "publication/grading-applicability.json"
RUN_FILES = ("run.json", "quality-review.schema.json", "artifact-manifest.json")
# A task's executions, also where make_review --reuse copied an earlier run's panel.
_EXECUTION = r"(?:reused/[0-9a-f]{12}/)?tasks/[^/]+/execution-[^/]+"
ARCHIVED_PATTERN = re.compile(
    "|".join(
        [
            r"publication/.+",
            _EXECUTION + r"/(?:input\.json|attempt\.json|solver-trace\.json|verifier-trace\.jsonl"
            r"|verifier\.stdout|verifier\.stderr|harbor-result\.json|native-code-index\.json)",
            _EXECUTION + r"/solver/turn-[^/]+/(?:request|response)\.json",
            _EXECUTION + r"/[^/]+/agent/(?:trajectory|offline-tooling)\.json",
        ]
    )
)
WALKED_FOLDERS = ("publication", "tasks", "reused")


def globbed_files(run: RunDirectory) -> list[str]:
    """The relative paths the optional run files, publication/ files and execution files would
    have: the names the patterns match, not yet checked for containment (``RunDirectory.read``
    checks each as it reads it, so a file is stat'ed once). One walk of each folder; globbing per
    execution folder costs far more."""
    found = list(RUN_FILES)
    for top in WALKED_FOLDERS:
        if (run.root / top).is_dir() and not (run.root / top).is_symlink():
            _walk(run, top, found)
    return found


def _walk(run: RunDirectory, top: str, found: list[str]) -> None:
    # Folder links are not followed from the resolved root: every folder walked is inside.
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(run.root / folder) as entries:
            for entry in entries:
                relative = f"{folder}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    pending.append(relative)
                elif ARCHIVED_PATTERN.fullmatch(relative):
                    found.append(relative)
