"""Seeded reservoir sampling without replacement, in one pass."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.tasks import Task, check_task_files


@dataclass(frozen=True)
class Sample:
    tasks: tuple[Task, ...]
    population: int
    populations: dict[tuple[str, str | None, str], int]

    def population_of(self, *, repository: str, revision: str | None, source_id: str) -> int:
        return self.populations.get((repository, revision, source_id), 0)


def sample_tasks(*, candidates: Iterable[Task], n: int, seed: int) -> Sample:
    """The first ``n`` candidates fill the reservoir; a later candidate at 1-based position ``t``
    draws ``randrange(t)`` and replaces that slot when the draw is below ``n``. Sorted by
    ``row_index`` afterwards, so the same inputs, ``n`` and seed always give the same sample."""
    generator = random.Random(seed)
    reservoir: list[Task] = []
    seen: set[tuple[str, str | None, str, str]] = set()
    populations: Counter[tuple[str, str | None, str]] = Counter()
    total = 0
    for task in candidates:
        if task.identity in seen:
            raise ReviewProductionError(
                "Duplicate task identity: " + json.dumps(list(task.identity), ensure_ascii=False)
            )
        seen.add(task.identity)
        populations[task.identity[:3]] += 1
        total += 1
        if total <= n:
            reservoir.append(task)
            continue
        draw = generator.randrange(total)
        if draw < n:
            reservoir[draw] = task
    if total < n:
        raise ReviewProductionError(f"Requested {n} tasks but source contains only {total}")
    ordered = sorted(
        reservoir, key=lambda task: (task.row_index is None, task.row_index or 0, task.id)
    )
    for task in ordered:
        # Before anything reads, hashes or copies them: a sampled task's files stay inside its
        # dataset's folder and are regular files.
        check_task_files(task)
    return Sample(tasks=tuple(ordered), population=total, populations=dict(populations))
