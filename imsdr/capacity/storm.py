"""The registration storm of a failure: who re-registers where, how fast, and what it costs.

Users whose SBC or P-CSCF fails register again through the survivors; each such registration is
an *initial* registration with IMS AKA (3GPP TS 24.229, TS 33.203):

* SIP: two REGISTER transactions (the 401 challenge, then the answer) through the SBC, P-CSCF,
  I-CSCF and S-CSCF (``REGISTERS_PER_REGISTRATION``);
* Cx at the HSS: UAR for each REGISTER at the I-CSCF, then MAR and SAR at the S-CSCF — four
  Diameter transactions (``CX_PER_REGISTRATION``, TS 29.228/29.229);
* Dx at the SLF (where the network has one): each of those four requests is located by the SLF
  first (``DX_PER_REGISTRATION``);
* Sh (where the network has an AS): the third-party REGISTER makes the AS read the user's data
  once (UDR, TS 29.328; ``SH_PER_REGISTRATION``), also at the HSS.
* at a DRA (where the province has one): every Cx and Sh request of its clients passes through
  it on the way to the HSS, so it carries the HSS's transactions (RFC 6733 §2.8 relay).

Users of a failed S-CSCF keep their SBC and P-CSCF: with restoration data the new S-CSCF fetches
their data with one SAR each (TS 23.380 §4); without it they register again (a full initial
registration); both at their next request, spread over the refresh interval.

The users of a failed SBC/P-CSCF arrive by their local network's arrival profile
(:func:`arrival_profile`, docs/domain.md §8.2): a share within a few seconds (keep-alives,
TCP/TLS, P-CSCF restoration), the rest spread over the refresh interval
(:func:`imsdr.capacity.timing.refresh_interval`, TS 24.229 §5.1.1.4.1). At an element the storm
comes on top of its background (refreshes; at the HSS/SLF also LIR, :func:`background_per_user`);
SIP elements are judged in REGISTER/s (:func:`register_capacity`), the HSS/SLF in Diameter/s. A
fluid queue (:func:`fluid_drain`) gives when the backlog is worked off and when the last user is
registered again; a registration rate limit of an SBC/P-CSCF caps what it admits and so what the
core behind it sees. :func:`failback_storm` is the storm on the recovering elements when they
come back, paced as the runbook fails back.

One module: the storm of a failure and of its failback read the same moved users, profiles and
capacities, and every consumer (capacity, simulate, scenarios, plan, runbooks) reads the
:class:`Storm` it returns.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.timing import ps_refresh_interval, refresh_interval

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

REGISTERS_PER_REGISTRATION = 2  # IMS AKA: REGISTER → 401 challenge, REGISTER with the answer → 200
CX_PER_REGISTRATION = 4  # 2 UAR (one per REGISTER at the I-CSCF) + MAR + SAR
DX_PER_REGISTRATION = 4  # each Cx request located through the SLF
SH_PER_REGISTRATION = 1  # the AS reads the user's data after the third-party REGISTER
CX_PER_RESTORATION = 1  # SAR fetching restoration data for a user of a failed S-CSCF
SIP_TYPES = ("sbc", "pcscf", "cscf")
DIAMETER_SERVICES = ("hss", "slf", "dra")  # judged in Diameter/s; a DRA relays the HSS's Cx/Sh


@dataclass(frozen=True)
class Window:
    """How long the moved users take to re-register, and why."""

    seconds: int
    reason: str
    basis: str = "default"  # operator | ts24229 | default (imsdr.capacity.timing.Refresh)


def registration_window(topology: Topology, failed: Iterable[Element] = ()) -> Window:
    """The refresh interval over which the users that do not notice the failure at once arrive:
    the refresh interval (:func:`imsdr.capacity.timing.refresh_interval`) of each failed
    SBC/P-CSCF, the shortest one winning (the fastest arrival makes the peak); with no failed
    SBC/P-CSCF, the network's."""
    refreshes = [refresh_interval(topology, el) for el in failed if el.type.value in ("sbc", "pcscf")]
    refresh = min(refreshes, key=lambda r: r.seconds, default=None) or refresh_interval(topology)
    return Window(refresh.seconds, f"{refresh.how}: the rest re-register at their next refresh", refresh.basis)


