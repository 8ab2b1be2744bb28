"""Grading identity and the verifyit pin.

A grading manifest (the Atlas row's ``grading_manifest``) has this shape::

    {
      "mode": "verifyit" | "legacy" | "harbor",
      "environment": "<Gym env id>",                       # Gym modes
      "routes": {"<route>": {"roots": ["<module>", ...], "fingerprint": "<64 hex>"}},
      "resources": {"<checkout-relative path>": "<sha256>"},
      "dependencies": {"<distribution>": ["<allowed version>", ...]},
      "task_assets": {"<task id>/<task-relative path>": "<sha256>"}   # Harbor mode
    }

The reference Atlas's rows are read too: ``verifier_mode`` and ``environment`` on the row (and
``revision`` when the row has no ``dataset_revision``), routes of ``{modules, program_revision,
locked_packages: {name: [{version}]}, resources}``. Everything in them is checked but the
``program_revision``, which the reference computes with its own normaliser; such a route is
refused with a one-line reason instead of being trusted or crashing.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.identity import folder_hashes, sha256_file

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


GRADING_MODES = ("verifyit", "legacy", "harbor")


@dataclass(frozen=True)
class SnapshotRoute:
    name: str
    # None for a reference-Atlas route: it pins a ``program_revision`` made by the reference's own
    # fingerprint, which this tool does not recompute.
    roots: tuple[str, ...] | None
    fingerprint: str


@dataclass(frozen=True)
class GradingSnapshot:
    """What a grading snapshot pins, read from either manifest format (module docstring)."""

    revision: str
    manifest: dict[str, Any]
    mode: str
    environment: str | None
    routes: tuple[SnapshotRoute, ...]
    resources: dict[str, str]
    dependencies: dict[str, tuple[str, ...]]
    task_assets: dict[str, str]


def read_grading_snapshot(*, snapshot_path: Path, source: dict[str, Any]) -> GradingSnapshot:
    """The Atlas row's identity checks and its manifest, read without trusting its shape:
    anything missing or of the wrong type is a one-line refusal, never a ``KeyError``."""
    try:
        row = json.loads(Path(snapshot_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReviewProductionError(f"Cannot read the grading snapshot: {exc}") from None
    if not isinstance(row, dict) or row.get("id") != source["source_id"]:
        raise ReviewProductionError("The grading snapshot identifies a different source selection")
    # A row carrying only ``revision`` names its dataset revision there (the reference reads it).
    if source.get("revision") != (row.get("dataset_revision") or row.get("revision")):
        raise ReviewProductionError("The grading snapshot identifies a different dataset revision")
    manifest = row.get("grading_manifest")
    revision = row.get("grading_revision")
    if not isinstance(manifest, dict) or manifest_revision(manifest) != revision:
        raise ReviewProductionError("The grading snapshot manifest does not match its revision")
    routes = manifest.get("routes", {})
    if not isinstance(routes, dict) or not all(isinstance(r, dict) for r in routes.values()):
        raise ReviewProductionError(
            "The grading snapshot manifest's routes must be an object of route objects"
        )
    reference = any("program_revision" in route for route in routes.values())
    pinned = (_reference_pins if reference else _project_pins)(row=row, manifest=manifest)
    environment = pinned.pop("environment")
    return GradingSnapshot(
        revision=str(revision),
        manifest=manifest,
        environment=environment if isinstance(environment, str) else None,
        **pinned,
    )


def _project_pins(*, row: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    mode = manifest.get("mode")
    if mode not in GRADING_MODES:
        raise ReviewProductionError(
            "The grading snapshot manifest names no grading mode (verifyit, legacy or harbor)"
        )
    routes = []
    for name, route in sorted(manifest.get("routes", {}).items()):
        roots, fingerprint = route.get("roots"), route.get("fingerprint")
        if not _strings(roots) or not isinstance(fingerprint, str):
            raise ReviewProductionError(
                f"The grading snapshot route {name} needs its roots and fingerprint"
            )
        routes.append(SnapshotRoute(name=name, roots=tuple(roots), fingerprint=fingerprint))
    dependencies = manifest.get("dependencies", {})
    if not isinstance(dependencies, dict) or not all(_strings(v) for v in dependencies.values()):
        raise ReviewProductionError(
            "The grading snapshot dependencies must map each distribution to its allowed versions"
        )
    return {
        "mode": mode,
        "environment": manifest.get("environment"),
        "routes": tuple(routes),
        "resources": _digests(manifest.get("resources", {}), what="resources"),
        "dependencies": {name: tuple(versions) for name, versions in dependencies.items()},
        "task_assets": _digests(manifest.get("task_assets", {}), what="task_assets"),
    }


def _reference_pins(*, row: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """The reference Atlas's format: ``verifier_mode`` and ``environment`` on the row; per route
    ``modules``, ``program_revision``, ``locked_packages`` (``{name: [{version, …}]}``) and
    ``resources``."""
    mode = row.get("verifier_mode")
    if mode not in GRADING_MODES:
        raise ReviewProductionError(
            "The grading snapshot names no verifier_mode (verifyit, legacy or harbor)"
        )
    environment = row.get("environment")
    if mode != "harbor" and not isinstance(environment, str):
        raise ReviewProductionError("The grading snapshot names no Gym environment")
    routes = []
    resources: dict[str, str] = {}
    dependencies: dict[str, set[str]] = {}
    for name, route in sorted(manifest["routes"].items()):
        program = route.get("program_revision")
        locked = route.get("locked_packages", {})
        if not isinstance(program, str):
            raise ReviewProductionError(
                f"The grading snapshot route {name} has no program_revision"
            )
        if not isinstance(locked, dict) or not all(isinstance(v, list) for v in locked.values()):
            raise ReviewProductionError(
                f"The grading snapshot route {name} has unreadable locked_packages"
            )
        for package, entries in locked.items():
            dependencies.setdefault(package, set()).update(
                entry["version"]
                for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("version"), str)
            )
        resources.update(_digests(route.get("resources", {}), what="resources"))
        routes.append(SnapshotRoute(name=name, roots=None, fingerprint=program))
    return {
        "mode": mode,
        "environment": environment,
        "routes": tuple(routes),
        "resources": resources,
        "dependencies": {name: tuple(sorted(v)) for name, v in sorted(dependencies.items())},
        "task_assets": {},
    }


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _digests(value: Any, *, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ReviewProductionError(
            f"The grading snapshot {what} must map each path to its SHA-256"
        )
    return dict(value)


def grading_identity(
    *, snapshot_path: Path, source: dict[str, Any], runtime: dict[str, Any], tasks: list[Any]
) -> dict[str, Any]:
    """Verify the executed checkout against the Atlas snapshot; the run's ``grading`` record."""
    snapshot = read_grading_snapshot(snapshot_path=snapshot_path, source=source)
    checkout = Path(runtime["marinskyrl_checkout"])
    if snapshot.mode == "harbor":
        _check_task_assets(snapshot.task_assets, tasks)
    else:
        environment = snapshot.environment
        config = runtime.get("gym_config", {}).get(environment, {}) if environment else {}
        if bool(config.get("verifyit_enabled")) != (snapshot.mode == "verifyit"):
            raise ReviewProductionError(
                "The effective Gym verifyit mode differs from the captured grading route"
            )
    key = "harbor_python" if snapshot.mode == "harbor" else "gym_python"
    python = runtime.get(key)
    if snapshot.dependencies and not python:
        raise ReviewProductionError(
            f"runtime.{key} is needed to read the executed dependency versions"
        )
    versions = (
        installed_versions(python=str(python), names=sorted(snapshot.dependencies))
        if snapshot.dependencies
        else {}
    )
    for name in sorted(snapshot.dependencies):
        if versions.get(name) not in snapshot.dependencies[name]:
            raise ReviewProductionError(
                f"Executed grading dependency {name}=={versions.get(name)} differs from its "
                "captured runtime lock"
            )
    for relative, digest in sorted(snapshot.resources.items()):
        path = checkout / relative
        if not path.is_file() or sha256_file(path) != digest:
            raise ReviewProductionError(f"Executed grading resource differs at {relative}")
    paths = search_paths(checkout=checkout)
    if snapshot.mode == "harbor" and runtime.get("harbor_checkout"):
        paths = [Path(runtime["harbor_checkout"]) / "src", *paths]
    for route in snapshot.routes:
        if route.roots is None:
            raise ReviewProductionError(
                f"The grading snapshot pins {route.name} by the reference Atlas's program "
                "fingerprint, which make_review does not recompute; use a snapshot whose "
                "manifest gives roots and a fingerprint"
            )
        if program_fingerprint(paths=paths, roots=list(route.roots)) != route.fingerprint:
            raise ReviewProductionError(
                f"Executed grading code differs from the Atlas snapshot for {route.name}"
            )
    return {
        "source_id": source["source_id"],
        "source_revision": source.get("revision"),
        "grading_revision": snapshot.revision,
        "grading_manifest": snapshot.manifest,
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
    """The verifyit pin for one attempt; returns its verifyit package record, if any."""
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
