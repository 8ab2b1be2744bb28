"""Server-side trace viewers.

static/reviews/trace_viewers.js implements the same rules for lazily loaded viewers and must emit
the same markup: both build the tree through one ``el(tag, attrs, children)`` shape, and the tests
compare their output. Where JSON semantics differ between Python and JavaScript (number formatting,
object key order), this module follows JavaScript so both render identically.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from html import escape
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from atlas.jsonio import json_values

TRUNCATION_BYTES = 2 * 1024 * 1024
TRUNCATION_NOTE = "Showing the first 2 MiB; download the original artifact for the rest."
ALERT_KEYS = frozenset(
    {"issue", "issues", "error", "errors", "defect", "defects", "failure", "failures",
     "error_message"}
)  # fmt: skip
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")
_JS_SAFE_INTEGER = 2**53
# How deep the viewers nest containers, JSON embedded in strings included: a value nested deeper
# (model text can hold any brackets) is shown as its text. Every accepted artifact renders, and the
# renderers' recursion stays far from any limit.
RENDER_DEPTH = json_values.MAX_DEPTH


def el(tag: str, attrs: dict[str, str | None] | None = None, children: Sequence[str] = ()) -> str:
    """Markup of one element; text children are passed through ``text``."""
    rendered = "".join(
        f' {name}="{escape(value)}"' for name, value in (attrs or {}).items() if value is not None
    )
    return f"<{tag}{rendered}>{''.join(children)}</{tag}>"


def text(value: str) -> str:
    return escape(value, quote=False)


def render_artifact(*, path: str, content: str) -> SafeString:
    encoded = content.encode("utf-8")
    parts = []
    if len(encoded) > TRUNCATION_BYTES:
        content = encoded[:TRUNCATION_BYTES].decode("utf-8", "ignore")
        parts.append(el("p", {"class": "tv-note"}, [text(TRUNCATION_NOTE)]))
    parts.append(_render_body(path, content))
    return mark_safe(el("div", {"class": "trace-viewer"}, parts))


def render_value_html(value: Any) -> SafeString:
    """A parsed JSON value as nested definition lists (review attributes on the page)."""
    return mark_safe(el("div", {"class": "trace-viewer"}, [_render_value(_js_order(value))]))


def _render_body(path: str, content: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(".jsonl"):
        return _render_jsonl(content)
    ok, value = _parse(content)
    if ok and isinstance(value, dict):
        if name == "response.json" and isinstance(value.get("choices"), list):
            return _render_chat_response(value)
        if name == "request.json" and isinstance(value.get("messages"), list):
            return _render_chat_request(value)
    if ok and (isinstance(value, dict | list) or name.endswith(".json")):
        return _render_value(value)
    return el("pre", {"class": "tv-text"}, [text(content)])


def _parse(raw: str, *, room: int = RENDER_DEPTH) -> tuple[bool, Any]:
    """The JSON value of ``raw`` if it is one nested within ``room`` levels (else it is text)."""
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False, None
    if json_values.deeper_than(value, max_depth=max(room, 0)) is not None:
        return False, None
    return True, _js_order(value)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _js_order(value: Any) -> Any:
    """JavaScript objects list array-index keys first, ascending; mirror that order."""
    if isinstance(value, list):
        return [_js_order(item) for item in value]
    if not isinstance(value, dict):
        return value
    indexes = sorted((k for k in value if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1), key=int)
    others = [k for k in value if k not in set(indexes)]
    return {key: _js_order(value[key]) for key in [*indexes, *others]}


def _number(value: int | float) -> str:
    """Number.prototype.toString: shortest round-trip digits, JavaScript's exponent thresholds."""
    if isinstance(value, int) and abs(value) <= _JS_SAFE_INTEGER:
        return str(value)
    number = float(value)
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    if not isinstance(exponent, int):  # NaN ('n'/'N'; parsing refuses it) or infinity ('F')
        raise ValueError(f"Not a finite number: {value!r}")
    digits = "".join(str(d) for d in digit_tuple)
    k, n = len(digits), exponent + len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    power = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"


def _scalar_text(value: Any) -> str:
    if value is None:
        return "Not recorded"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _entry_label(item: Any, index: int) -> str:
    if isinstance(item, dict):
        if "task_id" in item:
            return f"Task {index} · {_scalar_text(item['task_id'])}"
        for key in ("event", "type"):
            if key in item:
                return f"Event {index} · {_scalar_text(item[key])}"
    return f"Entry {index}"


def _none_recorded() -> str:
    return el("span", {"class": "tv-empty"}, ["None recorded"])


def _render_value(value: Any, depth: int = 0) -> str:
    """``value`` drawn ``depth`` containers below the top of the viewer."""
    if value is None:
        return el("span", {"class": "tv-null"}, ["Not recorded"])
    if isinstance(value, bool):
        return el("span", {"class": "tv-bool"}, ["Yes" if value else "No"])
    if isinstance(value, int | float):
        return el("span", {"class": "tv-number"}, [_number(value)])
    if isinstance(value, str):
        return _render_string(value, depth)
    if isinstance(value, list):
        return _render_list(value, depth)
    return _render_object(value, depth)


