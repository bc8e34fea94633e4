"""Cross-check by simulation: failures and repairs of every basic event over simulated years.

Each basic event alternates up and down periods drawn from exponential distributions (means MTBF
and MTTR, or 8766 / rate and the event duration), starting in its steady state. Sweeping the
boundaries of all down periods gives the set of events down at every moment; each service's lost
fraction in that state comes from the same blocks and failure engine as the analytic figure, with
no cut-set truncation and no rare-event approximation. Every start of an event adds its
switchover minutes (those of the analytic model) for the users not already in an outage.

The estimate is the mean downtime per simulated year. Its 95 % interval adds two parts:
switchover loss (many small events) ``mean ± 1.96 s/√N`` over the N years; outage (a few rare,
long episodes) the exact Poisson (Garwood) interval of the number of outage episodes per year
times the loss of one episode, between the smaller of the observed mean and the shortest mean
down time of the events involved and the larger of that mean and the longest (with few episodes
their mean says little; an episode lasts about as long as one of those repairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imsdr.availability.inputs import HOURS_PER_YEAR

if TYPE_CHECKING:
    from imsdr.availability.analytic import AvailabilityModel, AvailabilityReport

Z95 = 1.959964


@dataclass(frozen=True, slots=True)
class EstimateRow:
    service: str
    local_network: str
    access: str
    analytic: float  # minutes per year
    mean: float
    low: float
    high: float
    outage_episodes: int

    @property
    def contains(self) -> bool:
        return self.low <= self.analytic <= self.high


@dataclass(frozen=True, slots=True)
class SimulationEstimate:
    years: int
    seed: int
    rows: tuple[EstimateRow, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"years": self.years, "seed": self.seed, "interval": "95 % normal, per-year replications",
                "rows": [{"service": r.service, "local_network": r.local_network, "access": r.access,
                          "analytic_minutes": r.analytic,
                          "mean_minutes": r.mean, "low_minutes": r.low, "high_minutes": r.high,
                          "outage_episodes": r.outage_episodes,
                          "contains": r.contains} for r in self.rows]}


def _periods(rng: Any, mtbf: float, mttr: float, horizon: float) -> list[tuple[float, float]]:
    """Down periods (start, end) in hours of one alternating renewal process over ``horizon``."""
    out: list[tuple[float, float]] = []
    t = 0.0
    if rng.random() < mttr / (mtbf + mttr):  # steady state: down at the start
        end = rng.exponential(mttr)
        out.append((0.0, min(end, horizon)))
        t = end
    while t < horizon:
        n = max(8, int((horizon - t) / (mtbf + mttr) * 1.2) + 8)
        ups = rng.exponential(mtbf, n)
        downs = rng.exponential(mttr, n)
        for up, down in zip(ups.tolist(), downs.tolist(), strict=True):
            start = t + up
            if start >= horizon:
                return out
            t = start + down
            out.append((start, min(t, horizon)))
    return out


def simulate(run: AvailabilityModel, report: AvailabilityReport, years: int, seed: int = 1) -> SimulationEstimate:
    """Estimate every service's downtime per year over ``years`` simulated years."""
    import numpy as np

    rng = np.random.default_rng(seed)
    horizon = years * HOURS_PER_YEAR
    rows = [(r.service, r.local_network, r.access) for r in report.services]
    cats = {key: run.model.categories(key[0], key[1]) for key in rows}
    blocks = {key: [(cat, run.model.blocks_of[(cat, key[1])]) for cat in cats[key]] for key in rows}
    relevant = sorted({k for key in rows for _c, bs in blocks[key] for b in bs
                       for k in run.relevant(run.model.blocks[b])[0]})
    waits = {key: run.switchover_waits(*key) for key in rows}
    boundaries: list[tuple[float, int, int]] = []  # (time, +1 start / -1 end, event)
    for k in relevant:
        ev = run.events[k]
        for start, end in _periods(rng, ev.mtbf_hours, ev.mttr_hours, horizon):
            boundaries.append((start, 1, k))
            boundaries.append((end, -1, k))
    boundaries.sort(key=lambda b: (b[0], b[1], b[2]))
    outage = np.zeros((len(rows), years))
    switch = np.zeros((len(rows), years))
    memo: dict[frozenset[int], list[float]] = {}

    def losses(state: frozenset[int]) -> list[float]:
        known = memo.get(state)
        if known is None:
            failed = frozenset(x for k in state for x in run.events[k].elements)
            known = []
            for key in rows:
                worst = 0.0
                for _cat, bs in blocks[key]:
                    total = 0.0
                    for b in bs:
                        block = run.model.blocks[b]
                        part = run.model.loss(block, failed & frozenset(block.members)).get(key[1], 0.0)
                        total += part
                    worst = max(worst, min(1.0, total))
                known.append(worst)
            memo[state] = known
        return known

    episodes = [0] * len(rows)
    in_outage = [False] * len(rows)
    down: dict[int, int] = {}
    state: frozenset[int] = frozenset()
    last = 0.0
    for time, step, k in boundaries:
        if state and time > last:
            year = min(years - 1, int(last // HOURS_PER_YEAR))
            lost = losses(state)
            for r, fraction in enumerate(lost):
                if fraction:
                    outage[r, year] += fraction * (time - last) * 60
        last = time
        if step > 0:
            if time > 0 and time < horizon:
                year = min(years - 1, int(time // HOURS_PER_YEAR))
                before = losses(state) if state else [0.0] * len(rows)
                for r, key in enumerate(rows):
                    w = waits[key].get(k)
                    if w:
                        switch[r, year] += w * (1 - before[r])
            down[k] = down.get(k, 0) + 1
        else:
            down[k] -= 1
            if not down[k]:
                del down[k]
        state = frozenset(down)
        now = losses(state) if state else None
        for r in range(len(rows)):
            lost_now = bool(now and now[r] > 0)
            if lost_now and not in_outage[r]:
                episodes[r] += 1
            in_outage[r] = lost_now
    out = []
    for r, key in enumerate(rows):
        sw = switch[r]
        sw_mean = float(sw.mean())
        half = Z95 * float(sw.std(ddof=1)) / math.sqrt(years) if years > 1 else 0.0
        total_outage = float(outage[r].sum())
        k = episodes[r]
        repairs = [run.events[e].mttr_hours * 60 for _c, bs in blocks[key] for b in bs
                   for e in run.relevant(run.model.blocks[b])[0]] or [0.0]
        low_k, high_k = poisson_interval(k)
        per_episode = total_outage / k if k else 0.0
        o_low = low_k / years * min(per_episode, min(repairs))
        o_high = high_k / years * max(per_episode, max(repairs))
        mean = sw_mean + total_outage / years
        analytic = report.services[r].downtime_minutes
        out.append(EstimateRow(key[0], key[1], key[2], analytic, mean, max(0.0, sw_mean - half) + o_low,
                               sw_mean + half + o_high, k))
    return SimulationEstimate(years, seed, tuple(out))


def poisson_interval(k: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact (Garwood) two-sided interval of a Poisson mean after observing ``k`` events."""

    def cdf(n: int, lam: float) -> float:  # P(X <= n)
        term = total = math.exp(-lam)
        for i in range(1, n + 1):
            term *= lam / i
            total += term
        return total

    def solve(f: Any, target: float) -> float:  # f decreasing in lam
        lo, hi = 0.0, max(10.0, 4.0 * k + 10)
        for _ in range(100):
            mid = (lo + hi) / 2
            if f(mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    high = solve(lambda lam: cdf(k, lam), alpha / 2)
    low = 0.0 if k == 0 else solve(lambda lam: cdf(k - 1, lam), 1 - alpha / 2)
    return low, high
