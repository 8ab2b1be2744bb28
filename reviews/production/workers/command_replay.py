"""``command_replay:CommandReplay``: a Harbor agent that types a saved attempt's keystrokes
again, without a model — the curators' tools replay a failed attempt's final commands against a
task's tests with it (an incorrect-answer control), as the oracle agent replays the task's own
solution.

The keystrokes (``keystrokes`` option: what Terminus-2 sent to its terminal, in order) run as one
``bash`` script in the task's container, so the shell's state (working directory, variables)
carries from one command to the next as in the terminal they were typed into; tmux key names
(``C-c``, ``Enter``…), which mean nothing to a script, are left out and listed.
``command-replay.json`` in the agent's log folder records ``{keystrokes, skipped, return_code,
stdout, stderr}``.

Harbor imports it by the worker's ``import_path``; the worker's folder is on ``sys.path``. Needs
Harbor (``runtime.harbor_python``). Standalone: never imports Django or the project.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.agents.options import AgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

REPLAY_FILE = "command-replay.json"
# A whole keystroke that is a tmux key name (C-c, M-x, Escape, Enter, Up…), not text to type.
TMUX_KEY = re.compile(r"^(?:[CMS]-\S|Escape|Enter|Tab|BSpace|Up|Down|Left|Right|Home|End)$")
REPLAY_TIMEOUT_SECONDS = 600


class CommandReplayOptions(AgentOptions):
    keystrokes: list[str] = []


class CommandReplay(BaseAgent):
    """Types the saved keystrokes as one script; talks to no model."""

    options_model = CommandReplayOptions
    options: CommandReplayOptions

    @staticmethod
    def name() -> str:
        return "command-replay"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        typed = [k for k in self.options.keystrokes if not TMUX_KEY.match(k.strip())]
        skipped = [k for k in self.options.keystrokes if TMUX_KEY.match(k.strip())]
        script = "".join(typed)
        result = await environment.exec(command=script, timeout_sec=REPLAY_TIMEOUT_SECONDS)
        record = {
            "keystrokes": self.options.keystrokes,
            "skipped": skipped,
            "return_code": result.return_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
        }
        folder = Path(self.logs_dir)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / REPLAY_FILE).write_text(
            json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
