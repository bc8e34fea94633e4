"""RFC 2782 weighted selection: exact first-pick probabilities against hand-computed values."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction as F
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.model.rfc2782 import SrvRecord, first_pick_probabilities, is_no_service, rank, select_order


def brute_force(weights: list[int], arrangement: str = "random") -> list[F]:
    """Run the RFC's algorithm for every arrangement and every integer draw 0..total."""
    n = len(weights)
    zeros = [i for i in range(n) if weights[i] == 0]
    others = [i for i in range(n) if weights[i] != 0]
    if arrangement == "given":
        arrangements = [zeros + others]
    else:
        arrangements = [list(z) + list(o) for z in permutations(zeros) for o in permutations(others)]
    total = sum(weights)
    result = [F(0)] * n
    share = F(1, len(arrangements) * (total + 1))
    for arranged in arrangements:
        for draw in range(total + 1):
            running = 0
            for i in arranged:
                running += weights[i]
                if running >= draw:
                    result[i] += share
                    break
    return result


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # one weight-0 record among weighted ones: it wins only the draw 0 -> 1/(total+1)
        ([10, 20, 0], [F(10, 31), F(20, 31), F(1, 31)]),
        # two weight-0 records share the single draw 0: 1/(2*61) each
        ([0, 0, 60], [F(1, 122), F(1, 122), F(60, 61)]),
        # no weight-0 record: whoever is at the head also wins draw 0; random head -> +1/n each
        ([1, 3], [F(3, 10), F(7, 10)]),
        ([50, 50], [F(1, 2), F(1, 2)]),
        ([60, 30, 10], [F(181, 303), F(91, 303), F(31, 303)]),
        # all weight 0: the draw is always 0 and the (random) head is picked
        ([0, 0], [F(1, 2), F(1, 2)]),
        ([0], [F(1)]),
        ([7], [F(1)]),
    ],
)
def test_first_pick_probabilities_random_arrangement(weights: list[int], expected: list[F]) -> None:
    assert first_pick_probabilities(weights) == expected
    assert sum(expected) == 1


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # the order as answered: the head record gets the draw 0 on top of its weight
        ([1, 3], [F(2, 5), F(3, 5)]),
        ([3, 1], [F(4, 5), F(1, 5)]),
        # weight-0 records move to the front (stable): the first of them is the head
        ([3, 0, 1, 0], [F(3, 5), F(1, 5), F(1, 5), F(0)]),
    ],
)
def test_first_pick_probabilities_given_arrangement(weights: list[int], expected: list[F]) -> None:
    assert first_pick_probabilities(weights, "given") == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=5),
       st.sampled_from(["random", "given"]))
def test_closed_form_equals_running_the_algorithm(weights: list[int], arrangement: str) -> None:
    assert first_pick_probabilities(weights, arrangement) == brute_force(weights, arrangement)  # type: ignore[arg-type]


def test_invalid_weights_rejected() -> None:
    with pytest.raises(ValueError):
        first_pick_probabilities([-1, 2])
    with pytest.raises(ValueError):
        first_pick_probabilities([70000])
    with pytest.raises(ValueError):
        first_pick_probabilities([1], "sorted")  # type: ignore[arg-type]


def test_rank_orders_by_priority_then_likelihood() -> None:
    records = [
        SrvRecord(20, 100, 5060, "far.example.net"),
        SrvRecord(10, 0, 5060, "spare.example.net"),
        SrvRecord(10, 30, 5060, "b.example.net"),
        SrvRecord(10, 60, 5060, "a.example.net"),
    ]
    ranked = rank(records)
    assert [r.record.target for r in ranked] == ["a.example.net", "b.example.net", "spare.example.net",
                                                 "far.example.net"]
    assert [r.p_first for r in ranked] == [F(60, 91), F(30, 91), F(1, 91), F(0)]
    # the higher priority number is certain to be first *within its priority* but never first overall
    assert ranked[-1].p_first_in_priority == 1
    assert sum(r.p_first for r in ranked) == 1


def test_select_order_matches_the_probabilities() -> None:
    records = [SrvRecord(10, 60, 5060, "a"), SrvRecord(10, 30, 5060, "b"), SrvRecord(10, 0, 5060, "c"),
               SrvRecord(20, 5, 5060, "d")]
    rng = random.Random(2782)
    runs = 20000
    firsts = Counter(select_order(records, rng)[0].target for _ in range(runs))
    expected = {r.record.target: float(r.p_first) for r in rank(records)}
    for target, p in expected.items():
        assert abs(firsts[target] / runs - p) < 0.015, (target, firsts[target] / runs, p)
    # every run tries every target once, priority 10 before priority 20
    order = select_order(records, rng)
    assert sorted(r.target for r in order) == ["a", "b", "c", "d"]
    assert order[-1].target == "d"


def test_no_service_target() -> None:
    assert is_no_service([SrvRecord(0, 0, 0, ".")])
    assert not is_no_service([SrvRecord(0, 0, 5060, "a.example.net")])
