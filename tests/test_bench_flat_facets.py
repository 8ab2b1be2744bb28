"""The flat facets figure: every size served at once, each round asking each server in turn, and
the large size's median against the small one's (no timing here: the servers are stand-ins)."""

from benchmarks.list_endpoints import FACET_PATHS, flat_facet_rows, measure
from benchmarks.report import verdict


class StandIn:
    """Answers in the seconds it is given, one per request, and logs who was asked."""

    def __init__(self, *, name: str, answers: list[float], log: list[tuple[str, str]]):
        self.name, self.answers, self.log = name, iter(answers), log

    def seconds(self, *, path: str) -> float:
        self.log.append((self.name, path))
        return next(self.answers)


def test_every_round_asks_each_size_in_turn_and_the_warm_up_is_not_counted():
    log: list[tuple[str, str]] = []
    # Three warm-up rounds (slow answers, not counted), then three counted rounds.
    small = StandIn(name="10000", answers=[9.0, 9.0, 9.0, 0.004, 0.005, 0.006], log=log)
    large = StandIn(name="100000", answers=[9.0, 9.0, 9.0, 0.005, 0.006, 0.007], log=log)
    medians = measure(
        servers_by_name={"10000": small, "100000": large},
        paths={"/facets.json": {"10000": "/facets.json", "100000": "/facets.json"}},
        rounds=3,
    )
    assert medians == {"/facets.json": {"10000": 5.0, "100000": 6.0}}
    rounds = [log[start : start + 2] for start in range(0, len(log), 2)]
    assert len(rounds) == 6
    assert all({name for name, _ in pair} == {"10000", "100000"} for pair in rounds)
    assert {pair[0][0] for pair in rounds} == {"10000", "100000"}  # the first to be asked rotates


def test_the_flat_rows_judge_the_large_median_against_the_small_one():
    medians = {label: {"10000": 5.0, "100000": 6.0} for label in FACET_PATHS}
    medians["/facets.json unfiltered"]["100000"] = 7.0
    rows = flat_facet_rows(small=10_000, large=100_000, rounds=30, medians=medians)
    assert [row.figure for row in rows] == [
        f"{label}, 100,000 sources against 10,000, served at once, p50 of 30"
        for label in FACET_PATHS
    ]
    assert [row.ratio for row in rows] == [1.2, 1.4]
    assert [row.baseline for row in rows] == ["the same at 10,000 sources"] * 2
    assert [verdict(row=row) for row in rows] == ["met", "NOT met"]
