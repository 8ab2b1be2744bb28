"""Grading identity (review-production.md §14.1) and the verifyit pin (§14.2).

A grading manifest (the Atlas row's ``grading_manifest``) has this shape::

    {
      "mode": "verifyit" | "legacy" | "harbor",
      "environment": "<Gym env id>",                       # Gym modes
      "routes": {"<route>": {"roots": ["<module>", ...], "fingerprint": "<64 hex>"}},
      "resources": {"<checkout-relative path>": "<sha256>"},
      "dependencies": {"<distribution>": ["<allowed version>", ...]},
      "task_assets": {"<task id>/<task-relative path>": "<sha256>"}   # Harbor mode
    }

A route's *program fingerprint* covers the parsed definitions of every module reachable from its
root modules through imports that resolve inside the checkout (internal imports). Docstrings and
annotations are dropped and the AST is dumped without positions, so comments and formatting do
not count while any literal change does. ``build_grading_manifest`` produces a manifest with the
same code that verifies one, so a curator's checked-in manifest and make_review's check cannot
drift apart.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from reviews.production.errors import ReviewProductionError
from reviews.production.identity import folder_hashes, sha256_file

VERIFYIT_PIN = re.compile(r"github\.com/marin-community/verifyit@([0-9a-f]{40})")
DEPENDENCY_PROBE = """
import importlib.metadata, json, sys
found = {}
for name in json.loads(sys.argv[1]):
    try:
        found[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        found[name] = None
print(json.dumps(found))
"""


def manifest_revision(manifest: Any) -> str:
    """SHA-256 of the manifest's JSON with sorted keys and the default separators."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode("utf-8")).hexdigest()


def search_paths(*, checkout: Path) -> list[Path]:
    """Where MarinSkyRL's internal modules live, in the Gym worker's ``PYTHONPATH`` order."""
    return [checkout / "skyrl-gym", checkout / "skyrl-train", checkout]


def program_fingerprint(*, paths: list[Path], roots: list[str]) -> str:
    modules = reachable_modules(paths=paths, roots=roots)
    digest = hashlib.sha256()
    for name in sorted(modules):
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(normalized_dump(modules[name]).encode("utf-8") + b"\n")
    return digest.hexdigest()


def reachable_modules(*, paths: list[Path], roots: list[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        path = module_file(paths=paths, name=name)
        if path is None:
            continue  # not internal: the standard library or an installed dependency
        found[name] = path
        # Importing a.b.c runs a/__init__ and a/b/__init__ first.
        parts = name.split(".")
        pending.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        pending.extend(imported_names(path=path, module=name))
    return found


def module_file(*, paths: list[Path], name: str) -> Path | None:
    relative = Path(*name.split("."))
    for base in paths:
        for candidate in (base / relative / "__init__.py", base / relative.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


def imported_names(*, path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join([*base_parts, node.module] if node.module else base_parts)
            else:
                base = node.module or ""
            if base:
                names.append(base)
                # ``from pkg import sub`` may name a submodule.
                names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


class _Normalizer(ast.NodeTransformer):
    """Drops docstrings and annotations: they document code without changing what it computes."""

    def _strip_docstring(self, node: Any) -> Any:
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_Module(self, node: ast.Module) -> Any:
        return self.generic_visit(self._strip_docstring(node))

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        return self.generic_visit(self._strip_docstring(node))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        node.returns = None
        return self.generic_visit(self._strip_docstring(node))

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        node.returns = None
        return self.generic_visit(self._strip_docstring(node))

    def visit_arg(self, node: ast.arg) -> Any:
        node.annotation = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        if node.value is None:
            return None
        return ast.Assign(targets=[node.target], value=node.value)


def normalized_dump(path: Path) -> str:
    tree = _Normalizer().visit(ast.parse(path.read_bytes(), filename=str(path)))
    return ast.dump(tree, include_attributes=False)


def installed_versions(*, python: str, names: list[str]) -> dict[str, str | None]:
    """Distribution versions as the configured interpreter sees them."""
    done = subprocess.run(
        [python, "-c", DEPENDENCY_PROBE, json.dumps(names)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReviewProductionError(
            f"Cannot read dependency versions with {python}: {done.stderr.strip()[-200:]}"
        )
    return json.loads(done.stdout)


def build_grading_manifest(
    *,
    checkout: Path,
    mode: str,
    environment: str | None,
    routes: dict[str, list[str]],
    resources: list[str],
    dependencies: dict[str, list[str]],
    task_assets: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A manifest for the executed checkout, fingerprinted exactly as make_review verifies it."""
    paths = search_paths(checkout=checkout)
    manifest: dict[str, Any] = {
        "mode": mode,
        "routes": {
            name: {"roots": roots, "fingerprint": program_fingerprint(paths=paths, roots=roots)}
            for name, roots in sorted(routes.items())
        },
        "resources": {path: sha256_file(checkout / path) for path in sorted(resources)},
        "dependencies": dependencies,
    }
    if environment is not None:
        manifest["environment"] = environment
    if task_assets is not None:
        manifest["task_assets"] = task_assets
    return manifest


def grading_identity(
    *, snapshot_path: Path, source: dict[str, Any], runtime: dict[str, Any], tasks: list[Any]
) -> dict[str, Any]:
    """Verify the executed checkout against the Atlas snapshot; the run's ``grading`` record."""
    try:
        row = json.loads(Path(snapshot_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReviewProductionError(f"Cannot read the grading snapshot: {exc}") from None
    if not isinstance(row, dict) or row.get("id") != source["source_id"]:
        raise ReviewProductionError("The grading snapshot identifies a different source selection")
    if source.get("revision") != row.get("dataset_revision"):
        raise ReviewProductionError("The grading snapshot identifies a different dataset revision")
    manifest = row.get("grading_manifest")
    revision = row.get("grading_revision")
    if not isinstance(manifest, dict) or manifest_revision(manifest) != revision:
        raise ReviewProductionError("The grading snapshot manifest does not match its revision")
    checkout = Path(runtime["marinskyrl_checkout"])
    mode = manifest.get("mode")
    if mode == "harbor":
        _check_task_assets(manifest.get("task_assets") or {}, tasks)
    else:
        environment = manifest.get("environment")
        enabled = bool(runtime.get("gym_config", {}).get(environment, {}).get("verifyit_enabled"))
        if enabled != (mode == "verifyit"):
            raise ReviewProductionError(
                "The effective Gym verifyit mode differs from the captured grading route"
            )
    dependencies = manifest.get("dependencies") or {}
    key = "harbor_python" if mode == "harbor" else "gym_python"
    python = runtime.get(key)
    if dependencies and not python:
        raise ReviewProductionError(
            f"runtime.{key} is needed to read the executed dependency versions"
        )
    versions = (
        installed_versions(python=str(python), names=sorted(dependencies)) if dependencies else {}
    )
    for name in sorted(dependencies):
        if versions.get(name) not in dependencies[name]:
            raise ReviewProductionError(
                f"Executed grading dependency {name}=={versions.get(name)} differs from its "
                "captured runtime lock"
            )
    paths = search_paths(checkout=checkout)
    if mode == "harbor" and runtime.get("harbor_checkout"):
        paths = [Path(runtime["harbor_checkout"]) / "src", *paths]
    for name, route in sorted((manifest.get("routes") or {}).items()):
        if program_fingerprint(paths=paths, roots=route["roots"]) != route["fingerprint"]:
            raise ReviewProductionError(
                f"Executed grading code differs from the Atlas snapshot for {name}"
            )
    for relative, digest in sorted((manifest.get("resources") or {}).items()):
        path = checkout / relative
        if not path.is_file() or sha256_file(path) != digest:
            raise ReviewProductionError(f"Executed grading resource differs at {relative}")
    return {
        "source_id": source["source_id"],
        "source_revision": source.get("revision"),
        "grading_revision": revision,
        "grading_manifest": manifest,
        "selected_code_verified": True,
        "installed_dependency_versions": versions,
    }


def _check_task_assets(assets: dict[str, str], tasks: list[Any]) -> None:
    for task in tasks:
        if not task.task_dir:
            continue
        folder = Path(task.task_dir)
        selected = {key: value for key, value in assets.items() if key.startswith(f"{task.id}/")}
        present = {
            f"{task.id}/{Path(path).relative_to(folder).as_posix()}": digest
            for path, digest in folder_hashes(folder=folder).items()
        }
        if not selected or any(present.get(key) != digest for key, digest in selected.items()):
            raise ReviewProductionError(
                "Selected native task verifier assets differ from the grading snapshot"
            )


def verifyit_pin(*, checkout: Path) -> str | None:
    """The verifyit commit pinned in ``skyrl-gym/pyproject.toml``, if any."""
    path = checkout / "skyrl-gym" / "pyproject.toml"
    if not path.is_file():
        return None
    match = VERIFYIT_PIN.search(path.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def verifyit_packages(*, index: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry["package"] for entry in index if isinstance(entry.get("package"), dict)]


def check_task_verifyit(
    *, task_id: str, index: list[dict[str, Any]], enabled: bool, pin: str | None
) -> dict[str, Any] | None:
    """§14.2 for one attempt; returns its verifyit package record, if any."""
    packages = verifyit_packages(index=index)
    for package in packages:
        if package.get("source_commit") != pin:
            raise ReviewProductionError(
                "Executed verifyit revision differs from the selected MarinSkyRL pin"
            )
    if enabled and not packages:
        raise ReviewProductionError(
            f"verifyit was enabled but no package code was captured for {task_id}"
        )
    return packages[0] if packages else None


def single_verifyit(*, packages: list[dict[str, Any]]) -> dict[str, Any] | None:
    distinct = {json.dumps(package, sort_keys=True) for package in packages}
    if len(distinct) > 1:
        raise ReviewProductionError("Review tasks used different verifyit package revisions")
    return packages[0] if packages else None
