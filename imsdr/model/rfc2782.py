"""RFC 2782 SRV target selection: ordering and exact first-pick probabilities.

The RFC's algorithm, for the records of one priority (lowest priority number first):

    arrange the records in any order, except that all weight-0 records are placed at
    the beginning of the list; compute the running sum of the weights in that order;
    choose a uniform random number between 0 and the sum of the weights (inclusive);
    select the first record whose running sum is greater than or equal to that number;
    remove it and repeat until no record is left.

imsdr reads "uniform random number between 0 and the sum" as an integer draw uniform over
``0..total`` inclusive (``total + 1`` equally likely values), exactly as written. That has
consequences worth knowing, which the probabilities below show exactly (as fractions):

* The record at the head of the list also wins the draw ``0``. With weight-0 records present,
  the head is a weight-0 record, so weight-0 records together get ``1 / (total + 1)`` — the
  "very small chance" the RFC intends. Without any, the head record gets one extra unit:
  ``(w + 1) / (total + 1)``.
* Which record is at the head is "any order". By default imsdr assumes a client that does not
  favour any record: the arrangement is uniformly random among those that put every weight-0
  record first (``arrangement="random"``). Then, with ``k`` weight-0 records and weight total
  ``S``:

  - ``k > 0``: a weight-0 record is picked first with ``1 / (k (S + 1))``; a record of weight
    ``w > 0`` with ``w / (S + 1)``;
  - ``k = 0`` with ``n`` records: ``(w + 1/n) / (S + 1)``;
  - ``S = 0`` (every record weight 0): ``1 / n`` each.

  With ``arrangement="given"`` the list keeps the order given (weight-0 records moved to the
  front, stable), which models a client that keeps the order the server answered in: the head
  record gets the draw ``0``.

These are the probabilities of being tried first *within a priority*; across priorities the
record tried first overall always comes from the lowest priority number, so records of higher
priority numbers have an overall first-pick probability of 0.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import groupby
from typing import Literal

Arrangement = Literal["random", "given"]


@dataclass(frozen=True, slots=True)
class SrvRecord:
    """One SRV record, reduced to what the selection needs."""

    priority: int
    weight: int
    port: int
    target: str


@dataclass(frozen=True, slots=True)
class RankedSrv:
    """An SRV record with its exact chances of being tried first."""

    record: SrvRecord
    p_first_in_priority: Fraction
    p_first: Fraction


def first_pick_probabilities(weights: Sequence[int], arrangement: Arrangement = "random") -> list[Fraction]:
    """Exact probability that each record (same priority, weights as given) is selected first."""
    if any(w < 0 or w > 65535 for w in weights):
        raise ValueError("SRV weights are 16-bit unsigned integers (0-65535)")
    n = len(weights)
    if n == 0:
        return []
    total = sum(weights)
    draws = Fraction(1, total + 1)
    if arrangement == "given":
        zeros_first = [i for i, w in enumerate(weights) if w == 0] + [i for i, w in enumerate(weights) if w]
        head = zeros_first[0]
        return [draws * (w + (1 if i == head else 0)) for i, w in enumerate(weights)]
    if arrangement != "random":
        raise ValueError(f"unknown arrangement {arrangement!r}")
    zero_count = sum(1 for w in weights if w == 0)
    if zero_count:
        return [draws * w if w else draws / zero_count for w in weights]
    return [draws * (w + Fraction(1, n)) for w in weights]


def rank(records: Sequence[SrvRecord], arrangement: Arrangement = "random") -> list[RankedSrv]:
    """Records in trial order: lowest priority first, then most likely first (ties by target, port).

    ``p_first`` is the chance of being the very first target tried; ``p_first_in_priority`` the
    chance of being first among the records of its own priority.
    """
    ordered = sorted(records, key=lambda r: r.priority)
    result: list[RankedSrv] = []
    for index, (_priority, group_iter) in enumerate(groupby(ordered, key=lambda r: r.priority)):
        group = list(group_iter)
        probabilities = first_pick_probabilities([r.weight for r in group], arrangement)
        ranked = [RankedSrv(r, p, p if index == 0 else Fraction(0))
                  for r, p in zip(group, probabilities, strict=True)]
        ranked.sort(key=lambda x: (-x.p_first_in_priority, x.record.target, x.record.port))
        result.extend(ranked)
    return result


def select_order(records: Sequence[SrvRecord], rng: random.Random) -> list[SrvRecord]:
    """One run of the RFC 2782 algorithm: the order in which a client tries the targets.

    The arrangement within a priority is shuffled (weight-0 records kept first), matching the
    ``"random"`` arrangement of :func:`first_pick_probabilities`.
    """
    out: list[SrvRecord] = []
    ordered = sorted(records, key=lambda r: r.priority)
    for _priority, group_iter in groupby(ordered, key=lambda r: r.priority):
        remaining = list(group_iter)
        while remaining:
            zeros = [r for r in remaining if r.weight == 0]
            others = [r for r in remaining if r.weight != 0]
            rng.shuffle(zeros)
            rng.shuffle(others)
            arranged = zeros + others
            total = sum(r.weight for r in arranged)
            draw = rng.randint(0, total)
            running = 0
            for record in arranged:
                running += record.weight
                if running >= draw:
                    out.append(record)
                    remaining.remove(record)
                    break
    return out


def is_no_service(records: Sequence[SrvRecord]) -> bool:
    """RFC 2782: a single record with target "." means the service is decidedly not available."""
    return len(records) == 1 and records[0].target in (".", "")
