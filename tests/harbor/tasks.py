"""Native Harbor tasks for the real-container tier, written as Harbor reads them:
``instruction.md``, ``task.toml``, ``environment/Dockerfile`` (from one of the tier's local
images), ``tests/test.sh`` (writes the reward to ``/logs/verifier/reward.txt``) and, for the
oracle agent, ``solution/solve.sh``."""

from __future__ import annotations

from pathlib import Path

INSTRUCTION = "Write the sum of 4 and 3 into /app/answer.txt.\n"
TASK_TOML = """version = "1.0"

[agent]
timeout_sec = 120.0

[verifier]
timeout_sec = 60.0

[environment]
build_timeout_sec = 300.0
"""
# Reward 1 when the answer is right, else 0.
CHECK_ANSWER = """#!/bin/bash
if [ "$(cat /app/answer.txt 2>/dev/null)" = "7" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
# How many network interfaces but loopback the container has, in ``$n``.
COUNT_INTERFACES = "n=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -vx lo | wc -l)"
# Reward 1 when the container has no network but loopback, else 0.
CHECK_OFFLINE = f"""#!/bin/bash
{COUNT_INTERFACES}
if [ "$n" = "0" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""
# Reward 1 when the answer is right and the container has no network but loopback, else 0.
CHECK_ANSWER_OFFLINE = f"""#!/bin/bash
{COUNT_INTERFACES}
if [ "$n" = "0" ] && [ "$(cat /app/answer.txt 2>/dev/null)" = "7" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
SOLVE = "#!/bin/bash\necho 7 > /app/answer.txt\n"


def task_files(
    *, image: str, test: str | None = CHECK_ANSWER, solution: str | None = SOLVE,
    dockerfile_lines: tuple[str, ...] = (),
) -> dict[str, str]:  # fmt: skip
    files = {
        "instruction.md": INSTRUCTION,
        "task.toml": TASK_TOML,
        "environment/Dockerfile": "\n".join((f"FROM {image}", "WORKDIR /app", *dockerfile_lines))
        + "\n",
    }
    if test is not None:
        files["tests/test.sh"] = test
    if solution is not None:
        files["solution/solve.sh"] = solution
    return files


def write_task(folder: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if relative.endswith(".sh"):
            path.chmod(0o755)
    return folder
