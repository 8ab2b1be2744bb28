"""How much prompt a call may carry: the endpoint's context, the room its output
needs, and a conservative estimate of a prompt's tokens.

The context comes from ``model.context_tokens`` and, where the server says so, from the server
itself: vLLM and SGLang report ``max_model_len`` (Together ``context_length``) in ``/v1/models``,
llama.cpp's server ``n_ctx`` in ``/props`` (which also says how many requests it serves at once,
``total_slots``). When both are known the smaller one holds. With no
known context, prompts are sized in bytes as before (48,000-byte segments).

Tokens are estimated without the model's tokenizer: every run of ASCII letters, every other
letter, every digit, every punctuation mark and every run of whitespace counts as one token, and
every non-ASCII character adds one more per extra UTF-8 byte. Measured against SmolLM2's BPE
tokenizer on gsm8k judge prompts (captured code, hashes, logs, JSON escapes) the estimate is 1.05
to 1.4 times the real count — never below it — so a prompt sized by it fits. Tokenizers with larger
vocabularies produce fewer tokens still.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from reviews.production.runtime.bounded_http import BoundedHttp, CallFailed
from reviews.production.runtime.config import ModelConfig

SEGMENT_LIMIT_BYTES = 48_000
# The chat template's own tokens around a system and a user message (role markers, separators).
TEMPLATE_TOKENS = 64
# The room kept for an answer when the parameters set no max_tokens.
DEFAULT_OUTPUT_TOKENS = 2048
DISCOVERY_SECONDS = 10.0
DISCOVERY_MAX_BYTES = 4 * 1024 * 1024
TOKEN = re.compile(r"[A-Za-z]+|[^\W\d_]|\d|[^\w\s]|\s+|_")
CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def estimated_tokens(text: str) -> int:
    """A conservative token count of ``text`` (see the module docstring)."""
    return len(TOKEN.findall(text)) + len(text.encode("utf-8", "surrogatepass")) - len(text)


def json_tokens(value: Any) -> int:
    return estimated_tokens(json.dumps(value, ensure_ascii=False))


def output_tokens_of(parameters: dict[str, Any]) -> int | None:
    """The answer budget the judge parameters set, if any."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = parameters.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def json_size(value: Any) -> int:
    """The UTF-8 bytes of ``value`` as JSON: a prompt's size when the context is unknown."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


@dataclass(frozen=True)
class Room:
    """What one call's user message may hold, in one unit: bytes when the context is unknown,
    estimated tokens when it is known."""

    unit: str
    limit: int

    def size(self, value: Any) -> int:
        return json_tokens(value) if self.unit == "tokens" else json_size(value)

    def fits(self, value: Any) -> bool:
        return self.size(value) <= self.limit

    def describe(self, amount: int) -> str:
        return f"{amount:,} {'estimated tokens' if self.unit == 'tokens' else 'bytes'}"


@dataclass(frozen=True)
class PromptRoom:
    """The endpoint's limits as a run sizes its prompts by them."""

    context_tokens: int | None
    context_source: str
    max_tokens: int | None  # the judges' configured answer budget
    # How many requests the server says it serves at once (llama.cpp's /props total_slots):
    # the model client queues the rest itself rather than let their deadlines run out there.
    server_slots: int | None = None
    # What serves the endpoint, as far as its answers tell (shown beside every judgment).
    server_kind: str = "an OpenAI-compatible server (it names no kind)"

    @property
    def output_tokens(self) -> int:
        """The room an answer needs: the configured budget, else a default."""
        return self.max_tokens if self.max_tokens is not None else DEFAULT_OUTPUT_TOKENS

    def room(self, *, system: str, output_tokens: int | None = None) -> Room:
        """The user message's room beside ``system`` and the answer."""
        if self.context_tokens is None:
            return Room(unit="bytes", limit=SEGMENT_LIMIT_BYTES)
        answer = self.output_tokens if output_tokens is None else output_tokens
        limit = self.context_tokens - answer - TEMPLATE_TOKENS - estimated_tokens(system)
        return Room(unit="tokens", limit=limit)

    def record(self) -> dict[str, Any]:
        return {
            "context_tokens": self.context_tokens,
            "context_source": self.context_source,
            "max_tokens": self.max_tokens,
            "output_tokens_reserved": self.output_tokens if self.context_tokens else None,
            "token_estimate": "conservative (prompt_room.estimated_tokens)"
            if self.context_tokens
            else None,
            "endpoint_kind": self.server_kind,
        }


