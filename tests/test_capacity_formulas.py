"""The capacity formulas, pinned with hand-computed values (docs/domain.md §4.5-§4.7, ITU-T E.520 tables)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.capacity.erlang import carried_traffic, circuits_needed, erlang_b
from imsdr.capacity.formulas import (
    cscf_restoration_factor,
    exact,
    hss_required,
    hss_required_ratio,
    n_plus_k,
    pair_check,
    spare_needed_equal,
)

# --- N+1 / N+K ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "share", "spare"),
    [(2, 600, 600), (3, 600, 300), (4, 600, 200), (5, 600, 150), (7, 600, 100), (4, 100, Fraction(100, 3))],
)
def test_spare_is_share_over_n_minus_1(n: int, share: int, spare: Fraction) -> None:
    # domain.md §4.5: each member keeps A/(N−1) spare on top of its share A
    assert spare_needed_equal(share, n) == spare


@pytest.mark.parametrize(("n", "k", "spare"), [(4, 2, 600), (5, 2, 400), (6, 3, 600), (3, 2, 1200)])
def test_n_plus_k_spare_is_share_times_k_over_n_minus_k(n: int, k: int, spare: int) -> None:
    assert spare_needed_equal(600, n, k) == spare


def test_spare_needs_a_survivor() -> None:
    with pytest.raises(ValueError):
        spare_needed_equal(100, 2, 2)


def test_equal_pool_exactly_at_the_limit_passes_one_more_fails() -> None:
    # 3 × 1,500: share 1,000, spare needed 500, headroom 500 → survivors carry exactly 1,500 each
    ok = n_plus_k(3000, [1500, 1500, 1500], k=1)
    assert ok.ok and ok.equal
    assert (ok.share, ok.spare_needed, ok.headroom) == (1000, 500, 500)
    assert ok.utilisation_after == 1
    assert "spare needed = s×K/(N−K) = 1,000×1/(3−1) = 500" in ok.formula
    short = n_plus_k(3003, [1500, 1500, 1500], k=1)
    assert not short.ok
    assert short.spare_needed == Fraction(3003, 3) / 2


def test_unequal_pool_must_survive_loss_of_the_largest() -> None:
    caps = [2000, 1000, 1000]
    assert n_plus_k(2000, caps, k=1).ok  # 4,000 − 2,000 = 2,000 survive
    res = n_plus_k(2001, caps, k=1)
    assert not res.ok and not res.equal
    assert res.surviving_capacity == 2000
    assert res.utilisation_after == Fraction(2001, 2000)
    # K = 2: the two largest go, 1,000 left
    assert n_plus_k(1000, caps, k=2).ok
    assert not n_plus_k(1001, caps, k=2).ok


def test_n_plus_2_equal_members() -> None:
    res = n_plus_k(3000, [1000] * 5, k=2)  # 3 survivors × 1,000 = 3,000
    assert res.ok and res.spare_needed == 400 and res.headroom == 400
    assert not n_plus_k(3001, [1000] * 5, k=2).ok


def test_pool_with_k_equal_n_has_no_survivor() -> None:
    res = n_plus_k(1, [1000, 1000], k=2)
    assert not res.ok and res.surviving_capacity == 0


def test_max_utilisation_tightens_the_limit() -> None:
    assert n_plus_k(3000, [1500] * 3, k=1).ok
    assert not n_plus_k(3000, [1500] * 3, k=1, max_utilisation=0.8).ok
    assert n_plus_k(2400, [1500] * 3, k=1, max_utilisation=0.8).ok


def test_pair_each_side_carries_everything() -> None:
    assert pair_check(5000, [5000, 6000])[0]
    ok, lines = pair_check(5001, [5000, 6000])
    assert not ok and "SHORT" in lines[-1]
    assert not pair_check(1, [10])[0]  # a pair of one has no mate


# --- HSS and CSCF with restoration data --------------------------------------------------------------


def test_hss_worked_example_is_exactly_148_percent() -> None:
    # domain.md §4.6: (1 + 8%) + (500k / 1,000k) × (180% − 100%) = 148%
    assert hss_required(1_000_000, 0.08, 500_000, 1.8) == 1_480_000
    assert hss_required_ratio(1_000_000, 0.08, 500_000, 1.8, 1_000_000) == Fraction(148, 100)


def test_hss_without_restoration_has_no_overhead() -> None:
    assert hss_required(1_000_000, 0.08, 500_000, 1.8, restoration=False) == 1_400_000


@pytest.mark.parametrize(
    ("share", "cost", "factor"),
    [
        (0.25, 1.4, Fraction(110, 100)),
        (0.2, 1.2, Fraction(104, 100)),
        (0.25, 1.2, Fraction(105, 100)),
        (0.2, 1.4, Fraction(108, 100)),
    ],
)
def test_cscf_restoration_factor_spans_4_to_10_percent(share: float, cost: float, factor: Fraction) -> None:
    assert cscf_restoration_factor(share, cost) == factor


def test_exact_keeps_decimal_meaning() -> None:
    assert exact(0.08) == Fraction(2, 25)
    assert exact(1.8) - 1 == Fraction(4, 5)


# --- Erlang B -----------------------------------------------------------------------------------------


def test_erlang_b_published_values() -> None:
    assert erlang_b(10, 18) == pytest.approx(0.00714, abs=5e-5)  # E.520 tables: 0.0071
    assert erlang_b(1, 5) == pytest.approx(0.00307, abs=5e-5)
    assert erlang_b(5, 5) == pytest.approx(0.2849, abs=5e-4)
    assert erlang_b(3, 0) == 1.0


@pytest.mark.parametrize(
    ("traffic", "gos", "n"),
    [(10, 0.01, 18), (100, 0.01, 117), (1, 0.01, 5), (10, 0.02, 17), (20, 0.01, 30), (50, 0.01, 64)],
)
def test_circuits_needed_matches_erlang_b_tables(traffic: float, gos: float, n: int) -> None:
    assert circuits_needed(traffic, gos) == n


def test_carried_traffic_matches_tables() -> None:
    assert carried_traffic(18, 0.01) == pytest.approx(10.44, abs=0.01)
    assert carried_traffic(117, 0.01) == pytest.approx(100.1, abs=0.05)
    assert carried_traffic(0, 0.01) == 0


def test_erlang_b_stays_finite_at_national_scale() -> None:
    b = erlang_b(5000, 5200)
    assert 0 < b < 0.01
    assert circuits_needed(5000, 0.01) < 5200


@settings(max_examples=60, deadline=None)
@given(traffic=st.floats(min_value=0.1, max_value=500), gos=st.sampled_from([0.001, 0.01, 0.02, 0.05]))
def test_circuits_needed_is_the_smallest_meeting_the_grade(traffic: float, gos: float) -> None:
    n = circuits_needed(traffic, gos)
    assert erlang_b(traffic, n) <= gos
    assert erlang_b(traffic, n - 1) > gos
    assert erlang_b(traffic, n + 1) < erlang_b(traffic, n)  # more circuits, less blocking


# --- printed numbers ------------------------------------------------------------------------------------


def _pct_through_fractions(value: float | int | Fraction, digits: int = 1) -> str:
    """Version one's pct: the value made a Fraction, × 100 exactly, then printed."""
    v = float(Fraction(value) * 100)
    text = f"{int(v):,}" if v == int(v) and abs(v) < 1e15 else f"{v:,.{digits}f}".rstrip("0").rstrip(".")
    return f"{text}%"


