"""One OpenAI-compatible chat-completions server for tests and benchmarks (stdlib HTTP in a thread).

The remote model is the one part of production that tests replace. The server records every
request (path, headers, JSON body), answers from a queue of scripted replies first and otherwise
from the responder registered for the request's ``model`` field (several scripted models can share
one server), can fail the first k calls with 429/500 and can add a fixed latency to every call.

It also behaves as the real servers reviewers run do (issue 25), each behaviour opt-in:

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
- ``usage.prompt_tokens`` counted by ``approximate_tokens`` on every answer.

Tokens are approximated (word runs, single punctuation marks and whitespace runs each count as
one), which is close to what BPE tokenizers do on JSON and code and is the same in every run.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def system(self) -> str:
        first = self.messages[0] if self.messages else {}
        return first.get("content", "") if first.get("role") == "system" else ""

    @property
    def user_payload(self) -> Any:
        """The last user message parsed as JSON (judge and coalescer inputs), else None."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                try:
                    return json.loads(message.get("content") or "")
                except ValueError:
                    return None
        return None


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Send the body one byte at a time, this many seconds apart (a stalled server).
    trickle_seconds: float = 0.0
    # Instead of ``body``: this many bytes of filler, streamed without being held in memory.
    size_bytes: int = 0
    declare_length: bool = True


TOKEN = re.compile(r"\w+|[^\w\s]|\s+")


def approximate_tokens(text: str) -> int:
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


Responder = Callable[[RecordedRequest], "Reply | dict[str, Any]"]


def completion(
    content: str, *, model: str = "test-model", finish_reason: str = "stop", choices: int = 1
) -> dict[str, Any]:
    """A chat completion in the OpenAI response shape."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
            for index in range(choices)
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


class ModelServer:
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
    ) -> None:
        self.honour_max_tokens = honour_max_tokens
        self.latency = latency
        self.default = default
        self.context_tokens = context_tokens
        self.context_style = context_style
        self.advertise_context = advertise_context
        self.refused_formats = dict(refused_formats or {})
        self.models: dict[str, Responder] = {}
        # Scripted answers to GET requests by path (an Atlas API row, a hostile endpoint).
        self.routes: dict[str, Reply] = {}
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._fail_remaining = 0
        self._fail_status = 500
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---

    def enqueue(self, *replies: Reply | dict[str, Any]) -> None:
        """Replies served, in order, before any responder."""
        with self._lock:
            self._queue.extend(r if isinstance(r, Reply) else Reply(body=r) for r in replies)

    def fail_first(self, count: int, *, status: int = 500) -> None:
        with self._lock:
            self._fail_remaining = count
            self._fail_status = status

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # --- lifecycle ---

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ModelServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                request = RecordedRequest(
                    method="GET", path=self.path, headers=dict(self.headers.items()), body=None
                )
                with server._lock:
                    server.requests.append(request)
                self._send(server._describe(self.path))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(
                    method="POST", path=self.path, headers=dict(self.headers.items()), body=body
                )
                self._send(server._answer(request))

            def _send(self, reply: Reply) -> None:
                data = b"" if reply.size_bytes else json.dumps(reply.body).encode("utf-8")
                length = reply.size_bytes or len(data)
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.declare_length:
                    self.send_header("Content-Length", str(length))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    if reply.size_bytes:
                        chunk = b" " * 65536
                        for start in range(0, reply.size_bytes, len(chunk)):
                            self.wfile.write(chunk[: reply.size_bytes - start])
                    elif reply.trickle_seconds:
                        for index in range(len(data)):
                            self.wfile.write(data[index : index + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_seconds)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up, as it may

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

    def _describe(self, path: str) -> Reply:
        """``/v1/models`` (vLLM's shape, with ``max_model_len``) and ``/props`` (llama.cpp's)."""
        if path in self.routes:
            return self.routes[path]
        if path.rstrip("/").endswith("/models"):
            names = sorted(self.models) or ["test-model"]
            entries = [{"id": name, "object": "model", "owned_by": "tests"} for name in names]
            if self.advertise_context == "models":
                entries = [{**entry, "max_model_len": self.context_tokens} for entry in entries]
            return Reply(body={"object": "list", "data": entries})
        if path.rstrip("/") == "/props" and self.advertise_context == "props":
            return Reply(body={"default_generation_settings": {"n_ctx": self.context_tokens},
                               "total_slots": 1})  # fmt: skip
        return Reply(status=404, body={"error": f"no route {path}"})

    def _limits(self, request: RecordedRequest) -> Reply | None:
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

    def _answer(self, request: RecordedRequest) -> Reply:
        reply = self._reply(request)
        if reply.status == 200 and isinstance(reply.body, dict) and not reply.size_bytes:
            body = _with_usage(request, reply.body, honour_max_tokens=self.honour_max_tokens)
            reply = Reply(**{**reply.__dict__, "body": body})
        return reply

    def _reply(self, request: RecordedRequest) -> Reply:
        refused = self._limits(request)
        if refused is not None:
            with self._lock:
                self.requests.append(request)
            return refused
        with self._lock:
            self.requests.append(request)
            if self._fail_remaining > 0:
                self._fail_remaining -= 1
                failure = Reply(status=self._fail_status, body={"error": "scripted failure"})
            else:
                failure = None
            queued = self._queue.pop(0) if failure is None and self._queue else None
        if self.latency:
            time.sleep(self.latency)
        if failure is not None:
            return failure
        if queued is not None:
            return queued
        responder = self.models.get(request.model or "", self.default)
        if responder is None:
            return Reply(status=404, body={"error": f"unknown model {request.model}"})
        answer = responder(request)
        return answer if isinstance(answer, Reply) else Reply(body=answer)


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
