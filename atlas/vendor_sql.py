"""Migration steps that run the SQL written for the database in use (triggers differ between
PostgreSQL and SQLite); a database with none written for it is refused, never skipped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def run_by_vendor(
    statements_by_vendor: dict[str, Sequence[str]], *, what: str
) -> Callable[[Any, Any], None]:
    def apply(apps: Any, schema_editor: Any) -> None:
        vendor = schema_editor.connection.vendor
        if vendor not in statements_by_vendor:
            raise RuntimeError(f"No {what} for {vendor}")
        for statement in statements_by_vendor[vendor]:
            schema_editor.execute(statement)

    return apply
