"""What a task of a source looks like: the sampled tasks of its current review, shown on the
source page (through ``atlas.contributions``) — each task's prompt excerpt, its native verifier
outcome, the independent judges' verdicts and the combined one, with links to the attempt and to
the review.

Everything comes from published evidence: the collection's task subjects and reviews, and each
attempt's saved ``input.json`` (the task as the worker received it). Nothing is inferred: a task
whose input was not published says so, and an unknown population stays "Unknown". Three queries:
the collection, which evidence is published, the inputs of the previewed tasks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from atlas.models import Source
from reviews.labels import verdict_label
from reviews.links import artifact_page_url, review_page_url
from reviews.models import Review, ReviewArtifact
from reviews.pages.native_outcome import outcome_of
from reviews.pages.review_page import card_anchor

# A preview, not the review: the first tasks in sample order; the review page has them all.
PREVIEW_LIMIT = 10
EXCERPT_CHARS = 320
# Larger saved inputs are not read for an excerpt (a packed task can carry whole files).
MAX_INPUT_BYTES = 256 * 1024
INPUT_NAME = "input.json"
UNKNOWN = "Unknown"


@dataclass(frozen=True)
class JudgeVerdict:
    reviewer: str
    verdict: str


@dataclass(frozen=True)
class SampledTask:
    task_id: str
    row_text: str
    prompt: str | None  # the excerpt; None when the task's input was not published
    prompt_note: str  # why there is no excerpt, or that it was shortened
    outcome: str  # the native verifier's result, in words
    outcome_state: str  # "passed", "failed" or "unverified": the outcome's chip
    judges: list[JudgeVerdict]
    combined: str | None
    attempt_url: str | None
    review_url: str


def prompt_text(prompt: Any) -> str | None:
    """The words a model was asked: the text of the user turns of a chat prompt (the last one
    first matters most, but the order of the conversation is kept), or a plain string prompt."""
    if isinstance(prompt, str):
        return prompt.strip() or None
    if isinstance(prompt, list):
        parts = []
        for message in prompt:
            if not isinstance(message, dict) or message.get("role") not in ("user", None):
                continue
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                content = " ".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            if isinstance(content, str) and content.strip():
                parts.append(content.strip())
        return "\n\n".join(parts) or None
    return None


def excerpt(text: str) -> tuple[str, bool]:
    """The first ``EXCERPT_CHARS`` characters, cut at a word; whether anything was cut."""
    if len(text) <= EXCERPT_CHARS:
        return text, False
    cut = text[:EXCERPT_CHARS].rsplit(None, 1)[0] if " " in text[:EXCERPT_CHARS] else text
    return cut[:EXCERPT_CHARS].rstrip() + "…", True


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _attributes(review: dict[str, Any]) -> dict[str, Any]:
    return _object(review.get("attributes"))


def _input_path(review: dict[str, Any] | None) -> str | None:
    if review is None:
        return None
    execution = _attributes(review).get("execution_path")
    if isinstance(execution, str) and execution.strip("/"):
        return f"{execution.strip('/')}/{INPUT_NAME}"
    return None


def _attempt_path(review: dict[str, Any] | None, owned: set[str]) -> str | None:
    """The attempt's own record (``attempt.json``), else the first published evidence file."""
    if review is None:
        return None
    paths = [
        item.get("snapshot_path")
        for item in review.get("evidence") or []
        if isinstance(item, dict) and item.get("snapshot_path") in owned
    ]
    attempt = next((path for path in paths if str(path).endswith("attempt.json")), None)
    return attempt or (paths[0] if paths else None)


def _published(
    *, review_id: str, evidence: list[str], inputs: list[str]
) -> tuple[set[str], dict[str, str | None]]:
    """Which of the wanted paths are artifacts of the review, and the saved inputs by path (None
    for one too large to read for an excerpt): two queries."""
    sizes = dict(
        ReviewArtifact.objects.filter(review_id=review_id, path__in=evidence + inputs).values_list(
            "path", "size"
        )
    )
    contents: dict[str, str | None] = {path: None for path in inputs if path in sizes}
    small = [path for path in contents if sizes[path] <= MAX_INPUT_BYTES]
    if small:
        contents.update(
            ReviewArtifact.objects.filter(review_id=review_id, path__in=small).values_list(
                "path", "content"
            )
        )
    return set(sizes), contents


