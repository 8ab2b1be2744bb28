"""The `make bench` table judges each figure only against a floor (no timing here)."""

from dataclasses import replace

from benchmarks.report import Row, table, verdict


def row(**fields) -> Row:
    defaults = {
        "benchmark": "b",
        "figure": "f",
        "value": 30.0,
        "unit": "ms",
        "baseline": "raw",
        "baseline_value": 20.0,
        "goal_operator": "<=",
        "goal": 1.5,
    }
    return Row(**{**defaults, **fields})


def test_a_ratio_within_the_goal_is_met_and_one_past_it_is_not():
    assert row().ratio == 1.5
    assert verdict(row=row()) == "met"
    assert verdict(row=row(value=31.0)) == "NOT met"


def test_throughput_goals_are_at_least():
    rate = row(unit="rows/s", value=70.0, baseline_value=100.0, goal_operator=">=", goal=0.8)
    assert verdict(row=rate) == "NOT met"
    assert verdict(row=replace(rate, value=80.0)) == "met"


def test_nothing_is_met_against_a_baseline_that_is_not_the_floor():
    assert verdict(row=row(floor=False)) == "no floor"
    assert verdict(row=row(baseline_value=None)) == "no baseline"


def test_absolute_goals_and_missing_figures():
    assert verdict(row=row(baseline="", baseline_value=None, value=4.2, unit="s", goal=5)) == "met"
    assert verdict(row=row(value=None, note="crashed (exit 1)")) == "crashed (exit 1)"
    assert verdict(row=row(goal=None)) == "—"


def test_the_table_has_one_line_per_row_under_its_header():
    printed = table(rows=[row(), row(value=None, note="timed out after 10 s")]).splitlines()
    assert printed[0].startswith("| benchmark | figure | value | baseline (floor) | ratio |")
    assert printed[2] == "| b | f | 30.0 ms | raw 20.0 ms | 1.50× | <= 1.5× | met |"
    assert printed[3].endswith("| timed out after 10 s |")
