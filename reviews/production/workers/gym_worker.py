"""Gym worker (review-production.md §6.3): one attempt at one task in a real ``skyrl_gym``
environment.

Run by the native interpreter (``runtime.gym_python``) as
``<python> gym_worker.py <input.json> <execution dir>`` with the MarinSkyRL checkout on
``PYTHONPATH``. Standalone: it never imports Django or the project.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from worker_support import (
    EventLog,
    NativeCapture,
    captured_output,
    chat_completion,
    error_outcome,
    warm_imports,
    write_json,
)

PLACEHOLDER_ENVIRONMENTS = ("preference", "prompt_only")
DROPPED_CHAT_OPTIONS = ("model", "input", "store")


def chat_options(*, metadata: Any, parameters: dict[str, Any]) -> dict[str, Any]:
    """Chat options from the environment's metadata, in chat-completions form."""
    if not isinstance(metadata, dict):
        return {}
    options = {k: v for k, v in metadata.items() if k not in DROPPED_CHAT_OPTIONS}
    if isinstance(options.get("tools"), list):
        options["tools"] = [function_tool(tool) for tool in options["tools"]]
    if "max_output_tokens" in options:
        limit = options.pop("max_output_tokens")
        # The configured max_tokens wins: sending both is rejected by some servers.
        if "max_tokens" not in parameters:
            options["max_completion_tokens"] = limit
    return options


def function_tool(tool: Any) -> Any:
    """A Responses-style tool ``{type, name, parameters}`` → ``{type: function, function: {…}}``."""
    if not isinstance(tool, dict) or "function" in tool or "name" not in tool:
        return tool
    function = {k: v for k, v in tool.items() if k != "type"}
    return {"type": "function", "function": function}


class Attempt:
    def __init__(self, *, data: dict[str, Any], execution_dir: Path, events: EventLog) -> None:
        self.task = data["task"]
        self.model = data["model"]
        self.runtime = data["config"]
        self.execution_dir = execution_dir
        self.events = events
        self.turns = 0
        # Each solver turn's finish_reason: "length" means the output budget (thinking included)
        # ran out, which a difficulty measurement must record and never count as solved.
        self.finish_reasons: list[str | None] = []

    def run(self) -> dict[str, Any]:
        import skyrl_gym

        env_id = self.task["env_id"]
        max_turns = int(self.runtime["max_turns"])
        env_config = dict(self.runtime.get("gym_config", {}).get(env_id, {}))
        extras = {**self.task["extras"], "max_turns": max_turns}
        env = skyrl_gym.make(env_id, env_config=_config_object(env_config), extras=extras)
        messages, metadata = env.init(list(self.task["prompt"]))
        messages = list(messages)
        options = chat_options(metadata=metadata, parameters=self.model["parameters"])
        verdict = None
        executed = False
        while self.turns < max_turns:
            turn = self.turns  # 0-based, as solver/turn-NNN
            self.turns += 1
            reply = self._solve(messages, options, turn=turn)
            messages.append({"role": "assistant", "content": reply})
            self.events.write("verify_start", turn=turn)
            with captured_output(
                stdout=self.execution_dir / "verifier.stdout",
                stderr=self.execution_dir / "verifier.stderr",
            ):
                step = env.step(reply)
            executed = True
            self.events.write(
                "verify_end",
                turn=turn,
                reward=step.get("reward"),
                done=bool(step.get("done")),
                metadata=step.get("metadata"),
            )
            if step.get("done"):
                verdict = step
                break
            messages.extend(step.get("observations") or [])
        env.close()
        done = verdict is not None
        write_json(
            self.execution_dir / "solver-trace.json",
            {"messages": messages, "turns": self.turns, "done": done},
        )
        return {
            "verification": self._verification(env_id, verdict, max_turns),
            "verifier_executed": executed,
            "done": done,
            "turns": self.turns,
            "finish_reasons": self.finish_reasons,
            "stop_reason": self.stop_reason,
        }

    @property
    def stop_reason(self) -> str | None:
        """The last solver turn's finish_reason, None before any answer."""
        return self.finish_reasons[-1] if self.finish_reasons else None

    def _solve(self, messages: list[dict[str, Any]], options: dict[str, Any], *, turn: int) -> str:
        body = {
            **self.model["parameters"],
            **options,
            "model": self.model["name"],
            "messages": messages,
            "stream": False,
            "n": 1,
        }
        turn_dir = self.execution_dir / "solver" / f"turn-{turn:03d}"
        response = chat_completion(model=self.model, body=body, turn_dir=turn_dir)
        choices = response.get("choices") or []
        if len(choices) != 1:
            raise RuntimeError("Solver response must contain exactly one choice")
        self.finish_reasons.append(choices[0].get("finish_reason"))
        return (choices[0].get("message") or {}).get("content") or ""

    @staticmethod
    def _verification(env_id: str, verdict: Any, max_turns: int) -> dict[str, Any]:
        if env_id in PLACEHOLDER_ENVIRONMENTS:
            return _unavailable(
                f"The {env_id} environment gives a placeholder reward, not a native task verifier"
            )
        if verdict is None:
            return _unavailable(f"Turn cap of {max_turns} reached without a terminal verdict")
        metadata = verdict.get("metadata") or {}
        if isinstance(metadata, dict) and metadata.get("cohort_reward_pending"):
            return _unavailable("The verdict's reward is pending its cohort")
        reward = verdict.get("reward")
        score = float(reward)
        if not math.isfinite(score):
            raise ValueError(f"Native reward is not finite: {reward!r}")
        return {
            "status": "verified",
            "score": score,
            "passed": score >= 1.0,
            "reason": f"Native verifier reward {score:g}",
            "diagnostics": {"native_reward": reward, "metadata": _plain(metadata)},
        }


def _unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "score": None, "passed": None, "reason": reason,
            "diagnostics": {}}  # fmt: skip


def _config_object(env_config: dict[str, Any]) -> Any:
    # SkyRL environments read their config as an OmegaConf object when omegaconf is installed.
    try:
        from omegaconf import OmegaConf
    except ImportError:
        return env_config
    return OmegaConf.create(env_config)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def main(input_path: str, execution_dir: str) -> int:
    directory = Path(execution_dir)
    data = json.loads(Path(input_path).read_text(encoding="utf-8"))
    events = EventLog(directory / "verifier-trace.jsonl")
    warm_imports()
    capture = NativeCapture()
    attempt = Attempt(data=data, execution_dir=directory, events=events)
    capture.start()
    try:
        outcome = attempt.run()
    except Exception as exc:
        capture.stop()
        outcome = error_outcome(events=events, exc=exc, turns=attempt.turns)
        outcome.update(finish_reasons=attempt.finish_reasons, stop_reason=attempt.stop_reason)
    else:
        capture.stop()
    try:
        capture.write(directory)
    except Exception as exc:
        outcome = error_outcome(events=events, exc=exc, turns=attempt.turns)
    if data["config"].get("gym_config", {}).get(data["task"]["env_id"], {}).get("verifyit_enabled"):
        outcome["verifyit_enabled"] = True
    write_json(directory / "attempt.json", outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
