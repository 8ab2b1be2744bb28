"""The seam through which the upper apps contribute what the catalog shows.

The catalog core (``atlas``) knows nothing about reviews or difficulty reports. It defines the
slots below; ``reviews`` and ``difficulty`` fill them from their ``AppConfig.ready()``, so
registration follows ``INSTALLED_APPS`` order (lower layers first). What the providers contribute is
stored in the display-state columns of ``catalog_sources`` whenever a write recomputes them, so
reads (page, API, CSV) never cross an app boundary. See ``docs/architecture.md``.

Slots:

- **display context providers** — given a batch of sources (payload, activity, curated columns),
  return fields of their :class:`~atlas.rules.display_state.DisplayContext` (open defects, grading
  bindings, the difficulty summary). Each provider sees the contexts gathered by the providers
  registered before it.
- **curated edit guards** — refuse a curator's edit of a curated column that a rule above forbids
  (an open defect caps Good), raising :class:`CuratedEditRefused` with the message to show.
- **field guide intro** — the sentence above the catalog's field guide (the difficulty protocol).
- **catalog cells** — the renderer (a function returning safe HTML, not a per-row template
  include), the fuller form an opened row shows, the stylesheet, legend and filter help of a
  display column the catalog cannot draw itself: the difficulty chart of ``difficulty_summary``.
- **source page sections** — sections of ``/sources/<id>/`` built from the source (verifier
  issues, sampled tasks, the review pool), each with the template that draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from atlas.rules.display_state import EMPTY_CONTEXT, DisplayContext, SourceSnapshot


class ContextProvider(Protocol):
    """Answers, for a batch of stored sources, the context fields it sets per source id. A source
    it leaves out keeps its context as it is (the empty context's values, for the fields only this
    provider sets)."""

    def __call__(
        self, *, sources: Sequence[SourceSnapshot], contexts: Mapping[str, DisplayContext]
    ) -> Mapping[str, Mapping[str, Any]]: ...


class CuratedEditRefused(Exception):
    """A curated edit breaks a rule of an upper app; ``str(exc)`` is the message for the curator."""


CuratedEditGuard = Callable[..., None]


@dataclass(frozen=True)
class _Provider:
    name: str
    provide: ContextProvider


_context_providers: list[_Provider] = []
_curated_edit_guards: list[tuple[str, CuratedEditGuard]] = []
_field_guide_intro: list[Callable[[], str]] = []
_catalog_cells: dict[str, CatalogCell] = {}


@dataclass(frozen=True)
class CatalogCell:
    """Draws one display column: ``render(*, summary, review_id, display_name)`` returns safe
    HTML (empty without a summary); ``render_detail`` (same arguments) the fuller form an opened
    row shows (source page, details drawer); ``legend()`` explains what the cell shows;
    ``filter_help`` explains the values of the column's filter where they are offered."""

    render: Callable[..., str]
    stylesheet: str | None = None
    legend: Callable[[], str] | None = None
    render_detail: Callable[..., str] | None = None
    filter_help: str = ""


@dataclass(frozen=True)
class SourceSection:
    """A section of the source page: ``build(*, source)`` returns the template's ``section``
    context, or None to show nothing."""

    name: str
    template: str
    build: Callable[..., dict[str, Any] | None]


_source_sections: list[SourceSection] = []


def register_source_section(*, section: SourceSection) -> None:
    _source_sections[:] = [item for item in _source_sections if item.name != section.name]
    _source_sections.append(section)


def source_sections() -> tuple[SourceSection, ...]:
    return tuple(_source_sections)


@dataclass(frozen=True)
class BuiltSourceSection:
    name: str
    template: str
    context: dict[str, Any]


def build_source_sections(*, source: Any) -> list[BuiltSourceSection]:
    """Each registered section's context for one source (sections that return None are left
    out)."""
    built = []
    for section in _source_sections:
        context = section.build(source=source)
        if context is not None:
            built.append(BuiltSourceSection(section.name, section.template, context))
    return built


def register_display_context(*, name: str, provider: ContextProvider) -> None:
    """Add (or replace, by name) a display context provider; called from ``AppConfig.ready()``."""
    _replace(_context_providers, name, _Provider(name=name, provide=provider))


def register_curated_edit_guard(*, name: str, guard: CuratedEditGuard) -> None:
    """``guard(*, source_id, quality)`` raises :class:`CuratedEditRefused` to refuse an edit."""
    _replace(_curated_edit_guards, name, (name, guard))


def register_field_guide_intro(*, provider: Callable[[], str]) -> None:
    _field_guide_intro[:] = [provider]


def register_catalog_cell(*, name: str, cell: CatalogCell) -> None:
    _catalog_cells[name] = cell


def catalog_cells() -> dict[str, CatalogCell]:
    return dict(_catalog_cells)


def gather_display_contexts(*, sources: Sequence[SourceSnapshot]) -> dict[str, DisplayContext]:
    """The display context of every given source: each provider runs once for the whole batch."""
    contexts = {source.id: EMPTY_CONTEXT for source in sources}
    # A source not stored yet has no defects, bindings or reviews: ask the providers about the
    # others only (a first sync of 100,000 rows needs no context query at all).
    stored = [source for source in sources if source.stored]
    if not stored:
        return contexts
    for provider in _context_providers:
        updates = provider.provide(sources=stored, contexts=contexts)
        for source_id, fields in updates.items():
            if source_id in contexts and fields:
                contexts[source_id] = replace(contexts[source_id], **fields)
    return contexts


def check_curated_edit(*, source_id: str, quality: str | None) -> None:
    for _, guard in _curated_edit_guards:
        guard(source_id=source_id, quality=quality)


def field_guide_intro() -> str:
    return _field_guide_intro[0]() if _field_guide_intro else ""


def registered_names() -> dict[str, list[str]]:
    """What is plugged in, for tests and ``docs/architecture.md``."""
    return {
        "display_context": [provider.name for provider in _context_providers],
        "curated_edit_guards": [name for name, _ in _curated_edit_guards],
        "field_guide_intro": ["provided"] if _field_guide_intro else [],
        "catalog_cells": sorted(_catalog_cells),
        "source_sections": [section.name for section in _source_sections],
    }


def _replace(items: list, name: str, entry: Any) -> None:
    for index, existing in enumerate(items):
        existing_name = existing.name if isinstance(existing, _Provider) else existing[0]
        if existing_name == name:
            items[index] = entry
            return
    items.append(entry)
