"""Migration steps that run the SQL written for the database in use (triggers differ between
PostgreSQL and SQLite); a database with none written for it is refused, never skipped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import migrations


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


def vendor_step(
    *,
    install: dict[str, Sequence[str]],
    remove: dict[str, Sequence[str]],
    what: str,
) -> migrations.RunPython:
    """A reversible migration step: ``install`` forwards, ``remove`` backwards, each by vendor."""
    return migrations.RunPython(run_by_vendor(install, what=what), run_by_vendor(remove, what=what))
