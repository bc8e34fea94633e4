"""The capacity report: every sizing check of docs/domain.md §4.5-§4.7 with its numbers laid out for audit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from imsdr.capacity.dimensions import DimensionCheck
from imsdr.capacity.erlang import blocking_text, circuits_needed, erlang_b
from imsdr.capacity.formulas import (
    exact,
    fmt,
    hss_required,
    n_plus_k,
    pair_check,
    pct,
)
from imsdr.capacity.load import ERLANGS, LoadModel, is_scscf

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.model.topology import Group, Topology

OK = "ok"
FAIL = "fail"
UNKNOWN = "unknown"  # capacity missing: cannot be sized
LAB = "lab"  # a lab deployment's element/site loss: reported, not a shortfall
SIZED_TYPES = ("sbc", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw")


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


@dataclass(frozen=True)
class HssCheck:
    id: str
    members: tuple[str, ...]
    subscribers: float
    restoration: bool
    overhead: float
    largest_scscf: str | None
    largest_scscf_users: float
    failover_cost: float
    required: float
    capacity: float | None
    ratio: float | None  # required / capacity
    verdict: str
    formula: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class CscfLoad:
    id: str
    members: tuple[str, ...]
    subscribers: float
    restoration: bool
    registration_share: float
    restoration_cost: float
    factor: float
    load: float
    formula: tuple[str, ...]


@dataclass(frozen=True)
class TrunkMember:
    id: str
    circuits: int | None
    erlangs: float
    needed: int
    ok: bool
    blocking: float | None = None  # Erlang B of its Erlangs on its circuits
    occupancy: float | None = None  # carried Erlangs per circuit: A × (1 − B) / circuits


@dataclass(frozen=True)
class TrunkCheck:
    id: str
    element_type: str
    erlangs: float
    grade_of_service: float
    total_needed: int
    normal: tuple[TrunkMember, ...]
    worst_site: str | None
    after_site: tuple[TrunkMember, ...]
    verdict: str
    formula: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class Takeover:
    """One SBC or P-CSCF lost: the elements that take its users, against their capacity."""

    failed: str
    element_type: str
    load: float
    takers: tuple[tuple[str, float, float | None, float | None], ...]  # id, load after, capacity, util
    unserved: float
    verdict: str
    formula: tuple[str, ...]
    message: str


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


@dataclass(frozen=True)
class StormCheck:
    """The registration storm of a site or region loss (``imsdr.capacity.storm``)."""

    scenario: str  # site:<id> | region:<id>
    moved_users: float
    restored_users: float
    window_s: int  # the refresh interval the users who do not notice arrive over
    refresh_basis: str  # operator | ts24229 | default
    registrations_per_second: float  # peak initial registrations/s network-wide
    sustained_registrations_per_second: float
    bottleneck: str | None
    drain_s: float | None  # until everyone is registered again; None: never (no capacity left)
    overloaded: tuple[str, ...]
    unlimited: tuple[str, ...]  # SBC/P-CSCF overloaded at the peak without a registration rate limit
    unknown: tuple[str, ...]  # elements receiving the storm without a rate capacity
    verdict: str
    formula: str
    message: str


@dataclass(frozen=True)
class ElementIssue:
    id: str
    element_type: str
    kind: str  # overloaded | no_capacity
    load: float
    capacity: float | None
    message: str


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


@dataclass(frozen=True)
class CapacityReport:
    network: str
    subscribers: int
    busy_hour_erlangs: float
    max_utilisation: float
    pools: tuple[GroupCheck, ...]
    pairs: tuple[GroupCheck, ...]
    hss: tuple[HssCheck, ...]
    cscf: tuple[CscfLoad, ...]
    trunks: tuple[TrunkCheck, ...]
    takeovers: tuple[Takeover, ...]
    sites: tuple[SiteCheck, ...]
    elements: tuple[ElementIssue, ...]
    risks: tuple[RiskCheck, ...] = ()
    storms: tuple[StormCheck, ...] = ()
    dimensions: tuple[DimensionCheck, ...] = ()
    missing: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # element, type, missing fields
    unchecked: tuple[tuple[str, str, str], ...] = ()  # element, type, capacity field never checked
    headroom: tuple[HeadroomCell, ...] = ()
    element_headroom: tuple[ElementHeadroom, ...] = ()
    verdict: str = field(default=OK)

    def failures(self) -> list[Any]:
        out: list[Any] = []
        for section in (self.pools, self.pairs, self.hss, self.trunks, self.takeovers, self.sites, self.risks,
                        self.storms, self.dimensions):
            out.extend(c for c in section if c.verdict == FAIL)
        out.extend(e for e in self.elements if e.kind == "overloaded")
        return out


def _f(x: Fraction | float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


def capacity_report(topology: Topology, engine: Engine | None = None) -> CapacityReport:
    """Size every pool, pair, HSS, trunk group, DR SBC and site of ``topology``.

    ``engine`` is the exact-number failure Engine of ``topology``; a run that also simulates or
    checks passes the one its :class:`imsdr.analysis.Analysis` holds, so that everything reads
    the same model. Nothing is kept between calls."""
    if engine is None:
        from imsdr.capacity.engine import Engine

        engine = Engine(topology)
    return _capacity_report(topology, engine)


def _capacity_report(topology: Topology, eng: Engine) -> CapacityReport:
    from imsdr.model.risk import shared_risks

    model = eng.model
    u = exact(model.cm.max_utilisation)
    # every site, region, power feed and transmission route lost, evaluated once for all checks;
    # most power feeds and routes fail exactly one site: the same sites give the same outcome
    by_sites: dict[tuple[str, ...], Outcome] = {}

    def lose(sites: Iterable[str]) -> Outcome:
        key = tuple(dict.fromkeys(sites))  # in evaluation order: it is the order loads are summed in
        if key not in by_sites:
            by_sites[key] = eng.evaluate_sites(key)
        return by_sites[key]

    losses: dict[str, Outcome] = {f"site:{site}": lose([site]) for site in sorted(topology.sites)}
    losses.update((risk.label, lose(risk.sites)) for risk in shared_risks(topology))
    pools: list[GroupCheck] = []
    pairs: list[GroupCheck] = []
    element_losses = _ElementLosses(eng)
    for group in topology.groups.values():
        check = _group_check(topology, model, group, u)
        if check is not None and check.verdict != UNKNOWN:
            check = _simulated(eng, group, check, element_losses)
        if check is not None:
            (pools if group.kind == "pool" else pairs).append(check)
    report = CapacityReport(
        network=topology.network.name,
        subscribers=model.subscribers,
        busy_hour_erlangs=_f(model.erlangs_total, 3) or 0.0,
        max_utilisation=float(u),
        pools=tuple(pools),
        pairs=tuple(pairs),
        hss=tuple(_hss_checks(topology, model)),
        cscf=tuple(_cscf_loads(topology, model)),
        trunks=tuple(_trunk_checks(topology, model)),
        takeovers=tuple(_takeovers(topology, eng, element_losses)),
        sites=tuple(_site_checks(topology, eng, losses)),
        elements=tuple(_element_issues(topology, model)),
        risks=tuple(_risk_checks(topology, eng, losses)),
        headroom=_headroom_cells(topology, eng, losses),
        **_traffic_checks(topology, eng, losses),
    )
    report = CapacityReport(**{**report.__dict__, "element_headroom": _element_headroom(topology, eng, losses,
                                                                                        report.takeovers)})
    if topology.network.deployment == "lab":
        # a lab has one site and no DR by design: losses are shown, not counted as shortfalls
        report = CapacityReport(
            **{
                **report.__dict__,
                "takeovers": tuple(_lab(t) for t in report.takeovers),
                "sites": tuple(_lab(s) for s in report.sites),
                "risks": tuple(_lab(r) for r in report.risks),
                "storms": tuple(_lab(r) for r in report.storms),
            }
        )
    verdict = FAIL if report.failures() else OK
    return CapacityReport(**{**report.__dict__, "verdict": verdict})


def _lab(check: Any) -> Any:
    import dataclasses

    return dataclasses.replace(check, verdict=LAB) if check.verdict == FAIL else check


# --- pools and pairs ---------------------------------------------------------------------------------


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
        capacities=tuple(_f(c, 3) for c in caps),
        loads=tuple(_f(x, 3) or 0.0 for x in loads),
        spare=k,
        load=_f(load, 3) or 0.0,
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
            utilisation_normal=_f(load / sum(caps, Fraction(0))),  # type: ignore[arg-type]
            utilisation_after=_f(load / smallest),
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
        utilisation_normal=_f(res.utilisation_normal),
        utilisation_after=_f(res.utilisation_after),
        spare_needed=_f(res.spare_needed, 3),
        headroom=_f(res.headroom, 3),
        verdict=OK if res.ok else FAIL,
        formula=res.formula,
        message=msg,
    )


MAX_LOSS_SETS = 64  # K-member loss sets simulated per group (the largest members first beyond that)


class _ElementLosses:
    """The outcomes of losing one element, shared by the pool and pair simulations and the SBC and
    P-CSCF takeovers: the same loss is evaluated once. A loaded SBC or P-CSCF is evaluated with
    ``detail`` (who takes over), which only adds the receivers to the very same outcome."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        self.outcomes: dict[str, Outcome] = {}

    def lose(self, lost: tuple[str, ...]) -> Outcome:
        eng = self.eng
        if len(lost) != 1:
            return eng.evaluate(lost)
        outcome = self.outcomes.get(lost[0])
        if outcome is None:
            x = eng.index[lost[0]]
            detail = eng.type_of[x] in ("sbc", "pcscf") and eng.normal[x] > 0
            outcome = self.outcomes[lost[0]] = eng.evaluate({x}, detail=detail)
        return outcome