@dataclass(frozen=True)
class Arrival:
    """How one local network's moved users arrive: ``share`` of them within ``within`` seconds,
    the rest spread evenly over ``refresh`` seconds."""

    local_network: str
    access: str
    users: float
    share: float
    within: int
    refresh: int
    reason: str

    @property
    def peak_rate(self) -> float:
        burst = self.users * self.share / self.within if self.share else 0.0
        return burst + self.users * (1 - self.share) / self.refresh

    @property
    def sustained_rate(self) -> float:
        return self.users * (1 - self.share) / self.refresh


FIXED_IMMEDIATE_SHARE = 0.3  # fixed access: UEs on TCP/TLS or with keep-alives (docs/domain.md §8.2)
FIXED_IMMEDIATE_WITHIN = 60  # seconds: SBC NAT pings and RFC 5626 CRLF keep-alives run at 20-60 s


def arrival_profile(
    topology: Topology, ln_id: str, refresh: int, ps_window: int | None
) -> tuple[str, float, int, int, str]:
    """(access, immediate share, within s, refresh s, reason) of the local network ``ln_id``:
    its own ``registration_arrival``, else the default of its access type (docs/domain.md §8.2).
    ``ps_window``: seconds of the PS re-registration window (P-CSCF restoration), None without."""
    ln = topology.local_networks.get(ln_id)
    access = ln.access if ln is not None else "fixed"
    own = ln.registration_arrival if ln is not None else None
    if own is not None:
        return (access, float(own.immediate_share), int(own.within), refresh,
                f"{ln_id}: {own.immediate_share:.0%} within {own.within} s (set), the rest over {refresh} s")
    fixed = ("fixed", FIXED_IMMEDIATE_SHARE, FIXED_IMMEDIATE_WITHIN, refresh,
             f"{ln_id}: fixed access default {FIXED_IMMEDIATE_SHARE:.0%} within {FIXED_IMMEDIATE_WITHIN} s "
             f"(TCP/TLS, keep-alives), the rest over {refresh} s")
    if access == "fixed":
        return fixed
    if ps_window is not None:
        ps = ("ps", 1.0, ps_window, refresh,
              f"{ln_id}: PS with P-CSCF restoration, all within the {ps_window} s restoration window (TS 23.380 §5)")
    else:
        ps_refresh = ps_refresh_interval(topology)
        ps = ("ps", 0.0, 1, ps_refresh.seconds,
              f"{ln_id}: PS without P-CSCF restoration, over the {ps_refresh.how}")
    if access == "ps":
        return ps
    # both: the split between fixed and PS users is not known; the faster arrival (higher peak) counts
    fixed_peak = fixed[1] / fixed[2] + (1 - fixed[1]) / fixed[3]
    ps_peak = ps[1] / ps[2] + (1 - ps[1]) / ps[3]
    chosen = ps if ps_peak > fixed_peak else fixed
    return ("both", *chosen[1:4], chosen[4] + " (fixed and PS users: the faster profile)")  # type: ignore[return-value]


def _ps_window(topology: Topology, failed: Iterable[Element]) -> int | None:
    """The shortest PS re-registration window of the failed SBCs/P-CSCFs with P-CSCF restoration."""
    if topology.network.restoration.pcscf_restoration == "none":
        return None
    from imsdr.capacity.timing import reregistration_window

    windows = [reregistration_window(topology, el, "ps").seconds for el in failed if el.type.value in ("sbc", "pcscf")]
    return min(windows, default=None)


def fluid_drain(components: Iterable[tuple[float, float, float, int]], service: float) -> tuple[float, float]:
    """(time the backlog empties, time the last arrival is served) for arrivals of ``components``
    (transactions, immediate share, within s, refresh s) served at ``service`` transactions/s:
    a fluid queue over the piecewise-constant arrival rate; the backlog time is 0 when the
    arrivals never exceed the service rate. Infinite when ``service`` ≤ 0."""
    comps = [c for c in components if c[0] > 0]
    if not comps:
        return 0.0, 0.0
    if service <= 0:
        return float("inf"), float("inf")
    points = sorted({0.0, *(float(c[2]) for c in comps if c[1] > 0), *(float(c[3]) for c in comps)})
    backlog, emptied, seen_backlog = 0.0, 0.0, False
    for t0, t1 in zip(points, points[1:], strict=False):
        rate = sum((tx * share / within if share and t0 < within else 0.0)
                   + (tx * (1 - share) / refresh if t0 < refresh else 0.0)
                   for tx, share, within, refresh in comps)
        span = t1 - t0
        if rate > service:
            backlog += (rate - service) * span
            seen_backlog = True
        elif backlog > 0:
            need = backlog / (service - rate)
            if need <= span:
                emptied, backlog = t0 + need, 0.0
            else:
                backlog -= (service - rate) * span
    end = points[-1]
    if backlog > 0:
        emptied = end + backlog / service
        return emptied, emptied
    return (emptied if seen_backlog else 0.0), end


