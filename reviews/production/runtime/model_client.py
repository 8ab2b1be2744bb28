"""The model client: any OpenAI-compatible chat-completions
endpoint.

Every attempt is its own ``call-NNN/`` with ``request.json`` (the body only: the Authorization
header is never written), the raw ``response.json`` and ``http-error.txt`` on an HTTP error or a
call that produced no answer. HTTP 429, 5xx, deadlines and connection failures are retried a
bounded number of times with exponential backoff — except answers that name the request itself
(its structured-output format, a prompt longer than the server's context): those are the
configuration's fault, and retrying them only costs prompt evaluation.

``model.timeout`` is a deadline for the whole call and ``model.max_response_bytes`` caps the
answer (``bounded_http``); setting ``stop`` cancels every call in flight. At most
``model.max_concurrency`` calls are in flight at once (else the server's ``/props``
``total_slots``, else one per connection); the others queue here, before their deadline starts,
so the deadline measures the server and not our own queue.

Public API (also used by other production commands): ``ModelClient.complete``, ``chat_body``,
``structured_output``, ``stage_label``, ``CallStats``, ``ModelRefused``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviews.production.runtime.bounded_http import (
    DEADLINE,
    STOPPED,
    BoundedHttp,
    CallFailed,
    InFlight,
)
from reviews.production.runtime.concurrency import EndpointSlots, SlotCounts, SlotWaitStopped
from reviews.production.runtime.config import ModelConfig
from reviews.production.runtime.credentials import redacted
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.launcher import Interrupted
from reviews.production.runtime.prompt_room import PromptRoom, discover
from reviews.production.runtime.rundir import write_json_file

CALL_DIR = re.compile(r"^call-(\d{3,})$")
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF_SECONDS = 30.0
REASON_CHARACTERS = 300
# An error body that talks about the request's structured-output format.
FORMAT_WORDS = re.compile(
    r"response_format|json_schema|json_object|guided_|structured_output|grammar|\bschema\b",
    re.IGNORECASE,
)
# An error body saying the prompt (plus the output budget) does not fit the server's context.
CONTEXT_WORDS = re.compile(
    r"context[_ ]length|maximum context|context window|context size|exceeds? (?:the )?"
    r"(?:available )?context|n_ctx|max_model_len|too many tokens|prompt is too long",
    re.IGNORECASE,
)
CONTEXT_NUMBER = re.compile(
    r"(?:maximum context length is|context window of|context size (?:of|is)|"
    r"\bn_ctx\"?\s*[:=]|max_model_len\"?\s*[:=]|context length of)\s*(\d+)",
    re.IGNORECASE,
)


class ModelRefused(ReviewProductionError):
    """The endpoint refused the request itself (not an outage): retrying cannot help."""


@dataclass
class CallStats:
    """Calls and retries made in this process, for the progress line."""

    calls: int = 0
    retries: int = 0
    reasks: int = 0
    model_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, *, seconds: float) -> None:
        with self._lock:
            self.calls += 1
            self.model_seconds += seconds

    def record_retry(self) -> None:
        """A retry is counted when it is decided, not when it ends: a retry queued behind a
        one-slot server shows in the progress line for the whole time it waits."""
        with self._lock:
            self.retries += 1

    def record_reask(self) -> None:
        with self._lock:
            self.reasks += 1


def next_call_dir(stage_dir: Path) -> Path:
    """The next ``call-NNN`` after every existing one: a resume never overwrites a raw call."""
    numbers = [
        int(match.group(1))
        for entry in (stage_dir.iterdir() if stage_dir.is_dir() else ())
        if (match := CALL_DIR.match(entry.name))
    ]
    return stage_dir / f"call-{max(numbers, default=-1) + 1:03d}"


def stage_label(stage_dir: Path) -> str:
    """How a person names a stage: ``task 0003 judge 2 segment 001``, ``coalescer``."""
    parts = stage_dir.parts
    words: list[str] = []
    for index, part in enumerate(parts):
        following = parts[index + 1] if index + 1 < len(parts) else None
        if part == "tasks" and following is not None:
            words = [f"task {following}"]
        elif part == "judges" and following is not None and words:
            words.append(f"judge {following}")
        elif part == "segments" and following is not None and words:
            words.append(f"segment {following}")
        elif part == "coalescer":
            words = ["coalescer"]
        elif part == "batches" and following is not None and words == ["coalescer"]:
            words.append(f"batch {following}")
        elif part == "source" and words == ["coalescer"]:
            words.append("source synthesis")
    return " ".join(words) or stage_dir.name


def server_reason(text: str) -> str:
    """The server's own words from an error body (OpenAI ``error.message``, FastAPI ``detail``,
    a plain ``message`` or the text itself), on one line and shortened."""
    reason: Any = text
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        error = document.get("error")
        if isinstance(error, dict):
            reason = error.get("message") or error
        elif error:
            reason = error
        elif "detail" in document:
            reason = document["detail"]
        elif "message" in document:
            reason = document["message"]
    if not isinstance(reason, str):
        reason = json.dumps(reason, ensure_ascii=False)
    reason = " ".join(reason.split())
    if len(reason) > REASON_CHARACTERS:
        reason = reason[: REASON_CHARACTERS - 1] + "…"
    return reason or "no reason given"


def context_limit_in(text: str) -> int | None:
    """The context size a context-length error states, when it states one."""
    match = CONTEXT_NUMBER.search(text)
    return int(match.group(1)) if match else None


class ModelClient:
    def __init__(self, *, model: ModelConfig, stop: threading.Event, connections: int = 8) -> None:
        self.model = model
        self.stop = stop
        self.stats = CallStats()
        self._http = BoundedHttp(stop=stop, connections=connections)
        # Until the server says how many requests it serves at once, as many as the pool holds.
        self.slots = EndpointSlots(limit=model.max_concurrency or connections)
        # None while the limit is the default, so the run's files do not depend on --jobs.
        self.concurrency_source: str | None = (
            "model.max_concurrency" if model.max_concurrency else None
        )
        # Where notes for the person at the terminal go (the progress line), when anywhere.
        self.on_note: Callable[[str], None] | None = None
        # How the person goes on after a failed call: make_review resumes; a tool that keeps
        # nothing (synthesise_source) says to run it again.
        self.next_step = "run again with --resume (finished stages are kept)"

    def close(self) -> None:
        self._http.close()

    def prompt_room(self) -> PromptRoom:
        """The endpoint's context as configured and as the server reports it; the server's
        slot count bounds the calls in flight when ``model.max_concurrency`` is not set."""
        room = discover(model=self.model, http=self._http, headers=self._headers())
        if self.model.max_concurrency is None and room.server_slots is not None:
            self.slots.set_limit(room.server_slots)
            self.concurrency_source = "the server's /props total_slots"
        return room

    def concurrency(self) -> SlotCounts:
        return self.slots.counts()

    def concurrency_record(self) -> dict[str, Any]:
        """How many calls a run let be in flight at once, and why (``endpoint.json``); no
        number when neither the setting nor the server gave one (the connection pool holds)."""
        if self.concurrency_source is None:
            return {"max_concurrency": None,
                    "concurrency_source": "unlimited beyond the connection pool (not set, and "
                                          "the server reports no slots)"}  # fmt: skip
        return {"max_concurrency": self.slots.counts().limit,
                "concurrency_source": self.concurrency_source}  # fmt: skip

    def in_flight(self) -> list[InFlight]:
        """The calls running now (label, elapsed), for the progress line."""
        return self._http.in_flight()

    def complete(
        self, *, stage_dir: Path, body: dict[str, Any], label: str | None = None
    ) -> tuple[dict[str, Any], Path]:
        """POST ``body`` to ``<base_url>/chat/completions``; returns the parsed answer and its
        ``call-NNN`` folder. Every failure message names the stage and the saved file."""
        label = label or stage_label(stage_dir)
        url = f"{self.model.base_url}/chat/completions"
        attempts = self.model.max_retries + 1
        data = json.dumps(body).encode("utf-8")
        key = self.model.api_key()
        # An endpoint that echoes the bearer key (in its answer or an error) must not have it
        # written anywhere: every byte of an answer is redacted before it is saved or parsed.
        secrets = [key] if key else []
        reason = ""
        call_dir = stage_dir
        deadline = False  # whether the last failure was the deadline (its help differs)
        for attempt in range(attempts):
            if self.stop.is_set():
                raise Interrupted()
            call_dir = next_call_dir(stage_dir)
            call_dir.mkdir(parents=True)
            write_json_file(call_dir / "request.json", body)
            try:
                # The deadline starts inside the slot: time queued here is not the server's.
                with self.slots.held(stop=self.stop):
                    answer = self._http.request(
                        "POST",
                        url,
                        timeout=self.model.timeout,
                        max_bytes=self.model.max_response_bytes,
                        label=label,
                        content=data,
                        headers=self._headers(),
                    )
            except SlotWaitStopped:
                raise Interrupted() from None
            except CallFailed as failure:
                self.stats.record(seconds=0.0)
                deadline = failure.kind == DEADLINE
                if failure.kind == STOPPED:
                    raise Interrupted() from None
                if failure.partial:
                    (call_dir / "response.partial").write_bytes(redacted(failure.partial, secrets))
                reason = redacted(failure.reason.encode(), secrets).decode()
                if failure.kind == "too_large":
                    _write_error(call_dir, f"refused: {reason}")
                    raise ModelRefused(
                        f"{label}: the model endpoint's answer was refused: {reason} "
                        f"(model.max_response_bytes); saved in {call_dir}"
                    ) from None
                _write_error(call_dir, reason)
            else:
                self.stats.record(seconds=answer.seconds)
                deadline = False
                answer = dataclasses.replace(answer, body=redacted(answer.body, secrets))
                (call_dir / "response.json").write_bytes(answer.body)
                if answer.status < 400:
                    try:
                        parsed = json.loads(answer.body)
                    except ValueError:
                        parsed = None
                    if not isinstance(parsed, dict):
                        raise ReviewProductionError(
                            f"{label}: the model endpoint answered with invalid JSON; raw "
                            f"response saved in {call_dir}"
                        )
                    return parsed, call_dir
                text = answer.text
                said = server_reason(text)
                reason = f"HTTP {answer.status}: {said}"
                _write_error(call_dir, f"HTTP {answer.status}\n{text}")
                refusal = self._refusal(status=answer.status, text=text, said=said)
                if refusal is not None:
                    raise ModelRefused(f"{label}: {refusal}; raw response saved in {call_dir}")
            if attempt + 1 < attempts:
                self.stats.record_retry()
                self.note(f"{label}: {reason}; retrying")
                self.pause(self.model.retry_backoff_seconds * (2**attempt))
        raise ReviewProductionError(
            f"{label}: the model endpoint failed after {attempts} attempts ({reason}); "
            f"raw calls saved in {stage_dir}, the last in {call_dir.name}. "
            f"{self._outage_help(deadline)}"
        )

    def _outage_help(self, deadline: bool) -> str:
        """What helps a call that kept failing: a longer deadline, or the server back."""
        if deadline:
            return (
                f"If the server is only slow, raise model.timeout (now {self.model.timeout:g} s; "
                "time queued for model.max_concurrency is not counted) or lower "
                f"review_parameters.max_tokens, then {self.next_step}"
            )
        return (
            f"Check that the server at model.base_url ({self.model.base_url}) is up "
            f"(model.max_retries sets how often a call is tried), then {self.next_step}"
        )

    def _refusal(self, *, status: int, text: str, said: str) -> str | None:
        """Why an error answer is not worth retrying, or None for an outage (429, 5xx)."""
        if CONTEXT_WORDS.search(text):
            limit = context_limit_in(text)
            hint = (
                f"set model.context_tokens to {limit}"
                if limit is not None and limit != self.model.context_tokens
                else "set model.context_tokens to the server's context size"
            )
            return (
                f"the prompt does not fit the server's context (HTTP {status}: {said}); {hint} "
                "so that evidence is segmented to fit"
            )
        if FORMAT_WORDS.search(text) and self.model.response_format != "none":
            return (
                f"the server refused the structured-output request (model.response_format "
                f"{self.model.response_format}; HTTP {status}: {said}); choose the dialect it "
                "speaks: json_schema, json_object_schema, guided_json, structured_outputs, "
                "json_object or none"
            )
        if status not in RETRIED_STATUSES:
            return f"the model endpoint answered HTTP {status}: {said}"
        return None

    def _headers(self) -> dict[str, str]:
        key = self.model.api_key()
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def pause(self, seconds: float) -> None:
        """A backoff (at most 30 s) that a Ctrl-C ends at once."""
        if self.stop.wait(min(seconds, MAX_BACKOFF_SECONDS)):
            raise Interrupted()

    def note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)


def _write_error(call_dir: Path, text: str) -> None:
    (call_dir / "http-error.txt").write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def structured_output(*, mode: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The body fields that ask for schema-shaped output in each server's dialect;
    answers are validated locally whatever the mode.

    - ``json_schema``: OpenAI, Together, vLLM, SGLang (``response_format`` of type json_schema)
    - ``json_object_schema``: llama.cpp and llama-cpp-python (json_object with a ``schema``)
    - ``guided_json``: vLLM before 0.12 (its guided-decoding extra)
    - ``structured_outputs``: vLLM 0.12 and later (``structured_outputs.json``)
    - ``json_object``: any JSON object, no schema; ``none``: plain text
    """
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "quality_review", "strict": True, "schema": schema},
            }
        }
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "guided_json":
        return {"guided_json": schema}
    if mode == "structured_outputs":
        return {"structured_outputs": {"json": schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def response_format(*, mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` field alone (None when the dialect uses another field)."""
    return structured_output(mode=mode, schema=schema).get("response_format")


def chat_body(
    *, model: ModelConfig, messages: list[dict[str, Any]], schema: dict[str, Any]
) -> dict[str, Any]:
    body: dict[str, Any] = {**model.judge_parameters}
    # The config refuses structured-output keys in the parameters, so nothing here overrides
    # the chosen dialect.
    body.update(structured_output(mode=model.response_format, schema=schema))
    body.update({"model": model.name, "messages": messages, "stream": False, "n": 1})
    return body


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