def _simulated(eng: Engine, group: Group, check: GroupCheck, losses: _ElementLosses) -> GroupCheck:
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


# --- HSS and CSCF ------------------------------------------------------------------------------------------


class _LargestScscf:
    """The S-CSCF (serving any of a set of local networks) whose failure moves most users: its
    capacity (else its unit's users), at most the users it could possibly hold.

    Each S-CSCF unit's best member is found once and the units are indexed by the local networks
    they serve, so a query reads only the units serving its local networks (in unit order, the
    first largest winning, as a scan over every unit would)."""

    def __init__(self, model: LoadModel) -> None:
        subscribers = exact(model.subscribers)
        self.units: list[tuple[str, Fraction]] = []
        self.by_ln: dict[str, list[int]] = defaultdict(list)
        for _group, members, users, weights in model.unit_users.get("scscf", []):
            best: tuple[str | None, Fraction] = (None, Fraction(0))
            for m in members:
                cap = model.capacity.get(m)
                held = min(cap if cap else users, subscribers)
                if best[0] is None or held > best[1]:
                    best = (m, held)
            if best[0] is None:
                continue
            k = len(self.units)
            self.units.append((best[0], best[1]))
            for ln, _w in weights:
                self.by_ln[ln].append(k)

    def __call__(self, lns: set[str]) -> tuple[str | None, Fraction]:
        if lns:
            ks: Iterable[int] = sorted({k for ln in lns for k in self.by_ln.get(ln, ())})
        else:
            ks = range(len(self.units))
        best: tuple[str | None, Fraction] = (None, Fraction(0))
        for k in ks:
            m, held = self.units[k]
            if best[0] is None or held > best[1]:
                best = (m, held)
        return best