@dataclass(frozen=True)
class StormLoad:
    """The storm at one surviving element."""

    id: str
    element_type: str
    unit: str  # "REGISTER/s" (SIP elements) or "Diameter/s" (HSS, SLF, DRA)
    moved_users: float  # users that register (or are restored) through it
    peak_rate: float  # storm transactions/s in the first peak_s seconds (the immediate share on top)
    sustained_rate: float  # storm transactions/s after the immediate share (the rest over the refresh)
    peak_s: int  # how long the peak lasts (the shortest immediate window)
    background_rate: float  # transactions/s of the normal traffic it serves (refreshes; at the HSS/SLF also LIR)
    capacity: float | None  # in ``unit``: REGISTER/s or Diameter/s
    capacity_basis: str  # which inventory field gave ``capacity`` and how
    limit: float | None  # registration rate limit in ``unit`` (503 + Retry-After above it), None without
    utilisation: float | None  # (background + peak) / capacity
    utilisation_sustained: float | None  # (background + sustained) / capacity
    backlog_s: float | None  # when the backlog (arrivals above the rate it can serve) is worked off; 0: none
    drain_s: float | None  # when every user registering through it is registered again
    verdict: str  # ok | limited (the limit holds the peak within capacity) | overload | unknown


@dataclass(frozen=True)
class FailbackLoad:
    """The failback storm on one recovering SBC or P-CSCF, paced as the runbook fails back: the
    dispatcher lists of its sources (the SBCs whose first P-CSCF it is; for an SBC, the UEs through
    DNS) are loaded one at a time, canary first, ``step_s`` apart; each source's users come back
    over one refresh interval after its step (initial registrations: 2 REGISTER each)."""

    id: str
    element_type: str
    users: float
    sources: tuple[str, ...]
    step_s: int
    refresh_s: int
    peak_rate: float  # REGISTER/s of returning users at the busiest moment
    background_rate: float  # the refreshes of every user it serves once back (one REGISTER each)
    capacity: float | None  # REGISTER/s
    utilisation: float | None
    all_back_s: int  # the last source's step + one refresh interval
    verdict: str  # ok | overload | unknown


@dataclass(frozen=True)
class Storm:
    moved_users: float  # users that register again (access moves and S-CSCF moves without restoration)
    restored_users: float  # users of failed S-CSCFs restored from the HSS (one SAR each)
    window: Window  # the refresh interval over which the users who do not notice arrive
    registrations_per_second: float  # peak initial registrations per second network-wide
    sustained_registrations_per_second: float  # after the immediate share has arrived
    arrivals: tuple[Arrival, ...]  # per local network whose users move
    elements: tuple[StormLoad, ...]
    bottleneck: str | None
    drain_s: float  # until every moved user is registered again (the slowest element)
    overloaded: tuple[str, ...]
    unlimited: tuple[str, ...] = ()  # SBC/P-CSCF whose storm peak exceeds capacity without a rate limit
    failback: tuple[FailbackLoad, ...] = ()  # the storm on the recovering elements when they come back

    @property
    def verdict(self) -> str:
        return "overload" if self.overloaded else "ok"


class StormIndex:
    """What every storm of one engine reads: for the S-CSCF, HSS and SLF services, the flows of
    each local network and the local network's total over them (built once per report)."""

    def __init__(self, eng: Engine) -> None:
        self.flows: dict[str, dict[str, list[tuple[int, float]]]] = {}  # service → ln → (flow, weight)
        self.total: dict[str, dict[str, float]] = {}  # service → ln → Σ amount × weight
        diameter: list[int] = []
        for i, service in enumerate(eng.f_service):
            if service not in ("scscf", *DIAMETER_SERVICES):
                continue
            if service != "scscf":
                diameter.append(i)
            by_ln = self.flows.setdefault(service, {})
            totals = self.total.setdefault(service, {})
            for ln, w in eng.weight_sets[eng.f_wkey[i]]:
                by_ln.setdefault(ln, []).append((i, w))
                totals[ln] = totals.get(ln, 0.0) + eng.f_amount[i] * w
        self.diameter_set = frozenset(diameter)  # HSS, SLF and DRA flows
        # element → its HSS/SLF/DRA flows in flow order; P-CSCF id → the SBCs whose first P-CSCF it
        # is, in inventory order: asked per element in every storm (186 nationally), found once
        self._diameter_flows: dict[int, list[int]] = {}
        self._first_pcscf_of: dict[str, list[Element]] | None = None

    def diameter_flows(self, eng: Engine, x: int) -> list[int]:
        """The HSS, SLF and DRA flows that can reach ``x``, ascending (in flow order)."""
        flows = self._diameter_flows.get(x)
        if flows is None:
            flows = self._diameter_flows[x] = [i for i in eng.flows_of[x] if i in self.diameter_set]
        return flows

    def sbcs_behind(self, topology: Topology, pcscf: str) -> list[Element]:
        """The SBCs whose first P-CSCF is ``pcscf``, in inventory order."""
        if self._first_pcscf_of is None:
            self._first_pcscf_of = {}
            for sbc in topology.by_type.get("sbc", []):
                if sbc.pcscfs:
                    self._first_pcscf_of.setdefault(sbc.pcscfs[0], []).append(sbc)
        return self._first_pcscf_of.get(pcscf, [])