def _prompt(*, path: str | None, inputs: dict[str, str | None]) -> tuple[str | None, str]:
    if path is None or path not in inputs:
        return None, "The task's input was not published with this review."
    content = inputs[path]
    if content is None:
        return None, "The task's saved input is too large to preview; open the attempt."
    try:
        document = json.loads(content)
    except ValueError:
        return None, "The task's saved input is not JSON; open the attempt."
    task = document.get("task") if isinstance(document, dict) else None
    text = prompt_text(task.get("prompt")) if isinstance(task, dict) else None
    if text is None:
        return None, "The saved input holds no text prompt (the task may live in its files)."
    shown, cut = excerpt(text)
    return shown, "Excerpt; the full prompt is in the attempt." if cut else ""


def sampled_tasks(*, source: Source) -> dict[str, Any] | None:
    """The section's context, or None when the source has no current review with task
    subjects (an imported audit, for instance, samples no tasks)."""
    review_id = source.display_review_id
    if not review_id:
        return None
    review = Review.objects.filter(id=review_id).only("id", "collection").first()
    if review is None or not isinstance(review.collection, dict):
        return None
    collection = review.collection
    subjects = [
        subject
        for subject in collection.get("subjects") or []
        if isinstance(subject, dict) and subject.get("level") == "task"
    ]
    if not subjects:
        return None
    by_subject: dict[Any, list[dict[str, Any]]] = {}
    for item in collection.get("reviews") or []:
        if isinstance(item, dict):
            by_subject.setdefault(item.get("subject_id"), []).append(item)
    superseded = {
        item.get("supersedes_review_id")
        for items in by_subject.values()
        for item in items
        if item.get("supersedes_review_id")
    }
    shown = subjects[:PREVIEW_LIMIT]
    runtime = {
        subject.get("id"): _first(by_subject, subject.get("id"), "runtime_execution", superseded)
        for subject in shown
    }
    owned, inputs = _published(
        review_id=review_id,
        evidence=_evidence_paths(list(runtime.values())),
        inputs=_input_paths(runtime),
    )
    page = review_page_url(review_id)
    tasks = []
    for subject in shown:
        items = [
            item
            for item in by_subject.get(subject.get("id"), [])
            if item.get("id") not in superseded
        ]
        native = runtime[subject.get("id")]
        outcome, state = outcome_of(native)
        prompt, note = _prompt(path=_input_path(native), inputs=inputs)
        attempt = _attempt_path(native, owned)
        combined = next((i for i in items if i.get("method") == "synthesis"), None)
        row_index = subject.get("row_index")
        tasks.append(
            SampledTask(
                task_id=str(subject.get("task_id") or UNKNOWN),
                row_text=f"row {row_index:,}" if isinstance(row_index, int) else "row Unknown",
                prompt=prompt,
                prompt_note=note,
                outcome=outcome,
                outcome_state=state,
                judges=[
                    JudgeVerdict(
                        reviewer=str((item.get("reviewer") or {}).get("label") or "Judge"),
                        verdict=verdict_label(item.get("verdict")),
                    )
                    for item in items
                    if item.get("method") == "model_judgment"
                ],
                combined=verdict_label(combined.get("verdict")) if combined else None,
                attempt_url=artifact_page_url(review_id, attempt) if attempt else None,
                review_url=page
                + "#"
                + card_anchor(
                    collection_id=review_id,
                    review_item_id=(combined or native or {}).get("id"),
                )
                if combined or native
                else page,
            )
        )
    population = _population(collection)
    return {
        "review_url": page,
        "tasks": tasks,
        "sampled": len(subjects),
        "shown": len(shown),
        "population": f"{population:,}" if population is not None else UNKNOWN,
    }


def _first(
    by_subject: dict[Any, list[dict[str, Any]]], subject_id: Any, method: str, superseded: set
) -> dict[str, Any] | None:
    return next(
        (
            item
            for item in by_subject.get(subject_id, [])
            if item.get("method") == method and item.get("id") not in superseded
        ),
        None,
    )


def _evidence_paths(reviews: list[dict[str, Any] | None]) -> list[str]:
    return [
        str(item.get("snapshot_path"))
        for review in reviews
        if review
        for item in review.get("evidence") or []
        if isinstance(item, dict) and item.get("snapshot_path")
    ]


def _input_paths(runtime: dict[Any, dict[str, Any] | None]) -> list[str]:
    return [path for path in (_input_path(review) for review in runtime.values()) if path]


def _population(collection: dict[str, Any]) -> int | None:
    """The source population the sample was drawn from, as the source synthesis recorded it."""
    source_ids = {
        subject.get("id")
        for subject in collection.get("subjects") or []
        if isinstance(subject, dict) and subject.get("level") == "source"
    }
    for item in collection.get("reviews") or []:
        if isinstance(item, dict) and item.get("subject_id") in source_ids:
            coverage = _object(item.get("coverage"))
            count = coverage.get("population_count")
            if isinstance(count, int) and not isinstance(count, bool):
                return count
    return None
