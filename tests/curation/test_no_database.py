"""The production tooling runs on the machine that holds the native checkouts, without an Atlas
database: neither ``reviews.production`` nor ``reviews.production.curation`` — nor any project
module they import, directly or not — imports the ORM, the web API framework or a models module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reviews/production", "reviews/production/curation")
FORBIDDEN = ("django.db", "django.contrib", "rest_framework", "django_filters", "celery")


def module_path(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path) -> set[str]:
    found = set()
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.removesuffix(".__init__")
    else:
        package = package.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def project_closure() -> dict[str, set[str]]:
    """Every project module reached from the two packages, with what it imports."""
    pending = [
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "workers" not in path.parts
    ]
    seen: dict[str, set[str]] = {}
    while pending:
        name = pending.pop()
        path = module_path(name.removesuffix(".__init__"))
        if name in seen or path is None:
            continue
        seen[name] = imports_of(path)
        parents = [".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")))]
        for target in [*seen[name], *parents]:
            if target.split(".")[0] in ("atlas", "reviews", "difficulty"):
                pending.append(target)
    return seen


def test_production_and_curation_need_no_database():
    closure = project_closure()
    assert (
        "reviews.production.curation.validate" in closure
        and "reviews.production.make_review.pipeline" in closure
    )
    offending = sorted(
        f"{module} imports {target}"
        for module, targets in closure.items()
        for target in targets
        if target.startswith(FORBIDDEN) or target.endswith(".models") or ".models." in target
    )
    assert offending == []