def registration_storm(
    topology: Topology, eng: Engine, outcome: Outcome, index: StormIndex | None = None
) -> Storm:
    """The registration storm of the failure ``outcome`` (an :meth:`Engine.evaluate` result).

    Moved users are counted per local network, so at national scale a province's storm lands on
    that province's S-CSCFs, HSSs and SLFs (the ones whose flows carry its users)."""
    index = index or StormIndex(eng)
    window = registration_window(topology, (topology.elements[e] for e in outcome.failed))
    failed = {eng.index[e] for e in outcome.failed}
    affected = eng.affected_flows(failed)
    # the engine's own assignment of every flow the failure touches (the same numbers it loaded)
    after_parts = outcome.assignments if affected.issubset(outcome.assignments) else {}
    normal_assign = eng.normal_assign

    def parts(i: int) -> list[tuple[int, float]]:
        after = after_parts.get(i)
        if after is not None:
            return after
        if i not in affected:
            return normal_assign[i][0]
        after = after_parts[i] = eng._assign(i, failed)[0]
        return after

    failed_elements = [topology.elements[e] for e in outcome.failed]
    ps_window = _ps_window(topology, failed_elements)
    refresh_s = window.seconds
    # element → local network → users whose SBC/P-CSCF failed, registering through it
    sip_gain: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    access_by_ln: dict[str, float] = defaultdict(float)  # users of failed SBC/P-CSCFs
    scscf_by_ln: dict[str, float] = defaultdict(float)  # users of failed S-CSCFs without restoration data
    restored_by_ln: dict[str, float] = defaultdict(float)
    for i in sorted(affected):
        if eng.f_service[i] != "sbc" or not eng.f_stage2[i] or eng.f_amount[i] <= 0:
            continue
        amount = eng.f_amount[i]
        old_parts = eng.normal_assign[i][0]
        on_failed_sbc = sum(a for x, a in old_parts if x in failed and eng.type_of[x] == "sbc")
        on_failed_pcscf = sum(a for x, a in old_parts if x in failed and eng.type_of[x] == "pcscf")
        moved = min(amount, on_failed_sbc + on_failed_pcscf * (1 - on_failed_sbc / amount))
        if moved <= 1e-9:
            continue
        new_parts = parts(i)
        served = sum(a for x, a in new_parts if eng.type_of[x] == "sbc")
        if served <= 0:
            continue  # nothing takes these users over: they are unserved, not a storm
        share = moved / amount
        lns = eng.weight_sets[eng.f_wkey[i]]
        for x, a in new_parts:
            for ln, w in lns:
                sip_gain[x][ln] += a * share * w
        for ln, w in lns:
            access_by_ln[ln] += moved * served / amount * w
    restoration = _restoration()
    for x in failed:  # users of failed S-CSCFs: restored (one SAR) or registering again
        upl = eng.users_per_load.get(x)
        if upl is None or eng.normal[x] <= 0:
            continue
        target = restored_by_ln if eng.topology.elements[eng.ids[x]].has(restoration) else scscf_by_ln
        for i in eng.flows_of[x]:
            if eng.f_service[i] != "scscf":
                continue
            on_x = sum(a for y, a in eng.normal_assign[i][0] if y == x)
            for ln, w in eng.weight_sets[eng.f_wkey[i]]:
                target[ln] += on_x * upl * w
    profiles = {ln: arrival_profile(topology, ln, refresh_s, ps_window) for ln in sorted(access_by_ln)}
    arrivals = tuple(Arrival(ln, p[0], round(access_by_ln[ln], 1), p[1], p[2], p[3], p[4])
                     for ln, p in profiles.items() if access_by_ln[ln] > 1e-9)
    moved = sum(access_by_ln.values()) + sum(scscf_by_ln.values())
    restored = sum(restored_by_ln.values())
    has_as = bool(topology.by_type.get("as"))

    def spread(service: str, per_ln: dict[str, float]) -> dict[int, dict[str, float]]:
        """Each local network's quantity over the elements carrying its ``service`` flows now."""
        out: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        flows = index.flows.get(service, {})
        totals = index.total.get(service, {})
        for ln, quantity in per_ln.items():
            total = totals.get(ln, 0.0)
            if quantity <= 0 or total <= 0:
                continue
            for i, w in flows.get(ln, ()):
                for x, a in parts(i):
                    out[x][ln] += quantity * a * w / total
        return out

    # local network → how much registration rate limits on its path spread its burst; where a limit
    # is below even the sustained rate, the seconds over which it lets the users through evenly
    stretch: dict[str, float] = {}
    flatten: dict[str, float] = {}

    def components(access: dict[str, float], later: dict[str, float], per_user: float,
                   restored_here: dict[str, float] | None = None) -> list[tuple[float, float, float, int]]:
        """(transactions, immediate share, within, refresh) of the users arriving at one element;
        behind a rate-limited SBC/P-CSCF a local network's immediate share arrives over
        ``within × stretch`` (the limit admits the same users at its rate)."""
        out: list[tuple[float, float, float, int]] = []
        for ln, users in sorted(access.items()):
            _acc, share, within, refresh, _why = profiles.get(ln) or arrival_profile(topology, ln, refresh_s, ps_window)
            if ln in flatten:
                out.append((users * per_user, 0.0, 1, max(refresh, math.ceil(flatten[ln]))))
            else:
                out.append((users * per_user, share, within * stretch.get(ln, 1.0), refresh))
        out.extend((users * per_user, 0.0, 1, refresh_s) for _ln, users in sorted(later.items()))
        out.extend((users * CX_PER_RESTORATION, 0.0, 1, refresh_s)
                   for _ln, users in sorted((restored_here or {}).items()))
        return [c for c in out if c[0] > 1e-9]

    sip_later = spread("scscf", dict(scscf_by_ln))  # S-CSCF users without restoration data
    sip_access = spread("scscf", dict(access_by_ln))
    sh = SH_PER_REGISTRATION if has_as else 0
    hss_access = spread("hss", dict(access_by_ln))
    hss_later = spread("hss", dict(scscf_by_ln))
    hss_restored = spread("hss", dict(restored_by_ln))
    slf_access = spread("slf", dict(access_by_ln))
    slf_later = spread("slf", dict(scscf_by_ln))
    dra_access = spread("dra", dict(access_by_ln))
    dra_later = spread("dra", dict(scscf_by_ln))
    dra_restored = spread("dra", dict(restored_by_ln))
    # element → (users per local network arriving with its profile, later arrivals, restored, per-user count)
    inputs: dict[int, tuple[dict[str, float], dict[str, float], dict[str, float], float]] = {}
    for x, per_ln in sip_gain.items():
        if eng.type_of[x] in SIP_TYPES:
            inputs[x] = (dict(per_ln), {}, {}, REGISTERS_PER_REGISTRATION)
    for x in set(sip_access) | set(sip_later):
        own, later, _r, _n = inputs.get(x, ({}, {}, {}, REGISTERS_PER_REGISTRATION))
        for ln, v in sip_access.get(x, {}).items():
            own[ln] = own.get(ln, 0.0) + v
        for ln, v in sip_later.get(x, {}).items():
            later[ln] = later.get(ln, 0.0) + v
        inputs[x] = (own, later, {}, REGISTERS_PER_REGISTRATION)
    diameter: set[int] = set()
    for x in set(hss_access) | set(hss_later) | set(hss_restored):
        diameter.add(x)
        inputs[x] = (dict(hss_access.get(x, {})), dict(hss_later.get(x, {})), dict(hss_restored.get(x, {})),
                     CX_PER_REGISTRATION + sh)
    for x in set(slf_access) | set(slf_later):
        diameter.add(x)
        inputs[x] = (dict(slf_access.get(x, {})), dict(slf_later.get(x, {})), {}, DX_PER_REGISTRATION)
    for x in set(dra_access) | set(dra_later) | set(dra_restored):  # the HSS's requests, relayed
        diameter.add(x)
        inputs[x] = (dict(dra_access.get(x, {})), dict(dra_later.get(x, {})), dict(dra_restored.get(x, {})),
                     CX_PER_REGISTRATION + sh)

    def load_of(x: int) -> float:
        return outcome.loads.get(eng.ids[x], eng.normal[x])

    per_user_diameter = background_per_user(topology)
    order = {"sbc": 0, "pcscf": 1}  # the access path first: its limits shape what reaches the core
    rows: list[StormLoad] = []
    limit_u = eng.max_util
    for x in sorted(inputs, key=lambda k: (order.get(eng.type_of[k], 2), eng.ids[k])):
        if x in failed:
            continue
        el = eng.topology.elements[eng.ids[x]]
        own, later, restored_here, count = inputs[x]
        arriving = components(own, later, count, restored_here)
        if not arriving:
            continue
        if x in diameter:
            unit = "Diameter/s"
            per_user = per_user_diameter.dx if eng.type_of[x] == "slf" else per_user_diameter.cx
            background = subscribers_served(eng, index, x, parts) * per_user
            capacity = el.capacity.transactions_per_second
            basis = "transactions_per_second" if capacity else "transactions_per_second not given"
            limit_tx = None
        else:
            if eng.type_of[x] not in SIP_TYPES:
                continue
            unit = "REGISTER/s"
            own_refresh = refresh_interval(topology, el).seconds
            background = load_of(x) * eng.users_per_load.get(x, 1.0) / own_refresh  # one re-REGISTER each
            capacity, basis = register_capacity(el)
            lim = el.registration_limit if eng.type_of[x] in ("sbc", "pcscf") else None
            limit_tx = None if lim is None else float(lim.rate * REGISTERS_PER_REGISTRATION)
        peak = sum(tx * (sh_ / w if sh_ else 0.0) + tx * (1 - sh_) / r for tx, sh_, w, r in arriving)
        sustained = sum(tx * (1 - sh_) / r for tx, sh_, w, r in arriving)
        bursts = [w for tx, sh_, w, r in arriving if sh_]
        peak_s = min(bursts) if bursts else min(r for tx, sh_, w, r in arriving)
        if limit_tx is not None and peak > limit_tx + 1e-9:
            # the limit admits the same users at most at its rate: the core behind sees them spread
            if limit_tx > sustained:
                spread_by = (peak - sustained) / (limit_tx - sustained)
                for ln in own:
                    stretch[ln] = max(stretch.get(ln, 1.0), spread_by)
            else:
                total = sum(tx for tx, _s, _w, _r in arriving)
                for ln in own:
                    flatten[ln] = max(flatten.get(ln, 0.0), total / limit_tx)
        if capacity:
            capacity_f: float | None = float(capacity)
            util: float | None = (background + peak) / capacity_f
            util_s: float | None = (background + sustained) / capacity_f
            spare = capacity_f * limit_u - background
            service = spare if limit_tx is None else min(spare, limit_tx)
            backlog, done = fluid_drain(arriving, service)
            if backlog and limit_tx is not None and limit_tx <= spare + 1e-9 and backlog != float("inf"):
                retry = el.registration_limit.retry_after  # type: ignore[union-attr]
                done += retry  # a refused UE waits Retry-After before it tries again
                backlog += retry
            over = util > limit_u + 1e-9  # type: ignore[operator]
            if not over:
                verdict = "ok"
            elif limit_tx is not None and background + limit_tx <= capacity_f * limit_u + 1e-9:
                verdict = "limited"
            else:
                verdict = "overload"
        else:
            capacity_f, util, util_s, backlog, done, verdict = None, None, None, None, None, "unknown"
        users_here = sum(own.values()) + sum(later.values()) + sum(restored_here.values())
        rows.append(StormLoad(
            eng.ids[x], eng.type_of[x], unit, round(users_here, 1), round(peak, 2), round(sustained, 2),
            int(round(peak_s)), round(background, 2), capacity_f, basis, limit_tx,
            None if util is None else round(util, 4), None if util_s is None else round(util_s, 4),
            _rounded(backlog), _rounded(done), verdict,
        ))
    rows.sort(key=lambda r: (r.element_type, r.id))
    timed = [r for r in rows if r.drain_s is not None]
    bottleneck = max(timed, key=lambda r: (r.drain_s, r.backlog_s or 0.0, r.id), default=None)
    last_arrival = max((float(a.refresh) for a in arrivals), default=0.0)
    if scscf_by_ln or restored_by_ln:
        last_arrival = max(last_arrival, float(refresh_s))
    if moved + restored <= 0:
        drain_total = 0.0
    elif bottleneck is not None:
        drain_total = max(last_arrival, bottleneck.drain_s)  # type: ignore[type-var]
    else:
        drain_total = last_arrival
    peak_net = sum(a.peak_rate for a in arrivals) + sum(scscf_by_ln.values()) / refresh_s
    sustained_net = sum(a.sustained_rate for a in arrivals) + sum(scscf_by_ln.values()) / refresh_s
    return Storm(
        moved_users=round(moved, 1),
        restored_users=round(restored, 1),
        window=window,
        registrations_per_second=round(peak_net, 2),
        sustained_registrations_per_second=round(sustained_net, 2),
        arrivals=arrivals,
        elements=tuple(rows),
        bottleneck=None if bottleneck is None else bottleneck.id,
        drain_s=_rounded(drain_total),  # type: ignore[arg-type]
        overloaded=tuple(r.id for r in rows if r.verdict == "overload"),
        unlimited=tuple(r.id for r in rows if r.verdict == "overload" and r.element_type in ("sbc", "pcscf")
                        and r.limit is None),
        failback=failback_storm(topology, eng, failed, refresh_s, index),
    )