UNBOUNDED = PromptRoom(context_tokens=None, context_source="unknown", max_tokens=None)


def discover(*, model: ModelConfig, http: BoundedHttp, headers: dict[str, str]) -> PromptRoom:
    """The configured context, and the server's own where it reports one (the smaller holds);
    the server's slot count where it reports one."""
    configured = model.context_tokens
    root = model.base_url.removesuffix("/v1")
    props = _get(http, f"{root}/props", headers)
    props = props if isinstance(props, dict) else {}
    listing = _get(http, f"{model.base_url}/models", headers)
    entries = listing.get("data") if isinstance(listing, dict) else None
    named = [
        entry
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict)
        and (entry.get("id") == model.name or (isinstance(entries, list) and len(entries) == 1))
    ]
    advertised, where = _advertised(entries=named, props=props)
    max_tokens = output_tokens_of(model.judge_parameters)
    slots = props.get("total_slots")
    server_slots = slots if _is_size(slots) else None
    if configured is not None and (advertised is None or configured <= advertised):
        source = "model.context_tokens"
        if advertised is not None:
            source += f" (the server reports {advertised:,} in {where})"
        context, context_source = configured, source
    elif advertised is not None:
        source = f"the server's {where}"
        if configured is not None:
            source += f" (smaller than model.context_tokens {configured:,})"
        context, context_source = advertised, source
    else:
        context, context_source = None, "unknown"
    return PromptRoom(
        context_tokens=context, context_source=context_source, max_tokens=max_tokens,
        server_slots=server_slots, server_kind=_server_kind(entries=named, props=props),
    )  # fmt: skip


# ``owned_by`` values that name the serving software in ``/v1/models``.
OWNERS = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp server"}


def _server_kind(*, entries: list[dict[str, Any]], props: dict[str, Any]) -> str:
    """The serving software, named only by what the server itself answers."""
    if "total_slots" in props or "default_generation_settings" in props:
        return "llama.cpp server (answers /props)"
    for entry in entries:
        owner = str(entry.get("owned_by") or "").casefold()
        if owner in OWNERS:
            return f"{OWNERS[owner]} (/v1/models owned_by {owner})"
        if "max_model_len" in entry:
            return "vLLM or SGLang (/v1/models max_model_len)"
    return PromptRoom.server_kind


def _advertised(*, entries: list[dict[str, Any]], props: dict[str, Any]) -> tuple[int | None, str]:
    for entry in entries:
        for key in CONTEXT_KEYS:
            value = entry.get(key)
            if _is_size(value):
                return value, f"/v1/models {key}"
    settings = props.get("default_generation_settings")
    for holder in (settings, props):
        value = holder.get("n_ctx") if isinstance(holder, dict) else None
        if _is_size(value):
            return value, "/props n_ctx"
    return None, ""


def _get(http: BoundedHttp, url: str, headers: dict[str, str]) -> Any:
    """A JSON answer, or None for anything else: discovery is best effort."""
    try:
        answer = http.request(
            "GET", url, timeout=DISCOVERY_SECONDS, max_bytes=DISCOVERY_MAX_BYTES,
            headers=headers, label="endpoint discovery",
        )  # fmt: skip
    except CallFailed:
        return None
    if answer.status != 200:
        return None
    try:
        return json.loads(answer.body)
    except ValueError:
        return None


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
