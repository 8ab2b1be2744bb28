"""Offline Terminus tooling: the Debian packages Terminus-2 needs
(tmux and what it depends on), provisioned into a task environment that has no network.

The agent's options name a package manifest (a JSON list of ``{filename, sha256, …}``) and the
manifest's own SHA-256. Before anything is installed: the manifest must hash to that value, it
must list at least one package, every ``filename`` must be a plain ``*.deb`` name beside the
manifest and every package file must hash to its recorded value. The packages are uploaded into
the environment, installed with ``dpkg -i`` and checked (``tmux -V``); the outcome is written to
``offline-tooling.json`` (``{packages, return_code, stdout, stderr}``) in the agent's log folder,
and a non-zero return code is an error.

The environment is anything with Harbor's ``BaseEnvironment`` methods ``exec(command, user,
timeout_sec)`` (a result with ``return_code``, ``stdout``, ``stderr``) and ``upload_file(source,
target)``. Standalone: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

PACKAGE_DIR = "/tmp/atlas-agent-packages"
TOOLING_FILE = "offline-tooling.json"
INSTALL = "dpkg -i"
CHECK = "tmux -V"


class OfflineToolingError(ValueError):
    """The manifest or a package does not match what was pinned."""


def sha256_file(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def checked_packages(*, manifest: Path, manifest_sha256: str) -> tuple[list[dict], list[Path]]:
    """The manifest's packages and their files, every hash verified."""
    if sha256_file(manifest) != manifest_sha256:
        raise OfflineToolingError("Offline agent package manifest checksum mismatch")
    packages = json.loads(manifest.read_text(encoding="utf-8"))
    if not isinstance(packages, list) or not packages:
        raise OfflineToolingError("Provide the Debian packages required by Terminus-2")
    paths = []
    for package in packages:
        filename = package.get("filename") if isinstance(package, dict) else None
        if (
            not isinstance(filename, str)
            or Path(filename).name != filename
            or not (filename.endswith(".deb"))
        ):
            raise OfflineToolingError("Offline agent packages must be .deb filenames")
        path = manifest.parent / filename
        if not path.is_file() or sha256_file(path) != package.get("sha256"):
            raise OfflineToolingError(f"Offline agent package checksum mismatch: {filename}")
        paths.append(path)
    return packages, paths


async def provision(
    *,
    environment: Any,
    manifest: Path,
    manifest_sha256: str,
    logs_dir: Path,
    package_dir: str = PACKAGE_DIR,
    install: str = INSTALL,
    check: str = CHECK,
) -> dict[str, Any]:
    """Verify, upload, install and check the packages; write ``offline-tooling.json``."""
    packages, paths = checked_packages(manifest=manifest, manifest_sha256=manifest_sha256)
    await environment.exec(f"mkdir -p {shlex.quote(package_dir)}", user="root", timeout_sec=30)
    targets = []
    for path in paths:
        target = f"{package_dir}/{path.name}"
        await environment.upload_file(path, target)
        targets.append(shlex.quote(target))
    result = await environment.exec(
        f"{install} {' '.join(targets)} && {check}", user="root", timeout_sec=120
    )
    record = {
        "packages": packages,
        "return_code": result.return_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
    }
    logs_dir.mkdir(parents=True, exist_ok=True)
    (logs_dir / TOOLING_FILE).write_text(
        json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if result.return_code != 0:
        raise RuntimeError(f"Offline agent-tool installation failed; inspect agent/{TOOLING_FILE}")
    return record
