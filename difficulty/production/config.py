"""The difficulty configuration: one endpoint per protocol role, make_review's ``runtime`` and
``source`` blocks, and an optional learned-verifier judge endpoint.

Generation settings are not configuration: they come from the protocol registry
(``difficulty/protocols.toml``), so a config that sets any of them, or names another checkpoint
than the protocol's for a role, is refused. A ``--follow-up`` run changes them explicitly on the
command line instead (``followups.py``), where the change is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difficulty.production.errors import DifficultyProductionError
from difficulty.registry import ROLE_SIZES, Protocol
from reviews.production.runtime.config import (
    ProductionConfig,
    checked_api_key_env,
    checked_retries,
    is_endpoint,
    read_config_document,
    resolve_path,
    resolve_runtime,
    resolve_source,
)

TOP_LEVEL_KEYS = frozenset({"roles", "runtime", "source", "learned_verifier"})
ENDPOINT_KEYS = frozenset(
    {"base_url", "model", "revision", "provider", "api_key_env", "timeout", "max_retries",
     "retry_backoff_seconds", "serving_configuration"}
)  # fmt: skip
# Everything that shapes what a model generates: the protocol owns these values.
GENERATION_KEYS = frozenset(
    {"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
     "frequency_penalty", "max_tokens", "max_completion_tokens", "max_output_tokens",
     "max_input_tokens", "context_window", "context_budget", "chat_template_kwargs",
     "enable_thinking", "thinking", "reasoning", "reasoning_effort", "parameters",
     "generation_parameters", "review_parameters", "seed", "stop", "extra_body", "n"}
)  # fmt: skip
SOURCE_EXTRA_KEYS = frozenset({"atlas_url", "current_review"})


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible endpoint: a role's model or the learned-verifier judge."""

    base_url: str
    model: str
    revision: str | None
    provider: str | None
    api_key_env: str | None
    timeout: float
    max_retries: int
    retry_backoff_seconds: float
    serving_configuration: dict[str, Any]

    def worker_model(self, *, parameters: dict[str, Any]) -> dict[str, Any]:
        """The ``model`` block a native worker receives (never the key itself)."""
        return {
            "name": self.model,
            "base_url": self.base_url,
            "timeout": self.timeout,
            "revision": self.revision,
            "provider": self.provider,
            "api_key_env": self.api_key_env,
            "parameters": parameters,
            "max_retries": self.max_retries,
            "retry_backoff_seconds": self.retry_backoff_seconds,
        }


@dataclass(frozen=True)
class DifficultyConfig(ProductionConfig):
    roles: dict[str, Endpoint]
    learned_verifier: Endpoint | None


def load_difficulty_config(
    *, path: Path, protocol: Protocol, changed_models: dict[str, str] | None = None
) -> DifficultyConfig:
    """Read and check the config at ``path`` against ``protocol``. ``changed_models`` maps a
    role to the checkpoint a follow-up measures instead of the protocol's."""
    path, raw = read_config_document(path=path)
    for key in sorted(raw):
        if key in GENERATION_KEYS:
            raise _generation_refusal(protocol=protocol, where=key)
        if key not in TOP_LEVEL_KEYS:
            raise DifficultyProductionError(f"Unknown config key {key}")
    roles = raw.get("roles")
    if not isinstance(roles, dict) or sorted(roles) != sorted(ROLE_SIZES):
        raise DifficultyProductionError("roles must define exactly small, large and hosted")
    changed_models = changed_models or {}
    endpoints = {}
    for size in ROLE_SIZES:
        endpoint = _endpoint(roles[size], where=f"roles.{size}", protocol=protocol)
        _check_role(
            endpoint=endpoint, size=size, protocol=protocol, changed=changed_models.get(size)
        )
        endpoints[size] = endpoint
    verifier = raw.get("learned_verifier")
    judge = (
        None
        if verifier is None
        else _endpoint(verifier, where="learned_verifier", protocol=protocol)
    )
    if judge is not None:
        _check_judge(judge=judge, protocol=protocol)
    base = path.parent
    source_block = raw.get("source")
    if isinstance(source_block, dict):
        extras = {k: source_block[k] for k in SOURCE_EXTRA_KEYS if k in source_block}
        source_block = {k: v for k, v in source_block.items() if k not in SOURCE_EXTRA_KEYS}
    else:
        extras = {}
    source = resolve_source(source=source_block, base=base)
    if isinstance(extras.get("current_review"), str):
        extras["current_review"] = resolve_path(base=base, value=extras["current_review"])
    resolved = {
        "roles": {size: _record(endpoint) for size, endpoint in endpoints.items()},
        "learned_verifier": _record(judge) if judge else None,
        "runtime": resolve_runtime(runtime=raw.get("runtime"), base=base),
        "source": {"atlas_url": None, "current_review": None, **source, **extras},
    }
    return DifficultyConfig(path=path, resolved=resolved, roles=endpoints, learned_verifier=judge)


