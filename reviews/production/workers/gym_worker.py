"""Gym worker: one attempt at one task in a real ``skyrl_gym``
environment.

Run by the native interpreter (``runtime.gym_python``) as
``<python> gym_worker.py <input.json> <execution dir>`` with the MarinSkyRL checkout on
``PYTHONPATH``. Standalone: it never imports Django or the project.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from gym_contract import load_contract, plain, plain_verification, unavailable
from worker_support import (
    CriticRecorder,
    EventLog,
    NativeCapture,
    SolverUnavailable,
    captured_output,
    chat_completion,
    error_outcome,
    solver_unavailable_exit,
    warm_imports,
    write_json,
)

PLACEHOLDER_ENVIRONMENTS = ("preference", "prompt_only")
DROPPED_CHAT_OPTIONS = ("model", "input", "store")


def chat_options(*, metadata: Any, parameters: dict[str, Any]) -> dict[str, Any]:
    """The environment's ``chat_completion_params`` in chat-completions form, to be merged under
    the configured parameters (the configured ones win, as in the reference)."""
    params = metadata.get("chat_completion_params") if isinstance(metadata, dict) else None
    if not isinstance(params, dict):
        return {}
    options = {k: v for k, v in params.items() if k not in DROPPED_CHAT_OPTIONS}
    if isinstance(options.get("tools"), list):
        options["tools"] = [function_tool(tool) for tool in options["tools"]]
    if not options.get("tools"):
        options.pop("tools", None)  # an empty tool list is refused by some servers
    if "max_output_tokens" in options:
        options["max_completion_tokens"] = options.pop("max_output_tokens")
    if "max_tokens" in parameters:
        # The configured max_tokens wins: sending both is rejected by some servers.
        options.pop("max_completion_tokens", None)
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
        self.contract = load_contract()
        # Each solver turn's finish_reason: "length" means the output budget (thinking included)
        # ran out, which a difficulty measurement must record and never count as solved.
        self.finish_reasons: list[str | None] = []

    def run(self) -> dict[str, Any]:
        import skyrl_gym

        env_id = self.task["env_id"]
        max_turns = int(self.runtime["max_turns"])
        env_config = copy.deepcopy(self.runtime.get("gym_config", {}).get(env_id, {}))
        extras = {**copy.deepcopy(self.task["extras"]), "max_turns": max_turns}
        critic = self.execution_dir / "verifier" / "critic"
        with CriticRecorder(env_config=env_config, folder=critic):
            env = skyrl_gym.make(env_id, env_config=_config_object(env_config), extras=extras)
            try:
                return self._episode(env, env_id=env_id, max_turns=max_turns)
            finally:
                env.close()

    def _episode(self, env: Any, *, env_id: str, max_turns: int) -> dict[str, Any]:
        messages, metadata = env.init(copy.deepcopy(list(self.task["prompt"])))
        messages = list(messages)
        options = chat_options(metadata=metadata, parameters=self.model["parameters"])
        verdicts: list[Any] = []
        done = False
        while self.turns < max_turns and not done:
            turn = self.turns  # 0-based, as solver/turn-NNN
            self.turns += 1
            response = self._solve(messages, options, turn=turn)
            choice = response["choices"][0]
            # The whole assistant message (tool calls included) joins the conversation and
            # reaches the environment as rollout evidence; its text is the step's action.
            assistant = choice.get("message") or {"role": "assistant", "content": ""}
            action = assistant.get("content") or ""
            messages.append(assistant)
            self._publish_evidence(env, messages=messages, action=action, response=response)
            self.events.write("verify_start", turn=turn, action=action, assistant_message=assistant)
            with captured_output(
                stdout=self.execution_dir / "verifier.stdout",
                stderr=self.execution_dir / "verifier.stderr",
            ):
                step = env.step(action)
            verdict = self.contract.from_step(step)
            verdicts.append(verdict)
            done = bool(step.get("done"))
            self.events.write(
                "verify_end",
                turn=turn,
                reward=step.get("reward"),
                done=done,
                metadata=step.get("metadata"),
                verification=plain_verification(verdict),
            )
            if not done:
                if "reset_conversation" in step:
                    messages = copy.deepcopy(list(step["reset_conversation"]))
                else:
                    messages = messages + list(step.get("observations") or [])
        write_json(
            self.execution_dir / "solver-trace.json",
            {"messages": plain(messages), "turns": self.turns, "done": done},
        )
        return {
            "verification": self._verification(
                env_id=env_id, verdicts=verdicts, done=done, max_turns=max_turns
            ),
            "verifier_executed": bool(verdicts),
            "done": done,
            "turns": self.turns,
            "finish_reasons": self.finish_reasons,
            "stop_reason": self.stop_reason,
            "verification_contract": self.contract.name,
        }

    def _publish_evidence(
        self, env: Any, *, messages: list[Any], action: str, response: dict[str, Any]
    ) -> None:
        """MarinSkyRL's rollout evidence for environments that read it (learned verifiers,
        GenRM, tool-call graders): the turn's messages, text, stop reason and token count."""
        publish = getattr(env, "set_rollout_evidence", None)
        if publish is None:
            return
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        publish(
            self.contract.evidence(
                messages=tuple(copy.deepcopy(messages)),
                response=action,
                stop_reason=choice.get("finish_reason") or "unknown",
                generated_token_count=usage.get("completion_tokens"),
                metadata={"assistant_message": copy.deepcopy(choice.get("message") or {})},
            )
        )

    @property
    def stop_reason(self) -> str | None:
        """The last solver turn's finish_reason, None before any answer."""
        return self.finish_reasons[-1] if self.finish_reasons else None

    def _solve(
        self, messages: list[dict[str, Any]], options: dict[str, Any], *, turn: int
    ) -> dict[str, Any]:
        body = {
            **options,
            **self.model["parameters"],
            "model": self.model["name"],
            "messages": plain(messages),
            "stream": False,
            "n": 1,
        }
        turn_dir = self.execution_dir / "solver" / f"turn-{turn:03d}"
        response = chat_completion(model=self.model, body=body, turn_dir=turn_dir)
        choices = response.get("choices") or []
        if len(choices) != 1:
            raise RuntimeError("Solver response must contain exactly one choice")
        self.finish_reasons.append(choices[0].get("finish_reason"))
        return response

    def _verification(
        self, *, env_id: str, verdicts: list[Any], done: bool, max_turns: int
    ) -> dict[str, Any]:
        if env_id in PLACEHOLDER_ENVIRONMENTS:
            return unavailable(
                f"The {env_id} environment gives a placeholder reward, not a native task verifier"
            )
        if not done:
            return unavailable(f"Turn cap of {max_turns} reached without a terminal verdict")
        plain_verdicts = [plain_verification(verdict) for verdict in verdicts]
        if any(_cohort_pending(verdict) for verdict in plain_verdicts):
            return unavailable("The verdict's reward is pending its cohort")
        return plain_verification(self.contract.fold(verdicts))


def _cohort_pending(verdict: dict[str, Any]) -> bool:
    diagnostics = verdict.get("diagnostics")
    return isinstance(diagnostics, dict) and bool(diagnostics.get("cohort_reward_pending"))


def _config_object(env_config: dict[str, Any]) -> Any:
    # SkyRL environments read their config as an OmegaConf object when omegaconf is installed.
    try:
        from omegaconf import OmegaConf
    except ImportError:
        return env_config
    return OmegaConf.create(env_config)


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
    except SolverUnavailable as exc:
        # No finished attempt: the launcher leaves the task unfinished and resume retries it.
        capture.stop()
        return solver_unavailable_exit(events=events, execution_dir=directory, exc=exc)
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
