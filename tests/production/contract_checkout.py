"""A MarinSkyRL-shaped checkout extended for the verification contract.

``add_probe_environment`` registers ``tool_probe`` in the checkout's (real) Gym library: a
learned-verifier-like environment that offers a tool through ``chat_completion_params``, reads the
rollout evidence (it needs the assistant message's tool calls), restarts the conversation with
``reset_conversation`` after the first turn and grades the second turn by asking its critic
(``judges.general``) over HTTP, as MarinSkyRL's Nemotron environments do.

``add_verification_contract`` gives the checkout a small version of MarinSkyRL's contract modules
(``skyrl_gym.verification`` and ``skyrl_train.trajectory_runners.skyrl_gym_contracts``), written
for these tests, so the worker's use of a checkout's own contract can be observed.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.production.conftest import commit_all

PROBE_ENV = textwrap.dedent(
    '''
    """A tool-using environment graded by a critic model (tests only)."""

    import json
    import urllib.request

    from skyrl_gym.envs.base_text_env import BaseTextEnv

    try:
        from skyrl_gym.verification import VerificationResult
    except ImportError:  # an upstream Gym library: plain rewards only
        VerificationResult = None

    RESTART = "Start again. Answer with the total after ####."


    class ToolProbeEnv(BaseTextEnv):
        def __init__(self, env_config=None, extras=None):
            super().__init__()
            judge = dict((env_config or {}).get("judges", {}).get("general", {}))
            self.judge_url = judge["base_url"].rstrip("/") + "/chat/completions"
            self.judge_model = judge["model"]
            self.max_turns = int((extras or {}).get("max_turns", 2))
            self.evidence = None

        def init(self, prompt):
            params = {
                "model": "not-sent", "store": True, "input": [], "temperature": 0.9,
                "top_p": 0.5, "max_output_tokens": 64,
                "tools": [{"type": "function", "name": "lookup", "parameters": {}}],
            }
            return prompt, {"chat_completion_params": params}

        def set_rollout_evidence(self, evidence):
            self.evidence = evidence

        def _verdict(self, reward, **diagnostics):
            if VerificationResult is None:
                return {}
            return {"verification": VerificationResult.verified(reward, diagnostics=diagnostics)}

        def step(self, action):
            self.turns += 1
            if self.evidence is None:
                raise RuntimeError("Missing rollout evidence")
            message = self.evidence.metadata["assistant_message"]
            if self.turns == 1:
                calls = message.get("tool_calls") or []
                if not calls:
                    raise RuntimeError("The first turn must call the lookup tool")
                output = {"observations": [{"role": "user", "content": "ignored"}],
                          "reward": 0.0, "done": False, "metadata": {"tool_calls": len(calls)},
                          "reset_conversation": [{"role": "user", "content": RESTART}]}
                if VerificationResult is not None:
                    output["verification"] = VerificationResult.unavailable("a tool turn")
                return output
            body = {"model": self.judge_model,
                    "messages": [{"role": "user", "content": "Grade: " + action}]}
            request = urllib.request.Request(self.judge_url, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                grade = json.loads(answer.read())["choices"][0]["message"]["content"]
            reward = 1.0 if grade.strip() == "1" else 0.0
            return {"observations": [], "reward": reward, "done": True,
                    "metadata": {"critic": grade}, **self._verdict(reward, critic=grade)}
    '''
)

VERIFICATION = textwrap.dedent(
    '''
    """Verification contract (a small test version of MarinSkyRL's)."""

    from dataclasses import dataclass, field
    from enum import StrEnum
    from typing import Any, Mapping


    @dataclass(frozen=True)
    class RolloutEvidence:
        messages: tuple = ()
        response: str | None = None
        stop_reason: str = "unknown"
        generated_token_count: int | None = None
        metadata: Mapping[str, Any] = field(default_factory=dict)


    class VerificationStatus(StrEnum):
        VERIFIED = "verified"
        UNAVAILABLE = "unavailable"
        ERROR = "error"


    @dataclass(frozen=True)
    class VerificationResult:
        status: VerificationStatus
        score: float | None = None
        passed: bool | None = None
        reason: str | None = None
        diagnostics: Mapping[str, Any] = field(default_factory=dict)
        score_range: tuple = (0.0, 2.0)

        @classmethod
        def verified(cls, score, *, passed=None, diagnostics=None):
            return cls(VerificationStatus.VERIFIED, float(score), passed, None, diagnostics or {})

        @classmethod
        def unavailable(cls, reason, *, diagnostics=None):
            return cls(VerificationStatus.UNAVAILABLE, reason=reason, diagnostics=diagnostics or {})
    '''
)

CONTRACTS = textwrap.dedent(
    '''
    """Step verdicts and their fold (a small test version of MarinSkyRL's)."""

    from skyrl_gym.verification import VerificationResult


    def verification_from_env_step(step):
        if step.get("verification") is not None:
            return step["verification"]
        return VerificationResult.verified(step["reward"], diagnostics=step.get("metadata", {}))


    def fold_verification_results(results):
        if not results:
            return VerificationResult.unavailable("no verdict"), None
        return results[-1], results[-1].score
    '''
)


def add_probe_environment(checkout: Path) -> None:
    package = checkout / "skyrl-gym" / "skyrl_gym" / "envs"
    (package / "tool_probe.py").write_text(PROBE_ENV, encoding="utf-8")
    with (package / "__init__.py").open("a", encoding="utf-8") as registry:
        registry.write(
            '\nregister(id="tool_probe", entry_point="skyrl_gym.envs.tool_probe:ToolProbeEnv")\n'
        )
    commit_all(checkout, "tool_probe environment")


def add_verification_contract(checkout: Path) -> None:
    (checkout / "skyrl-gym" / "skyrl_gym" / "verification.py").write_text(
        VERIFICATION, encoding="utf-8"
    )
    runners = checkout / "skyrl-train" / "skyrl_train" / "trajectory_runners"
    (runners / "skyrl_gym_contracts.py").write_text(CONTRACTS, encoding="utf-8")
    commit_all(checkout, "verification contract")
