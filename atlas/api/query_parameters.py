"""The API's reading of query parameters: an endpoint refuses the ones it does not read, and a
boolean parameter takes the same values everywhere."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request


class StrictQueryMixin:
    """Refuse query parameters the endpoint does not read, naming them (a misspelt filter must
    not silently return every row)."""

    allowed_parameters: tuple[str, ...] = ()

    def check_query_parameters(self, request: Request) -> None:
        unknown = sorted(set(request.query_params) - set(self.allowed_parameters))
        if unknown:
            raise ValidationError(
                {
                    name: [
                        "Unknown query parameter. Known: "
                        + ", ".join(sorted(self.allowed_parameters))
                        + "."
                    ]
                    for name in unknown
                }
            )


# What a boolean query parameter takes, everywhere.
BOOLEAN_VALUES = ["true", "false", "1", "0"]


def flag(request: Request, name: str) -> bool:
    """A boolean query parameter: true/false or 1/0 (absent is false)."""
    raw = request.query_params.get(name, "").strip().lower()
    if raw in ("true", "1"):
        return True
    if raw in ("", "false", "0"):
        return False
    raise ValidationError({name: [f"Expected one of: {', '.join(BOOLEAN_VALUES)}."]})


def refuse_repeated(request: Request, names: tuple[str, ...]) -> None:
    """Each of ``names`` (single-valued parameters) given at most once: a second value is a 400,
    never silently the last one."""
    repeated = sorted(name for name in names if len(request.query_params.getlist(name)) > 1)
    if repeated:
        raise ValidationError(
            {name: ["Given more than once; it takes one value."] for name in repeated}
        )
