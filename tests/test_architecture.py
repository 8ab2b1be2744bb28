"""The layering of docs/architecture.md, checked on the source: atlas < reviews < difficulty, and
inside each app its rooms, each ranked above the rooms it may import.

Every module of the three apps is parsed (never imported). A test here fails when a module imports
from an app above its own or from a room above its own, when a module reaches into another app from
inside a function (the old way of hiding a circle), when imports form a circle, when the producers'
wing (``reviews/production/``) names Django, DRF or Celery, or when a catalog template includes a
template of an upper app.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# ``config`` is the project wiring (settings, root URLs, Celery, WSGI): it assembles every app, so
# it ranks above them all and no app may import it.
RANK = {"atlas": 0, "reviews": 1, "difficulty": 2, "config": 3}
APPS = ("atlas", "reviews", "difficulty")


@dataclass(frozen=True)
class Import:
    module: str  # importing module, dotted
    target: str  # imported module, dotted
    line: int
    in_function: str | None  # name of the enclosing function, None at module level


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def app_modules() -> dict[str, Path]:
    found = {}
    for app in RANK:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


MODULES = app_modules()


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, function or child.name)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(module, alias.name, child.lineno, function))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(module, child, path.name == "__init__.py")
                for alias in child.names:
                    # "from reviews import labels" imports the submodule reviews.labels.
                    candidate = f"{base}.{alias.name}"
                    target = candidate if candidate in MODULES else base
                    found.append(Import(module, target, child.lineno, function))
            visit(child, function)

    visit(tree, None)
    return found


ALL_IMPORTS = [item for module, path in MODULES.items() for item in imports_of(module, path)]


def app_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in RANK else None


def test_the_scan_sees_every_app_and_its_imports():
    assert {app_of(module) for module in MODULES} == set(RANK)
    assert any(item.target == "atlas.models" for item in ALL_IMPORTS)
    assert len(MODULES) > 100


def test_no_module_imports_from_an_app_above_its_own():
    upward = [
        f"{item.module}:{item.line} imports {item.target}"
        for item in ALL_IMPORTS
        if app_of(item.target) and RANK[app_of(item.target)] > RANK[app_of(item.module)]
    ]
    assert upward == []


def test_no_cross_app_import_hides_in_a_function():
    """Only ``AppConfig.ready()`` may import another app late: Django requires it there."""
    hidden = [
        f"{item.module}:{item.line} imports {item.target} inside {item.in_function}()"
        for item in ALL_IMPORTS
        if item.in_function
        and app_of(item.target)
        and app_of(item.target) != app_of(item.module)
        and not (item.module.endswith(".apps") and item.in_function == "ready")
    ]
    assert hidden == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def import_graph(*, include_functions: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for item in ALL_IMPORTS:
        if item.target in MODULES and (include_functions or item.in_function is None):
            graph[item.module].add(item.target)
    return graph


def test_cycle_detection_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles_at_module_level_or_through_late_imports():
    assert _cycles(import_graph(include_functions=False)) == []
    late = {
        module: targets
        for module, targets in import_graph(include_functions=True).items()
        if not module.endswith(".apps")
    }
    assert _cycles(late) == []


INCLUDE = re.compile(r"""\{%\s*(?:include|extends)\s+["'](?P<name>[^"']+)["']""")


# The rooms of each app from the ground up: a module imports only from its own room or a room
# ranked lower (any room of an app below). A module of an app's root belongs to the room ``""``;
# ``apps`` and ``tasks`` are the app's wiring (Django and Celery load them to assemble the app), so
# they rank above its other rooms. The wing's rooms rank below the Django app that publishes what
# they make.
ROOMS = {
    "atlas": {
        "rules": 0,
        "db": 0,
        "jsonio": 1,
        "": 2,
        "artifact": 2,
        "export": 3,
        "services": 3,
        "web": 4,
        "api": 5,
        "admin": 5,
        "templatetags": 5,
        "management": 6,
        "wiring": 7,
    },
    "reviews": {
        "production": 0,
        "production.format": 1,
        "production.examples": 1,
        "production.workers": 1,
        "production.runtime": 2,
        "production.make_review": 3,
        "production.curation": 4,
        "": 5,
        "services": 6,
        "pages": 7,
        "api": 8,
        "admin": 8,
        "templatetags": 8,
        "management": 9,
        "wiring": 10,
    },
    "difficulty": {"": 0, "production": 1, "templatetags": 1, "management": 2, "wiring": 3},
}
WIRING = {"apps", "tasks"}
# A root module that is a room of its own: the catalog's admin writes through its services.
ROOT_ROOMS = {"admin"}
WING = "reviews.production"
FRAMEWORKS = ("django", "rest_framework", "celery", "django_filters", "drf_spectacular")


def room_of(module: str) -> str:
    """The room a module lives in: the folder under its app (the wing's rooms one level deeper);
    a package's ``__init__`` belongs to its own folder."""
    app, *rest = module.split(".")
    path = MODULES.get(module)
    folder = rest if path is not None and path.name == "__init__.py" else rest[:-1]
    if app == "reviews" and folder[:1] == ["production"]:
        return ".".join(folder[:2])
    if folder:
        return folder[0]
    if rest and rest[0] in ROOT_ROOMS:
        return rest[0]
    return "wiring" if rest and rest[0] in WIRING else ""


def test_every_room_is_ranked():
    unranked = sorted(
        f"{module} ({room_of(module)!r})"
        for module in MODULES
        if app_of(module) in ROOMS and room_of(module) not in ROOMS[app_of(module)]
    )
    assert unranked == []


@pytest.mark.parametrize("app", sorted(ROOMS))
def test_no_module_imports_from_a_room_above_its_own(app):
    ranks = ROOMS[app]
    upward = [
        f"{item.module}:{item.line} imports {item.target}"
        for item in ALL_IMPORTS
        if app_of(item.module) == app
        and app_of(item.target) == app
        and room_of(item.target) != room_of(item.module)
        and ranks[room_of(item.target)] >= ranks[room_of(item.module)]
    ]
    assert upward == []


def test_the_producers_wing_names_no_web_framework():
    """Parsed, not imported: a function-level import counts as much as a module-level one."""
    named = [
        f"{item.module}:{item.line} imports {item.target}"
        for item in ALL_IMPORTS
        if item.module.startswith(WING) and item.target.split(".")[0] in FRAMEWORKS
    ]
    assert named == []


def test_what_the_wing_loads_from_other_apps_loads_no_web_framework():
    """The catalog modules the wing imports (JSON checks, pure rules) load no framework either."""
    graph = import_graph(include_functions=False)
    seen: set[str] = set()
    frontier = [module for module in MODULES if module.startswith(WING)]
    while frontier:
        module = frontier.pop()
        if module not in seen:
            seen.add(module)
            frontier.extend(graph[module])
    outside = sorted(module for module in seen if not module.startswith(WING))
    assert outside and all(app_of(module) == "atlas" for module in outside), outside
    loaded = [
        f"{item.module}:{item.line} imports {item.target}"
        for item in ALL_IMPORTS
        if item.module in seen
        and item.in_function is None
        and item.target.split(".")[0] in FRAMEWORKS
    ]
    assert loaded == []


def test_make_difficulty_uses_only_the_wings_runtime_and_format():
    allowed = (f"{WING}.runtime", f"{WING}.format")
    reached = [
        f"{item.module}:{item.line} imports {item.target}"
        for item in ALL_IMPORTS
        if item.module.startswith("difficulty.production")
        and app_of(item.target) == "reviews"
        and not item.target.startswith(allowed)
    ]
    assert reached == []


def test_the_room_checks_see_what_they_judge():
    assert room_of("reviews.production.make_review.stages.judge") == "production.make_review"
    assert room_of("reviews.services.publication") == "services"
    assert room_of("reviews.models") == "" and room_of("reviews.apps") == "wiring"
    assert room_of("reviews.admin") == "admin" and room_of("reviews.production") == "production"
    assert room_of("reviews.production.format") == "production.format"
    assert room_of("atlas.admin") == "admin" and room_of("atlas.rules.labels") == "rules"
    wing_imports = [item for item in ALL_IMPORTS if item.module.startswith(WING)]
    assert any(item.target.startswith(f"{WING}.runtime") for item in wing_imports)


@pytest.mark.parametrize("app", APPS)
def test_templates_include_only_their_own_app_or_lower(app):
    upward = []
    for path in sorted((ROOT / "templates" / app).rglob("*.html")):
        for match in INCLUDE.finditer(path.read_text(encoding="utf-8")):
            target = match["name"].split("/")[0]
            if target in RANK and RANK[target] > RANK[app]:
                upward.append(f"{path.relative_to(ROOT)} includes {match['name']}")
    assert upward == []