def _hss_checks(topology: Topology, model: LoadModel) -> list[HssCheck]:
    cm = model.cm
    out: list[HssCheck] = []
    restoration = model.restoration
    overhead = exact(cm.hss_restoration_overhead)
    cost = exact(cm.failover_cost_per_moved_user)
    largest_scscf = _LargestScscf(model)
    for group, ms, subs, weights in model.unit_users.get("hss", []):
        if group is not None and group.kind == "pool":
            cap = _pool_surviving(model, group, ms)
        else:
            cap = model.unit_capacity(group, ms)
        largest, moved = largest_scscf({ln for ln, _w in weights})
        required = hss_required(subs, overhead, moved, cost, restoration)
        ident = group.id if group is not None else ms[0]
        oh = f"(1 + {pct(overhead)})" if restoration else "(no restoration data: + 0%)"
        lines = [
            f"required = subscribers × {oh} + users of largest S-CSCF × (failover cost − 1)",
            f"= {fmt(subs)} × {fmt(1 + (overhead if restoration else 0), 4)} + {fmt(moved)}"
            f" × ({fmt(cost, 4)} − 1) = {fmt(required)}",
        ]
        if cap:
            ratio = required / cap
            lines.append(
                f"= {pct(ratio)} of the HSS capacity {fmt(cap)}"
                + (f" (limit {pct(exact(cm.max_utilisation))})" if cm.max_utilisation != 1 else "")
            )
            ok = required <= cap * exact(cm.max_utilisation)
            verdict = OK if ok else FAIL
            msg = (
                f"HSS {ident}: needs {fmt(required)} subscriber-equivalents ({pct(ratio)} of its capacity "
                f"{fmt(cap)}) to hold restoration data and absorb the failover of {largest or 'an S-CSCF'}"
            )
        else:
            ratio = None
            verdict = UNKNOWN
            lines.append("HSS capacity (subscribers) missing: cannot be compared")
            msg = f"HSS {ident}: capacity missing"
        out.append(
            HssCheck(
                id=ident,
                members=tuple(ms),
                subscribers=_f(subs, 3) or 0.0,
                restoration=restoration,
                overhead=float(overhead),
                largest_scscf=largest,
                largest_scscf_users=_f(moved, 3) or 0.0,
                failover_cost=float(cost),
                required=_f(required, 3) or 0.0,
                capacity=_f(cap, 3),
                ratio=_f(ratio),
                verdict=verdict,
                formula=tuple(lines),
                message=msg,
            )
        )
    return out


