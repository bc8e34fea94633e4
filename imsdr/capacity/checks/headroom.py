"""Headroom: per sized element type the busiest element normally, with each site and each service
region lost (the headroom picture); per element its worst utilisation over every site, region or
single-element loss (what ``plan --check`` compares)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import SIZED_TYPES, CapacityCheck, rounded

if TYPE_CHECKING:
    from imsdr.capacity.checks.takeovers import Takeover
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class HeadroomCell:
    """The busiest element of one type in one scenario (``normal``, ``site:ID`` lost, ``region:ID``
    lost): the cells of the headroom picture, and what ``plan --check`` compares."""

    scenario: str  # normal | site:<id> | region:<id>
    element_type: str
    unit: str
    element: str | None  # the busiest surviving element of the type; None: none survives
    utilisation: float | None  # its load / capacity (after a failure: at the failure grade of service)
    limit: float  # its highest acceptable utilisation (max_utilisation; 100% for trunks, see Engine.limit)
    load: float  # the load all surviving elements of the type carry, in ``unit``


@dataclass(frozen=True)
class ElementHeadroom:
    """One sized element: its utilisation normally and the worst a single site, region or element
    loss (a DR takeover) gives it; what ``plan --check`` compares per element."""

    id: str
    element_type: str
    unit: str
    capacity: float
    load: float  # normally
    utilisation: float
    worst_utilisation: float
    worst_scenario: str  # normal | site:<id> | region:<id> | element:<id>
    limit: float


def _headroom_cells(topology: Topology, eng: Engine, losses: dict[str, Outcome]) -> tuple[HeadroomCell, ...]:
    """Per sized element type: its busiest element normally, with each site lost and with each
    service region lost (the outcomes the site and risk checks already evaluated)."""
    by_type: dict[str, list[int]] = defaultdict(list)  # type → elements with a capacity, busiest first
    for x, el_id in enumerate(eng.ids):
        el = topology.elements[el_id]
        if el.type in SIZED_TYPES and eng.cap_after[x] != float("inf") and eng.model.unit.get(el_id):
            by_type[el.type].append(x)
    for members in by_type.values():  # normally busiest first (ties: inventory order)
        members.sort(key=lambda x: (-eng.normal[x] / eng.cap_after[x], x))
    members_of = {type_: set(members) for type_, members in by_type.items()}
    ids_of = {type_: {eng.ids[x] for x in members} for type_, members in by_type.items()}
    totals = {type_: sum(eng.normal[x] for x in members) for type_, members in by_type.items()}

    def failed_x(failed: set[str]) -> set[int]:
        return {eng.index[e] for e in failed if e in eng.index}

    scenarios = ["normal", *(f"site:{s}" for s in sorted(topology.sites)),
                 *(label for label in losses if label.startswith("region:"))]
    cells = []
    for type_ in SIZED_TYPES:
        members = by_type.get(type_)
        if not members:
            continue
        unit = str(eng.model.unit[eng.ids[members[0]]])
        for scenario in scenarios:
            if scenario == "normal":
                best = max(members, key=lambda x: (eng.normal[x] / eng.cap[x], -x))
                util, load = eng.normal[best] / eng.cap[best], sum(eng.normal[x] for x in members)
                element: str | None = eng.ids[best]
            else:
                # only the failed elements and those whose load changed differ from normal: the
                # rest is read off the members sorted by normal utilisation (national: ~130
                # scenarios × ~5,000 elements would otherwise be walked in full)
                outcome = losses[scenario]
                failed, changed = set(outcome.failed), outcome.loads
                ids_of_type = ids_of[type_]
                touched = [(amount, eng.index[el_id]) for el_id, amount in changed.items()
                           if el_id in ids_of_type and el_id not in failed]
                skip = failed | {eng.ids[x] for _amount, x in touched}
                load = totals[type_] - sum(eng.normal[x] for x in members_of[type_] & failed_x(failed))
                load += sum(amount - eng.normal[x] for amount, x in touched)
                now = touched + [next(((eng.normal[x], x) for x in members if eng.ids[x] not in skip), (0.0, -1))]
                now = [(amount, x) for amount, x in now if x >= 0]
                if now:
                    amount, x = max(now, key=lambda t: (t[0] / eng.cap_after[t[1]], -t[1]))
                    util, element = amount / eng.cap_after[x], eng.ids[x]
                else:
                    util, element = None, None
            limit = eng.limit[eng.index[element]] if element is not None else eng.max_util
            cells.append(HeadroomCell(scenario, type_, unit, element, rounded(util), limit, rounded(load, 3) or 0.0))
    return tuple(cells)


def _element_headroom(topology: Topology, eng: Engine, losses: dict[str, Outcome],
                      takeovers: tuple[Takeover, ...]) -> tuple[ElementHeadroom, ...]:
    worst: dict[int, tuple[float, str]] = {}

    def seen(x: int, util: float, scenario: str) -> None:
        if x not in worst or util > worst[x][0] + 1e-12:
            worst[x] = (util, scenario)

    scenarios = [label for label in losses if label.startswith(("site:", "region:"))]
    for scenario in scenarios:
        outcome = losses[scenario]
        failed = set(outcome.failed)
        for el_id, load in outcome.loads.items():
            x = eng.index[el_id]
            if el_id not in failed and eng.cap_after[x] != float("inf"):
                seen(x, load / eng.cap_after[x], scenario)
    for takeover in takeovers:
        for taker, _after, _cap, util in takeover.takers:
            if util is not None:
                seen(eng.index[taker], util, f"element:{takeover.failed}")
    rows = []
    for x, el_id in enumerate(eng.ids):
        el = topology.elements[el_id]
        if el.type not in SIZED_TYPES or eng.cap[x] == float("inf") or not eng.model.unit.get(el_id):
            continue
        util = eng.normal[x] / eng.cap[x]
        bad, scenario = worst.get(x, (util, "normal"))
        if bad <= util:
            bad, scenario = util, "normal"
        rows.append(ElementHeadroom(el_id, el.type, str(eng.model.unit[el_id]), rounded(eng.cap[x], 3) or 0.0,
                                    rounded(eng.normal[x], 3) or 0.0, rounded(util) or 0.0,
                                    rounded(bad) or 0.0, scenario, eng.limit[x]))
    return tuple(rows)


CHECKS_CELLS = [
    CapacityCheck(
        "headroom",
        "the busiest element of each sized type normally and with each site or service region lost",
        lambda inputs: _headroom_cells(inputs.topology, inputs.eng, inputs.losses),
    ),
]
CHECKS_ELEMENTS = [
    CapacityCheck(
        "element_headroom",
        "each sized element's utilisation normally and the worst a site, region or element loss gives it",
        lambda inputs: _element_headroom(inputs.topology, inputs.eng, inputs.losses,
                                         inputs.results["takeovers"]),  # type: ignore[arg-type]
    ),
]
