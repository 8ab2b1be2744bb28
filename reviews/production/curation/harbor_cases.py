"""The curators' cases on Harbor attempts: answers are agents, not replayed model turns.

A Harbor task carries its natural native inputs: its own reference solution (``solution/solve.sh``,
run by Harbor's ``oracle`` agent) is the reference answer; "no action" (the ``nop`` agent) and a
saved attempt's own commands (its Terminus keystrokes, typed again without a model by
``workers/command_replay.py``) are incorrect-answer controls, and a curator's answer is a command
line typed the same way. A task whose oracle fails its own tests rejects valid solutions; a
verifier that rewards no action accepts wrong answers.

The task's tests are its verifier: a fix is a new version of the task's files, so a fix is
validated on the task as the fresh review ran it (``repaired``), not as the confirming run did.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from reviews.production.curation.cases import Answer
from reviews.production.curation.saved_runs import SavedAttempt, SavedRun
from reviews.production.runtime.errors import CurationRefused
from reviews.production.runtime.tasks import HARBOR_ROUTE

ORACLE = {"name": "oracle", "kwargs": {}}
NOP = {"name": "nop", "kwargs": {}}
REPLAY_AGENT = "command_replay:CommandReplay"
TRAJECTORY = "agent/trajectory.json"
TERMINAL_TOOL = "bash_command"


def is_harbor(attempt: SavedAttempt) -> bool:
    return attempt.task.get("route") == HARBOR_ROUTE


def replay_agent(keystrokes: list[str]) -> dict[str, Any]:
    return {"name": REPLAY_AGENT, "kwargs": {"keystrokes": keystrokes}}


def saved_keystrokes(attempt: SavedAttempt) -> list[str]:
    """What the attempt's agent typed, in order: every terminal command of its trajectory."""
    trajectories = sorted(attempt.execution_dir.glob(f"review-*/{TRAJECTORY}"))
    if not trajectories:
        return []
    try:
        trajectory = json.loads(trajectories[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise CurationRefused(f"{attempt.execution_path}: its trajectory is not readable") from None
    typed = []
    for step in trajectory.get("steps") or []:
        for call in (step.get("tool_calls") or []) if isinstance(step, dict) else []:
            arguments = call.get("arguments") if isinstance(call, dict) else None
            keystrokes = arguments.get("keystrokes") if isinstance(arguments, dict) else None
            if call.get("function_name") == TERMINAL_TOOL and isinstance(keystrokes, str):
                typed.append(keystrokes)
    return typed


def saved_answer(attempt: SavedAttempt, *, source: str = "saved") -> Answer:
    keystrokes = saved_keystrokes(attempt)
    if not keystrokes:
        raise CurationRefused(f"{attempt.execution_path} saved no terminal commands to replay")
    return Answer(source=source, responses=(), origin=attempt.execution_path,
                  agent=replay_agent(keystrokes))  # fmt: skip


def reference_answer(attempt: SavedAttempt) -> Answer:
    solution = attempt.execution_dir / "task" / "solution" / "solve.sh"
    if not solution.is_file():
        raise CurationRefused(
            f"Task {attempt.task.get('id')} has no reference solution (solution/solve.sh)"
        )
    return Answer(source="reference", responses=(), origin=attempt.execution_path, agent=ORACLE)


def typed_answer(text: str, *, source: str, origin: str = "curator") -> Answer:
    line = text if text.endswith("\n") else text + "\n"
    return Answer(source=source, responses=(), origin=origin, agent=replay_agent([line]))


def no_action(*, origin: str) -> Answer:
    """The ``empty`` control of a Harbor task: the agent does nothing."""
    return Answer(source="control:empty", responses=(), origin=origin, agent=NOP)


def repaired(attempt: SavedAttempt, *, review: SavedRun) -> SavedAttempt:
    """The saved input on the task as the fresh review ran it (the task's files are its
    verifier): the review's finished attempt at the same task id lends its task and files."""
    task_id = attempt.task.get("id")
    for candidate in review.finished_attempts():
        if candidate.task.get("id") == task_id and is_harbor(candidate):
            return dataclasses.replace(
                attempt, run_dir=candidate.run_dir, execution_path=candidate.execution_path,
                task_folder=candidate.task_folder, task=candidate.task,
            )  # fmt: skip
    raise CurationRefused(
        f"The review at the repaired version has no attempt at task {task_id} to validate on"
    )