def _generation_refusal(*, protocol: Protocol, where: str) -> DifficultyProductionError:
    return DifficultyProductionError(
        f"Generation settings come from protocol {protocol.id}; remove {where} from the config "
        "(a --follow-up run records a changed setting)"
    )


def _endpoint(block: Any, *, where: str, protocol: Protocol) -> Endpoint:
    if not isinstance(block, dict):
        raise DifficultyProductionError(f"{where} must be an object")
    for key in sorted(block):
        if key in GENERATION_KEYS:
            raise _generation_refusal(protocol=protocol, where=f"{where}.{key}")
        if key not in ENDPOINT_KEYS:
            raise DifficultyProductionError(f"Unknown config key {where}.{key}")
    model, base_url, timeout = block.get("model"), block.get("base_url"), block.get("timeout")
    if not is_endpoint(name=model, base_url=base_url, timeout=timeout):
        raise DifficultyProductionError(
            f"Provide an explicit model, base_url, and positive timeout for {where}"
        )
    api_key_env = checked_api_key_env(block.get("api_key_env"), where=where)
    retries, backoff = checked_retries(block, where=where)
    serving = block.get("serving_configuration", {})
    if not isinstance(serving, dict):
        raise DifficultyProductionError(f"{where}.serving_configuration must be an object")
    for key in sorted(serving):
        if key in GENERATION_KEYS:
            raise _generation_refusal(
                protocol=protocol, where=f"{where}.serving_configuration.{key}"
            )
    revision, provider = block.get("revision"), block.get("provider")
    return Endpoint(
        base_url=block["base_url"].rstrip("/"),
        model=block["model"],
        revision=revision if isinstance(revision, str) and revision else None,
        provider=provider if isinstance(provider, str) and provider else None,
        api_key_env=api_key_env,
        timeout=float(block["timeout"]),
        max_retries=retries,
        retry_backoff_seconds=backoff,
        serving_configuration=dict(serving),
    )


def _check_role(*, endpoint: Endpoint, size: str, protocol: Protocol, changed: str | None) -> None:
    role = protocol.required_role(size)
    expected = changed if changed is not None else role.model
    if endpoint.model != expected:
        if changed is not None:
            raise DifficultyProductionError(
                f"roles.{size}.model is {endpoint.model}, but --changed {size}.model names "
                f"{changed}"
            )
        raise DifficultyProductionError(
            f"roles.{size}.model is {endpoint.model}, but protocol {protocol.id} measures "
            f"{role.model} as the {role.title} model (a --follow-up alternate_checkpoint run "
            "records another checkpoint)"
        )
    if role.provider and (endpoint.provider or "").lower() != role.provider.lower():
        raise DifficultyProductionError(role.provider_message)


LEARNED_VERIFIER_KEY = "learned_verifier"


def learned_verifier_settings(protocol: Protocol) -> dict[str, Any]:
    """The learned-verifier judge's settings the protocol requires (e.g. reasoning effort),
    without its identity; empty when the protocol sets none."""
    for requirement in protocol.verifier_requirements:
        if requirement.key == LEARNED_VERIFIER_KEY:
            return {k: v for k, v in requirement.equals.items() if k not in ("model", "provider")}
    return {}


def _check_judge(*, judge: Endpoint, protocol: Protocol) -> None:
    """A configured learned-verifier judge is the protocol's, served by its provider."""
    for requirement in protocol.verifier_requirements:
        if requirement.key != LEARNED_VERIFIER_KEY:
            continue
        model, provider = requirement.equals.get("model"), requirement.equals.get("provider")
        if judge.model != model or (judge.provider or "").lower() != str(provider or "").lower():
            raise DifficultyProductionError(requirement.message)


def _record(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "revision": endpoint.revision,
        "provider": endpoint.provider,
        "api_key_env": endpoint.api_key_env,
        "timeout": endpoint.timeout,
        "max_retries": endpoint.max_retries,
        "retry_backoff_seconds": endpoint.retry_backoff_seconds,
        "serving_configuration": endpoint.serving_configuration,
    }
