"""The review configuration: loading, checks and path resolution.

The resolved configuration is recorded in ``run.json``; the API key itself never is — only the
name of the environment variable that holds it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviews.production.runtime.credentials import check_no_credentials
from reviews.production.runtime.errors import ReviewProductionError

FORBIDDEN_PARAMETERS = frozenset({"model", "messages", "api_key", "stream", "n"})
# How structured output is requested, per server dialect (model_client.structured_output).
RESPONSE_FORMATS = (
    "json_schema", "json_object_schema", "guided_json", "structured_outputs", "json_object",
    "none",
)  # fmt: skip
# Body keys that request structured output: chosen by model.response_format alone, so a copy in
# the parameters can never silently override (or contradict) it.
STRUCTURED_OUTPUT_KEYS = frozenset(
    {"response_format", "guided_json", "guided_regex", "guided_grammar", "guided_choice",
     "structured_outputs", "json_schema", "grammar"}
)  # fmt: skip
SOURCE_FORMATS = ("skyrl_prepared", "harbor_directory", "task_manifest")
# Terminus-2 (also offline) talks to the configured model, which the judges share; the oracle
# (the task's own solution) and nop (no action) agents talk to none: they test the task itself.
HARBOR_AGENTS = ("terminus-2", "offline_terminus:OfflineTerminus2", "oracle", "nop")
MODEL_FREE_AGENTS = ("oracle", "nop")
REWARD_MODES = ("scalar", "skill2env_components")
RUNTIME_PATHS = ("marinskyrl_checkout", "gym_python", "harbor_checkout", "harbor_python")
POSITIVE_RUNTIME_KEYS = ("max_turns", "agent_timeout", "worker_timeout")
RUNTIME_DEFAULTS = {"max_turns": 8, "agent_timeout": 1800, "worker_timeout": 3600}
DEFAULT_MAX_RETRIES = 4
DEFAULT_RETRY_BACKOFF_SECONDS = 1.0
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_REASKS = 2
# The model settings a resume may change: how the judges are asked and how the endpoint is
# talked to. Finished stages keep their answers (each call records the body it sent); the
# solver's model, checkpoint and parameters stay part of the run's identity.
RESUMABLE_MODEL_KEYS = frozenset(
    {"review_parameters", "timeout", "max_retries", "retry_backoff_seconds", "response_format",
     "max_response_bytes", "max_reasks", "context_tokens", "base_url", "max_concurrency"}
)  # fmt: skip


@dataclass(frozen=True)
class ModelConfig:
    name: str
    base_url: str
    timeout: float
    revision: str | None
    parameters: dict[str, Any]
    review_parameters: dict[str, Any]
    api_key_env: str | None
    response_format: str
    max_retries: int
    retry_backoff_seconds: float
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # The endpoint's context in tokens: configured, or read from the server (context.py).
    context_tokens: int | None = None
    max_reasks: int = DEFAULT_MAX_REASKS
    # Calls in flight at once to the endpoint: configured, or the server's slots (model_client).
    max_concurrency: int | None = None

    @property
    def judge_parameters(self) -> dict[str, Any]:
        """``review_parameters`` over ``parameters``, for judge and coalescer calls."""
        return {**self.parameters, **self.review_parameters}

    def api_key(self) -> str | None:
        """Read at call time from the environment, never stored with the configuration."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None


@dataclass(frozen=True)
class ProductionConfig:
    """A production tool's configuration: where it was read and its resolved blocks (the
    ``runtime`` and ``source`` blocks are shared by make_review and make_difficulty)."""

    path: Path
    resolved: dict[str, Any]

    @property
    def runtime(self) -> dict[str, Any]:
        return self.resolved["runtime"]

    @property
    def source(self) -> dict[str, Any]:
        return self.resolved["source"]


@dataclass(frozen=True)
class ReviewConfig(ProductionConfig):
    model: ModelConfig


