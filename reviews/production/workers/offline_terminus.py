"""``offline_terminus:OfflineTerminus2``: Harbor's Terminus-2 agent
whose tools are installed from pinned local Debian packages (``offline_tooling``) before it
starts, for tasks whose environment has no network.

Harbor imports it by the worker's ``import_path``; the worker's folder is on ``sys.path``. Needs
Harbor (``runtime.harbor_python``). Standalone: never imports Django or the project.
"""

from __future__ import annotations

from pathlib import Path

from harbor.agents.terminus_2.terminus_2 import Terminus2, Terminus2Options
from harbor.environments.base import BaseEnvironment
from offline_tooling import provision


class OfflineTerminusOptions(Terminus2Options):
    debian_package_manifest: Path
    debian_package_manifest_sha256: str


class OfflineTerminus2(Terminus2):
    """Terminus-2, its tools provisioned offline and checked first."""

    options_model = OfflineTerminusOptions
    options: OfflineTerminusOptions

    async def setup(self, environment: BaseEnvironment) -> None:
        await provision(
            environment=environment,
            manifest=Path(self.options.debian_package_manifest),
            manifest_sha256=self.options.debian_package_manifest_sha256,
            logs_dir=Path(self.logs_dir),
        )
        await super().setup(environment)
