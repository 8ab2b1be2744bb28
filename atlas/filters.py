"""The one filter set of the catalog: the page, ``/export.csv`` and ``/api/sources/`` all apply it,
so one query string means the same rows everywhere."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import cast
from urllib.parse import urlencode

import django_filters
from django import forms
from django.db import connection
from django.db.models import Case, F, IntegerField, Q, QuerySet, Value, When
from django.db.models.expressions import OrderBy
from django.db.models.functions import Collate, Lower, NullIf
from django.db.models.lookups import GreaterThan, GreaterThanOrEqual, LessThanOrEqual

from atlas.models import Source
from atlas.pagination import DEFAULT_PAGE_SIZE
from atlas.rules.labels import MEASUREMENT_LABELS
from atlas.rules.vocabularies import UNCLASSIFIED, MeasurementStatus, Quality, SourceType, Turns
from atlas.selectors import CatalogVocabulary, current_vocabulary

NATURAL_COLLATION = "atlas_natural"
UNKNOWN = "unknown"
DEFAULT_SORT = "name"

# Filter values are the values API rows return (`type: "RLVR"` → `?type=RLVR`), matched without
# regard to case; `unknown` selects the empty value (shown as Unclassified / Unknown).
TYPE_CHOICES = (*SourceType.choices, (UNKNOWN, "Unclassified"))
TYPE_VALUES = {**{value: value for value in SourceType.values}, UNKNOWN: UNCLASSIFIED}
TURNS_CHOICES = (*Turns.choices, (UNKNOWN, "Unknown"))
TURNS_VALUES = {**{value: value for value in Turns.values}, UNKNOWN: UNCLASSIFIED}
BENCHMARK_CHOICES = (("true", "Designated"), ("false", "Not designated"))
NEVER_REVIEWED = "Unreviewed"
QUALITY_CHOICES = (*Quality.choices, (UNKNOWN, "Not rated (unreviewed, unrated, needs re-review)"))
DIFFICULTY_CHOICES = (
    ("current", "Measured (current)"),
    *((status, MEASUREMENT_LABELS[status]) for status in ("historical", "invalid")),
    ("unmeasured", "Not measured"),
    ("0-25", "Large model: 0–25% solved"),
    ("25-50", "Large model: >25–50% solved"),
    ("50-75", "Large model: >50–75% solved"),
    ("75-100", "Large model: >75–100% solved"),
)
# The values of the rows' `difficulty_status` field, and `unknown` for its null.
DIFFICULTY_STATUS_CHOICES = (
    *MeasurementStatus.choices,
    (UNKNOWN, "No difficulty summary"),
)
# Older spellings still accepted, rewritten to the value responses return; a boolean parameter
# takes true/false as well as 1/0 (a toggle's false is its absence).
TOGGLES = ("show_bad", "show_excluded")
ALIASES = {
    "difficulty": {"measured": "current"},
    "benchmark": {"1": "true", "0": "false"},
    **{toggle: {"true": "1", "false": "", "0": ""} for toggle in TOGGLES},
}
CASE_INSENSITIVE = (
    "type", "turns", "quality", "difficulty", "difficulty_status", "benchmark", *TOGGLES, "sort",
)  # fmt: skip
# Half-open percent ranges (low, high]; the first range also includes 0.
DIFFICULTY_RANGES = {"0-25": (0, 25), "25-50": (25, 50), "50-75": (50, 75), "75-100": (75, 100)}
TOGGLE_CHOICES = (("1", "on"),)

SORT_KEYS = (
    "name", "origin", "dataset", "rows", "turns", "type", "benchmark", "family", "difficulty",
    "quality", "review_date", "status",
)  # fmt: skip
SORT_CHOICES = tuple((key, key) for key in SORT_KEYS) + tuple(
    (f"-{key}", f"-{key}") for key in SORT_KEYS
)
FAMILY_UNKNOWN_LABEL = "Unknown / unclassified"
# The filter set's parameters, in the order of a view's canonical query string.
FILTER_NAMES = (
    "q", "origin", "type", "turns", "family", "benchmark", "quality", "difficulty",
    "difficulty_status", "show_bad", "show_excluded", "sort",
)  # fmt: skip
# The filters whose values are the vocabulary's (the active sources').
VOCABULARY_FILTERS = ("origin", "family")


def invalid_choice_message(*, values, note: str = "") -> str:
    """A refusal that lists the values a filter takes, so a script learns them from the 400."""
    # The message is %-formatted with the refused value; a listed value keeps its own "%".
    valid = ", ".join(str(value) for value in values).replace("%", "%%") or "none in this catalog"
    return f"“%(value)s” is not a valid value. Valid: {valid}.{note}"


class ValueField(forms.CharField):
    """A parameter that takes one of ``values`` (as given: ``normalized_query`` has already
    rewritten case and older spellings), refused with the ``invalid_choice`` message.

    A plain membership test, not a ``ChoiceField``: a filter set builds its filters' fields per
    query, and a choice field normalises, and its form copies, every choice each time."""

    def __init__(self, *, values: tuple[str, ...] | None = (), **kwargs) -> None:
        # None: any value (checked elsewhere; see SourceFilterSet's ``checked_by_rows``).
        self.values = values
        super().__init__(strip=False, **kwargs)

    def validate(self, value: str) -> None:
        super().validate(value)
        if value and self.values is not None and value not in self.values:
            raise forms.ValidationError(
                self.error_messages["invalid_choice"],
                code="invalid_choice",
                params={"value": value},
            )


class SearchFilter(django_filters.CharFilter):
    pass


class ValueFilter(django_filters.CharFilter):
    field_class = ValueField


def choice_filter(
    *,
    choices,
    method: str,
    label: str,
    listed: tuple[str, ...] | None = None,
    note: str = "",
) -> ValueFilter:
    """A filter taking the values of ``choices``, whose refusal lists ``listed``, else every
    choice. The label is given, not derived from the model per filter set (django-filter would
    resolve it for each query's copy of the filter)."""
    values = tuple(value for value, _ in choices if value)
    return ValueFilter(
        values=values,
        method=method,
        label=label,
        error_messages={
            "invalid_choice": invalid_choice_message(
                values=listed if listed is not None else values, note=note
            )
        },
    )


def _text_key(field: str):
    """Case-insensitive, empty-as-null sort key for a text column."""
    value = NullIf(F(field), Value(""))
    if connection.vendor == "postgresql":
        return Collate(value, NATURAL_COLLATION)
    return Lower(value)


def _sort_expression(key: str):
    if key == "name":
        if connection.vendor == "postgresql":
            return _text_key("display_name")
        return NullIf(F("display_name_key"), Value(""))
    text_columns = {"origin": "origin", "dataset": "canonical_source", "turns": "turns",
                    "type": "type", "family": "family"}  # fmt: skip
    if key in text_columns:
        return _text_key(text_columns[key])
    plain_columns = {
        "rows": "task_count",
        "benchmark": "is_benchmark",
        "difficulty": "large_solve_rate",
        "review_date": "display_review_date",
    }
    if key in plain_columns:
        return F(plain_columns[key])
    if key == "quality":
        return Case(
            When(effective_quality="good", then=Value(0)),
            When(effective_quality="some_issues", then=Value(1)),
            When(effective_quality="bad", then=Value(2)),
            default=None,
            output_field=IntegerField(),
        )
    if key == "status":
        return Case(
            When(status="Available", then=Value(0)),
            When(status="Excluded", then=Value(1)),
            default=Value(2),
            output_field=IntegerField(),
        )
    raise ValueError(f"Unknown sort key: {key}")


def ordering_for(sort: str) -> list[OrderBy]:
    """Nulls and empty strings last in both directions; ties by source ID ascending."""
    descending = sort.startswith("-")
    expression = _sort_expression(sort.removeprefix("-"))
    primary = expression.desc(nulls_last=True) if descending else expression.asc(nulls_last=True)
    return [primary, F("id").asc()]


def difficulty_condition(value: str) -> Q:
    if value in ("current", "historical", "invalid"):
        return Q(difficulty_status=value)
    if value == "unmeasured":
        return ~Q(difficulty_status="current") | Q(difficulty_status__isnull=True)
    low, high = DIFFICULTY_RANGES[value]
    # p = 100 · solved / verified compared in integers: low < p ≤ high (0 ≤ p for the first range).
    scaled = F("large_solved") * 100
    lower = (
        GreaterThanOrEqual(scaled, 0)
        if low == 0
        else GreaterThan(scaled, F("large_verified") * low)
    )
    return (
        Q(difficulty_status="current", large_verified__gt=0, large_solved__isnull=False)
        & Q(lower)
        & Q(LessThanOrEqual(scaled, F("large_verified") * high))
    )


# (Inside the filter set, ``type`` is its filter.)
FormClass = type[forms.Form]


class SourceFilterSet(django_filters.FilterSet):
    """Origins and families are data: their choices come from the active sources (one vocabulary
    read), so an origin or family no source has is an unknown value like any other.

    ``checked_by_rows``: the origin and family are taken as given, and checked against the
    vocabulary only if the rows come back empty (``refused_values()``): a row with that
    origin or family proves it is one, and the vocabulary read is saved (the API's list)."""

    q = SearchFilter(method="filter_search", label="Search")
    # The choices of these two are the vocabulary's, set on each filter set's form (__init__).
    origin = choice_filter(choices=(), method="filter_origin", label="Catalog (origin name)")
    type = choice_filter(choices=TYPE_CHOICES, method="filter_type", label="Type")
    turns = choice_filter(choices=TURNS_CHOICES, method="filter_turns", label="Turns")
    family = choice_filter(choices=(), method="filter_family", label="Family, or unknown")
    benchmark = choice_filter(
        choices=BENCHMARK_CHOICES, method="filter_benchmark", label="Benchmark"
    )
    quality = choice_filter(choices=QUALITY_CHOICES, method="filter_quality", label="Quality")
    difficulty = choice_filter(
        choices=DIFFICULTY_CHOICES, method="filter_difficulty", label="Difficulty"
    )
    difficulty_status = choice_filter(
        choices=DIFFICULTY_STATUS_CHOICES,
        method="filter_difficulty_status",
        label="Difficulty status",
    )
    show_bad = choice_filter(
        choices=TOGGLE_CHOICES, method="keep", label="Show bad", note=" Also true, false, 0."
    )
    show_excluded = choice_filter(
        choices=TOGGLE_CHOICES,
        method="keep",
        label="Show excluded",
        note=" Also true, false, 0.",
    )
    sort = choice_filter(
        choices=SORT_CHOICES,
        method="keep",
        label="Sort",
        listed=SORT_KEYS,
        note=" A - prefix sorts descending (-rows).",
    )

    class Meta:
        model = Source
        fields: list[str] = []

    # Values the page's lenient reading dropped ({parameter: value}); see lenient_filterset().
    ignored: dict[str, str]

    def __init__(
        self,
        data: Mapping[str, str] | None = None,
        queryset: QuerySet[Source] | None = None,
        *,
        request=None,
        prefix=None,
        vocabulary: CatalogVocabulary | None = None,
        checked_by_rows: bool = False,
    ) -> None:
        super().__init__(
            normalized_query(data) if data is not None else None,
            queryset if queryset is not None else Source.objects.active(),
            request=request,
            prefix=prefix,
        )
        self._given = (data, queryset, request, prefix)
        self._vocabulary = vocabulary
        self._filtered_bases: dict[int, tuple[QuerySet, QuerySet]] = {}
        # Origin and family values matter only to a query that names one: without one, no
        # vocabulary is read (the API's list then costs one query less).
        self.names_one = any(self.data.get(name) for name in VOCABULARY_FILTERS)
        self.checked_by_rows = checked_by_rows and self.names_one and vocabulary is None
        if self.checked_by_rows:
            for name in VOCABULARY_FILTERS:
                cast(ValueField, self.form.fields[name]).values = None
        else:
            self._take_values(self.vocabulary if self.names_one or vocabulary is not None else None)

    def _take_values(self, known: CatalogVocabulary | None) -> None:
        # The form's fields are its own copies (Django forms copy their declared fields, and
        # their error messages).
        for name, values in vocabulary_values(known).items():
            field = cast(ValueField, self.form.fields[name])
            field.values = values
            field.error_messages["invalid_choice"] = invalid_choice_message(values=values)

    def with_values_checked(self) -> SourceFilterSet:
        """This query with its origin and family checked against the vocabulary (itself when they
        were), for an invalid query: its refusals are then all of them."""
        if not self.checked_by_rows:
            return self
        data, queryset, request, prefix = self._given
        return SourceFilterSet(data, queryset, request=request, prefix=prefix)

    def refused_values(
        self, *, vocabulary: CatalogVocabulary | None = None
    ) -> dict[str, list[str]]:
        """A valid ``checked_by_rows`` query whose rows came back empty: the refusals of its
        origin and family against the vocabulary (``vocabulary``, else the current one; none when
        they were checked already)."""
        if not self.checked_by_rows:
            return {}
        # Read, never written here: the filter set may be kept and shared (KeptFilterSets).
        known = vocabulary or self._vocabulary or current_vocabulary()
        refused = {}
        for name, values in vocabulary_values(known).items():
            value = self.form.cleaned_data.get(name) or ""
            if value and value not in values:
                # The refusal its field gives when the values are the vocabulary's.
                error = forms.ValidationError(
                    invalid_choice_message(values=values),
                    code="invalid_choice",
                    params={"value": value},
                )
                refused[name] = error.messages
        return refused

    @classmethod
    @functools.cache
    def form_class(cls) -> FormClass:
        """The form of the filters, made once per class: django-filter makes one per filter set,
        but these fields do not depend on the instance (the origin's and family's values are set
        on each form's own copies, and a form copies its declared fields)."""
        filters = copy.deepcopy(cls.base_filters)
        fields = {name: filter_.field for name, filter_ in filters.items()}
        return type(f"{cls.__name__}Form", (forms.Form,), fields)

    def get_form_class(self) -> FormClass:
        return self.form_class()

    @property
    def qs(self) -> QuerySet[Source]:
        """The filtered rows, a copy for each caller (django-filter keeps one per filter set): a
        kept filter set serves many requests, and none may evaluate another's rows."""
        return super().qs.all()

    @property
    def vocabulary(self) -> CatalogVocabulary:
        if self._vocabulary is None:
            self._vocabulary = current_vocabulary()
        return self._vocabulary

    # -- filters ---------------------------------------------------------------------------------
    def keep(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        return queryset

    def filter_search(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        for word in search_words(value):
            queryset = queryset.filter(search_text__contains=word)
        return queryset

    def filter_origin(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        return queryset.filter(origin=value)

    def filter_type(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        return queryset.filter(type=TYPE_VALUES[value])

    def filter_turns(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        return queryset.filter(turns=TURNS_VALUES[value])

    def filter_family(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        return queryset.filter(family="" if value == UNKNOWN else value)

    def filter_benchmark(
        self, queryset: QuerySet[Source], name: str, value: str
    ) -> QuerySet[Source]:
        return queryset.filter(is_benchmark=value == "true")

    def filter_quality(self, queryset: QuerySet[Source], name: str, value: str) -> QuerySet[Source]:
        if value == UNKNOWN:
            return queryset.filter(effective_quality__isnull=True)
        return queryset.filter(effective_quality=value)

    def filter_difficulty(
        self, queryset: QuerySet[Source], name: str, value: str
    ) -> QuerySet[Source]:
        return queryset.filter(difficulty_condition(value))

    def filter_difficulty_status(
        self, queryset: QuerySet[Source], name: str, value: str
    ) -> QuerySet[Source]:
        if value == UNKNOWN:
            return queryset.filter(difficulty_status__isnull=True)
        return queryset.filter(difficulty_status=value)

    # -- the whole view --------------------------------------------------------------------------
    @property
    def choices(self) -> dict[str, str]:
        """The valid, non-default values (cleaned)."""
        return {key: value for key, value in self.form.cleaned_data.items() if value}

    def counted_view(self, *leaving_out: str) -> dict[str, str]:
        """The values that decide which rows the view has, but ``leaving_out``'s: what a count
        of the view depends on (the sort orders rows, it never changes them)."""
        return {
            key: value
            for key, value in self.form.cleaned_data.items()
            if value and key != "sort" and key not in leaving_out
        }

    @property
    def sort_key(self) -> str:
        return self.form.cleaned_data.get("sort") or DEFAULT_SORT

    @property
    def shows_bad(self) -> bool:
        data = self.form.cleaned_data
        return self.toggles_bad_on or data.get("quality") == "bad"

    @property
    def toggles_bad_on(self) -> bool:
        """The "Show bad quality" toggle itself (``shows_bad`` also follows a Bad filter)."""
        return self.form.cleaned_data.get("show_bad") == "1"

    @property
    def shows_excluded(self) -> bool:
        return self.form.cleaned_data.get("show_excluded") == "1"

    def filter_queryset(self, queryset: QuerySet[Source]) -> QuerySet[Source]:
        return self._filtered(queryset, leaving_out=())

    def filtered(self, base: QuerySet) -> QuerySet:
        """``filter_queryset()`` of a base made once per process (the page's rows), kept with
        this filter set as django-filter keeps its ``qs``: a kept filter set answers its view
        again (``KeptFilterSets``), and filtering a copy of the base anew was about a tenth of
        a millisecond of every page. Like ``qs``, a copy for each caller."""
        kept = self._filtered_bases.get(id(base))
        if kept is None or kept[0] is not base:
            kept = self._filtered_bases[id(base)] = (base, self.filter_queryset(base.all()))
        return kept[1].all()

    def queryset_without(self, *names: str, shows_bad: bool = False) -> QuerySet[Source]:
        """The view's rows as if the filters ``names`` were absent (``shows_bad``: Bad rows too,
        whatever the toggle): the page counts its tabs over the view without its origin, and
        its facets over the view without theirs, from the same validated values."""
        return self._filtered(self.queryset.all(), leaving_out=names, shows_bad=shows_bad)

    def _filtered(
        self, queryset: QuerySet[Source], *, leaving_out: tuple[str, ...], shows_bad: bool = False
    ) -> QuerySet[Source]:
        for name, value in self.form.cleaned_data.items():
            if name not in leaving_out:
                queryset = self.filters[name].filter(queryset, value)
        if not (shows_bad or self.shows_bad):
            queryset = queryset.exclude(effective_quality="bad")
        if not self.shows_excluded:
            queryset = queryset.exclude(status="Excluded")
        return queryset.order_by(*ordering_for(self.sort_key))


def search_words(value: str) -> list[str]:
    """Every word of the query must match (the search text includes the whole source ID)."""
    return list(dict.fromkeys(value.lower().split()))


def normalized_query(data: Mapping[str, str]) -> dict[str, str]:
    """The query with case-insensitive values and older spellings rewritten to the canonical
    values, so one view has one URL."""
    canonical: dict[str, dict[str, str]] = {
        "type": {value.lower(): value for value, _ in TYPE_CHOICES},
        "turns": {value.lower(): value for value, _ in TURNS_CHOICES},
        "quality": {value.lower(): value for value, _ in QUALITY_CHOICES},
        "difficulty": {value: value for value, _ in DIFFICULTY_CHOICES},
        "difficulty_status": {value: value for value, _ in DIFFICULTY_STATUS_CHOICES},
        "benchmark": {value: value for value, _ in BENCHMARK_CHOICES},
        **{toggle: {value: value for value, _ in TOGGLE_CHOICES} for toggle in TOGGLES},
        "sort": {value: value for value, _ in SORT_CHOICES},
    }
    result = {key: data.get(key, "") for key in data}
    for key in CASE_INSENSITIVE:
        raw = (result.get(key) or "").strip()
        if not raw:
            continue
        lowered = raw.lower()
        aliases = ALIASES.get(key, {})
        if lowered in aliases:
            result[key] = aliases[lowered]
            continue
        result[key] = canonical[key].get(lowered, raw)
    return result


def vocabulary_values(known: CatalogVocabulary | None) -> dict[str, tuple[str, ...]]:
    """The values the origin and family filters take in this vocabulary (none without one)."""
    families: tuple[str, ...] = known.families if known else ()
    if known and known.has_unknown_family:
        families = (*families, UNKNOWN)
    return {"origin": tuple(known.origin_names) if known else (), "family": families}


class KeptFilterSets:
    """The validated filter sets of the queries a process was asked most recently, one store per
    base queryset and reading (strict, or the page's lenient one).

    Building a filter set copies its filters and its form's fields (as django-filter and Django
    copy them) and validates the query: about 0.4 ms of an API list's 3 ms in process, for the
    same few views asked again and again. A kept filter set is only read afterwards: its ``qs``
    and ``filtered()`` are a copy per caller and ``refused_values()`` writes nothing. What a
    query's validation depends on is its filter parameters, the vocabulary given and
    ``checked_by_rows``, all in the key; a query whose filter set would read the current
    vocabulary itself (an origin or family named, neither a vocabulary given nor
    ``checked_by_rows``) is built every time, since a sync changes that vocabulary. A kept
    filter set takes about 40 KB: 64 of them, some 2.5 MB per store and process."""

    def __init__(
        self, *, queryset: QuerySet[Source] | None = None, lenient: bool = False, size: int = 64
    ) -> None:
        self.queryset = queryset
        self.lenient = lenient
        self._kept = functools.lru_cache(maxsize=size)(self._validated)

    def get(
        self,
        data: Mapping[str, str],
        *,
        vocabulary: CatalogVocabulary | None = None,
        checked_by_rows: bool = False,
    ) -> SourceFilterSet:
        """The query's filter set, validated (``is_valid()`` was called)."""
        # Only the filters' parameters: paging and the like do not change a filter set.
        query = tuple((key, data.get(key, "")) for key in sorted(data) if key in FILTER_NAMES)
        reads_vocabulary = vocabulary is None and not checked_by_rows
        if reads_vocabulary and any(value for key, value in query if key in VOCABULARY_FILTERS):
            return self._validated(query, vocabulary, checked_by_rows)
        return self._kept(query, vocabulary, checked_by_rows)

    def _validated(
        self,
        query: tuple[tuple[str, str], ...],
        vocabulary: CatalogVocabulary | None,
        checked_by_rows: bool,
    ) -> SourceFilterSet:
        data = dict(query)
        if self.lenient:
            filterset = _lenient(data=data, queryset=self.queryset, vocabulary=vocabulary)
        else:
            filterset = SourceFilterSet(
                data, self.queryset, vocabulary=vocabulary, checked_by_rows=checked_by_rows
            )
        filterset.is_valid()
        return filterset


def lenient_filterset(
    *, data: Mapping[str, str], vocabulary: CatalogVocabulary | None = None
) -> SourceFilterSet:
    """The page's reading of a query: unknown values are dropped, as if absent (kept per query,
    see KeptFilterSets)."""
    return _LENIENT_FILTERSETS.get(data, vocabulary=vocabulary)


def _lenient(
    *,
    data: Mapping[str, str],
    queryset: QuerySet[Source] | None,
    vocabulary: CatalogVocabulary | None,
) -> SourceFilterSet:
    filterset = SourceFilterSet(data, queryset, vocabulary=vocabulary)
    if filterset.is_valid():
        filterset.ignored = {}
        return filterset
    kept = {key: value for key, value in data.items() if key not in filterset.form.errors}
    lenient = SourceFilterSet(kept, queryset, vocabulary=filterset._vocabulary)
    lenient.ignored = {key: data.get(key, "") for key in filterset.form.errors}
    return lenient


_LENIENT_FILTERSETS = KeptFilterSets(lenient=True)


class CatalogQuery:
    """The canonical query string of a view: valid values only, defaults omitted, so equal views
    have equal URLs. Any change except the page resets the page."""

    ORDER = FILTER_NAMES

    def __init__(self, *, params: Mapping[str, str], page: int, page_size: int) -> None:
        """``params``: the canonical values (``of_view`` reads them from a filter set)."""
        self.params: dict[str, str] = dict(params)
        self.page = page
        self.page_size = page_size

    @classmethod
    def of_view(cls, *, filterset: SourceFilterSet, page: int, page_size: int) -> CatalogQuery:
        cleaned = filterset.form.cleaned_data
        params: dict[str, str] = {}
        for key in cls.ORDER:
            value = (cleaned.get(key) or "").strip()
            if key == "sort" and value == DEFAULT_SORT:
                value = ""
            if value:
                params[key] = value
        return cls(params=params, page=page, page_size=page_size)

    def get(self, key: str, default: str = "") -> str:
        return self.params.get(key, default)

    def url(self, *, path: str = "/", paging: bool = True, **changes: str | int | None) -> str:
        params = dict(self.params)
        page = self.page
        for key, value in changes.items():
            if key == "page":
                page = int(value or 1)
                continue
            page = 1
            if value in (None, "") or (key == "sort" and value == DEFAULT_SORT):
                params.pop(key, None)
            else:
                params[key] = str(value)
        ordered = [(key, params[key]) for key in self.ORDER if key in params]
        if paging and page > 1:
            ordered.append(("page", str(page)))
        if paging and self.page_size != DEFAULT_PAGE_SIZE:
            ordered.append(("page_size", str(self.page_size)))
        return path + ("?" + urlencode(ordered) if ordered else "")

    def sort_url(self, key: str) -> str:
        current = self.params.get("sort", DEFAULT_SORT)
        return self.url(sort=f"-{key}" if current == key else key)

    def sort_state(self, key: str) -> str:
        current = self.params.get("sort", DEFAULT_SORT)
        if current == key:
            return "ascending"
        if current == f"-{key}":
            return "descending"
        return "none"
