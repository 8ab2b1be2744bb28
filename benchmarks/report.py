"""The rows every benchmark emits and the one table `make bench` prints from them.

A benchmark calls ``emit(row=Row(...))`` for each figure. The row is printed as a line of the
benchmark's own output and, when the runner set ``ATLAS_BENCH_RESULTS``, appended to that file as
one JSON line; ``benchmarks/run.py`` reads the file back and prints ``table(rows=...)``.

A figure is judged only against a floor measured in the same run: the ratio is
``value / baseline_value`` in the row's own unit (seconds: lower is better, so the goal reads
``<= 1.5``; rows per second: higher is better, ``>= 0.8``). A row whose baseline is not the floor
is shown but never "met". A row without a baseline carries an absolute goal (cold start ≤ 5 s).
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

RESULTS_ENV = "ATLAS_BENCH_RESULTS"
GOAL_OPERATORS = ("<=", ">=")


@dataclass(frozen=True)
class Row:
    benchmark: str
    figure: str
    value: float | None
    unit: str
    baseline: str = ""
    baseline_value: float | None = None
    # False when the baseline is a reference that is not the floor (e.g. the ORM): never "met".
    floor: bool = True
    goal_operator: str = ""
    goal: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.baseline or not self.baseline_value:
            return None
        return self.value / self.baseline_value


def verdict(*, row: Row) -> str:
    """met / NOT met / why the row cannot be judged ("—" for a figure without a goal)."""
    if row.value is None:
        return row.note or "not measured"
    if row.goal is None:
        return "—"
    if row.goal_operator not in GOAL_OPERATORS:
        raise ValueError(f"unknown goal operator {row.goal_operator!r}")
    if row.baseline:
        if not row.floor:
            return "no floor"
        compared = row.ratio
        if compared is None:
            return "no baseline"
    else:
        compared = row.value
    holds = compared <= row.goal if row.goal_operator == "<=" else compared >= row.goal
    return "met" if holds else "NOT met"


def goal_text(*, row: Row) -> str:
    if row.goal is None:
        return ""
    suffix = "×" if row.baseline else f" {row.unit}"
    return f"{row.goal_operator} {row.goal:g}{suffix}"


def number(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def table(*, rows: list[Row]) -> str:
    """One Markdown table: benchmark, figure, value, baseline, ratio, goal, verdict."""
    header = ("benchmark", "figure", "value", "baseline (floor)", "ratio", "goal", "verdict")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        value = f"{number(row.value)} {row.unit}" if row.value is not None else "—"
        baseline = ""
        if row.baseline:
            baseline = f"{row.baseline} {number(row.baseline_value)} {row.unit}"
            if not row.floor:
                baseline += " (not the floor)"
        ratio = f"{row.ratio:.2f}×" if row.ratio is not None else ""
        cells = (row.benchmark, row.figure, value, baseline, ratio, goal_text(row=row))
        lines.append("| " + " | ".join((*cells, verdict(row=row))) + " |")
    return "\n".join(lines)


def emit_limit(*, benchmark: str, figure: str, value: float, unit: str, at_most: float) -> None:
    """A figure with an absolute ceiling and no floor (cold start, rows written, peak memory)."""
    emit(row=Row(benchmark=benchmark, figure=figure, value=value, unit=unit,
                 goal_operator="<=", goal=at_most))  # fmt: skip


def emit_against_ideal(
    *, benchmark: str, figure: str, calls: int, wall: float, ideal: float
) -> None:
    """Model calls per second against the latency-bound ideal (every call waiting its latency,
    ``jobs`` at a time — the floor of the production tools), goal ≥ 0.7×."""
    emit(row=Row(benchmark=benchmark, figure=figure, value=calls / wall, unit="calls/s",
                 baseline="ideal (latency-bound)", baseline_value=calls / ideal,
                 goal_operator=">=", goal=0.7))  # fmt: skip


def emit(*, row: Row) -> None:
    print(f"[bench] {table(rows=[row]).splitlines()[-1]}", flush=True)
    results = os.environ.get(RESULTS_ENV)
    if results:
        with Path(results).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(row)) + "\n")


def read_rows(*, path: Path) -> list[Row]:
    if not path.exists():
        return []
    return [Row(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def median_ms(*, samples: list[float]) -> float:
    """The median of samples in seconds, in milliseconds (a shared machine: medians, not means)."""
    return statistics.median(samples) * 1000