def failback_storm(topology: Topology, eng: Engine, failed: Iterable[int], refresh_s: int,
                   index: StormIndex | None = None) -> tuple[FailbackLoad, ...]:
    """The failback storm of every loaded SBC and P-CSCF in ``failed`` (see :class:`FailbackLoad`)."""
    from imsdr.capacity.timing import options_detection_part

    index = index or StormIndex(eng)
    out: list[FailbackLoad] = []
    for x in sorted(failed, key=lambda k: eng.ids[k]):
        kind = eng.type_of[x]
        if kind not in ("sbc", "pcscf") or eng.normal[x] <= 0:
            continue
        el = topology.elements[eng.ids[x]]
        if kind == "sbc":
            sources = [(el, eng.normal[x])]
        else:
            sources = [(sbc, eng.normal[eng.index[sbc.id]]) for sbc in index.sbcs_behind(topology, el.id)
                       if eng.normal[eng.index[sbc.id]] > 0]
            if not sources:
                sources = [(el, eng.normal[x])]
        # as the runbook: the next dispatcher list after the previous one's OPTIONS detection and interval
        step = max(options_detection_part(topology, s).seconds + _options_interval(topology, s) for s, _u in sources)
        users = sum(u for _s, u in sources)
        starts = [(k * step, u) for k, (_s, u) in enumerate(sources)]
        points = sorted({t for start, _u in starts for t in (start, start + refresh_s)})
        peak = max(sum(u for start, u in starts if start <= t < start + refresh_s) for t in points)
        peak_rate = peak * REGISTERS_PER_REGISTRATION / refresh_s
        background = users / refresh_interval(topology, el).seconds
        capacity, _basis = register_capacity(el)
        util = None if not capacity else (peak_rate + background) / capacity
        verdict = "unknown" if util is None else ("overload" if util > eng.max_util + 1e-9 else "ok")
        out.append(FailbackLoad(
            el.id, kind, round(users, 1), tuple(s.id for s, _u in sources), step, refresh_s, round(peak_rate, 2),
            round(background, 2), capacity, None if util is None else round(util, 4),
            (len(sources) - 1) * step + refresh_s, verdict,
        ))
    return tuple(out)


