"""The model client (review-production.md §2.1, §8.4): any OpenAI-compatible chat-completions
endpoint through ``httpx``.

Every attempt is its own ``call-NNN/`` with ``request.json`` (the body only: the Authorization
header is never written), the raw ``response.json`` and ``http-error.txt`` on an HTTP error.
HTTP 429, 5xx, timeouts and connection failures are retried a bounded number of times with
exponential backoff.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from reviews.production.config import ModelConfig
from reviews.production.errors import ReviewProductionError
from reviews.production.launcher import Interrupted
from reviews.production.rundir import write_json_file

CALL_DIR = re.compile(r"^call-(\d{3,})$")
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF_SECONDS = 30.0
# httpx logs every request at INFO; the progress line already counts calls.
logging.getLogger("httpx").setLevel(logging.WARNING)


@dataclass
class CallStats:
    """Calls and retries made in this process, for the progress line."""

    calls: int = 0
    retries: int = 0
    model_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, *, seconds: float, retry: bool) -> None:
        with self._lock:
            self.calls += 1
            self.model_seconds += seconds
            if retry:
                self.retries += 1


def next_call_dir(stage_dir: Path) -> Path:
    """The next ``call-NNN`` after every existing one: a resume never overwrites a raw call."""
    numbers = [
        int(match.group(1))
        for entry in (stage_dir.iterdir() if stage_dir.is_dir() else ())
        if (match := CALL_DIR.match(entry.name))
    ]
    return stage_dir / f"call-{max(numbers, default=-1) + 1:03d}"


class ModelClient:
    def __init__(self, *, model: ModelConfig, stop: threading.Event, connections: int = 8) -> None:
        self.model = model
        self.stop = stop
        self.stats = CallStats()
        self._http = httpx.Client(
            timeout=httpx.Timeout(model.timeout),
            limits=httpx.Limits(max_connections=max(connections, 1)),
        )

    def close(self) -> None:
        self._http.close()

    def complete(self, *, stage_dir: Path, body: dict[str, Any]) -> tuple[dict[str, Any], Path]:
        """POST ``body`` to ``<base_url>/chat/completions``; returns the parsed answer and its
        ``call-NNN`` folder."""
        url = f"{self.model.base_url}/chat/completions"
        attempts = self.model.max_retries + 1
        reason = ""
        for attempt in range(attempts):
            if self.stop.is_set():
                raise Interrupted()
            call_dir = next_call_dir(stage_dir)
            call_dir.mkdir(parents=True)
            write_json_file(call_dir / "request.json", body)
            started = time.monotonic()
            try:
                response = self._http.post(url, json=body, headers=self._headers())
            except httpx.TimeoutException as exc:
                reason = f"timeout after {self.model.timeout:g} s ({type(exc).__name__})"
                (call_dir / "http-error.txt").write_text(reason + "\n", encoding="utf-8")
            except httpx.TransportError as exc:
                reason = f"connection failed ({type(exc).__name__}: {exc})"
                (call_dir / "http-error.txt").write_text(reason + "\n", encoding="utf-8")
            else:
                (call_dir / "response.json").write_text(response.text, encoding="utf-8")
                if response.status_code < 400:
                    self.stats.record(seconds=time.monotonic() - started, retry=attempt > 0)
                    try:
                        return response.json(), call_dir
                    except ValueError:
                        raise ReviewProductionError(
                            "Model endpoint returned invalid JSON; raw response saved in "
                            f"{call_dir}"
                        ) from None
                reason = f"HTTP {response.status_code}"
                (call_dir / "http-error.txt").write_text(
                    f"{reason}\n{response.text}\n", encoding="utf-8"
                )
                if response.status_code not in RETRIED_STATUSES:
                    self.stats.record(seconds=time.monotonic() - started, retry=attempt > 0)
                    raise ReviewProductionError(
                        f"Model endpoint answered {reason}; raw response saved in {call_dir}"
                    )
            self.stats.record(seconds=time.monotonic() - started, retry=attempt > 0)
            if attempt + 1 < attempts:
                self._sleep(
                    min(self.model.retry_backoff_seconds * (2**attempt), MAX_BACKOFF_SECONDS)
                )
        raise ReviewProductionError(
            f"Model endpoint failed after {attempts} attempts ({reason}); "
            f"raw calls saved in {stage_dir}"
        )

    def _headers(self) -> dict[str, str]:
        key = self.model.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _sleep(self, seconds: float) -> None:
        # Interruptible: a Ctrl-C during backoff stops at once.
        if self.stop.wait(seconds):
            raise Interrupted()


def response_format(*, mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """How structured output is requested (§2.1.5); answers are validated locally in any mode."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "quality_review", "strict": True, "schema": schema},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def chat_body(
    *, model: ModelConfig, messages: list[dict[str, Any]], schema: dict[str, Any]
) -> dict[str, Any]:
    body: dict[str, Any] = {**model.judge_parameters}
    requested = response_format(mode=model.response_format, schema=schema)
    if requested is not None:
        body["response_format"] = requested
    body.update({"model": model.name, "messages": messages, "stream": False, "n": 1})
    return body


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
