"""What Harbor a review ran, when it is installed from the package registry (no git checkout):
the distribution's name and version, how it was installed and a digest of its installed files.

Run by ``runtime.harbor_python`` as ``<python> harbor_identity.py``; prints one JSON object:
``{source: "package", package, version, installer, direct_url, files_sha256, file_count,
modified}``. ``files_sha256`` is one SHA-256 fed, for each installed file of the distribution
(its ``RECORD``, sorted by path; bytecode and ``RECORD`` itself left out), with the path as
``RECORD`` names it (UTF-8) followed by the raw 32-byte SHA-256 of the file's bytes now.
``modified`` lists the files whose bytes no longer match the hash ``RECORD`` recorded at
install, so an edited installation is told from the released one. A registry package has no
commit, and none is made up. Exits 1 with the reason on stderr when Harbor is not installed.

Standalone: standard library only; never imports Django or the project.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

DISTRIBUTION = "harbor"
SKIPPED_SUFFIXES = (".pyc",)


def package_identity(name: str = DISTRIBUTION) -> dict[str, Any]:
    distribution = importlib.metadata.distribution(name)
    digest = hashlib.sha256()
    modified: list[str] = []
    count = 0
    for entry in sorted(distribution.files or [], key=lambda item: str(item)):
        relative = str(entry)
        if relative.endswith(SKIPPED_SUFFIXES) or relative.endswith(".dist-info/RECORD"):
            continue
        path = Path(str(entry.locate()))
        if not path.is_file():
            modified.append(relative)
            continue
        content = hashlib.sha256(path.read_bytes())
        digest.update(relative.encode("utf-8"))
        digest.update(content.digest())
        count += 1
        recorded = entry.hash
        if (
            recorded is not None
            and recorded.mode == "sha256"
            and recorded.value != _urlsafe(content.digest())
        ):
            modified.append(relative)
    direct_url = distribution.read_text("direct_url.json")
    return {
        "source": "package",
        "package": distribution.metadata["Name"],
        "version": distribution.version,
        "installer": (distribution.read_text("INSTALLER") or "").strip() or None,
        "direct_url": json.loads(direct_url) if direct_url else None,
        "files_sha256": digest.hexdigest(),
        "file_count": count,
        "modified": modified,
    }


def _urlsafe(raw: bytes) -> str:
    """A digest as ``RECORD`` writes it: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def main() -> int:
    try:
        identity = package_identity()
    except importlib.metadata.PackageNotFoundError:
        print(f"No {DISTRIBUTION} distribution is installed for {sys.executable}", file=sys.stderr)
        return 1
    print(json.dumps(identity, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
