"""Reading a saved run directory: a local ``make_review`` run or a published review's artifacts
fetched from an Atlas (``fetch_review``). What the curators' tools need from it: the collection,
the executed checkout, and each finished attempt's saved native input and solver answers."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviews.production.format.path_safety import relative_form, resolves_inside
from reviews.production.format.run_files import normalized_relative
from reviews.production.runtime.errors import CurationRefused
from reviews.production.runtime.rundir import COLLECTION_FILE, RUN_FILE, read_json

FETCHED_FILE = "atlas-review.json"
PUBLISHED_FILE = "atlas-publication.json"
TASK_FOLDER = re.compile(r"^(?:tasks/)?(\d{4,})$")
EXECUTION = re.compile(r"^(?:tasks/)?(\d{4,})/(execution-\d{3,})$")
TURN = re.compile(r"^turn-(\d+)$")
EXECUTION_NAME = re.compile(r"^(?:[^/]+/)+execution-\d{3,}$")


@dataclass(frozen=True)
class SavedAttempt:
    """One finished native attempt: where it ran, what the worker was given, what it answered."""

    run_dir: Path
    task_folder: str  # "tasks/0000"
    execution_path: str  # "tasks/0000/execution-000"
    task: dict[str, Any]  # the task record the worker was given (input.json)
    model: dict[str, Any]
    config: dict[str, Any]  # the runtime the worker was given
    attempt: dict[str, Any]
    responses: tuple[dict[str, Any], ...]  # the saved solver responses, in turn order

    @property
    def execution_dir(self) -> Path:
        return self.run_dir / self.execution_path

    @property
    def verification(self) -> dict[str, Any]:
        verification = self.attempt.get("verification")
        return verification if isinstance(verification, dict) else {}

    def answer_messages(self) -> list[dict[str, Any]]:
        """The assistant message of every saved solver turn."""
        return [response["choices"][0]["message"] for response in self.responses]


class SavedRun:
    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise CurationRefused(f"Run directory not found: {root}")
        collection = read_json(self.root / COLLECTION_FILE)
        if not isinstance(collection, dict) or not isinstance(collection.get("subjects"), list):
            raise CurationRefused(f"Run directory has no readable {COLLECTION_FILE}: {root}")
        self.collection: dict[str, Any] = collection
        run = read_json(self.root / RUN_FILE)
        self.run: dict[str, Any] | None = run if isinstance(run, dict) else None
        fetched = read_json(self.root / FETCHED_FILE)
        published = read_json(self.root / PUBLISHED_FILE)
        self.atlas: dict[str, Any] | None = next(
            (item for item in (fetched, published) if isinstance(item, dict)), None
        )

    # --- the collection ---

    @property
    def source_subject(self) -> dict[str, Any]:
        sources = [s for s in self.collection["subjects"] if s.get("level") == "source"]
        if len(sources) != 1:
            raise CurationRefused("The run's collection does not name exactly one source subject")
        return sources[0]

    @property
    def source_id(self) -> str:
        return str(self.source_subject["source_id"])

    def task_subject(self, task_id: str) -> dict[str, Any]:
        for subject in self.collection["subjects"]:
            if subject.get("level") == "task" and subject.get("task_id") == task_id:
                return subject
        raise CurationRefused(f"The run's collection has no subject for task {task_id}")

    @property
    def collection_id(self) -> str:
        """The SHA-256 of its collection: the review id it has (or will have) once published —
        how the curators' records name a run, never by its folder on this machine."""
        return hashlib.sha256((self.root / COLLECTION_FILE).read_bytes()).hexdigest()

    def named(self) -> dict[str, Any]:
        """This run as the curators' records name it: its review id, and where it was published
        or fetched from when it was."""
        return {"review_id": self.collection_id, "url": (self.atlas or {}).get("url")}

    @property
    def fetched_from(self) -> str | None:
        """The Atlas this directory was fetched from (``fetch_review``), else None: a run this
        machine did not make."""
        fetched = read_json(self.root / FETCHED_FILE)
        if not isinstance(fetched, dict):
            return None
        return str(fetched.get("atlas") or fetched.get("url") or "an Atlas")

    @property
    def review_id(self) -> str | None:
        """The published review this directory holds, when it was published or fetched."""
        value = (self.atlas or {}).get("review_id")
        return value if isinstance(value, str) else None

    # --- the executed checkout ---

    @property
    def executed_checkout(self) -> dict[str, Any]:
        """The MarinSkyRL identity the run executed: ``run.json`` when present, else the
        collection's execution provenance (a fetched review keeps both)."""
        recorded = (self.run or {}).get("marinskyrl")
        if isinstance(recorded, dict) and recorded.get("commit"):
            return {
                "commit": recorded["commit"],
                "dirty": bool(recorded.get("dirty")),
                "python_tree_sha256": recorded.get("python_tree_sha256"),
            }
        provenance = self.collection.get("execution_provenance")
        if isinstance(provenance, dict) and provenance.get("marinskyrl_commit"):
            return {
                "commit": provenance["marinskyrl_commit"],
                "dirty": bool(provenance.get("marinskyrl_dirty")),
                "python_tree_sha256": provenance.get("marinskyrl_python_tree_sha256"),
            }
        raise CurationRefused("The run records no executed MarinSkyRL commit to reproduce at")

    @property
    def recorded_runtime(self) -> dict[str, Any] | None:
        config = (self.run or {}).get("config")
        runtime = config.get("runtime") if isinstance(config, dict) else None
        return runtime if isinstance(runtime, dict) else None

    # --- attempts ---

    def finished_attempts(self) -> list[SavedAttempt]:
        """Every task's finished attempt (``tasks/NNNN/attempt.json``), in folder order."""
        tasks = self.root / "tasks"
        if not tasks.is_dir():
            return []
        return [
            self.attempt(folder.name)
            for folder in sorted(tasks.iterdir())
            if TASK_FOLDER.match(folder.name) and (folder / "attempt.json").is_file()
        ]

    def attempt(self, selector: str) -> SavedAttempt:
        """``0000``, ``tasks/0000`` (the task's finished attempt) or ``tasks/0000/execution-000``
        (that very execution)."""
        text = selector.strip().strip("/")
        folder_match = TASK_FOLDER.match(text)
        execution_match = EXECUTION.match(text)
        if folder_match:
            task_folder = f"tasks/{folder_match.group(1)}"
            finished = read_json(self.root / task_folder / "attempt.json")
            if not isinstance(finished, dict) or not isinstance(
                finished.get("execution_path"), str
            ):
                raise CurationRefused(f"{task_folder} has no finished attempt in {self.root}")
            execution_path = finished["execution_path"]
        elif execution_match:
            task_folder = f"tasks/{execution_match.group(1)}"
            execution_path = f"{task_folder}/{execution_match.group(2)}"
        elif (relative := normalized_relative(text)) and EXECUTION_NAME.match(relative):
            # An execution elsewhere in the run: a panel make_review --reuse copied in.
            task_folder, execution_path = relative.rpartition("/")[0], relative
        else:
            raise CurationRefused(
                f"Name an attempt as NNNN, tasks/NNNN or tasks/NNNN/execution-NNN: {selector}"
            )
        relative = relative_form(execution_path)
        if (
            relative is None
            or not EXECUTION_NAME.match(relative)
            or not resolves_inside(self.root / relative, self.root)
        ):
            raise CurationRefused(
                f"{task_folder} names an execution outside the run: {execution_path!r}"
            )
        execution_path = relative
        execution = self.root / execution_path
        saved_input = read_json(execution / "input.json")
        attempt = read_json(execution / "attempt.json")
        if not isinstance(saved_input, dict) or not isinstance(saved_input.get("task"), dict):
            raise CurationRefused(f"{execution_path} has no saved native input (input.json)")
        if not isinstance(attempt, dict):
            raise CurationRefused(f"{execution_path} has no finished attempt.json")
        return SavedAttempt(
            run_dir=self.root,
            task_folder=task_folder,
            execution_path=execution_path,
            task=saved_input["task"],
            model=saved_input.get("model") or {},
            config=saved_input.get("config") or {},
            attempt=attempt,
            responses=tuple(_saved_responses(execution, execution_path)),
        )