def _pool_surviving(model: LoadModel, group: Group, members: list[str]) -> Fraction | None:
    caps = [model.capacity.get(m) for m in members]
    if not all(caps):
        return None
    ordered = sorted(caps, reverse=True)  # type: ignore[type-var]
    return sum(ordered[group.spare :], Fraction(0))  # type: ignore[arg-type]


def _cscf_loads(topology: Topology, model: LoadModel) -> list[CscfLoad]:
    members = [e.id for e in topology.by_type["cscf"] if is_scscf(e)]
    cm = model.cm
    out: list[CscfLoad] = []
    share = exact(cm.registration_share)
    cost = exact(cm.restoration_registration_cost)
    for group, ms in model.units_of(members):
        load = sum((model.normal_load.get(m, Fraction(0)) for m in ms), Fraction(0))
        restoration = any(topology.elements[m].has(_restoration()) for m in ms)
        factor = model.scscf_factor if restoration else Fraction(1)
        users = load / factor
        ident = group.id if group is not None else ms[0]
        if restoration:
            lines = (
                f"restoration factor = 1 + registration share × (cost − 1) = 1 + {pct(share)} × "
                f"({fmt(cost, 4)} − 1) = {fmt(factor, 4)} (+{pct(factor - 1)})",
                f"S-CSCF load = {fmt(users)} users × {fmt(factor, 4)} = {fmt(load)}",
            )
        else:
            lines = (f"no restoration data: S-CSCF load = {fmt(users)} users",)
        out.append(
            CscfLoad(
                id=ident,
                members=tuple(ms),
                subscribers=_f(users, 3) or 0.0,
                restoration=restoration,
                registration_share=float(share),
                restoration_cost=float(cost),
                factor=float(factor),
                load=_f(load, 3) or 0.0,
                formula=lines,
            )
        )
    return out


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA


# --- trunks ------------------------------------------------------------------------------------------------


