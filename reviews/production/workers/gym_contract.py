"""MarinSkyRL's verification contract as the Gym worker uses it.

MarinSkyRL's Gym library defines the contract between an environment and its trajectory runner:
``skyrl_gym.verification`` (``RolloutEvidence``, ``VerificationResult``) and
``skyrl_train.trajectory_runners.skyrl_gym_contracts`` (``verification_from_env_step``,
``fold_verification_results``). When the checkout provides both, the worker uses them as they are.
A Gym library without them (the upstream ``skyrl-gym`` releases) gets the project's own fold,
which follows the same rules over plain dictionaries; ``run.json`` names which one ran.

Standalone: imported by the Gym worker inside the native interpreter (standard library only).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

EVIDENCE_MODULE = "skyrl_gym.verification"
FOLD_MODULE = "skyrl_train.trajectory_runners.skyrl_gym_contracts"
MARINSKYRL = "marinskyrl"
PROJECT = "project"
DEFAULT_RANGE = (0.0, 1.0)


@dataclasses.dataclass(frozen=True)
class RolloutEvidence:
    """One model turn's evidence, with the fields of MarinSkyRL's ``RolloutEvidence`` the worker
    fills, for environments on a Gym library without the contract that still read it."""

    messages: tuple[Any, ...] = ()
    response: str | None = None
    stop_reason: str = "unknown"
    generated_token_count: int | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)


class ProjectContract:
    """The project's fold for a Gym library without MarinSkyRL's contract: verdicts are the
    verification dictionaries of ``attempt.json``, folded by MarinSkyRL's rules."""

    name = PROJECT

    @staticmethod
    def evidence(**fields: Any) -> RolloutEvidence:
        return RolloutEvidence(**fields)

    @staticmethod
    def from_step(step: Mapping[str, Any]) -> dict[str, Any]:
        native = step.get("verification")
        if native is not None:
            return plain_verification(native)
        reward = step.get("reward")
        if reward is None:
            return unavailable("environment step produced no verifier verdict")
        return verified(reward, diagnostics=step.get("metadata") or {})

    @staticmethod
    def fold(verdicts: Sequence[dict[str, Any]]) -> dict[str, Any]:
        if not verdicts:
            return unavailable("environment produced no verification result")
        if len(verdicts) == 1 or verdicts[-1]["score"] is None:
            return verdicts[-1]
        scored = [v for v in verdicts if v["score"] is not None]
        outcome = sum(normalized_score(v) for v in scored) / len(scored)
        passed = all(
            v["passed"] if v["passed"] is not None else normalized_score(v) >= 1.0 for v in scored
        )
        return verified(
            outcome,
            passed=passed,
            diagnostics={
                "steps": [v["diagnostics"] for v in verdicts],
                "num_scored_steps": len(scored),
            },
        )


class MarinSkyRLContract:
    """MarinSkyRL's own classes and fold, imported from the checkout."""

    name = MARINSKYRL

    def __init__(self, evidence_module: Any, fold_module: Any) -> None:
        self._evidence = evidence_module.RolloutEvidence
        self._from_step = fold_module.verification_from_env_step
        self._fold = fold_module.fold_verification_results

    def evidence(self, **fields: Any) -> Any:
        return self._evidence(**fields)

    def from_step(self, step: Mapping[str, Any]) -> Any:
        return self._from_step(step)

    def fold(self, verdicts: Sequence[Any]) -> Any:
        verification, _outcome = self._fold(list(verdicts))
        return verification


def load_contract() -> ProjectContract | MarinSkyRLContract:
    """MarinSkyRL's contract when the Gym library on the path has it, else the project's fold."""
    try:
        evidence_module = importlib.import_module(EVIDENCE_MODULE)
        fold_module = importlib.import_module(FOLD_MODULE)
    except ImportError:
        return ProjectContract()
    return MarinSkyRLContract(evidence_module, fold_module)


def verified(
    score: Any, *, passed: bool | None = None, diagnostics: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    value = float(score)
    if not math.isfinite(value):
        raise ValueError(f"Native reward is not finite: {score!r}")
    return {
        "status": "verified",
        "score": value,
        "passed": passed,
        "reason": None,
        "diagnostics": plain(diagnostics or {}),
        "score_range": list(DEFAULT_RANGE),
    }


def unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "score": None, "passed": None, "reason": reason,
            "diagnostics": {}}  # fmt: skip


def normalized_score(verdict: Mapping[str, Any]) -> float:
    """A verified score scaled to [0, 1] by its declared range (MarinSkyRL's rule)."""
    low, high = verdict.get("score_range") or DEFAULT_RANGE
    return min(1.0, max(0.0, (float(verdict["score"]) - low) / (high - low)))


def plain_verification(verdict: Any) -> dict[str, Any]:
    """A verdict (MarinSkyRL's dataclass or a dictionary) as ``attempt.json``'s verification.

    ``passed`` left open by a verified verdict is decided as MarinSkyRL's fold decides it for a
    step: the normalised score reaches 1. A difficulty measurement counts only ``passed: true``.
    """
    value = plain(verdict)
    if not isinstance(value, dict) or value.get("status") not in (
        "verified", "unavailable", "error", "skipped"
    ):  # fmt: skip
        raise TypeError(f"Environment verification is not a verification result: {verdict!r}")
    result = {
        "status": value["status"],
        "score": value.get("score"),
        "passed": value.get("passed"),
        "reason": value.get("reason"),
        "diagnostics": value.get("diagnostics") or {},
    }
    if value.get("score_range") is not None:
        result["score_range"] = list(value["score_range"])
    if result["status"] == "verified":
        if result["score"] is None or not math.isfinite(float(result["score"])):
            raise ValueError(f"Native reward is not finite: {result['score']!r}")
        if result["passed"] is None:
            result["passed"] = normalized_score(result) >= 1.0
    return result


def plain(value: Any) -> Any:
    """JSON-ready: dataclasses as dictionaries, enums as their values, tuples as lists."""
    return json.loads(json.dumps(value, default=_json_default, ensure_ascii=False))


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, "tolist"):  # numpy arrays and scalars in diagnostics
        return value.tolist()
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)
