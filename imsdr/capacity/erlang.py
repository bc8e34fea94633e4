"""Erlang B in its numerically stable recursive form (ITU-T E.520 dimensioning).

B(A, 0) = 1 and B(A, n) = A·B(A, n−1) / (n + A·B(A, n−1)). The recursion never forms A^n or n!,
so it stays exact to float precision for thousands of circuits and Erlangs.
"""

from __future__ import annotations

from functools import lru_cache

MAX_CIRCUITS = 1_000_000


def erlang_b(traffic: float, circuits: int) -> float:
    """Blocking probability of ``traffic`` Erlangs offered to ``circuits`` circuits."""
    if traffic < 0:
        raise ValueError("traffic must be >= 0")
    if circuits < 0:
        raise ValueError("circuits must be >= 0")
    b = 1.0
    for n in range(1, circuits + 1):
        b = traffic * b / (n + traffic * b)
    return b


@lru_cache(maxsize=4096)
def circuits_needed(traffic: float, grade_of_service: float) -> int:
    """The smallest n with B(traffic, n) <= grade_of_service."""
    if not 0 < grade_of_service < 1:
        raise ValueError("grade of service must be between 0 and 1")
    if traffic <= 0:
        return 0
    b = 1.0
    n = 0
    while b > grade_of_service:
        n += 1
        if n > MAX_CIRCUITS:
            raise ValueError(f"more than {MAX_CIRCUITS} circuits needed for {traffic} E")
        b = traffic * b / (n + traffic * b)
    return n


@lru_cache(maxsize=4096)
def carried_traffic(circuits: int, grade_of_service: float) -> float:
    """The largest offered traffic (Erlangs) ``circuits`` circuits carry within the grade of service.

    B(A, n) grows with A, so a bisection on A finds it; accurate to 1e-6 E.
    """
    if circuits <= 0:
        return 0.0
    lo, hi = 0.0, float(circuits) * 2 + 10
    while hi - lo > 1e-6 * max(1.0, hi):
        mid = (lo + hi) / 2
        if erlang_b(mid, circuits) <= grade_of_service:
            lo = mid
        else:
            hi = mid
    return lo
