"""The records a difficulty run writes: per-arm run identities,
``difficulty/context.json`` and ``difficulty.json``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from difficulty.baseline import derived_counts, judge_labels
from difficulty.production.config import DifficultyConfig, Endpoint
from difficulty.production.outcomes import COUNTING_RULE, arm_counts, generation_qc
from difficulty.registry import Protocol
from reviews.production.runtime.sampling import Sample
from reviews.production.runtime.tasks import Task

SAMPLING_METHOD = "Seeded reservoir sampling without replacement over local input rows"
SHARED_SAMPLE_NOTE = (
    "One seeded sample shared by the Small, Large and Hosted roles; the quality review's sample "
    "can be smaller and drawn differently."
)
RUNTIME_KEYS = (
    "agent_timeout", "max_turns", "worker_timeout", "gym_config", "harbor_agent",
    "harbor_environment", "harbor_verifier", "harbor_reward_mode",
)  # fmt: skip


def run_identity_path(size: str, *, prefix: str = "") -> str:
    """Relative to the evidence root: ``prefix`` is the run's folder inside it, if any."""
    return f"{prefix}difficulty/{size}/run.json"


def tasks_sha256(tasks: tuple[Task, ...]) -> str:
    text = json.dumps([task.record() for task in tasks], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def arm_run_identity(
    *,
    endpoint: Endpoint,
    parameters: dict[str, Any],
    protocol: Protocol,
    config: DifficultyConfig,
    identity: dict[str, Any],
) -> dict[str, Any]:
    """``difficulty/<size>/run.json``: the settings this arm was actually executed with."""
    return {
        "record_kind": "execution_settings",
        "protocol_id": protocol.id,
        "config": {
            "model": {
                "name": endpoint.model,
                "revision": endpoint.revision,
                "provider": endpoint.provider,
                "base_url": endpoint.base_url,
                "parameters": parameters,
                "timeout": endpoint.timeout,
                "context_budget": protocol.limits["max_input_tokens"],
                "context_window": protocol.limits["context_window"],
            },
            "runtime": {key: config.runtime.get(key) for key in RUNTIME_KEYS},
        },
        "marinskyrl": identity["code"]["marinskyrl"],
        "harbor": identity["code"]["harbor"],
        "grading": identity["grading"],
        "tasks_sha256": identity["tasks_sha256"],
        "sample": {"n": identity["n"], "seed": identity["seed"]},
        "implementation": identity["code"]["implementation"],
    }


def context_record(*, collection: dict[str, Any], review_id: str) -> dict[str, Any]:
    """``difficulty/context.json``: the reviewer solve baseline of the current review."""
    return {
        "reviewer_rollout_baseline": {
            **derived_counts(collection=collection),
            "configured_model_reviewers": [
                {"label": label} for label in judge_labels(collection=collection)
            ],
            "review_id": review_id,
            "limitations": [
                "Counted from the current review's native task attempts (its runtime reviews).",
                SHARED_SAMPLE_NOTE,
            ],
        },
        "historical_reference": {
            "applicability": "make_difficulty saved no issue #8942 evidence with this run.",
            "limitations": [
                "Historical dataset releases and rollout settings remain separate from current "
                "measurements."
            ],
            "artifact_path": None,
        },
    }


def model_entry(
    *,
    size: str,
    endpoint: Endpoint,
    parameters: dict[str, Any],
    protocol: Protocol,
    outcomes: list[dict[str, Any]],
    verifier_configuration: dict[str, Any],
) -> dict[str, Any]:
    return {
        "size": size,
        "model": endpoint.model,
        "model_revision": endpoint.revision,
        "provider": endpoint.provider,
        **arm_counts(outcomes=outcomes),
        "generation_parameters": parameters,
        "serving_configuration": {
            "endpoint": endpoint.base_url,
            "api": "OpenAI-compatible chat completions",
            "context_window": protocol.limits["context_window"],
            "max_input_tokens": protocol.limits["max_input_tokens"],
            "request_timeout_seconds": endpoint.timeout,
            **endpoint.serving_configuration,
        },
        "generation_qc": generation_qc(outcomes=outcomes),
        "verifier_configuration": verifier_configuration,
        "task_outcomes": outcomes,
    }


def difficulty_report(
    *,
    atlas_id: str,
    protocol: Protocol,
    sample: Sample,
    seed: int,
    source: dict[str, Any],
    models: list[dict[str, Any]],
    quality_sample_size: int,
    prefix: str,
) -> dict[str, Any]:
    splits = {
        ((task.extras.get("extra_info") or {}).get("split") if task.extras else None)
        for task in sample.tasks
    }
    population = sample.population_of(
        repository=source["repository"], revision=source["revision"], source_id=atlas_id
    )
    report: dict[str, Any] = {
        "atlas_id": atlas_id,
        "estimated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sampling": {
            "task_count": len(sample.tasks),
            "method": SAMPLING_METHOD,
            "seed": seed,
            "shared_by_roles": [model["size"] for model in models],
            "note": SHARED_SAMPLE_NOTE,
            "quality_review_task_count": quality_sample_size,
            "task_ids": [task.id for task in sample.tasks],
        },
        "population_count": population or sample.population,
        "source_revision": source["revision"],
        "protocol": {
            "id": protocol.id,
            **protocol.limits,
            "artifacts": [],
            "run_identities": [
                {
                    "size": model["size"],
                    "run_identity_path": run_identity_path(model["size"], prefix=prefix),
                }
                for model in models
            ],
        },
        "models": models,
        "protocol_followups": [],
        "limitations": [COUNTING_RULE],
    }
    if len(splits) == 1 and isinstance(next(iter(splits)), str):
        report["split"] = next(iter(splits))
    return report