def _trunk_rows(
    topology: Topology, members: list[str], erlangs: float, gos: float
) -> tuple[TrunkMember, ...]:
    circuits = {m: topology.elements[m].capacity.circuits for m in members}
    weights: dict[str, float]
    if members and all(circuits.values()):
        total = sum(c or 0 for c in circuits.values())
        weights = {m: (circuits[m] or 0) / total for m in members}
    else:
        weights = {m: 1 / len(members) for m in members} if members else {}
    rows = []
    for m in members:
        a = round(erlangs * weights[m], 6)
        need = circuits_needed(a, gos)
        have = circuits[m]
        blocking = erlang_b(a, have) if have else None
        rows.append(TrunkMember(m, have, round(a, 3), need, have is not None and have >= need,
                                None if blocking is None else float(f"{blocking:.3g}"),
                                None if blocking is None else round(a * (1 - blocking) / have, 4)))  # type: ignore[operator]
    return tuple(rows)


def _trunk_use(r: TrunkMember) -> str:
    if r.blocking is None or r.occupancy is None:
        return ""
    return f" (blocking {blocking_text(r.blocking)}, occupancy {pct(r.occupancy)})"


def _trunk_checks(topology: Topology, model: LoadModel) -> list[TrunkCheck]:
    out: list[TrunkCheck] = []
    for group in topology.groups.values():
        if group.id not in model.trunk_erlangs:
            continue
        members = [m for m in group.members if m in topology.elements]
        el_type = topology.elements[members[0]].type.value
        erlangs = float(model.trunk_erlangs[group.id])
        gos = model.gos.get(members[0], model.cm.grade_of_service)
        gos_after = model.failure_gos(gos)
        normal = _trunk_rows(topology, members, erlangs, gos)
        sites = sorted({topology.elements[m].site for m in members})
        worst_site: str | None = None
        worst_rows: tuple[TrunkMember, ...] = ()
        worst_key: tuple[int, float] | None = None
        for site in sites:
            survivors = [m for m in members if topology.elements[m].site != site]
            rows = _trunk_rows(topology, survivors, erlangs, gos_after)
            short = sum(max(0, r.needed - (r.circuits or 0)) for r in rows) if rows else 10**9
            key = (short, max((r.erlangs / (r.circuits or 1) for r in rows), default=float("inf")))
            if worst_key is None or key > worst_key:
                worst_key, worst_site, worst_rows = key, site, rows
        ok = all(r.ok for r in normal) and (
            worst_site is None or (bool(worst_rows) and all(r.ok for r in worst_rows))
        )
        total_needed = circuits_needed(erlangs, gos)
        lines = [f"Erlang B at GoS {pct(gos, 2)}: {fmt(erlangs)} E on one group → {total_needed} circuits"]
        lines.append(
            "normal: "
            + "; ".join(
                f"{r.id} {fmt(r.erlangs)} E → {r.needed} needed / {r.circuits or '?'} configured{_trunk_use(r)}"
                for r in normal
            )
        )
        if worst_site is not None:
            if worst_rows:
                lines.append(
                    f"after losing {worst_site} (GoS {pct(gos_after, 2)}): "
                    + "; ".join(
                        f"{r.id} {fmt(r.erlangs)} E → {r.needed} needed / {r.circuits or '?'} configured"
                        f"{_trunk_use(r)}"
                        for r in worst_rows
                    )
                )
            else:
                lines.append(f"after losing {worst_site}: no member left")
        lines[-1] += " → ok" if ok else " → SHORT"
        bad = [r for r in (*normal, *worst_rows) if not r.ok]
        if worst_site is not None and not worst_rows:
            msg = f"trunk group {group.id}: every member is at {worst_site}; losing it drops {fmt(erlangs)} E"
        elif bad:
            r = bad[0]
            when = "in normal operation" if r in normal else f"after losing {worst_site}"
            at = gos if r in normal else gos_after
            msg = (
                f"trunk group {group.id}: {r.id} needs {r.needed} circuits for {fmt(r.erlangs)} E at GoS "
                f"{pct(at, 2)} {when} but has {r.circuits or 'none'}"
            )
        else:
            msg = f"trunk group {group.id}: ok"
        out.append(
            TrunkCheck(
                id=group.id,
                element_type=el_type,
                erlangs=erlangs,
                grade_of_service=gos,
                total_needed=total_needed,
                normal=normal,
                worst_site=worst_site,
                after_site=worst_rows,
                verdict=OK if ok else FAIL,
                formula=tuple(lines),
                message=msg,
            )
        )
    return out


