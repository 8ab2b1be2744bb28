"""The project's JSON Schema validation: two engines, one verdict (atlas.jsonio.json_schemas)."""

from __future__ import annotations


def test_remembered_format_verdicts_are_the_checks_verdicts():
    """Both engines see the format checks through a per-string memory: asking again, or asking
    about a non-string, gives the check's own answer."""
    from atlas.jsonio.json_schemas import FORMATS, SchemaValidator

    validator = SchemaValidator({"type": "array", "items": {"format": "date-time"}})
    for _ in range(2):
        assert validator.first_error(["2025-03-03T12:00:00Z", 5]) is None
        error = validator.first_error(["2025-03-03T12:00:00Z", "2025-02-30T00:00:00Z"])
        assert error is not None and error.path == (1,)
    assert FORMATS["uri"](["not", "a", "string"]) and not FORMATS["uri"]("not a uri")


def test_a_string_without_a_utf8_form_is_judged_by_the_reference_engine():
    """A lone surrogate cannot cross into the compiled engine (it raised, and a sync answered 500):
    the verdict and the error come from the reference engine."""
    from atlas.jsonio.json_schemas import SchemaValidator

    validator = SchemaValidator(
        {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"]}
    )
    assert validator.is_valid({"kind": "a", "free\ud800": "\udc00"})
    assert not validator.is_valid({"kind": "\ud800"})
    error = validator.first_error({"kind": "\ud800"})
    assert error is not None and error.path == ("kind",)


def test_an_error_inside_an_alternative_names_the_value_itself():
    """Why the reference engine stays beside the compiled one: inside ``anyOf`` (nullable objects
    throughout the schemas) the compiled engine reports only the alternative's container; the
    reference engine's best match names the offending value and what it should be."""
    from atlas.jsonio.json_schemas import SchemaValidator

    nullable = {"anyOf": [{"type": "null"}, {"properties": {"b": {"type": "integer"}}}]}
    validator = SchemaValidator({"type": "object", "properties": {"a": nullable}})
    fast = [
        (list(e.instance_path), e.message) for e in validator._fast.iter_errors({"a": {"b": "s"}})
    ]
    assert fast == [
        (["a"], """{"b":"s"} is not valid under any of the schemas listed in the 'anyOf' keyword""")
    ]
    error = validator.first_error({"a": {"b": "s"}})
    assert error is not None
    assert (error.path, error.message) == (("a", "b"), "'s' is not of type 'integer'")