def _render_string(value: str, depth: int) -> str:
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        ok, parsed = _parse(stripped, room=RENDER_DEPTH - depth)
        if ok and isinstance(parsed, dict | list):
            return _render_value(parsed, depth)
    if "\n" in value:
        return el("pre", {"class": "tv-text"}, [text(value)])
    return el("span", {"class": "tv-string"}, [text(value)])


def _render_list(items: list[Any], depth: int) -> str:
    if not items:
        return _none_recorded()
    if any(isinstance(item, dict | list) for item in items):
        entries = [
            el(
                "details",
                {"class": "tv-entry"},
                [
                    el("summary", None, [text(_entry_label(item, i))]),
                    _render_value(item, depth + 1),
                ],
            )
            for i, item in enumerate(items, start=1)
        ]
        return el("div", {"class": "tv-entries"}, entries)
    entries = [el("li", None, [_render_value(item, depth + 1)]) for item in items]
    return el("ol", {"class": "tv-list"}, entries)


def _render_object(value: dict[str, Any], depth: int) -> str:
    if not value:
        return _none_recorded()
    children = []
    for key, item in value.items():
        alert = key.lower() in ALERT_KEYS
        children.append(el("dt", {"class": "tv-key tv-alert" if alert else "tv-key"}, [text(key)]))
        dd_class = "tv-alert" if alert else None
        children.append(el("dd", {"class": dd_class}, [_render_value(item, depth + 1)]))
    return el("dl", {"class": "tv-object"}, children)


def _render_jsonl(content: str) -> str:
    entries = []
    for number, raw_line in enumerate(content.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        if not line.strip():
            continue
        ok, value = _parse(line)
        label = _entry_label(value, number) if ok else f"Line {number}"
        body = _render_value(value) if ok else el("pre", {"class": "tv-text"}, [text(line)])
        summary = el("summary", None, [text(label)])
        entries.append(el("details", {"class": "tv-entry"}, [summary, body]))
    return el("div", {"class": "tv-jsonl"}, entries or [_none_recorded()])


def _render_chat_response(response: dict[str, Any]) -> str:
    meta = el(
        "dl",
        {"class": "tv-object"},
        [
            el("dt", {"class": "tv-key"}, ["Model"]),
            el("dd", None, [text(_scalar_text(response.get("model")))]),
            el("dt", {"class": "tv-key"}, ["Request id"]),
            el("dd", None, [text(_scalar_text(response.get("id")))]),
        ],
    )
    usage = el(
        "details",
        {"class": "tv-entry"},
        [el("summary", None, ["Token usage"]), _render_value(response.get("usage"))],
    )
    choices = [_render_choice(choice) for choice in response["choices"]]
    if not choices:
        choices = [el("p", {"class": "tv-empty"}, ["No final text returned"])]
    return el("div", {"class": "tv-chat-response"}, [meta, usage, *choices])


def _render_choice(choice: Any) -> str:
    choice = choice if isinstance(choice, dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    finish = choice.get("finish_reason")
    parts = [
        el(
            "p",
            {"class": "tv-finish tv-alert" if finish == "length" else "tv-finish"},
            [text(f"Finish reason: {_scalar_text(finish)}")],
        )
    ]
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        parts.append(
            el(
                "details",
                {"class": "tv-thinking"},
                [el("summary", None, ["Thinking"]), _text_or_value(reasoning)],
            )
        )
    content = message.get("content")
    if (isinstance(content, str) and content.strip()) or (isinstance(content, list) and content):
        heading = el("h4", None, ["Assistant response"])
        parts.append(el("section", {"class": "tv-assistant"}, [heading, _text_or_value(content)]))
    else:
        parts.append(el("p", {"class": "tv-empty"}, ["No final text returned"]))
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        summary = el("summary", None, [text(f"Tool calls ({len(tool_calls)})")])
        parts.append(
            el("details", {"class": "tv-tool-calls"}, [summary, _render_value(tool_calls)])
        )
    return el("div", {"class": "tv-choice"}, parts)


def _render_chat_request(request: dict[str, Any]) -> str:
    messages = request["messages"]
    items = []
    for message in messages:
        if not isinstance(message, dict):
            items.append(el("li", {"class": "tv-message"}, [_render_value(message)]))
            continue
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        children = [
            el("p", {"class": "tv-role"}, [text(_scalar_text(message.get("role")))]),
            _text_or_value(message.get("content")),
        ]
        if extra:
            children.append(_render_value(extra))
        items.append(el("li", {"class": "tv-message"}, children))
    parameters = {k: v for k, v in request.items() if k != "messages"}
    return el(
        "div",
        {"class": "tv-chat-request"},
        [
            el("h4", None, [text(f"Messages ({len(messages)})")]),
            el("ol", {"class": "tv-messages"}, items),
            el("h4", None, ["Generation parameters"]),
            _render_value(parameters),
        ],
    )


def _text_or_value(value: Any) -> str:
    """Model text stays preformatted even on one line; structured content renders as JSON."""
    if isinstance(value, str):
        return el("pre", {"class": "tv-text"}, [text(value)])
    return _render_value(value)
