"""The tests' OpenAI-compatible model server: the product's scripted chat server
(``reviews.production.examples.chat_server``) plus what tests need from a remote model.

The remote model is the one part of production that tests replace. On top of the core (request
recording, responders per model, the chat-completions answer shape) this layer answers from a
queue of scripted replies first, can fail the first k calls with 429/500, and behaves as the real
servers reviewers run do, each behaviour opt-in:

- a context size (``context_tokens``): a prompt plus its ``max_tokens`` over it is refused with
  HTTP 400 and the body of the chosen server (``context_style``: llama-cpp-python, vLLM or
  llama.cpp's own server); ``advertise_context`` reports it as vLLM does (``"models"``:
  ``max_model_len`` in ``GET /v1/models``) or as llama.cpp does (``"props"``: ``n_ctx`` in
  ``GET /props``); llama-cpp-python reports it nowhere (the default);
- refused structured-output dialects (``refused_formats``: a dialect name, as
  ``model_client.structured_output`` names them, to the HTTP status the server answers with —
  llama-cpp-python answers OpenAI's ``json_schema`` with a 500);
- ``max_tokens`` honoured (``honour_max_tokens``): a longer answer is cut, with
  ``finish_reason: length``;
- replies whose body is trickled (``Reply.trickle_seconds``) or huge (``Reply.size_bytes``);
- ``usage.prompt_tokens`` counted by ``approximate_tokens`` on every answer;
- scripted answers to GET paths (``routes``: an Atlas API row, a hostile endpoint);
- a slot count (``total_slots``) reported in ``GET /props`` as llama.cpp's server reports it;
- chat requests held (``hold``) until the test releases them (``release``), with the number in
  flight now and the most ever in flight (``in_flight``, ``peak_in_flight``), so a test observes
  how many calls a client lets run at once by events, not timing.

Tokens are approximated (word runs, single punctuation marks and whitespace runs each count as
one), which is close to what BPE tokenizers do on JSON and code and is the same in every run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from reviews.production.examples import chat_server
from reviews.production.examples.chat_server import ChatServer, RecordedRequest, Responder
from tests.waiting import DEADLINE_SECONDS

__all__ = ["Flight", "ModelServer", "RecordedRequest", "Reply", "Responder", "completion"]

TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


@dataclass
class Reply(chat_server.Reply):
    # Send the body one byte at a time, this many seconds apart (a stalled server).
    trickle_seconds: float = 0.0
    # Instead of ``body``: this many bytes of filler, streamed without being held in memory.
    size_bytes: int = 0
    declare_length: bool = True


def completion(content: str | None, *, model: str = "test-model", **kwargs: Any) -> dict:
    """A chat completion in the OpenAI response shape."""
    return chat_server.completion(content, model=model, **kwargs)


@functools.lru_cache(maxsize=256)
def approximate_tokens(text: str) -> int:
    # Kept per text: a task's three judges send the same prompt, and counting a 30 KB prompt
    # was half of this server's CPU, which the benchmarks' runs share two cores with.
    return len(TOKEN.findall(text))


def prompt_tokens(body: Any) -> int:
    """The approximate prompt size of a chat request: its messages' contents plus a few tokens
    of chat template per message."""
    if not isinstance(body, dict):
        return 0
    messages = body.get("messages") or []
    return sum(approximate_tokens(str(m.get("content") or "")) + 4 for m in messages)


def context_error(*, style: str, limit: int, prompt: int, completion: int) -> dict[str, Any]:
    """The 400 body each server answers a prompt over its context with."""
    requested = prompt + completion
    if style == "llama_server":
        return {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": limit,
            }
        }
    message = (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{requested} tokens ({prompt} in the messages, {completion} in the completion). "
        "Please reduce the length of the messages or completion."
    )
    if style == "vllm":
        return {"object": "error", "message": message, "type": "BadRequestError",
                "param": None, "code": 400}  # fmt: skip
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def requested_dialect(body: Any) -> str:
    """Which structured-output dialect a request body uses (model_client's names)."""
    if not isinstance(body, dict):
        return "none"
    if "guided_json" in body:
        return "guided_json"
    if "structured_outputs" in body:
        return "structured_outputs"
    requested = body.get("response_format")
    if isinstance(requested, dict):
        if requested.get("type") == "json_schema":
            return "json_schema"
        if requested.get("type") == "json_object":
            return "json_object_schema" if "schema" in requested else "json_object"
    return "none"


@dataclass(frozen=True)
class Flight:
    """The chat requests the server is answering, as one consistent snapshot."""

    in_flight: int  # received and not yet answered (held ones included)
    peak: int  # the most ever in flight at once
    held: int  # waiting for a release now
    credits: int  # releases granted and not yet taken
    holding: bool


class ModelServer(ChatServer):
    def __init__(
        self,
        *,
        latency: float = 0.0,
        default: Responder | None = None,
        context_tokens: int | None = None,
        context_style: str = "llama_cpp_python",
        advertise_context: str | None = None,
        refused_formats: dict[str, int] | None = None,
        honour_max_tokens: bool = False,
        total_slots: int | None = None,
    ) -> None:
        super().__init__(latency=latency, default=default)
        self.total_slots = total_slots
        self.context_tokens = context_tokens
        self.context_style = context_style
        self.advertise_context = advertise_context
        self.refused_formats = dict(refused_formats or {})
        self.honour_max_tokens = honour_max_tokens
        self.routes: dict[str, chat_server.Reply] = {}
        self._queue: list[chat_server.Reply] = []
        self._fail_remaining = 0
        self._fail_status = 500
        self.in_flight = 0
        self.peak_in_flight = 0
        self._flight = threading.Condition()
        self._holding = False
        self._releases = 0
        self._held = 0

    # --- scripting ---

    def enqueue(self, *replies: chat_server.Reply | dict[str, Any]) -> None:
        """Replies served, in order, before any responder."""
        with self.lock:
            self._queue.extend(
                r if isinstance(r, chat_server.Reply) else Reply(body=r) for r in replies
            )

    def fail_first(self, count: int, *, status: int = 500) -> None:
        with self.lock:
            self._fail_remaining = count
            self._fail_status = status

    def hold(self) -> None:
        """From now on every chat request waits, in flight, until ``release`` lets it answer."""
        with self._flight:
            self._holding = True

    def release(self, count: int = 1) -> None:
        with self._flight:
            self._releases += count
            self._flight.notify_all()

    def release_all(self) -> None:
        """Stop holding: every waiting request and every later one is answered at once."""
        with self._flight:
            self._holding = False
            self._flight.notify_all()

    @contextlib.contextmanager
    def releasing_one_by_one(self) -> Iterator[None]:
        """While the block runs every chat request is held and then released alone: the next one
        only once the previous release was taken, so requests a client sends together pile up
        in flight as they would at a busy server."""

        def releaser() -> None:
            while True:
                now = self.wait_for_flight(
                    lambda f: not f.holding or (f.held > 0 and f.credits == 0),
                    what="a held request to release",
                    seconds=None,  # ends when the block ends, however long the run takes
                )
                if not now.holding:
                    return
                self.release(1)

        self.hold()
        thread = threading.Thread(target=releaser, name="model-server-releaser", daemon=True)
        thread.start()
        try:
            yield
        finally:
            self.release_all()
            thread.join()

    def flight(self) -> Flight:
        with self._flight:
            return self._snapshot()

    def wait_for_flight(
        self,
        condition: Callable[[Flight], bool],
        *,
        what: str,
        seconds: float | None = DEADLINE_SECONDS,
    ) -> Flight:
        """The first snapshot that meets ``condition`` (woken by every change, not polled);
        AssertionError naming ``what`` past the deadline."""
        with self._flight:
            if not self._flight.wait_for(lambda: condition(self._snapshot()), timeout=seconds):
                raise AssertionError(f"not reached within {seconds} s: {what}")
            return self._snapshot()

    def _snapshot(self) -> Flight:
        return Flight(
            in_flight=self.in_flight, peak=self.peak_in_flight, held=self._held,
            credits=self._releases, holding=self._holding,
        )  # fmt: skip

    def start(self) -> ModelServer:
        super().start()
        return self

    def stop(self) -> None:
        self.release_all()  # a held request must not keep a handler thread past the test
        super().stop()

    def __enter__(self) -> ModelServer:
        return self.start()

    # --- what is answered ---

    def answer(self, request: RecordedRequest) -> chat_server.Reply:
        with self._flight:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self._flight.notify_all()
            self._held += 1
            self._flight.notify_all()
            while self._holding and self._releases == 0:
                self._flight.wait()
            self._held -= 1
            if self._holding:
                self._releases -= 1
            self._flight.notify_all()
        try:
            return self._answer(request)
        finally:
            with self._flight:
                self.in_flight -= 1
                self._flight.notify_all()

    def _answer(self, request: RecordedRequest) -> chat_server.Reply:
        refused = self._limits(request)
        if refused is not None:
            return refused
        with self.lock:
            if self._fail_remaining > 0:
                self._fail_remaining -= 1
                failure: chat_server.Reply | None = Reply(
                    status=self._fail_status, body={"error": "scripted failure"}
                )
            else:
                failure = None
            queued = self._queue.pop(0) if failure is None and self._queue else None
        if failure is not None or queued is not None:
            if self.latency:
                time.sleep(self.latency)
            reply = failure or queued
            assert reply is not None
        else:
            reply = super().answer(request)
        if reply.status == 200 and isinstance(reply.body, dict) and not _size(reply):
            body = _with_usage(request, reply.body, honour_max_tokens=self.honour_max_tokens)
            reply = dataclasses.replace(reply, body=body)
        return reply

    def describe(self, path: str) -> chat_server.Reply:
        """Scripted GET routes, then ``/v1/models`` (vLLM's shape, with ``max_model_len`` when
        advertised) and ``/props`` (llama.cpp's)."""
        if path in self.routes:
            return self.routes[path]
        if path.rstrip("/").endswith("/models"):
            listing = super().describe(path)
            entries = [
                {**entry, "owned_by": "tests"}
                | (
                    {"max_model_len": self.context_tokens}
                    if self.advertise_context == "models"
                    else {}
                )
                for entry in listing.body["data"]
            ]
            return Reply(body={**listing.body, "data": entries})
        if path.rstrip("/") == "/props" and (
            self.advertise_context == "props" or self.total_slots is not None
        ):
            # llama.cpp's server always reports its slots (one unless started with --parallel).
            props: dict[str, Any] = {"total_slots": self.total_slots or 1}
            if self.advertise_context == "props":
                props["default_generation_settings"] = {"n_ctx": self.context_tokens}
            return Reply(body=props)
        return super().describe(path)

    def send(self, handler: BaseHTTPRequestHandler, reply: chat_server.Reply) -> None:
        size, trickle = _size(reply), getattr(reply, "trickle_seconds", 0.0)
        if not size and not trickle:
            super().send(handler, reply)
            return
        data = b"" if size else json.dumps(reply.body).encode("utf-8")
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json")
        if getattr(reply, "declare_length", True):
            handler.send_header("Content-Length", str(size or len(data)))
        else:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        try:
            if size:
                chunk = b" " * 65536
                for start in range(0, size, len(chunk)):
                    handler.wfile.write(chunk[: size - start])
            else:
                for index in range(len(data)):
                    handler.wfile.write(data[index : index + 1])
                    handler.wfile.flush()
                    time.sleep(trickle)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client gave up, as it may

    def _limits(self, request: RecordedRequest) -> chat_server.Reply | None:
        """The refusals a real server makes before generating anything."""
        dialect = requested_dialect(request.body)
        if dialect in self.refused_formats:
            return Reply(
                status=self.refused_formats[dialect],
                body={"error": {"message": f"response_format of this kind is not supported: "
                                           f"{dialect}", "type": "internal_server_error"}},
            )  # fmt: skip
        if self.context_tokens is not None:
            prompt = prompt_tokens(request.body)
            body = request.body if isinstance(request.body, dict) else {}
            completion = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
            if prompt + completion > self.context_tokens:
                return Reply(
                    status=400,
                    body=context_error(
                        style=self.context_style, limit=self.context_tokens, prompt=prompt,
                        completion=completion,
                    ),
                )  # fmt: skip
        return None


def _size(reply: chat_server.Reply) -> int:
    return int(getattr(reply, "size_bytes", 0) or 0)


def _with_usage(
    request: RecordedRequest, body: dict[str, Any], *, honour_max_tokens: bool
) -> dict[str, Any]:
    """Counted usage, and (when honoured) an answer longer than ``max_tokens`` cut as a real
    server cuts it."""
    choices = body.get("choices")
    if not isinstance(choices, list):
        return body
    limit = request.body.get("max_tokens") if isinstance(request.body, dict) else None
    if not honour_max_tokens:
        limit = None
    completion = 0
    cut = []
    for choice in choices:
        content = ((choice or {}).get("message") or {}).get("content")
        if isinstance(content, str):
            pieces = TOKEN.findall(content)
            if isinstance(limit, int) and len(pieces) > limit:
                choice = {
                    **choice,
                    "message": {**choice["message"], "content": "".join(pieces[:limit])},
                    "finish_reason": "length",
                }
                pieces = pieces[:limit]
            completion += len(pieces)
        cut.append(choice)
    prompt = prompt_tokens(request.body)
    return {
        **body,
        "choices": cut,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }  # fmt: skip