def _options_interval(topology: Topology, el: Element) -> int:
    own = el.timers.options_interval
    return int(own if own is not None else topology.network.timers.options_interval)


def _rounded(x: float | None) -> float | None:
    return None if x is None else (x if x == float("inf") else round(x, 1))


def register_capacity(el: Element) -> tuple[float | None, str]:
    """An SIP element's REGISTER transactions per second and where the figure comes from: its
    ``register_transactions_per_second``, else 2 × its ``registrations_per_second`` (an initial
    registration with IMS AKA is two REGISTER transactions)."""
    cap = el.capacity
    if cap.register_transactions_per_second:
        return float(cap.register_transactions_per_second), "register_transactions_per_second"
    if cap.registrations_per_second:
        return (float(cap.registrations_per_second * REGISTERS_PER_REGISTRATION),
                f"registrations_per_second {cap.registrations_per_second} × {REGISTERS_PER_REGISTRATION} REGISTER")
    return None, "registrations_per_second not given"


@dataclass(frozen=True)
class DiameterPerUser:
    """Background Diameter transactions per second one subscriber causes (docs/capacity.md)."""

    cx: float  # at the HSS: re-registration UAR (+ SAR with restoration data) + LIR per terminating call
    dx: float  # at the SLF: each of those Cx requests located first
    formula: str


