"""Judge and coalescer output (review-production.md §8.4–§8.7, §9.3): the opinion schema, local
validation, the placeholder guard and the stage runner that reuses a valid ``parsed.json``."""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atlas.json_schemas import SchemaValidator
from reviews.collection_checks import SCHEMA_PATH, json_pointer
from reviews.production.errors import ReviewProductionError
from reviews.production.model_client import ModelClient, chat_body
from reviews.production.rundir import read_json, write_json_file

FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
TAG_NAMESPACE = "^[a-z][a-z0-9_-]*$"


class OutputRejected(ReviewProductionError):
    """A model answer that cannot become ``parsed.json``; its raw response stays on disk."""


@functools.cache
def opinion_schema() -> dict[str, Any]:
    """``{summary, verdict, metrics, findings, tags}``, all required, nothing else — derived from
    the collection schema (its verdicts, metric values and findings without ``id``)."""
    collection = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    definitions = collection["$defs"]
    review = definitions["review"]["properties"]
    finding = definitions["finding"]["properties"]
    severity = finding["severity"]["enum"]

    def finding_variant(kind: str, severities: list[Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "dimension": copy.deepcopy(finding["dimension"]),
                "text": copy.deepcopy(finding["text"]),
                "severity": {"enum": severities},
                "kind": {"const": kind},
            },
            "required": ["dimension", "text", "severity", "kind"],
            "additionalProperties": False,
        }

    return {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "verdict": copy.deepcopy(review["verdict"]),
            "metrics": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "key": {"type": "string", "minLength": 1},
                        "value": copy.deepcopy(definitions["metric"]["properties"]["value"]),
                        "scale": {"type": "null"},
                    },
                    "required": ["key", "value", "scale"],
                    "additionalProperties": False,
                },
            },
            "findings": {
                "type": "array",
                "items": {
                    "anyOf": [
                        finding_variant("issue", severity),
                        finding_variant("observation", ["info", None]),
                    ]
                },
            },
            "tags": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "namespace": {"type": "string", "pattern": TAG_NAMESPACE},
                        "value": {"type": "string", "minLength": 1},
                    },
                    "required": ["namespace", "value"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["summary", "verdict", "metrics", "findings", "tags"],
        "additionalProperties": False,
    }


@functools.cache
def synthesis_schema() -> dict[str, Any]:
    """``{syntheses: [opinion + subject_id]}`` (§9.2)."""
    item = copy.deepcopy(opinion_schema())
    item["properties"]["subject_id"] = {"type": "string", "minLength": 1}
    item["required"] = [*item["required"], "subject_id"]
    return {
        "type": "object",
        "properties": {"syntheses": {"type": "array", "items": item}},
        "required": ["syntheses"],
        "additionalProperties": False,
    }


@functools.cache
@functools.cache
def _validator(kind: str) -> SchemaValidator:
    return SchemaValidator(opinion_schema() if kind == "opinion" else synthesis_schema())


def has_content(text: Any) -> bool:
    return isinstance(text, str) and any(ch.isalnum() for ch in text)


def check_opinion(opinion: Any, *, kind: str = "opinion") -> None:
    """Schema-valid and not a placeholder, else ``OutputRejected``."""
    error = _validator(kind).first_error(opinion)
    if error is not None:
        raise OutputRejected(
            "Judge/coalescer output does not match its schema at "
            f"{json_pointer(error.path)}: {error.message}; raw response saved"
        )
    opinions = opinion["syntheses"] if kind == "synthesis" else [opinion]
    for item in opinions:
        texts = [item["summary"], *(finding["text"] for finding in item["findings"])]
        if not all(has_content(text) for text in texts):
            raise OutputRejected("Judge/coalescer output is a placeholder; raw response saved")


def answer_content(response: Any) -> str:
    """The one choice's text; a truncated answer is refused (§8.4)."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or len(choices) != 1:
        raise OutputRejected(
            "Judge/coalescer response must contain exactly one choice; raw response saved"
        )
    choice = choices[0] if isinstance(choices[0], dict) else {}
    if choice.get("finish_reason") == "length":
        raise OutputRejected(
            "Judge/coalescer output was truncated; raw response saved, stage remains incomplete"
        )
    content = (choice.get("message") or {}).get("content")
    if not isinstance(content, str):
        raise OutputRejected("Judge/coalescer response has no text content; raw response saved")
    return content


def parse_answer(content: str) -> Any:
    fenced = FENCED.match(content)
    text = fenced.group(1) if fenced else content
    try:
        return json.loads(text)
    except ValueError as exc:
        raise OutputRejected(
            f"Judge/coalescer output is not JSON ({exc}); raw response saved"
        ) from None


def _asked_with(stage_dir: Path, messages: list[dict[str, Any]]) -> bool:
    """Whether the stage's last call was made with these messages: a saved answer is reused only
    for matching inputs (a changed judge opinion must reach the coalescer again)."""
    last = max(
        (p for p in stage_dir.iterdir() if p.is_dir() and p.name.startswith("call-")),
        default=None,
        key=lambda p: p.name,
    )
    request = read_json(last / "request.json") if last is not None else None
    return isinstance(request, dict) and request.get("messages") == messages


def run_stage(
    *,
    client: ModelClient,
    stage_dir: Path,
    messages: list[dict[str, Any]],
    kind: str = "opinion",
    extra_check: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """One judge, segment, consolidation or coalescer stage: reuse a ``parsed.json`` that still
    validates, else make one call and write ``parsed.json`` for a valid answer only (§8.7, §12.4).
    """
    parsed_path = stage_dir / "parsed.json"
    cached = read_json(parsed_path) if parsed_path.is_file() else None
    if cached is not None and _asked_with(stage_dir, messages):
        try:
            check_opinion(cached, kind=kind)
            if extra_check is not None:
                extra_check(cached)
            return cached
        except OutputRejected:
            pass  # a cached placeholder or stale answer is not reused: the stage runs again
    schema = opinion_schema() if kind == "opinion" else synthesis_schema()
    body = chat_body(model=client.model, messages=messages, schema=schema)
    response, _call_dir = client.complete(stage_dir=stage_dir, body=body)
    try:
        answer = parse_answer(answer_content(response))
        check_opinion(answer, kind=kind)
        if extra_check is not None:
            extra_check(answer)
    except OutputRejected:
        parsed_path.unlink(missing_ok=True)
        raise
    write_json_file(parsed_path, answer)
    return answer
