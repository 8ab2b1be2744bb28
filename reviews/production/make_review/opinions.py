"""Judge and coalescer output: the opinion
schema, lenient parsing with strict validation, the placeholder and word-salad guards, cited paths
checked against the evidence, and the stage runner that reuses a valid ``parsed.json`` and re-asks
a refused answer a bounded number of times.

Public API (also used by other production commands): ``run_stage``, ``check_opinion``,
``parse_answer``, ``Citations``, ``opinion_schema``, ``synthesis_schema``, ``OutputRejected``."""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.jsonio.json_schemas import SchemaValidator
from reviews.production.format.collection_checks import SCHEMA_PATH, json_pointer
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.model_client import ModelClient, chat_body, stage_label
from reviews.production.runtime.prompt_room import output_tokens_of
from reviews.production.runtime.rundir import read_json, write_json_file

FENCED = re.compile(r"```(?:json|JSON)?\s*(.*?)\s*```", re.DOTALL)
TAG_NAMESPACE = "^[a-z][a-z0-9_-]*$"


TRUNCATED = "output was truncated (finish_reason length)"


class OutputRejected(ReviewProductionError):
    """A model answer that cannot become ``parsed.json``; its raw response stays on disk.
    ``reason`` is the short reason; ``truncated`` marks an answer cut by its output budget."""

    def __init__(self, reason: str, *, truncated: bool = False, help: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.truncated = truncated
        # The setting or action that helps when every ask is refused for this reason.
        self.help = help


class AnswersRefused(OutputRejected):
    """Every ask of a stage was refused (``refusals``, of ``asks``): the stage stays incomplete.
    Its message says how make_review goes on; another tool words its own next step."""

    def __init__(self, message: str, *, refusals: list[OutputRejected], asks: int) -> None:
        super().__init__(message, truncated=all(refusal.truncated for refusal in refusals))
        self.refusals = refusals
        self.asks = asks


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
    """``{syntheses: [opinion + subject_id]}``."""
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
def _validator(kind: str) -> SchemaValidator:
    return SchemaValidator(opinion_schema() if kind == "opinion" else synthesis_schema())


def has_content(text: Any) -> bool:
    return isinstance(text, str) and any(ch.isalnum() for ch in text)


WORD = re.compile(r"[^\W\d_]{2,}")
# A relative artifact path as opinions cite them: folders, a file name and a letter-led suffix.
CITED_PATH = re.compile(
    r"(?<![\w/.:-])(?:[\w.-]+/)+[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])"
)
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
# A file named alone (``verifier.log``): a citation when some evidence path ends with it.
FILE_NAME = re.compile(r"(?<![\w/.:-])[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])")
SUMMARY_WORDS = 3
FINDING_WORDS = 2


def is_prose(text: str, *, words: int) -> bool:
    """At least ``words`` words of two or more letters: ``"of_10, "`` and ``"I, 1, "`` are not."""
    return len(WORD.findall(text)) >= words


# Words that name an attempt's outcome: what the verifier did with the solver's answer.
OUTCOME_WORDS = re.compile(
    r"\b(?:verif|reward|scor|pass|fail|solv|answer|outcome|grad|correct|incorrect|wrong)",
    re.IGNORECASE,
)
# What helps each kind of refused answer, named in the stage's final refusal (``AnswersRefused``).
HELP_FORMAT = (
    "set model.response_format to the structured-output dialect the server speaks "
    "(json_object_schema for llama.cpp and llama-cpp-python) so that answers are constrained "
    "to the schema"
)
HELP_GROUNDING = (
    "the model's answers are not about the task's evidence: use a larger or instruction-tuned "
    "model, or raise model.max_reasks to ask more times"
)
URL_TAIL = ".,;:!?)]}>'\""


@dataclass(frozen=True)
class Citations:
    """What an opinion may cite and must be about.

    ``tails``: every artifact path of its evidence, also by any ``/``-separated tail
    (``gsm8k/utils.py`` for ``native-code/skyrl_gym/envs/gsm8k/utils.py``). ``corpus``: every
    text the model was shown (evidence, the task and its links), in which a cited URL must
    appear; None leaves URLs unchecked. ``task_names`` (the task's id, path, environment and
    route) and ``outcome`` (``passed``/``failed`` when the native verifier decided) are set for
    a judge's opinions of one attempt: each finding must then cite a file of the evidence and
    name the task or its outcome, and a verdict against the outcome's sign must say why."""

    tails: frozenset[str]
    corpus: str | None = None
    task_names: tuple[str, ...] = ()
    outcome: str | None = None

    @classmethod
    def of(
        cls,
        paths: Iterable[str],
        *,
        shown: Any = None,
        task: dict[str, Any] | None = None,
        outcome: dict[str, Any] | None = None,
    ) -> Citations:
        tails: set[str] = set()
        for path in paths:
            parts = path.split("/")
            tails.update("/".join(parts[index:]) for index in range(len(parts)))
        names = tuple(
            value
            for key in ("id", "task_path", "env_id", "route")
            if isinstance(value := (task or {}).get(key), str) and len(value) > 1
        )
        return cls(
            tails=frozenset(tails),
            corpus=corpus_of(shown) if shown is not None else None,
            task_names=names,
            outcome=outcome_sign(outcome) if outcome is not None else None,
        )

    def unknown(self, text: str) -> list[str]:
        return [
            match.group(0)
            for match in CITED_PATH.finditer(URL.sub(" ", text))
            if match.group(0) not in self.tails
        ]

    def unknown_urls(self, text: str) -> list[str]:
        if self.corpus is None:
            return []
        cited = (match.group(0).rstrip(URL_TAIL) for match in URL.finditer(text))
        return [url for url in cited if url not in self.corpus]

    def cites_evidence(self, text: str) -> bool:
        """At least one path of the evidence, or a URL the evidence holds."""
        plain = URL.sub(" ", text)
        if any(
            match.group(0).rstrip(".") in self.tails
            for pattern in (CITED_PATH, FILE_NAME)
            for match in pattern.finditer(plain)
        ):
            return True
        urls = [match.group(0).rstrip(URL_TAIL) for match in URL.finditer(text)]
        return bool(urls) and not self.unknown_urls(text)

    def names_task_or_outcome(self, text: str) -> bool:
        folded = text.casefold()
        return bool(OUTCOME_WORDS.search(text)) or any(
            name.casefold() in folded for name in self.task_names
        )


def outcome_sign(outcome: dict[str, Any]) -> str | None:
    """``passed`` or ``failed`` when the native verifier decided the attempt, else None."""
    verification = outcome.get("verification")
    if not isinstance(verification, dict) or verification.get("status") != "verified":
        return None
    passed = verification.get("passed")
    return ("passed" if passed else "failed") if isinstance(passed, bool) else None


def corpus_of(value: Any) -> str:
    """Every text a model was shown, in which a URL it cites must appear."""
    return "\n".join(_texts(value))


def _texts(value: Any) -> Iterable[str]:
    """Every string in a JSON value, keys included (a task's links may be either)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


# A verdict that runs against the native outcome: it must say why (its summary names it).
AGAINST_OUTCOME = {("keep", "failed"), ("reject", "passed")}


def check_opinion(opinion: Any, *, kind: str = "opinion", cited: Citations | None = None) -> None:
    """Schema-valid, not a placeholder and about the evidence, else ``OutputRejected``."""
    error = _validator(kind).first_error(opinion)
    if error is not None:
        raise OutputRejected(
            f"output does not match its schema at {json_pointer(error.path)}: {error.message}",
            help=HELP_FORMAT,
        )
    opinions = opinion["syntheses"] if kind == "synthesis" else [opinion]
    for item in opinions:
        texts = [item["summary"], *(finding["text"] for finding in item["findings"])]
        if not all(has_content(text) for text in texts):
            raise OutputRejected("output is a placeholder", help=HELP_GROUNDING)
    for item in opinions:
        if not is_prose(item["summary"], words=SUMMARY_WORDS):
            raise _ungrounded(f"the summary {_quoted(item['summary'])} is not a sentence")
        for finding in item["findings"]:
            if not is_prose(finding["text"], words=FINDING_WORDS):
                raise _ungrounded(f"the finding {_quoted(finding['text'])} is not a sentence")
        if cited is not None:
            _check_grounding(item, cited=cited)


def _check_grounding(item: dict[str, Any], *, cited: Citations) -> None:
    for text in [item["summary"], *(finding["text"] for finding in item["findings"])]:
        unknown = cited.unknown(text)
        if unknown:
            raise _ungrounded(f"it cites {_quoted(unknown[0])}, which is not in its evidence")
        urls = cited.unknown_urls(text)
        if urls:
            raise _ungrounded(
                f"it cites the URL {_quoted(urls[0])}, which is neither in its evidence nor "
                "one of the task's links"
            )
    if not cited.task_names:
        return  # a synthesis of reviews: its findings were grounded when they were judged
    for finding in item["findings"]:
        if not cited.cites_evidence(finding["text"]):
            raise _ungrounded(
                f"the finding {_quoted(finding['text'])} cites no file of its evidence"
            )
        if not cited.names_task_or_outcome(finding["text"]):
            raise _ungrounded(
                f"the finding {_quoted(finding['text'])} names neither the task nor its outcome"
            )
    if (item["verdict"], cited.outcome) in AGAINST_OUTCOME and not OUTCOME_WORDS.search(
        item["summary"]
    ):
        raise _ungrounded(
            f"the verdict {item['verdict']} disagrees with the native outcome (the verifier "
            f"{cited.outcome} the attempt) and the summary does not say why"
        )


def _ungrounded(reason: str) -> OutputRejected:
    return OutputRejected(f"output is not about the evidence: {reason}", help=HELP_GROUNDING)


def _quoted(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return ascii(shown) if not shown.isprintable() else repr(shown)


def answer_content(response: Any) -> str:
    """The one choice's text; a truncated answer is refused."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or len(choices) != 1:
        raise OutputRejected(
            "response must contain exactly one choice",
            help="check that model.base_url is an OpenAI-compatible chat-completions endpoint",
        )
    choice = choices[0] if isinstance(choices[0], dict) else {}
    if choice.get("finish_reason") == "length":
        raise OutputRejected(TRUNCATED, truncated=True)
    content = (choice.get("message") or {}).get("content")
    if not isinstance(content, str):
        raise OutputRejected(
            "response has no text content",
            help="a reasoning model may spend its budget thinking: raise "
            "model.review_parameters.max_tokens or turn its reasoning off",
        )
    return content


def parse_answer(content: str) -> Any:
    """Lenient parsing, strict validation after it: control characters inside strings (a
    literal newline), a fenced block, or prose around one JSON object are accepted; the schema
    is applied to whatever is parsed."""
    fenced = FENCED.search(content)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(content.strip())
    start, end = content.find("{"), content.rfind("}")
    if 0 <= start < end:
        candidates.append(content[start : end + 1])
    problem = ""
    for text in candidates:
        try:
            return json.loads(text, strict=False, parse_float=_finite, parse_constant=_no_constant)
        except ValueError as exc:
            problem = problem or str(exc)
    raise OutputRejected(f"output is not JSON ({problem})", help=HELP_FORMAT)


def _finite(text: str) -> float:
    """A number JSON can carry: ``1e999`` would become infinity, which no file can hold."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


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
    cited: Citations | None = None,
) -> dict[str, Any]:
    """One judge, segment, consolidation or coalescer stage: reuse a ``parsed.json`` that still
    validates, else ask, and ask again (``model.max_reasks`` times, each a new ``call-NNN`` after
    a backoff) while the answer is refused; ``parsed.json`` is written for a valid answer only.
    Every refusal's reason is saved beside its call as ``rejected.txt``."""
    parsed_path = stage_dir / "parsed.json"
    cached = read_json(parsed_path) if parsed_path.is_file() else None

    def accept(answer: Any) -> None:
        check_opinion(answer, kind=kind, cited=cited)
        if extra_check is not None:
            extra_check(answer)

    if cached is not None and _asked_with(stage_dir, messages):
        try:
            accept(cached)
            return cached
        except OutputRejected:
            pass  # a cached placeholder or stale answer is not reused: the stage runs again
    schema = opinion_schema() if kind == "opinion" else synthesis_schema()
    body = chat_body(model=client.model, messages=messages, schema=schema)
    label = stage_label(stage_dir)
    asks = client.model.max_reasks + 1
    refusals: list[OutputRejected] = []
    call_dir = stage_dir
    for ask in range(asks):
        response, call_dir = client.complete(stage_dir=stage_dir, body=body, label=label)
        try:
            answer = parse_answer(answer_content(response))
            accept(answer)
        except OutputRejected as refusal:
            parsed_path.unlink(missing_ok=True)
            (call_dir / "rejected.txt").write_text(refusal.reason + "\n", encoding="utf-8")
            refusals.append(refusal)
            if ask + 1 < asks:
                client.stats.record_reask()
                client.note(f"{label}: answer refused ({refusal.reason}); asking again")
                client.pause(client.model.retry_backoff_seconds * (2**ask))
            continue
        write_json_file(parsed_path, answer)
        return answer
    raise AnswersRefused(
        f"{label}: {refusals[-1].reason}; {len(refusals)} of {asks} answers refused, raw "
        f"responses saved in {stage_dir} (the last in {call_dir.name}); the stage remains "
        f"incomplete{_budget_hint(client, refusals)}",
        refusals=refusals,
        asks=asks,
    )


def refusal_help(refusals: list[OutputRejected]) -> str:
    """What helps the last refusal's kind (every kind names a setting or an action)."""
    last = refusals[-1] if refusals else None
    return last.help if last is not None and last.help else HELP_GROUNDING


def _budget_hint(client: ModelClient, refusals: list[OutputRejected]) -> str:
    """How to go on: when every answer ran out of its output budget, say so and how to raise
    it; otherwise what helps the last refusal, and a resume asks again."""
    if not refusals or not all(refusal.truncated for refusal in refusals):
        return (
            f". What helps: {refusal_help(refusals)}; run again with --resume to ask again "
            "(finished stages are kept)"
        )
    return (
        f". Every answer ran out of its output budget: {budget_advice(client)} and run again "
        "with --resume; finished stages are kept"
    )


def budget_advice(client: ModelClient) -> str:
    """The setting that gives a truncated answer more room, with its value now."""
    budget = output_tokens_of(client.model.judge_parameters)
    now = f" (now {budget})" if budget is not None else ""
    return f"raise model.review_parameters.max_tokens{now}"
