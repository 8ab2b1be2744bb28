"""System checks: a broken protocol registry prevents start-up."""

from __future__ import annotations

from typing import Any

from django.core import checks

from difficulty.registry import RegistryError, read_registry, registry_path


@checks.register("difficulty")
def check_protocol_registry(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    path = registry_path()
    try:
        read_registry(path=path)
    except RegistryError as error:
        return [
            checks.Error(problem, obj=str(path), id="difficulty.E001") for problem in error.problems
        ]
    return []
