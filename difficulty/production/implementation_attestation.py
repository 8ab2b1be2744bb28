"""Producing the execution-implementation attestation; the Atlas checks it
with ``difficulty.attestation`` at publication.

Both scripts are parsed, never imported. From the roots, the closure of referenced module-level
names is collected; each definition is normalised — docstrings dropped unless the file reads
``__doc__``, annotations stripped from undecorated functions (a decorator such as
``dataclass`` may read them), positions dropped so comments and formatting do not count — and
fingerprinted as the SHA-256 of its dumped syntax tree, so any literal change counts. Names bound
by imports are recorded as the normalised import statements that bind them.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difficulty.attestation import SCOPE_NOTE
from difficulty.production.errors import DifficultyProductionError
from difficulty.production.execution import ROOTS
from reviews.production.runtime.identity import sha256_file

SCHEMA_VERSION = 1
IMPORT_SCOPE_NOTE = (
    "Definitions imported from other modules are compared by their import statements only; "
    "the run identity's whole-file hashes record those modules."
)
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign


@dataclass(frozen=True)
class Fingerprints:
    """One script's side of the comparison."""

    path: str
    file_sha256: str
    definitions: dict[str, str | None]
    imports: list[str]

    @property
    def definitions_sha256(self) -> str:
        text = json.dumps(
            {"definitions": self.definitions, "imports": self.imports}, sort_keys=True
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def record(self) -> dict[str, str]:
        return {
            "path": self.path,
            "file_sha256": self.file_sha256,
            "definitions_sha256": self.definitions_sha256,
        }


class _Normaliser(ast.NodeTransformer):
    def __init__(self, *, keep_docstrings: bool) -> None:
        self.keep_docstrings = keep_docstrings

    def _body(self, node: Any) -> Any:
        first = node.body[0] if node.body else None
        if (
            not self.keep_docstrings
            and isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            node.body = node.body[1:] or [ast.Pass()]
        return node

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        if not node.decorator_list:
            node.returns = None
            for argument in (
                *node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                node.args.vararg, node.args.kwarg,
            ):  # fmt: skip
                if argument is not None:
                    argument.annotation = None
        return self.generic_visit(self._body(node))

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        return self.generic_visit(self._body(node))


def fingerprint_script(*, path: Path, roots: tuple[str, ...] = ROOTS) -> Fingerprints:
    try:
        source = path.read_bytes()
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise DifficultyProductionError(f"Cannot parse {path}: {exc}") from None
    definitions: dict[str, Definition] = {}
    imports: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.update(_import_bindings(node))
        elif isinstance(node, Definition):
            definitions.update((name, node) for name in _defined_names(node))
    keep_docstrings = any(
        "__doc__" in (getattr(node, "attr", None), getattr(node, "id", None))
        for node in ast.walk(tree)
    )
    found: dict[str, str | None] = {}
    used_imports: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        definition = definitions.get(name)
        if definition is None:
            found[name] = None  # a root the script does not define
            continue
        normalised = _Normaliser(keep_docstrings=keep_docstrings).visit(copy.deepcopy(definition))
        dumped = ast.dump(normalised, include_attributes=False)
        found[name] = hashlib.sha256(dumped.encode("utf-8")).hexdigest()
        for referenced in _referenced_names(definition):
            if referenced in definitions and referenced not in found:
                pending.append(referenced)
            elif referenced in imports:
                used_imports.add(imports[referenced])
    return Fingerprints(
        path=str(path),
        file_sha256=sha256_file(path),
        definitions=dict(sorted(found.items())),
        imports=sorted(used_imports),
    )


def _import_bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Each name the import binds → the statement binding it alone, in canonical form."""
    bindings = {}
    for alias in node.names:
        suffix = f" as {alias.asname}" if alias.asname else ""
        if isinstance(node, ast.Import):
            bindings[alias.asname or alias.name.split(".")[0]] = f"import {alias.name}{suffix}"
        else:
            module = "." * node.level + (node.module or "")
            bindings[alias.asname or alias.name] = f"from {module} import {alias.name}{suffix}"
    return bindings


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [
            n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)
        ]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _referenced_names(node: ast.AST) -> set[str]:
    return {item.id for item in ast.walk(node) if isinstance(item, ast.Name)}


def attest_execution(
    *,
    original: Path,
    executed: Path,
    validation: list[dict[str, str]] | None = None,
    roots: tuple[str, ...] = ROOTS,
) -> dict[str, Any]:
    """The attestation document comparing ``original`` with ``executed``."""
    before = fingerprint_script(path=original, roots=roots)
    after = fingerprint_script(path=executed, roots=roots)
    names = sorted(set(before.definitions) | set(after.definitions))
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "scope": list(roots),
        "original": before.record(),
        "executed": after.record(),
        "definitions": [
            {
                "name": name,
                "original_sha256": before.definitions.get(name),
                "executed_sha256": after.definitions.get(name),
            }
            for name in names
        ],
        "imports": {"original": before.imports, "executed": after.imports},
        "matching": before.definitions_sha256 == after.definitions_sha256,
        "limitations": [SCOPE_NOTE, IMPORT_SCOPE_NOTE],
    }
    if validation:
        document["changed_code_validation"] = validation
    return document