def read_config_document(*, path: Path) -> tuple[Path, dict[str, Any]]:
    """The absolute config path and its JSON object, refused when it holds a credential (the
    guard runs first, on the raw document: a credential must never reach run.json)."""
    path = Path(os.path.abspath(os.path.expanduser(str(path))))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReviewProductionError(f"Config file not found: {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReviewProductionError(f"Config is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ReviewProductionError("Config must be a JSON object")
    check_no_credentials(raw)  # credentials.py: names, URLs and key-shaped values
    return path, raw


def load_config(*, path: Path) -> ReviewConfig:
    """Read, check and resolve the configuration at ``path``."""
    path, raw = read_config_document(path=path)
    base = path.parent
    model = _model(raw.get("model"))
    runtime = resolve_runtime(runtime=raw.get("runtime"), base=base)
    source = resolve_source(source=raw.get("source"), base=base)
    resolved = {**raw, "model": _model_record(raw["model"]), "runtime": runtime, "source": source}
    return ReviewConfig(path=path, resolved=resolved, model=model)


def resolve_path(*, base: Path, value: str) -> str:
    """``~`` expanded, then absolute without following symlinks: a virtual environment's
    ``bin/python`` must stay that environment's interpreter."""
    return os.path.abspath(os.path.join(base, os.path.expanduser(value)))


def is_endpoint(*, name: Any, base_url: Any, timeout: Any) -> bool:
    """A non-empty model name and base URL and a positive timeout."""
    return (
        isinstance(name, str)
        and bool(name.strip())
        and isinstance(base_url, str)
        and bool(base_url.strip())
        and not isinstance(timeout, bool)
        and isinstance(timeout, int | float)
        and timeout > 0
    )


def checked_api_key_env(value: Any, *, where: str) -> str | None:
    """The name of the key's environment variable, which must be set when the config loads."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ReviewProductionError(f"{where}.api_key_env must name an environment variable")
    if value not in os.environ:
        raise ReviewProductionError(
            f"Environment variable {value} named by {where}.api_key_env is not set"
        )
    return value


def checked_retries(block: dict[str, Any], *, where: str) -> tuple[int, float]:
    """``max_retries`` and ``retry_backoff_seconds`` with their defaults."""
    max_retries = block.get("max_retries", DEFAULT_MAX_RETRIES)
    backoff = block.get("retry_backoff_seconds", DEFAULT_RETRY_BACKOFF_SECONDS)
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ReviewProductionError(f"{where}.max_retries must be a non-negative integer")
    if isinstance(backoff, bool) or not isinstance(backoff, int | float) or backoff < 0:
        raise ReviewProductionError(f"{where}.retry_backoff_seconds must be a non-negative number")
    return max_retries, float(backoff)


def _model(model: Any) -> ModelConfig:
    if not isinstance(model, dict):
        model = {}
    name, base_url, timeout = model.get("name"), model.get("base_url"), model.get("timeout")
    if not is_endpoint(name=name, base_url=base_url, timeout=timeout):
        raise ReviewProductionError(
            "Provide an explicit model name, base_url, and positive timeout"
        )
    parameters = model.get("parameters")
    review_parameters = model.get("review_parameters", {})
    if not isinstance(parameters, dict) or not isinstance(review_parameters, dict):
        raise ReviewProductionError("model.parameters and model.review_parameters must be objects")
    if FORBIDDEN_PARAMETERS & (set(parameters) | set(review_parameters)):
        raise ReviewProductionError(
            "Model parameters must not override identity, conversation, or credentials"
        )
    for block, values in (("parameters", parameters), ("review_parameters", review_parameters)):
        clash = sorted(STRUCTURED_OUTPUT_KEYS & set(values))
        if clash:
            raise ReviewProductionError(
                f"model.response_format chooses how structured output is requested; remove "
                f"{clash[0]} from model.{block}"
            )
    api_key_env = checked_api_key_env(model.get("api_key_env"), where="model")
    response_format = model.get("response_format", "json_schema")
    if response_format not in RESPONSE_FORMATS:
        raise ReviewProductionError(
            "model.response_format must be one of " + ", ".join(RESPONSE_FORMATS)
        )
    max_retries, backoff = checked_retries(model, where="model")
    max_response_bytes = (
        _positive_int(model, "max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
        or DEFAULT_MAX_RESPONSE_BYTES
    )
    context_tokens = _positive_int(model, "context_tokens", None)
    max_concurrency = _positive_int(model, "max_concurrency", None)
    max_reasks = model.get("max_reasks", DEFAULT_MAX_REASKS)
    if isinstance(max_reasks, bool) or not isinstance(max_reasks, int) or max_reasks < 0:
        raise ReviewProductionError("model.max_reasks must be a non-negative integer")

    revision = model.get("revision")
    return ModelConfig(
        name=name,
        base_url=base_url.rstrip("/"),
        timeout=float(timeout),
        revision=revision if isinstance(revision, str) else None,
        parameters=dict(parameters),
        review_parameters=dict(review_parameters),
        api_key_env=api_key_env,
        response_format=response_format,
        max_retries=max_retries,
        retry_backoff_seconds=backoff,
        max_response_bytes=max_response_bytes,
        context_tokens=context_tokens,
        max_reasks=max_reasks,
        max_concurrency=max_concurrency,
    )


def _positive_int(block: dict[str, Any], key: str, default: int | None) -> int | None:
    value = block.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ReviewProductionError(f"model.{key} must be a positive integer")
    return value


# Where inputs were read from, not what they hold: the identity records their content apart
# (the dataset file by its hash, the checkout by its commit and trees), so a config copied to
# another folder — or a dataset or checkout moved — resumes the same run.
LOCATION_KEYS = {"": ("config_path",), "source": ("tasks_path",),
                 "runtime": ("marinskyrl_checkout",)}  # fmt: skip
# What an identity key means to the person resuming, for the refusal that names it.
IDENTITY_MEANINGS = {
    "config": "the config", "tasks": "the task sample", "n": "--n", "seed": "--seed",
    "population": "the dataset's rows", "schema_sha256": "the review schema",
    "implementation": "make_review's own code", "marinskyrl": "the MarinSkyRL checkout",
    "grading": "the grading snapshot", "input_sha256": "the dataset file",
    "selected_task_files": "the sampled tasks' files", "packed_input_files": "packed task files",
    "gym_verification_contract": "the Gym verification contract", "harbor": "Harbor",
    "reuse": "--reuse and --rejudge",
}  # fmt: skip
SHOWN_VALUE_CHARACTERS = 80


def resumable_view(identity: Any) -> Any:
    """A run identity without the model settings a resume may change (RESUMABLE_MODEL_KEYS),
    the inputs' locations (LOCATION_KEYS) and ``$comment``-style keys: what two invocations
    must share for the second to reuse the first one's work."""
    if not isinstance(identity, dict):
        return identity
    view = {k: v for k, v in identity.items() if k not in LOCATION_KEYS[""]}
    config = view.get("config")
    if not isinstance(config, dict):
        return view
    blocks: dict[str, Any] = {}
    for name, block in config.items():
        if name.startswith("$"):
            continue
        if isinstance(block, dict):
            dropped = LOCATION_KEYS.get(name, ())
            if name == "model":
                dropped = (*dropped, *RESUMABLE_MODEL_KEYS)
            block = {k: v for k, v in block.items() if k not in dropped and not k.startswith("$")}
        blocks[name] = block
    return {**view, "config": blocks}


def identity_difference(saved: Any, now: Any) -> str | None:
    """Where two run identities differ, for a person: the first differing key (dotted, as
    ``config.model.parameters.temperature``), what it means and both values when they are
    short; None when the resumable views agree."""
    key = _first_difference(_causes_first(resumable_view(saved)),
                            _causes_first(resumable_view(now)), path=())  # fmt: skip
    if key is None:
        return None
    dotted = ".".join(key)
    meaning = IDENTITY_MEANINGS.get(key[0])
    named = f"{dotted} ({meaning})" if meaning and len(key) == 1 else dotted
    before, after = _at(resumable_view(saved), key), _at(resumable_view(now), key)
    shown_before, shown_after = _short(before), _short(after)
    if shown_before is not None and shown_after is not None:
        return f"{named} was {shown_before}, now {shown_after}"
    return f"{named} changed"


# Settings a person chose come before what follows from them (a new --seed draws new tasks).
CAUSES = ("config", "n", "seed", "reuse")


def _causes_first(identity: Any) -> Any:
    if not isinstance(identity, dict):
        return identity
    return {**{k: identity[k] for k in CAUSES if k in identity}, **identity}


def _first_difference(saved: Any, now: Any, *, path: tuple[str, ...]) -> tuple[str, ...] | None:
    if saved == now:
        return None
    if isinstance(saved, dict) and isinstance(now, dict):
        for key in [*saved, *(k for k in now if k not in saved)]:
            found = _first_difference(saved.get(key, _MISSING), now.get(key, _MISSING),
                                      path=(*path, str(key)))  # fmt: skip
            if found is not None:
                return found
    return path or ("identity",)


_MISSING = object()


def _at(value: Any, key: tuple[str, ...]) -> Any:
    for part in key:
        value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
    return value


def _short(value: Any) -> str | None:
    if value is _MISSING:
        return "not set"
    if isinstance(value, dict | list):
        return None
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_VALUE_CHARACTERS else None


def _model_record(model: dict[str, Any]) -> dict[str, Any]:
    """The model section as recorded and handed to workers: defaults made explicit."""
    return {
        "response_format": "json_schema",
        "review_parameters": {},
        "api_key_env": None,
        **model,
        "base_url": model["base_url"].rstrip("/"),
    }


def resolve_runtime(*, runtime: Any, base: Path) -> dict[str, Any]:
    """The ``runtime`` block checked and resolved; make_difficulty shares it."""
    if runtime is None:
        runtime = {}
    if not isinstance(runtime, dict):
        raise ReviewProductionError("runtime must be an object")
    resolved = {**RUNTIME_DEFAULTS, **runtime}
    for key in RUNTIME_PATHS:
        if isinstance(resolved.get(key), str) and resolved[key]:
            resolved[key] = resolve_path(base=base, value=resolved[key])
    for key in POSITIVE_RUNTIME_KEYS:
        value = resolved[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ReviewProductionError(f"{key} must be positive")
    gym_config = resolved.setdefault("gym_config", {})
    if not isinstance(gym_config, dict) or not all(
        isinstance(v, dict) for v in gym_config.values()
    ):
        raise ReviewProductionError("runtime.gym_config must map environment ids to objects")
    agent = {"name": "terminus-2", "kwargs": {}, **(resolved.get("harbor_agent") or {})}
    if agent["name"] not in HARBOR_AGENTS:
        raise ReviewProductionError(
            "Harbor reviews use terminus-2 so solver and judges share the configured model, "
            "or the model-free oracle or nop agent"
        )
    resolved["harbor_agent"] = agent
    resolved.setdefault("harbor_environment", {})
    verifier = resolved.setdefault("harbor_verifier", {})
    if not isinstance(verifier, dict) or "disable" in verifier or "import_path" in verifier:
        raise ReviewProductionError("Review must use the task native verifier, enabled")
    mode = resolved.setdefault("harbor_reward_mode", "scalar")
    if mode not in REWARD_MODES:
        raise ReviewProductionError("harbor_reward_mode must be scalar or skill2env_components")
    workers = resolved.setdefault("workers", {})
    if not isinstance(workers, dict):
        raise ReviewProductionError("runtime.workers must map routes to workers")
    resolved["workers"] = {
        route: _worker(route, worker, base) for route, worker in sorted(workers.items())
    }
    return resolved


def _worker(route: str, worker: Any, base: Path) -> dict[str, Any]:
    if (
        not isinstance(worker, dict)
        or not isinstance(worker.get("python"), str)
        or not isinstance(worker.get("script"), str)
        or not isinstance(worker.get("pythonpath", []), list)
    ):
        raise ReviewProductionError(
            f"runtime.workers.{route} needs python, script and a pythonpath list"
        )
    return {
        "python": resolve_path(base=base, value=worker["python"]),
        "script": resolve_path(base=base, value=worker["script"]),
        "pythonpath": [resolve_path(base=base, value=p) for p in worker.get("pythonpath", [])],
    }


def resolve_source(*, source: Any, base: Path) -> dict[str, Any]:
    """The ``source`` block checked and resolved; make_difficulty shares it."""
    if not isinstance(source, dict):
        raise ReviewProductionError("source must be an object")
    for key in ("source_id", "repository", "tasks_path"):
        if not isinstance(source.get(key), str) or not source[key]:
            raise ReviewProductionError(f"source.{key} is required")
    if source.get("format") not in SOURCE_FORMATS:
        raise ReviewProductionError(
            "format must be skyrl_prepared, harbor_directory, or task_manifest"
        )
    revision = source.get("revision")
    if revision is not None and not isinstance(revision, str):
        raise ReviewProductionError("source.revision must be a string or null")
    resolved = {"revision": None, "grading_snapshot": None, **source}
    resolved["tasks_path"] = resolve_path(base=base, value=source["tasks_path"])
    if isinstance(source.get("grading_snapshot"), str):
        resolved["grading_snapshot"] = resolve_path(base=base, value=source["grading_snapshot"])
    return resolved