def _saved_responses(execution: Path, execution_path: str) -> list[dict[str, Any]]:
    """Each solver turn's saved chat completion; without the turn files (an older run), the
    assistant messages of ``solver-trace.json`` as completions."""
    solver = execution / "solver"
    turns = sorted(
        (int(match.group(1)), folder)
        for folder in (solver.iterdir() if solver.is_dir() else ())
        if (match := TURN.match(folder.name))
    )
    responses = []
    for _number, folder in turns:
        response = read_json(folder / "response.json")
        if not _is_completion(response):
            raise CurationRefused(
                f"{execution_path}/solver/{folder.name} has no saved chat completion to replay"
            )
        responses.append(response)
    if responses:
        return responses
    trace = read_json(execution / "solver-trace.json")
    messages = trace.get("messages") if isinstance(trace, dict) else None
    return [
        completion_of(message)
        for message in messages or []
        if isinstance(message, dict) and message.get("role") == "assistant"
    ]


def _is_completion(value: Any) -> bool:
    choices = value.get("choices") if isinstance(value, dict) else None
    return (
        isinstance(choices, list)
        and len(choices) == 1
        and isinstance(choices[0], dict)
        and isinstance(choices[0].get("message"), dict)
    )


def completion_of(message: dict[str, Any], *, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion carrying one assistant message (a replayed or supplied answer)."""
    return {
        "id": "replay",
        "object": "chat.completion",
        "created": 0,
        "model": "replay",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": None,
    }


def answer_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