# --- SBC / P-CSCF takeovers ---------------------------------------------------------------------------------


def _takeovers(topology: Topology, eng: Engine, losses: _ElementLosses) -> list[Takeover]:
    out: list[Takeover] = []
    for el_type in ("sbc", "pcscf"):
        for el in topology.by_type[el_type]:
            x = eng.index[el.id]
            load = eng.normal[x]
            if load <= 0:
                continue
            outcome = losses.lose((el.id,))  # with detail: a loaded SBC or P-CSCF
            takers_raw = outcome.receivers.get(el.id, {})
            takers = []
            for t in sorted(takers_raw):
                if topology.elements[t].type.value != el_type:
                    continue
                after = outcome.loads.get(t, eng.normal[eng.index[t]])
                cap = eng.cap_after[eng.index[t]]
                capv = None if cap == float("inf") else cap
                takers.append((t, round(after, 3), capv, None if capv is None else round(after / capv, 4)))
            unserved = outcome.no_takeover.get(el.id, 0.0) + sum(
                max(0.0, a - (c or float("inf"))) for _t, a, c, _u in takers
            )
            verdict = FAIL if outcome.verdict != "no loss" else OK
            if takers:
                lines = tuple(
                    f"{t}: {fmt(eng.normal[eng.index[t]])} + {fmt(a - eng.normal[eng.index[t]])} moved = "
                    f"{fmt(a)} vs capacity {fmt(c) if c else '?'}"
                    + (f" ({pct(ut)})" if ut is not None else "")
                    for t, a, c, ut in takers
                )
            else:
                lines = (f"nothing takes over {fmt(load)} users",)
            if not takers:
                msg = f"{el_type} {el.id}: nothing takes over its {fmt(load)} users when it fails"
            else:
                worst = max(takers, key=lambda r: r[3] or 0)
                msg = (
                    f"{el_type} {el.id} fails: {worst[0]} must carry {fmt(worst[1])} users "
                    f"({pct(worst[3] or 0)} of {fmt(worst[2] or 0)})"
                )
            out.append(
                Takeover(
                    failed=el.id,
                    element_type=el_type,
                    load=round(load, 3),
                    takers=tuple(takers),
                    unserved=round(unserved, 3),
                    verdict=verdict,
                    formula=lines,
                    message=msg,
                )
            )
    return out


# --- sites -------------------------------------------------------------------------------------------------


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
            cells.append(HeadroomCell(scenario, type_, unit, element, _f(util), limit, _f(load, 3) or 0.0))
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
        rows.append(ElementHeadroom(el_id, el.type, str(eng.model.unit[el_id]), _f(eng.cap[x], 3) or 0.0,
                                    _f(eng.normal[x], 3) or 0.0, _f(util) or 0.0, _f(bad) or 0.0, scenario,
                                    eng.limit[x]))
    return tuple(rows)


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


