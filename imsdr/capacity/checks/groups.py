"""Pools and pairs: every N+K pool and 1+1 pair of SBCs, P-CSCFs, S-CSCFs, HSS/SLFs, MGCFs and
IM-MGWs sized against the users its members carry (docs/domain.md §4.5), then lost member by member
in the load model itself, so the capacity verdict and ``simulate`` never differ."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import (
    FAIL,
    OK,
    SIZED_TYPES,
    UNKNOWN,
    CapacityCheck,
    CheckInputs,
    ElementLosses,
    rounded,
)
from imsdr.capacity.formulas import exact, fmt, n_plus_k, pair_check, pct
from imsdr.capacity.load import ERLANGS, LoadModel, is_scscf

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine
    from imsdr.model.topology import Group, Topology


@dataclass(frozen=True)
class GroupCheck:
    """An N+K pool or a 1+1 pair, sized against the load its members carry normally."""

    id: str
    kind: str  # pool | pair
    element_type: str
    unit: str
    members: tuple[str, ...]
    capacities: tuple[float | None, ...]
    loads: tuple[float, ...]
    spare: int
    load: float
    utilisation_normal: float | None
    utilisation_after: float | None
    spare_needed: float | None
    headroom: float | None
    verdict: str
    formula: tuple[str, ...]
    message: str
    worst_loss: tuple[str, ...] = ()  # the members whose loss the load model found worst (simulated)
    survivor: str | None = None  # the busiest survivor of that loss; None: none carries it (or not simulated)


def _group_check(topology: Topology, model: LoadModel, group: Group, u: Fraction) -> GroupCheck | None:
    members = [m for m in group.members if m in topology.elements]
    types = {topology.elements[m].type.value for m in members}
    if len(types) != 1:
        return None
    el_type = types.pop()
    if el_type not in SIZED_TYPES or (
        el_type == "cscf" and not all(is_scscf(topology.elements[m]) for m in members)
    ):
        return None
    unit = model.unit.get(members[0], "users")
    if unit == ERLANGS:
        return None  # trunk groups are sized by Erlang B (see trunks)
    caps = [model.capacity.get(m) for m in members]
    loads = [model.normal_load.get(m, Fraction(0)) for m in members]
    load = sum(loads, Fraction(0))
    k = group.spare
    base = dict(
        id=group.id,
        kind=group.kind,
        element_type=el_type,
        unit=unit,
        members=tuple(members),
        capacities=tuple(rounded(c, 3) for c in caps),
        loads=tuple(rounded(x, 3) or 0.0 for x in loads),
        spare=k,
        load=rounded(load, 3) or 0.0,
    )
    if not all(caps):
        missing = [m for m, c in zip(members, caps, strict=True) if not c]
        return GroupCheck(
            **base,
            utilisation_normal=None,
            utilisation_after=None,
            spare_needed=None,
            headroom=None,
            verdict=UNKNOWN,
            formula=(f"capacity missing for {', '.join(missing)}",),
            message=f"{group.kind} {group.id}: cannot be sized, capacity missing for {', '.join(missing)}",
        )
    if group.kind == "pair":
        ok, lines = pair_check(load, caps, u)  # type: ignore[arg-type]
        smallest = min(caps)  # type: ignore[type-var]
        msg = (
            (
                f"pair {group.id}: each side must carry the pair's {fmt(load)} {unit} alone, "
                f"but the smallest side has {fmt(smallest)} ({pct(load / smallest)})"
            )
            if len(caps) > 1
            else f"pair {group.id} has a single member: nothing takes over its {fmt(load)} {unit}"
        )
        return GroupCheck(
            **base,
            utilisation_normal=rounded(load / sum(caps, Fraction(0))),  # type: ignore[arg-type]
            utilisation_after=rounded(load / smallest),
            spare_needed=None,
            headroom=None,
            verdict=OK if ok else FAIL,
            formula=lines,
            message=msg,
        )
    res = n_plus_k(load, caps, k, u)  # type: ignore[arg-type]
    if res.surviving_capacity <= 0:
        msg = (
            f"pool {group.id}: N={res.n} cannot survive the loss of K={k} member(s): no member would be left"
        )
    elif res.equal:
        msg = (
            f"pool {group.id} (N={res.n}, K={k}): each member needs {fmt(res.spare_needed or 0)} {unit} "
            f"spare on top of its share {fmt(res.share or 0)} but has {fmt(res.headroom or 0)}; "
            f"after losing {k} the survivors run at {pct(res.utilisation_after or 0)}"
        )
    else:
        msg = (
            f"pool {group.id} (N={res.n}, K={k}): after losing the {k} largest member(s) the survivors' "
            f"{fmt(res.surviving_capacity)} {unit} must carry {fmt(load)} "
            f"({pct(res.utilisation_after or 0)})"
        )
    return GroupCheck(
        **base,
        utilisation_normal=rounded(res.utilisation_normal),
        utilisation_after=rounded(res.utilisation_after),
        spare_needed=rounded(res.spare_needed, 3),
        headroom=rounded(res.headroom, 3),
        verdict=OK if res.ok else FAIL,
        formula=res.formula,
        message=msg,
    )


MAX_LOSS_SETS = 64  # K-member loss sets simulated per group (the largest members first beyond that)


def _simulated(eng: Engine, group: Group, check: GroupCheck, losses: ElementLosses) -> GroupCheck:
    """The group's verdict from the load model itself: lose each set of K members (a pair: each
    member) and look at the survivors, exactly as ``simulate`` does. The formula lines stay as the
    explanation; where the routing concentrates the load (static selection: the next member takes
    everything) the simulation is what fails, so the capacity verdict and ``simulate`` never differ."""
    import itertools

    members = list(check.members)
    k = 1 if check.kind == "pair" else max(1, min(check.spare, len(members)))
    if k >= len(members):
        return check  # no member would survive: the formula already says so
    sets = list(itertools.islice(itertools.combinations(members, k), MAX_LOSS_SETS))
    worst: tuple[float, float, tuple[str, ...], str | None] | None = None  # (lost, util, set, busiest)
    for lost_set in sets:
        outcome = losses.lose(lost_set)
        lost = sum(outcome.no_takeover.get(m, 0.0) for m in lost_set)
        lost += sum(outcome.overflow.get(m, 0.0) for m in members)
        busiest: tuple[float, str | None] = (0.0, None)
        for m in members:
            if m in lost_set:
                continue
            x = eng.index[m]
            load = outcome.loads.get(m, eng.normal[x])
            cap = eng.cap_after[x]
            if cap != float("inf") and load / cap > busiest[0]:
                busiest = (load / cap, m)
        key = (lost, busiest[0], lost_set, busiest[1])
        if worst is None or key[:2] > worst[:2]:
            worst = key
    assert worst is not None
    lost, util, lost_set, busiest_id = worst
    limit = eng.limit[eng.index[members[0]]]
    ok = lost <= 1e-6 and util <= limit + 1e-9
    line = (f"simulated: losing {', '.join(lost_set)} → "
            + (f"{busiest_id} at {pct(util)}" if busiest_id else "no survivor carries it")
            + (f", {fmt(round(lost))} {check.unit} unserved" if lost > 1e-6 else "")
            + f" (limit {pct(limit)}) → {'ok' if ok else 'SHORT'}")
    verdict = OK if ok else FAIL
    message = check.message
    if verdict == FAIL and check.verdict == OK:
        message = (f"{check.kind} {check.id}: losing {', '.join(lost_set)} puts "
                   + (f"{busiest_id} at {pct(util)} (limit {pct(limit)})" if busiest_id else "nothing in its place")
                   + (f" and leaves {fmt(round(lost))} {check.unit} unserved" if lost > 1e-6 else "")
                   + f", although the pool as a whole has {pct(check.utilisation_after or 0)}: "
                   "its selection sends the load to the survivors unevenly")
    import dataclasses

    return dataclasses.replace(check, verdict=verdict, formula=(*check.formula, line), message=message,
                               worst_loss=tuple(lost_set), survivor=busiest_id)


def _groups(inputs: CheckInputs, pools: bool) -> list[GroupCheck]:
    """The pools (``pools``) or the other groups, in inventory order."""
    topology, eng = inputs.topology, inputs.eng
    u = exact(eng.model.cm.max_utilisation)
    out: list[GroupCheck] = []
    for group in topology.groups.values():
        if (group.kind == "pool") != pools:
            continue
        check = _group_check(topology, eng.model, group, u)
        if check is not None and check.verdict != UNKNOWN:
            check = _simulated(eng, group, check, inputs.element_losses)
        if check is not None:
            out.append(check)
    return out


CHECKS = [
    CapacityCheck(
        "pools",
        "every N+K pool survives the loss of its K largest members (and of each simulated set of K)",
        lambda inputs: _groups(inputs, pools=True),
    ),
    CapacityCheck(
        "pairs",
        "each side of every 1+1 pair carries the pair's whole load alone",
        lambda inputs: _groups(inputs, pools=False),
    ),
]