def background_per_user(topology: Topology) -> DiameterPerUser:
    """Per subscriber and second, in normal operation:

    * a re-registration: one UAR at the I-CSCF (TS 29.228 §6.1.1) and, where the S-CSCFs hold
      restoration data, one SAR storing it (TS 23.380 §4.2, TS 29.228 §6.1.2), every refresh
      interval;
    * a terminating call: one LIR at the I-CSCF (TS 29.228 §6.1.4); terminating attempts per
      subscriber = busy_hour_call_attempts × onnet_share (every attempt when onnet_share is unset)
      per 3,600 s;
    * Sh: none (the AS subscribes to the user's data on the first third-party REGISTER, TS 29.328
      §6.1.3, and is notified of changes; re-registrations and calls read nothing).
    """
    cm = topology.network.capacity_model
    refresh = refresh_interval(topology)
    restoration = any(el.has(_restoration()) for el in topology.by_type.get("cscf", []))
    per_rereg = 2 if restoration else 1
    onnet = 1.0 if cm.onnet_share is None else float(cm.onnet_share)
    lir = cm.busy_hour_call_attempts * onnet / 3600
    cx = per_rereg / refresh.seconds + lir
    what = "UAR + SAR" if restoration else "UAR"
    formula = (f"{per_rereg} ({what}) / {refresh.seconds} s ({refresh.basis}) + {cm.busy_hour_call_attempts:g} BHCA × "
               f"{onnet:g} on-net / 3,600 (LIR)")
    return DiameterPerUser(cx, cx, formula)


