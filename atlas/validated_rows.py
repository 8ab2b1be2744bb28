"""Validation digests of catalog artifact rows: proof that a row's exact content passed the
artifact's validation under the rules in force.

A row's digest is the SHA-256 of the rules' fingerprint followed by the row's canonical bytes
(``atlas.canonical_form``). The sync stores it on the source it wrote (``Source.payload_digest``);
a later artifact row with a stored digest is the very content validated before, under the same
rules, so the sync neither validates it again nor compares its payload (a 10 %-changed sync of
100,000 rows spent most of its time on the 90,000 rows it then left alone).

The fingerprint is taken of the files that hold the row rules, so any change to them (a deploy)
makes every stored digest stale: the next changed sync validates everything once and stores new
digests. A raw write of a payload clears its digest (database triggers, migration 0008), so a
stored digest always describes the stored payload.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The modules and schema whose rules decide whether a row is valid.
RULE_FILES = (
    "catalog_artifact.py", "canonical_form.py", "json_schemas.py", "json_values.py",
    "source_ids.py", "timestamps.py", "vocabularies.py", "schema/catalog.schema.json",
)  # fmt: skip


@functools.cache
def rules_fingerprint() -> bytes:
    digest = hashlib.sha256()
    for name in RULE_FILES:
        digest.update(name.encode("ascii") + b"\0")
        digest.update((HERE / name).read_bytes())
    return digest.digest()


def row_digests(parts: Sequence[bytes]) -> list[str]:
    """The validation digest (hex) of each row, given its canonical bytes."""
    return [row_digest(part) for part in parts]


def row_digest(part: bytes) -> str:
    """The validation digest (hex) of a row, given its canonical bytes."""
    digest = _seeded(rules_fingerprint()).copy()
    digest.update(part)
    return digest.hexdigest()


@functools.cache
def _seeded(fingerprint: bytes) -> Any:
    return hashlib.sha256(fingerprint)
