"""`scenarios`: every single-site and single-element failure (depth 1), every site pair (depth 2).

One compiled :class:`Engine` serves every scenario; a site's failure is evaluated once and reused
by every site pair that contains it (only flows touching both sites are recomputed).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imsdr.analysis import cyclic_gc_paused
from imsdr.capacity.engine import NO_LOSS, VERDICT_RANK, Engine, Outcome, worse
from imsdr.errors import ImsdrError
from imsdr.model.risk import shared_risks

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ScenarioRow:
    id: str  # site:<id> | element:<id> | sites:<a>+<b> | region:<id> | power:<id> | route:<id>
    kind: str  # site | element | site-pair | region | power | route
    depth: int
    failed: tuple[str, ...]  # sites or the element
    verdict: str
    switchover_s: int
    switchover_from: str | None
    unserved_users: float
    unserved_erlangs: float
    busiest: str | None
    busiest_utilisation: float | None


@dataclass(frozen=True)
class WorstCase:
    subject: str  # group id or element type
    kind: str  # pool | pair | type
    utilisation: float | None  # highest utilisation of a survivor
    element: str | None
    scenario: str | None
    unserved: float  # most of this subject's service left unserved in one scenario
    unserved_scenario: str | None
    element_type: str = ""  # the type of the group's members, or the type itself


@dataclass(frozen=True)
class ScenariosReport:
    network: str
    depth: int
    rows: tuple[ScenarioRow, ...]
    worst: tuple[WorstCase, ...]
    counts: tuple[tuple[str, int], ...]
    depth1_loses_traffic: bool
    worst_by_kind: tuple[ScenarioRow, ...] = ()  # the worst scenario of each kind


#: scenario kinds in report order; region, power and route rows fail every site depending on them
KINDS = ("site", "region", "power", "route", "element", "site-pair")


def severity(row: ScenarioRow) -> tuple[int, float, float, float]:
    """How bad a scenario is: verdict, then users and Erlangs lost, then the busiest survivor."""
    return (VERDICT_RANK[row.verdict], row.unserved_users, row.unserved_erlangs, row.busiest_utilisation or 0.0)


def gates(topology: Topology, row: ScenarioRow) -> bool:
    """True when ``row`` losing traffic fails the design: every depth-1 scenario does, except a
    region loss in a lab (a lab has one region by design)."""
    if row.depth != 1 or row.verdict == NO_LOSS:
        return False
    return not (row.kind == "region" and topology.network.deployment == "lab")


def run_scenarios(
    topology: Topology, depth: int = 1, progress: Progress | None = None, engine: Engine | None = None,
    element_outcomes: dict[str, Outcome] | None = None,
) -> ScenariosReport:
    """Every scenario to ``depth``. ``element_outcomes`` (a dict the caller passes in): each single
    element's outcome is evaluated with its detail (who takes over what: the rows are the same) and
    kept there by element id, for the caller's own simulations of those elements."""
    if depth not in (1, 2):
        raise ImsdrError(f"--depth must be 1 or 2, got {depth}")
    with cyclic_gc_paused():  # ~13,000 rows nationally at depth 2, none of them garbage
        return _run(topology, depth, progress, engine, element_outcomes)