def _traffic_checks(topology: Topology, eng: Engine, losses: dict[str, Outcome]) -> dict[str, Any]:
    """The registration storm of every site and region loss; sessions and DNS queries normally
    and in those losses; capacities missing or never checked."""
    from imsdr.capacity.dimensions import dimension_checks, missing_dimensions, unchecked_capacities
    from imsdr.capacity.storm import StormIndex, registration_storm

    scenarios = [(label, outcome) for label, outcome in losses.items() if label.startswith(("site:", "region:"))]
    storms = []
    index = StormIndex(eng)
    for label, outcome in scenarios:
        storm = registration_storm(topology, eng, outcome, index)
        if not (storm.moved_users or storm.restored_users):
            continue
        unknown = tuple(r.id for r in storm.elements if r.verdict == "unknown")
        never = storm.drain_s == float("inf")
        formula = (f"{fmt(round(storm.moved_users))} users: peak {fmt(storm.registrations_per_second)} "
                   f"registrations/s, then {fmt(storm.sustained_registrations_per_second)}/s over the "
                   f"{fmt(storm.window.seconds)} s refresh interval ({storm.window.basis}) "
                   "(×2 REGISTER, ×4 Cx)")
        if storm.bottleneck:
            formula += f"; bottleneck {storm.bottleneck}: " + (
                "never drains" if never else f"everyone registered after {fmt(storm.drain_s)} s")
        if storm.overloaded:
            worst = max((r for r in storm.elements if r.verdict == "overload"), key=lambda r: r.utilisation or 0)
            message = (f"{label} lost: the registration storm (peak {fmt(storm.registrations_per_second)} "
                       f"registrations/s) overloads {', '.join(storm.overloaded)}; {worst.id} needs "
                       f"{fmt(round(worst.peak_rate + worst.background_rate, 2))} {worst.unit} of "
                       f"{fmt(worst.capacity or 0)} ({pct(worst.utilisation or 0)}) in the first {fmt(worst.peak_s)} s")
        else:
            message = f"{label} lost: the registration storm stays within the rate capacities given"
        storms.append(StormCheck(
            scenario=label, moved_users=storm.moved_users, restored_users=storm.restored_users,
            window_s=storm.window.seconds, refresh_basis=storm.window.basis,
            registrations_per_second=storm.registrations_per_second,
            sustained_registrations_per_second=storm.sustained_registrations_per_second,
            bottleneck=storm.bottleneck, drain_s=None if never else storm.drain_s,
            overloaded=storm.overloaded, unlimited=storm.unlimited, unknown=unknown,
            verdict=FAIL if storm.overloaded else OK,  # a rate not given is CAP-012, listed in `unknown`
            formula=formula, message=message,
        ))
    return {
        "storms": tuple(storms),
        "dimensions": tuple(dimension_checks(topology, eng, scenarios)),
        "missing": tuple(missing_dimensions(topology, eng)),
        "unchecked": tuple(unchecked_capacities(topology)),
    }


def _element_issues(topology: Topology, model: LoadModel) -> list[ElementIssue]:
    out: list[ElementIssue] = []
    u = exact(model.cm.max_utilisation)
    for el in topology.elements.values():
        t = el.type.value
        load = model.normal_load.get(el.id, Fraction(0))
        cap = model.capacity.get(el.id)
        if t not in SIZED_TYPES or (t == "cscf" and not is_scscf(el)) or load <= 0:
            continue
        if cap is None:
            out.append(
                ElementIssue(
                    el.id,
                    t,
                    "no_capacity",
                    _f(load, 3) or 0.0,
                    None,
                    f"{el.id}: carries {fmt(load)} {model.unit.get(el.id, 'users')} but has no "
                    "capacity for its type; it cannot be sized",
                )
            )
        elif load > cap * (1 if model.unit.get(el.id) == ERLANGS else u):
            out.append(
                ElementIssue(
                    el.id,
                    t,
                    "overloaded",
                    _f(load, 3) or 0.0,
                    _f(cap, 3),
                    f"{el.id}: carries {fmt(load)} {model.unit.get(el.id, 'users')} in normal "
                    f"operation, {pct(load / cap)} of its capacity {fmt(cap)}",
                )
            )
    return sorted(out, key=lambda e: e.id)


# --- JSON ------------------------------------------------------------------------------------------------


def capacity_to_dict(report: CapacityReport) -> dict[str, Any]:
    """The report as plain JSON data (keys documented in docs/capacity.md)."""
    import dataclasses

    names: dict[type, tuple[str, ...] | None] = {}  # field names per class, looked up once
    plain = {str, int, float, bool, type(None)}  # written as they are (no call per value)

    def conv(obj: Any) -> Any:
        cls = type(obj)
        if cls in plain:
            return obj
        if cls not in names:
            names[cls] = (
                tuple(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(cls) else None
            )
        fields = names[cls]
        if fields is not None:
            out = {}
            for name in fields:
                value = getattr(obj, name)
                out[name] = value if type(value) in plain else conv(value)
            return out
        if isinstance(obj, (list, tuple)):
            return [x if type(x) in plain else conv(x) for x in obj]
        return obj

    data = conv(report)
    for row in data["takeovers"]:
        row["takers"] = [
            {"id": t[0], "load_after": t[1], "capacity": t[2], "utilisation": t[3]} for t in row["takers"]
        ]
    data["failures"] = len(report.failures())
    return data
