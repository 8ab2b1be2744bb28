"""A make_review run's options and their defaults: light enough for the command to read before
it imports the pipeline (see ``reviews/management/commands/make_review``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviews.production.runtime.launcher import GRACE_SECONDS

DEFAULT_MAX_EVIDENCE_BYTES = 2_000_000
DEFAULT_JOBS = 4


@dataclass(frozen=True)
class RunOptions:
    config: Path
    n: int
    output: Path
    seed: int = 42
    resume: bool = False
    max_evidence_bytes: int = DEFAULT_MAX_EVIDENCE_BYTES
    jobs: int = DEFAULT_JOBS
    grace_seconds: float = GRACE_SECONDS
    reuse: tuple[str, ...] = ()  # earlier runs (directories or review URLs) to cite
    rejudge: tuple[str, ...] = ()  # task ids the curator names for a fresh judgment
    # How often the progress line is redrawn while calls run (None: 1 s on a terminal, else 30 s).
    tick_seconds: float | None = None
