"""The open-defect invariant against every writer, raw SQL included.

The defect services (``reviews.services.defects``) check the rules first so people get precise
messages; the database makes the guarantee (migrations ``reviews.0002`` and ``reviews.0004``):

- ``catalog_sources``: while a source has an open issue, any insert or update is repaired to what
  the display state computes for it — quality capped
  (``atlas.rules.display_state.capped_for_open_defect``), the effective quality capped the same way,
  the difficulty and every difficulty display column cleared, ``open_issue_count`` the number of
  open issues. A raw write cannot make it look Good.
- ``catalog_verifier_issues``: a raw insert of an open issue demotes its source as above (the
  confirmation stays consistent). Resolving an issue (setting ``resolved`` or a resolution review),
  inserting a resolved one and deleting an open one are refused unless the writer is a defect
  service inside ``defect_writer()``; moving an issue to another source is always refused. The
  resolution rules need the review's contents, which only the service can judge.

The writer token is transaction-local: PostgreSQL's ``set_config('atlas.defect_writer', 'on',
true)``; on SQLite a per-connection SQL function ``atlas_defect_writer()`` that reads a context
variable (registered on every new connection by ``ReviewsConfig.ready()``). A connection without the
function (the ``sqlite3`` shell) cannot write these rows at all.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection

SETTING = "atlas.defect_writer"
REFUSED_RESOLUTION = "Verifier issues are resolved only by resolve_verifier_issue (a validated fix)"
REFUSED_DELETE = "An open verifier issue cannot be deleted; resolve it with a validated fix"
REFUSED_MOVE = "A verifier issue cannot move to another source"

_writer: contextvars.ContextVar[bool] = contextvars.ContextVar("atlas_defect_writer", default=False)


@contextmanager
def defect_writer() -> Iterator[None]:
    """Mark the current transaction as written by a defect service."""
    token = _writer.set(True)
    try:
        _set_postgres_setting("on")
        yield
        # Cleared on success so later raw writes in the same (outer) transaction are refused; a
        # failed transaction rolls the setting back by itself.
        _set_postgres_setting("")
    finally:
        _writer.reset(token)


def _set_postgres_setting(value: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, value])


def _sqlite_writer_flag() -> int:
    return 1 if _writer.get() else 0


def register_sqlite_function(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: give SQLite connections the writer-token function."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("atlas_defect_writer", 0, _sqlite_writer_flag)
