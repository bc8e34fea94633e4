"""Site and shared-risk losses: each site lost, per sized element type, the survivors against their
capacity; each service region, power feed and transmission route lost with every site depending
on it (docs/domain.md §4.5, §5)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import FAIL, OK, SIZED_TYPES, CapacityCheck
from imsdr.capacity.formulas import fmt, pct

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class SiteCheck:
    site: str
    element_type: str
    unit: str
    load: float
    surviving_capacity: float | None
    utilisation: float | None
    worst_element: str | None
    worst_utilisation: float | None
    unserved: float
    verdict: str
    formula: str
    message: str


@dataclass(frozen=True)
class RiskCheck:
    """A region, power feed or transmission route lost: every site depending on it fails."""

    kind: str  # region | power | route
    id: str
    sites: tuple[str, ...]
    verdict: str
    unserved_users: float
    unserved_erlangs: float
    busiest: str | None
    busiest_utilisation: float | None
    message: str


@dataclass
class _TypeRows:
    """One element type's rows for the site checks, built once: inventory order, normal loads and
    capacities, and the members ranked by normal utilisation (busiest first, then inventory order)."""

    idxs: list[int]
    pos: dict[str, int]  # element id → position in idxs
    normal: list[float]
    caps: list[float]
    ranked: list[int]  # positions with a finite capacity and a load, by (−utilisation, position)


def _type_rows(topology: Topology, eng: Engine) -> dict[str, _TypeRows]:
    inf = float("inf")
    rows: dict[str, _TypeRows] = {}
    for t in SIZED_TYPES:
        idxs = [eng.index[e.id] for e in topology.by_type.get(t, [])]
        if not idxs or not any(eng.normal[x] for x in idxs):
            continue
        normal = [eng.normal[x] for x in idxs]
        caps = [eng.cap_after[x] for x in idxs]  # every row is a site loss
        ranked = sorted(
            (p for p in range(len(idxs)) if caps[p] != inf and normal[p] > 0),
            key=lambda p: (-(normal[p] / caps[p]), p),
        )
        rows[t] = _TypeRows(idxs, {eng.ids[x]: p for p, x in enumerate(idxs)}, normal, caps, ranked)
    return rows


def _site_checks(topology: Topology, eng: Engine, losses: dict[str, Outcome]) -> list[SiteCheck]:
    """Per site lost and per element type: the survivors' load (summed in inventory order, as
    floats add up differently in another order) against their capacity, and the busiest survivor.

    Only the elements whose load changed and the failed ones differ from normal operation, so each
    row starts from the type's normal lists and patches those few positions instead of walking
    every element of the type for every site."""
    out: list[SiteCheck] = []
    inf = float("inf")
    type_rows = _type_rows(topology, eng)
    ids = eng.ids
    for site in sorted(topology.sites):
        failed = eng.site_elements([site])
        if not failed:
            continue
        outcome = losses[f"site:{site}"]
        lost_by_service = defaultdict(float, outcome.service_unserved)
        failed_by_type: dict[str, list[str]] = defaultdict(list)
        for x in failed:
            failed_by_type[eng.type_of[x]].append(ids[x])
        changed_by_type: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for e, new in outcome.loads.items():
            changed_by_type[eng.type_of[eng.index[e]]].append((e, new))
        for t, tr in type_rows.items():
            if t not in failed_by_type:
                continue
            unit = eng.model.unit.get(ids[tr.idxs[0]], "users")
            gone = sorted((tr.pos[e] for e in failed_by_type[t]), reverse=True)
            gone_set = set(gone)
            loads = list(tr.normal)
            changed: list[tuple[int, float]] = []
            for e, new in changed_by_type.get(t, ()):
                p = tr.pos[e]
                if p not in gone_set:
                    loads[p] = new
                    changed.append((p, new))
            caps = list(tr.caps)
            for p in gone:
                del loads[p]
                del caps[p]
            survivors = len(loads)
            load = sum(loads)
            finite = inf not in caps
            surviving = sum(caps) if finite else None
            service = "scscf" if t == "cscf" else t
            unserved = lost_by_service.get(service, 0.0)
            must_carry = load + unserved
            if not survivors:
                must_carry = max(must_carry, sum(tr.normal))
            util = (must_carry / surviving) if surviving else None
            # busiest survivor: the first (inventory order) of the highest utilisation
            best: tuple[float, int] | None = None  # (utilisation, −position)
            changed_pos = {p for p, _new in changed}
            for p in tr.ranked:
                if p not in gone_set and p not in changed_pos:
                    best = (tr.normal[p] / tr.caps[p], -p)
                    break
            for p, new in changed:
                if tr.caps[p] != inf and new > 0:
                    cand = (new / tr.caps[p], -p)
                    if best is None or cand > best:
                        best = cand
            worst_el = ids[tr.idxs[-best[1]]] if best is not None else None
            worst_u = best[0] if best is not None else None
            bad = (
                unserved > 1e-6
                or (worst_u is not None and worst_u > eng.limit[eng.index[worst_el]] + 1e-9)  # type: ignore[index]
                or not survivors  # every element of a loaded type was at this site
            )
            formula = (
                f"{fmt(must_carry)} {unit} to carry / {fmt(surviving) if surviving is not None else '?'} "
                f"surviving = {pct(util) if util is not None else 'n/a'}"
            )
            if worst_el is not None:
                formula += f"; busiest {worst_el} at {pct(worst_u or 0)}"
            if unserved > 1e-6:
                formula += f"; {fmt(unserved)} {unit} unserved"
            if not survivors:
                msg = f"losing {site} leaves no {t}: {fmt(must_carry)} {unit} unserved"
            elif unserved > 1e-6:
                msg = f"losing {site}: {fmt(unserved)} {unit} of {t} traffic cannot be carried"
            else:
                limit = eng.limit[eng.index[worst_el]] if worst_el else eng.max_util
                msg = f"losing {site}: {worst_el} runs at {pct(worst_u or 0)} (limit {pct(limit)})"
            out.append(
                SiteCheck(
                    site=site,
                    element_type=t,
                    unit=unit,
                    load=round(must_carry, 3),
                    surviving_capacity=None if surviving is None else round(surviving, 3),
                    utilisation=None if util is None else round(util, 4),
                    worst_element=worst_el,
                    worst_utilisation=None if worst_u is None else round(worst_u, 4),
                    unserved=round(unserved, 3),
                    verdict=FAIL if bad else OK,
                    formula=formula,
                    message=msg,
                )
            )
    return out


def _risk_checks(topology: Topology, eng: Engine, losses: dict[str, Outcome]) -> list[RiskCheck]:
    """Every service region, power feed and transmission route lost at once (each fails all the
    sites that depend on it): production runs two regions that each carry 100% (domain.md §5), so a
    region loss that loses users, or leaves a survivor above the limit, is a shortfall."""
    from imsdr.model.risk import KIND_LABELS, shared_risks

    out: list[RiskCheck] = []
    for risk in shared_risks(topology):
        outcome = losses[risk.label]
        failed = set(outcome.failed)
        busiest: tuple[float, str] | None = None
        for el_id, load in outcome.loads.items():
            x = eng.index[el_id]
            cap = eng.cap_after[x]
            if el_id in failed or cap == float("inf") or load <= 0:
                continue
            if busiest is None or load / cap > busiest[0]:
                busiest = (load / cap, el_id)
        users, erlangs = outcome.users, outcome.erlangs
        what = f"losing {KIND_LABELS[risk.kind]} {risk.id} (sites {', '.join(risk.sites)})"
        if users > 1e-6 or erlangs > 1e-6:
            message = f"{what} leaves {fmt(round(users))} users and {fmt(round(erlangs, 1))} Erlangs unserved"
        elif busiest is not None and busiest[0] > eng.limit[eng.index[busiest[1]]] + 1e-9:
            limit = eng.limit[eng.index[busiest[1]]]
            message = f"{what}: {busiest[1]} runs at {pct(busiest[0])} (limit {pct(limit)})"
        else:
            message = f"{what}: everything is taken over"
        out.append(
            RiskCheck(
                kind=risk.kind,
                id=risk.id,
                sites=risk.sites,
                verdict=OK if outcome.verdict == "no loss" else FAIL,
                unserved_users=round(users, 1),
                unserved_erlangs=round(erlangs, 3),
                busiest=None if busiest is None else busiest[1],
                busiest_utilisation=None if busiest is None else round(busiest[0], 4),
                message=message,
            )
        )
    return out


CHECKS_SITES = [
    CapacityCheck(
        "sites",
        "with each site lost, the survivors of every sized element type carry its load within their limit",
        lambda inputs: _site_checks(inputs.topology, inputs.eng, inputs.losses),
        lab_shown=True,
    ),
]
CHECKS_RISKS = [
    CapacityCheck(
        "risks",
        "a service region, power feed or transmission route lost leaves no user unserved and no "
        "survivor above its limit",
        lambda inputs: _risk_checks(inputs.topology, inputs.eng, inputs.losses),
        lab_shown=True,
    ),
]