def _run(topology: Topology, depth: int, progress: Progress | None, engine: Engine | None,
         element_outcomes: dict[str, Outcome] | None = None) -> ScenariosReport:
    eng = engine or Engine(topology, exact_numbers=False)
    sites = sorted(topology.sites)
    pairs = list(itertools.combinations(sites, 2)) if depth == 2 else []
    risks = shared_risks(topology)
    total = len(sites) + len(risks) + len(eng.ids) + len(pairs)
    tracker = _Worst(topology, eng)
    rows: list[ScenarioRow] = []
    done = 0
    step = max(1, total // 200)

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None and (done % step == 0 or done == total):
            progress(done, total)

    site_rows: dict[str, ScenarioRow] = {}
    site_outcomes: dict[str, Outcome] = {}
    # most power feeds and routes fail exactly one site, a region two: the same sites (in the same
    # order, the order loads are summed in) give the same outcome, evaluated once
    by_sites: dict[tuple[str, ...], Outcome] = {}

    def lose(failed_sites: tuple[str, ...]) -> Outcome:
        key = tuple(dict.fromkeys(failed_sites))
        if key not in by_sites:
            by_sites[key] = eng.evaluate_sites(key)
        return by_sites[key]

    for site in sites:
        sid = f"site:{site}"
        outcome = lose((site,))
        site_outcomes[site] = outcome
        site_rows[site] = _row(eng, sid, "site", 1, (site,), outcome, tracker)
        rows.append(site_rows[site])
        tick()
    for risk in risks:
        outcome = lose(risk.sites)
        rows.append(_row(eng, risk.label, risk.kind, 1, risk.sites, outcome, tracker))
        tick()
    for el_id in sorted(eng.ids):
        sid = f"element:{el_id}"
        outcome = eng.evaluate({eng.index[el_id]}, detail=element_outcomes is not None)
        if element_outcomes is not None:
            element_outcomes[el_id] = outcome
        rows.append(_row(eng, sid, "element", 1, (el_id,), outcome, tracker))
        tick()
    footprint = _Footprints(eng, site_outcomes) if pairs else None
    for a, b in pairs:
        sid = f"sites:{a}+{b}"
        if footprint.independent(a, b):  # type: ignore[union-attr]
            rows.append(_combined_row(sid, (a, b), site_rows[a], site_rows[b]))
        else:
            outcome = lose((a, b))
            rows.append(_row(eng, sid, "site-pair", 2, (a, b), outcome, tracker))
        tick()
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    worst_of: dict[str, ScenarioRow] = {}
    for r in rows:  # the first of equally bad scenarios wins (report order)
        if r.kind not in worst_of or severity(r) > severity(worst_of[r.kind]):
            worst_of[r.kind] = r
    return ScenariosReport(
        network=topology.network.name,
        depth=depth,
        rows=tuple(rows),
        worst=tracker.result(),
        counts=tuple(sorted(counts.items(), key=lambda kv: VERDICT_RANK[kv[0]])),
        depth1_loses_traffic=any(gates(topology, r) for r in rows),
        worst_by_kind=tuple(worst_of[k] for k in KINDS if k in worst_of),
    )


def _row(
    eng: Engine, sid: str, kind: str, depth: int, failed: tuple[str, ...], outcome: Outcome, tracker: _Worst
) -> ScenarioRow:
    busiest, busiest_u = tracker.observe(sid, outcome)
    return ScenarioRow(
        id=sid,
        kind=kind,
        depth=depth,
        failed=failed,
        verdict=outcome.verdict,
        switchover_s=outcome.switchover_s,
        switchover_from=outcome.worst_switchover_from,
        unserved_users=round(outcome.users, 1),
        unserved_erlangs=round(outcome.erlangs, 3),
        busiest=busiest,
        busiest_utilisation=None if busiest_u is None else round(busiest_u, 4),
    )


class _Footprints:
    """What each single-site loss touches, as bit sets: the flows it re-routes, the elements whose
    load it changes, the local networks that lose users and Erlangs (one bit per flow, element or
    local network). Two sites are independent when no bit is in both."""

    def __init__(self, eng: Engine, site_outcomes: dict[str, Outcome]) -> None:
        self.bits: dict[str, tuple[int, int, int, int]] = {}
        ln_bit: dict[str, int] = {}
        for site, outcome in site_outcomes.items():
            state = eng.site_state(site)
            self.bits[site] = (
                _bitset(state.results),
                _bitset(state.delta),
                _bitset(ln_bit.setdefault(ln, len(ln_bit)) for ln in outcome.unserved_users),
                _bitset(ln_bit.setdefault(ln, len(ln_bit)) for ln in outcome.unserved_erlangs),
            )

    def independent(self, a: str, b: str) -> bool:
        """True when losing ``a`` and ``b`` together is just both single-site losses side by side:
        no flow reaches both sites, no element's load is changed by both, no local network loses
        traffic to both. Then the pair's verdict, switchover and unserved traffic follow from the
        two single-site results and every survivor's utilisation equals one already observed."""
        fa, fb = self.bits[a], self.bits[b]
        return not (fa[0] & fb[0] or fa[1] & fb[1] or fa[2] & fb[2] or fa[3] & fb[3])


def _bitset(positions: Iterable[int]) -> int:
    bits = 0
    for p in positions:
        bits |= 1 << p
    return bits


def _combined_row(sid: str, failed: tuple[str, ...], ra: ScenarioRow, rb: ScenarioRow) -> ScenarioRow:
    sw = max((ra.switchover_s, ra.switchover_from or ""), (rb.switchover_s, rb.switchover_from or ""))
    busy = max(
        ((r.busiest_utilisation, r.busiest) for r in (ra, rb) if r.busiest_utilisation is not None),
        default=(None, None),
    )
    return ScenarioRow(
        id=sid,
        kind="site-pair",
        depth=2,
        failed=failed,
        verdict=worse(ra.verdict, rb.verdict),
        switchover_s=sw[0],
        switchover_from=sw[1] or None,
        unserved_users=round(ra.unserved_users + rb.unserved_users, 1),
        unserved_erlangs=round(ra.unserved_erlangs + rb.unserved_erlangs, 3),
        busiest=busy[1],
        busiest_utilisation=busy[0],
    )


class _Worst:
    """Highest survivor utilisation per group and element type over every scenario seen."""

    def __init__(self, topology: Topology, eng: Engine) -> None:
        self.eng = eng
        self.subjects: dict[str, tuple[str, str, str]] = {}  # key → (subject, kind, element type)
        for group in topology.groups.values():
            self.subjects[f"group:{group.id}"] = (group.id, group.kind, eng.type_of[eng.index[group.members[0]]])
        for t in sorted({eng.type_of[x] for x in range(len(eng.ids))}):
            self.subjects[f"type:{t}"] = (t, "type", t)
        self.groups_of = [[f"group:{g}" for g in gs] for gs in eng.groups_of_idx]
        #: per element, the subjects it counts for: its groups, then its type
        self.keys_of = [(*self.groups_of[x], f"type:{eng.type_of[x]}") for x in range(len(eng.ids))]
        self.members: dict[str, list[int]] = {}
        for x in range(len(eng.ids)):
            for key in self.keys_of[x]:
                self.members.setdefault(key, []).append(x)
        self.best: dict[str, tuple[float, str, str]] = {}
        self.unserved: dict[str, tuple[float, str]] = {}

    def observe(self, sid: str, outcome: Outcome) -> tuple[str | None, float | None]:
        eng = self.eng
        failed = set(outcome.failed)
        top: tuple[float, str] | None = None
        best = self.best
        index, normal, cap_after, cap_normal, keys_of = eng.index, eng.normal, eng.cap_after, eng.cap, self.keys_of
        for el_id, load in outcome.loads.items():
            if el_id in failed:
                continue
            x = index[el_id]
            cap = cap_after[x] if load > normal[x] else cap_normal[x]
            if cap == math.inf or load <= 0:
                continue
            u = load / cap
            if top is None or u > top[0]:
                top = (u, el_id)
            for key in keys_of[x]:
                cur = best.get(key)
                if cur is None or u > cur[0] + 1e-12:
                    best[key] = (u, el_id, sid)
        for service, amount in outcome.service_unserved.items():
            key = f"type:{'cscf' if service == 'scscf' else service}"
            cur = self.unserved.get(key)
            if cur is None or amount > cur[0] + 1e-9:
                self.unserved[key] = (amount, sid)
        if outcome.no_takeover or outcome.overflow:
            per_group: dict[str, float] = {}
            for el_id, amount in (*outcome.no_takeover.items(), *outcome.overflow.items()):
                for key in self.groups_of[eng.index[el_id]]:
                    per_group[key] = per_group.get(key, 0.0) + amount
            for key, amount in per_group.items():
                cur = self.unserved.get(key)
                if cur is None or amount > cur[0] + 1e-9:
                    self.unserved[key] = (amount, sid)
        return (None, None) if top is None else (top[1], top[0])

    def result(self) -> tuple[WorstCase, ...]:
        out = []
        for key, (subject, kind, element_type) in self.subjects.items():
            u = self.best.get(key)
            lost = self.unserved.get(key)
            if u is None:
                # never carried extra load in any scenario: report its normal peak
                members = self._members(key)
                normal = [
                    (self.eng.normal[x] / self.eng.cap[x], self.eng.ids[x])
                    for x in members
                    if self.eng.cap[x] != math.inf and self.eng.normal[x] > 0
                ]
                if normal:
                    nu, nel = max(normal)
                    u = (nu, nel, "normal")
            out.append(
                WorstCase(
                    subject=subject,
                    kind=kind,
                    utilisation=None if u is None else round(u[0], 4),
                    element=None if u is None else u[1],
                    scenario=None if u is None else u[2],
                    unserved=0.0 if lost is None else round(lost[0], 3),
                    unserved_scenario=None if lost is None else lost[1],
                    element_type=element_type,
                )
            )
        order = {"pool": 0, "pair": 1, "type": 2}
        return tuple(sorted(out, key=lambda w: (order[w.kind], w.subject)))

    def _members(self, key: str) -> list[int]:
        return self.members.get(key, [])


def scenarios_to_dict(report: ScenariosReport) -> dict[str, Any]:
    """JSON data of a scenarios run (keys documented in docs/capacity.md)."""
    return {
        "network": report.network,
        "depth": report.depth,
        "counts": dict(report.counts),
        "depth1_loses_traffic": report.depth1_loses_traffic,
        "worst_by_kind": {r.kind: r.id for r in report.worst_by_kind},
        "scenarios": [
            {
                "id": r.id,
                "kind": r.kind,
                "depth": r.depth,
                "failed": list(r.failed),
                "verdict": r.verdict,
                "switchover_s": r.switchover_s,
                "switchover_from": r.switchover_from,
                "unserved_users": r.unserved_users,
                "unserved_erlangs": r.unserved_erlangs,
                "busiest": r.busiest,
                "busiest_utilisation": r.busiest_utilisation,
            }
            for r in report.rows
        ],
        "worst": [
            {
                "subject": w.subject,
                "kind": w.kind,
                "utilisation": w.utilisation,
                "element": w.element,
                "scenario": w.scenario,
                "unserved": w.unserved,
                "unserved_scenario": w.unserved_scenario,
            }
            for w in report.worst
        ],
    }
