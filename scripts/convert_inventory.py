"""One-time conversion of the real Marin source inventory (JSON) into TOML source definitions.

    uv run python scripts/convert_inventory.py ../shared/data/marin-source-inventory.json

Writes fixtures/sources/<origin>/<declaring module>.toml, one file per upstream module and origin,
sources in inventory order. Every declared value is carried over as declared; provenance fields
(declared_in, in_listing_snapshot) become comments. Re-running it overwrites those files.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import tomli_w

ROOT = Path(__file__).resolve().parent.parent
ORIGIN_DIRS = {"MarinSkyRL": "marinskyrl", "Task Trove": "tasktrove"}


def module_name(declared_in: str) -> str:
    path = declared_in.split("@")[0].split(" ")[0]
    stem = path.removeprefix("datasets/").removesuffix(".py")
    return re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")


def definition(source: dict) -> dict:
    entry: dict = {"id": source["id"], "title": source["title"]}
    if source["family"]:
        entry["family"] = source["family"]
    entry["tags"] = list(source["tags"])
    if source["count"] is not None:
        entry["count"] = source["count"]
    if source["notes"]:
        entry["notes"] = source["notes"]
    dataset = {k: v for k, v in source["dataset"].items() if v is not None}
    entry["dataset"] = dataset
    if source["verifier"] is not None:
        entry["verifier"] = {k: v for k, v in source["verifier"].items() if v is not None}
    if source["pipeline"] is not None:
        entry["pipeline"] = dict(source["pipeline"])
    return entry


def render(origin: str, sources: list[dict]) -> str:
    lines = [
        "# Source definitions transcribed from the public Marin task-curation inventory",
        "# (marin-community/marin, experiments/post_training/task_curation). Data only.",
        "",
        tomli_w.dumps({"defaults": {"origin": origin}}).rstrip(),
        "",
    ]
    for source in sources:
        lines.append(f"# declared in {source['declared_in']}")
        listed = "yes" if source["in_listing_snapshot"] else "no"
        lines.append(f"# in the earlier listing snapshot: {listed}")
        lines.append(tomli_w.dumps({"source": [definition(source)]}).rstrip())
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inventory", type=Path)
    parser.add_argument("--output", type=Path, default=ROOT / "fixtures" / "sources")
    args = parser.parse_args()
    inventory = json.loads(args.inventory.read_text(encoding="utf-8"))["sources"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for source in inventory:
        key = (source["origin"], module_name(source["declared_in"]))
        groups.setdefault(key, []).append(source)
    for (origin, module), sources in sorted(groups.items()):
        path = args.output / ORIGIN_DIRS[origin] / f"{module}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(origin, sources), encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(sources)} sources")


if __name__ == "__main__":
    main()
