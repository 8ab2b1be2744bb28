"""The seam through which upper apps add sections to the review page (the difficulty sections).

A section names the artifacts whose contents it reads; the review page loads the contents of every
section in one query, then each section builds its page context from what was loaded, without
queries of its own. Sections register from their app's ``AppConfig.ready()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PageSection:
    name: str
    template: str
    # Artifact paths (of the review's own artifacts) whose contents ``build`` reads.
    wanted: Callable[[frozenset[str]], Iterable[str]]
    # build(*, bundle, contents) -> the template's ``section`` context, or None to show nothing.
    build: Callable[..., dict[str, Any] | None]


@dataclass(frozen=True)
class BuiltSection:
    name: str
    template: str
    context: dict[str, Any]


_sections: list[PageSection] = []


def register_page_section(section: PageSection) -> None:
    _sections[:] = [existing for existing in _sections if existing.name != section.name]
    _sections.append(section)


def registered_sections() -> tuple[PageSection, ...]:
    return tuple(_sections)


def wanted_paths(paths: frozenset[str]) -> set[str]:
    return {path for section in _sections for path in section.wanted(paths) if path in paths}


def build_sections(*, bundle: Any, contents: Mapping[str, str]) -> list[BuiltSection]:
    built = []
    for section in _sections:
        context = section.build(bundle=bundle, contents=dict(contents))
        if context is not None:
            built.append(
                BuiltSection(name=section.name, template=section.template, context=context)
            )
    return built
