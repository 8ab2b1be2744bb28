"""The machinery of the real-container tier, as ``scripts/harbor/machinery.sh up`` describes it
in ``machinery.json``: the engine's socket, the Compose plugin's folder, the Harbor interpreter,
the local images and the offline Terminus packages. ``ATLAS_HARBOR_MACHINERY`` names that file;
without it, or with an engine that does not answer, the tier is skipped with the reason
(``ATLAS_HARBOR_SKIP`` skips it on purpose, with the reason it gives)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

MACHINERY_ENV = "ATLAS_HARBOR_MACHINERY"
# Set to a reason to skip the tier on purpose (CI runs it in one of its two passes).
SKIP_ENV = "ATLAS_HARBOR_SKIP"
START_HINT = "scripts/harbor/machinery.sh up DIR, then ATLAS_HARBOR_MACHINERY=DIR/machinery.json"


@dataclass(frozen=True)
class Machinery:
    docker_host: str
    docker_config: str
    harbor_python: str
    no_network_overlay: str
    images: dict[str, str]
    offline_packages: dict[str, str]

    def environment(self, **extra: str) -> dict[str, str]:
        """The environment a Harbor worker runs with: this engine and its Compose plugin."""
        return {
            **os.environ,
            "DOCKER_HOST": self.docker_host,
            "DOCKER_CONFIG": self.docker_config,
            **extra,
        }


def unavailable_reason() -> str | None:
    """Why the tier cannot run here (one line), or None when it can."""
    if os.environ.get(SKIP_ENV):
        return f"Harbor tier: {os.environ[SKIP_ENV]}"
    configured = os.environ.get(MACHINERY_ENV)
    if not configured:
        return f"Harbor tier: {MACHINERY_ENV} is not set ({START_HINT})"
    path = Path(configured)
    if not path.is_file():
        return f"Harbor tier: {path} does not exist ({START_HINT})"
    machinery = load()
    if not Path(machinery.harbor_python).is_file():
        return f"Harbor tier: no Harbor interpreter at {machinery.harbor_python}"
    try:
        done = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            env=machinery.environment(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Harbor tier: the container engine does not answer ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        where = machinery.docker_host
        return f"Harbor tier: the container engine at {where} does not answer: {last}"
    return None


def load() -> Machinery:
    return Machinery(**json.loads(Path(os.environ[MACHINERY_ENV]).read_text(encoding="utf-8")))