def subscribers_served(
    eng: Engine, index: StormIndex, x: int, parts: Callable[[int], list[tuple[int, float]]]
) -> float:
    """The subscribers the HSS/SLF/DRA ``x`` serves under the assignment ``parts``: its part of
    every HSS/SLF/DRA flow, added up in flow order."""
    total = 0.0
    for i in index.diameter_flows(eng, x):
        upu = eng.f_upu[i]
        for y, a in parts(i):
            if y == x:
                total += a * upu
    return total


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA


def storm_to_dict(storm: Storm) -> dict[str, object]:
    return {
        "moved_users": storm.moved_users,
        "restored_users": storm.restored_users,
        "window_s": storm.window.seconds,
        "window_reason": storm.window.reason,
        "refresh_basis": storm.window.basis,
        "registrations_per_second": storm.registrations_per_second,
        "sustained_registrations_per_second": storm.sustained_registrations_per_second,
        "arrivals": [
            {"local_network": a.local_network, "access": a.access, "users": a.users, "immediate_share": a.share,
             "within_s": a.within, "refresh_s": a.refresh, "reason": a.reason}
            for a in storm.arrivals
        ],
        "bottleneck": storm.bottleneck,
        "drain_s": None if storm.drain_s == float("inf") else storm.drain_s,
        "drains": storm.drain_s != float("inf"),
        "verdict": storm.verdict,
        "overloaded": list(storm.overloaded),
        "unlimited": list(storm.unlimited),
        "failback": [
            {"id": f.id, "type": f.element_type, "unit": "REGISTER/s", "users": f.users, "sources": list(f.sources),
             "step_s": f.step_s, "refresh_s": f.refresh_s, "peak_rate": f.peak_rate,
             "background_rate": f.background_rate, "capacity": f.capacity, "utilisation": f.utilisation,
             "all_back_s": f.all_back_s, "verdict": f.verdict}
            for f in storm.failback
        ],
        "elements": [
            {
                "id": r.id, "type": r.element_type, "unit": r.unit, "moved_users": r.moved_users,
                "peak_rate": r.peak_rate, "sustained_rate": r.sustained_rate, "peak_s": r.peak_s,
                "background_rate": r.background_rate, "capacity": r.capacity, "capacity_basis": r.capacity_basis,
                "limit": r.limit, "utilisation": r.utilisation, "utilisation_sustained": r.utilisation_sustained,
                "backlog_s": None if r.backlog_s == float("inf") else r.backlog_s,
                "drain_s": None if r.drain_s == float("inf") else r.drain_s, "verdict": r.verdict,
            }
            for r in storm.elements
        ],
    }