@given(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)
    | st.integers(min_value=-10**14, max_value=10**14)
    | st.fractions(max_denominator=10**40).filter(lambda f: abs(f) < 10**12),
    st.integers(min_value=0, max_value=4),
)
@settings(max_examples=2000, deadline=None)
def test_pct_prints_what_exact_arithmetic_prints(value: float | int | Fraction, digits: int) -> None:
    from imsdr.capacity.formulas import pct

    assert pct(value, digits) == _pct_through_fractions(value, digits)


def test_pct_of_values_next_to_a_rounding_edge() -> None:
    from imsdr.capacity.formulas import pct

    for value in (0.85, 0.0005, 0.00049999999999999, 1 / 3, 2 / 3, 0.1 + 0.2, 1.005, Fraction(17, 20),
                  Fraction(1, 2000), Fraction(10**30 + 1, 3 * 10**30), 5, 10**20 + 1):
        for digits in (1, 2):
            assert pct(value, digits) == _pct_through_fractions(value, digits)


def _carried_traffic_v1(circuits: int, grade_of_service: float) -> float:
    """Version one's root finder over erlang_b (the reference the faster loop must match bit for bit)."""
    if circuits <= 0:
        return 0.0
    lo, hi = 0.0, circuits / (1 - grade_of_service) + 1.0
    f_lo = erlang_b(lo, circuits) - grade_of_service
    f_hi = erlang_b(hi, circuits) - grade_of_service
    side = 0
    for _ in range(200):
        if hi - lo <= 1e-4:
            break
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        f_mid = erlang_b(mid, circuits) - grade_of_service
        if f_mid <= 0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2
            side = 1
    return lo


@given(st.integers(min_value=0, max_value=3000), st.sampled_from([0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3]))
@settings(max_examples=150, deadline=None)
def test_carried_traffic_is_bit_identical_to_version_one(circuits: int, gos: float) -> None:
    assert carried_traffic.__wrapped__(circuits, gos) == _carried_traffic_v1(circuits, gos)


def _fmt_v1(value: float | int | Fraction, digits: int = 2) -> str:
    v = float(value)
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.{digits}f}".rstrip("0").rstrip(".")


@given(
    st.floats(min_value=-1e17, max_value=1e17, allow_nan=False)
    | st.integers(min_value=-10**17, max_value=10**17)
    | st.fractions(max_denominator=10**30).filter(lambda f: abs(f) < 10**16),
    st.integers(min_value=0, max_value=5),
)
@settings(max_examples=2000, deadline=None)
def test_fmt_prints_what_version_one_prints(value: float | int | Fraction, digits: int) -> None:
    from imsdr.capacity.formulas import fmt

    assert fmt(value, digits) == _fmt_v1(value, digits)


def _circuits_needed_v1(traffic: float, grade_of_service: float) -> int:
    b, n = 1.0, 0
    while b > grade_of_service:
        n += 1
        ab = traffic * b
        b = ab / (n + ab)
    return n


@given(st.floats(min_value=0.001, max_value=3000), st.sampled_from([0.001, 0.005, 0.01, 0.02, 0.05, 0.3]))
@settings(max_examples=200, deadline=None)
def test_circuits_needed_is_version_ones(traffic: float, gos: float) -> None:
    assert circuits_needed.__wrapped__(traffic, gos) == _circuits_needed_v1(traffic, gos)
