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

Users of a failed S-CSCF keep their SBC and P-CSCF: with restoration data the new S-CSCF fetches
their data with one SAR each (TS 23.380 §4); without it they register again (a full initial
registration). Moving N users in a window of T seconds adds N/T registrations per second; the
window is :func:`registration_window` (the refresh period, as in the switchover of the failed element).
At an element the storm comes on top of the refreshes it already serves (users / refresh per
second); the time to drain at an element is its storm registrations over the capacity left by
those refreshes; the slowest element is the bottleneck.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.timing import registration_refresh

if TYPE_CHECKING:
    from collections.abc import Iterable

    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

REGISTERS_PER_REGISTRATION = 2  # IMS AKA: REGISTER → 401 challenge, REGISTER with the answer → 200
CX_PER_REGISTRATION = 4  # 2 UAR (one per REGISTER at the I-CSCF) + MAR + SAR
DX_PER_REGISTRATION = 4  # each Cx request located through the SLF
SH_PER_REGISTRATION = 1  # the AS reads the user's data after the third-party REGISTER
CX_PER_RESTORATION = 1  # SAR fetching restoration data for a user of a failed S-CSCF
SIP_TYPES = ("sbc", "pcscf", "cscf")


@dataclass(frozen=True)
class Window:
    """How long the moved users take to re-register, and why."""

    seconds: int
    reason: str


def registration_window(topology: Topology, failed: Iterable[Element] = ()) -> Window:
    """The re-registration window of a failure: UEs notice a lost SBC/P-CSCF at their next
    REGISTER refresh (or a new call), so the moved users arrive spread over the refresh period.

    The period is the re-registration part of the switchover of each failed SBC/P-CSCF (the same
    figure ``simulate`` and the runbooks give, with an element's own timer override); the
    shortest one wins, as the fastest arrival makes the peak. PS (VoLTE) users are moved by the
    P-CSCF restoration of TS 23.380 on their next terminating request, or at registration expiry:
    spread at least as wide, so they do not raise the peak above this window's rate."""
    # the re_registration part of each one's fixed-access window (timing.reregistration_window)
    refreshes = [registration_refresh(topology, el) for el in failed if el.type.value in ("sbc", "pcscf")]
    refresh = min(refreshes, default=topology.network.timers.registration_refresh)
    return Window(refresh, f"registration refresh period ({refresh} s): UEs notice the failure at "
                           "their next REGISTER refresh or new call")


@dataclass(frozen=True)
class StormLoad:
    """The storm at one surviving element."""

    id: str
    element_type: str
    unit: str  # "REGISTER/s" (SIP elements) or "Diameter/s" (HSS, SLF)
    moved_users: float  # users that register (or are restored) through it
    storm_rate: float  # extra transactions per second during the window
    background_rate: float  # transactions per second of the normal refreshes it serves
    capacity: float | None  # registrations_per_second (SIP) or transactions_per_second (HSS/SLF)
    utilisation: float | None  # (background + storm) / capacity
    drain_s: float | None  # time to process its storm with the capacity the refreshes leave
    verdict: str  # ok | overload | unknown


@dataclass(frozen=True)
class Storm:
    moved_users: float  # users that register again (access moves and S-CSCF moves without restoration)
    restored_users: float  # users of failed S-CSCFs restored from the HSS (one SAR each)
    window: Window
    registrations_per_second: float  # initial registrations per second network-wide
    elements: tuple[StormLoad, ...]
    bottleneck: str | None
    drain_s: float  # how long the storm lasts at the bottleneck (at least the window)
    overloaded: tuple[str, ...]

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
            if service not in ("scscf", "hss", "slf"):
                continue
            if service != "scscf":
                diameter.append(i)
            by_ln = self.flows.setdefault(service, {})
            totals = self.total.setdefault(service, {})
            for ln, w in eng.weight_sets[eng.f_wkey[i]]:
                by_ln.setdefault(ln, []).append((i, w))
                totals[ln] = totals.get(ln, 0.0) + eng.f_amount[i] * w
        self.diameter_set = frozenset(diameter)  # HSS and SLF flows


def registration_storm(
    topology: Topology, eng: Engine, outcome: Outcome, index: StormIndex | None = None
) -> Storm:
    """The registration storm of the failure ``outcome`` (an :meth:`Engine.evaluate` result).

    Moved users are counted per local network, so at national scale a province's storm lands on
    that province's S-CSCFs, HSSs and SLFs (the ones whose flows carry its users)."""
    index = index or StormIndex(eng)
    window = registration_window(topology, (topology.elements[e] for e in outcome.failed))
    t = float(window.seconds)
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

    sip_gain: dict[int, float] = defaultdict(float)  # element → users registering through it
    moved_by_ln: dict[str, float] = defaultdict(float)
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
        for x, a in new_parts:
            sip_gain[x] += a * share
        for ln, w in eng.weight_sets[eng.f_wkey[i]]:
            moved_by_ln[ln] += moved * served / amount * w
    restoration = _restoration()
    for x in failed:  # users of failed S-CSCFs: restored (one SAR) or registering again
        upl = eng.users_per_load.get(x)
        if upl is None or eng.normal[x] <= 0:
            continue
        target = restored_by_ln if eng.topology.elements[eng.ids[x]].has(restoration) else moved_by_ln
        for i in eng.flows_of[x]:
            if eng.f_service[i] != "scscf":
                continue
            on_x = sum(a for y, a in eng.normal_assign[i][0] if y == x)
            for ln, w in eng.weight_sets[eng.f_wkey[i]]:
                target[ln] += on_x * upl * w
    moved = sum(moved_by_ln.values())
    restored = sum(restored_by_ln.values())
    has_as = bool(topology.by_type.get("as"))

    def spread(service: str, per_ln: dict[str, float]) -> dict[int, float]:
        """Each local network's quantity over the elements carrying its ``service`` flows now."""
        out: dict[int, float] = defaultdict(float)
        flows = index.flows.get(service, {})
        totals = index.total.get(service, {})
        for ln, quantity in per_ln.items():
            total = totals.get(ln, 0.0)
            if quantity <= 0 or total <= 0:
                continue
            for i, w in flows.get(ln, ()):
                for x, a in parts(i):
                    out[x] += quantity * a * w / total
        return out

    for x, users in spread("scscf", moved_by_ln).items():
        sip_gain[x] += users
    sh = SH_PER_REGISTRATION if has_as else 0
    hss_tx = spread("hss", {ln: moved_by_ln.get(ln, 0.0) * (CX_PER_REGISTRATION + sh)
                            + restored_by_ln.get(ln, 0.0) * CX_PER_RESTORATION
                            for ln in set(moved_by_ln) | set(restored_by_ln)})
    hss_users = spread("hss", {ln: moved_by_ln.get(ln, 0.0) + restored_by_ln.get(ln, 0.0)
                               for ln in set(moved_by_ln) | set(restored_by_ln)})
    slf_tx = spread("slf", {ln: v * DX_PER_REGISTRATION for ln, v in moved_by_ln.items()})
    slf_users = spread("slf", dict(moved_by_ln))
    diameter = {**{x: (v, hss_users.get(x, 0.0)) for x, v in hss_tx.items()},
                **{x: (v, slf_users.get(x, 0.0)) for x, v in slf_tx.items()}}

    def load_of(x: int) -> float:
        return outcome.loads.get(eng.ids[x], eng.normal[x])

    def subscribers_now(x: int) -> float:
        """The subscribers the HSS/SLF ``x`` serves now: its part of every HSS/SLF flow, added up
        in flow order (only the elements with a row need it, not every HSS and SLF)."""
        total = 0.0
        for i in eng.flows_of[x]:  # ascending: the flows that can reach x, in flow order
            if i in index.diameter_set:
                upu = eng.f_upu[i]
                for y, a in parts(i):
                    if y == x:
                        total += a * upu
        return total

    rows: list[StormLoad] = []
    refresh = t
    for x in sorted(set(sip_gain) | set(diameter), key=lambda k: (eng.type_of[k], eng.ids[k])):
        if x in failed:
            continue
        el = eng.topology.elements[eng.ids[x]]
        if x in diameter:
            transactions, users_here = diameter[x]
            if transactions <= 1e-9:
                continue
            unit = "Diameter/s"
            storm_rate = transactions / t
            # normally: one transaction per subscriber per refresh period (re-registration)
            background = subscribers_now(x) / refresh
            capacity = el.capacity.transactions_per_second
        else:
            if eng.type_of[x] not in SIP_TYPES or sip_gain[x] <= 1e-9:
                continue
            unit = "REGISTER/s"
            users_here = sip_gain[x]
            storm_rate = sip_gain[x] * REGISTERS_PER_REGISTRATION / t
            background = load_of(x) * eng.users_per_load.get(x, 1.0) / refresh  # one re-REGISTER each
            capacity = el.capacity.registrations_per_second
        if capacity:
            capacity_f: float | None = float(capacity)
            util: float | None = (background + storm_rate) / capacity_f
            spare = capacity_f * eng.max_util - background
            drain: float | None = (storm_rate * t) / spare if spare > 0 else float("inf")
            verdict = "overload" if util > eng.max_util + 1e-9 else "ok"  # type: ignore[operator]
        else:
            capacity_f, util, drain, verdict = None, None, None, "unknown"
        rows.append(StormLoad(
            eng.ids[x], eng.type_of[x], unit, round(users_here, 1), round(storm_rate, 2),
            round(background, 2), capacity_f, None if util is None else round(util, 4),
            None if drain is None else (drain if drain == float("inf") else round(drain, 1)), verdict,
        ))
    timed = [r for r in rows if r.drain_s is not None]
    bottleneck = max(timed, key=lambda r: (r.drain_s, r.id), default=None)
    if moved + restored <= 0:
        drain_total = 0.0
    elif bottleneck is not None:
        drain_total = max(t, bottleneck.drain_s)  # type: ignore[type-var]
    else:
        drain_total = t
    return Storm(
        moved_users=round(moved, 1),
        restored_users=round(restored, 1),
        window=window,
        registrations_per_second=round(moved / t, 2),
        elements=tuple(rows),
        bottleneck=None if bottleneck is None else bottleneck.id,
        drain_s=drain_total if drain_total == float("inf") else round(drain_total, 1),
        overloaded=tuple(r.id for r in rows if r.verdict == "overload"),
    )


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA


def storm_to_dict(storm: Storm) -> dict[str, object]:
    return {
        "moved_users": storm.moved_users,
        "restored_users": storm.restored_users,
        "window_s": storm.window.seconds,
        "window_reason": storm.window.reason,
        "registrations_per_second": storm.registrations_per_second,
        "bottleneck": storm.bottleneck,
        "drain_s": None if storm.drain_s == float("inf") else storm.drain_s,
        "drains": storm.drain_s != float("inf"),
        "verdict": storm.verdict,
        "overloaded": list(storm.overloaded),
        "elements": [
            {
                "id": r.id, "type": r.element_type, "unit": r.unit, "moved_users": r.moved_users,
                "storm_rate": r.storm_rate, "background_rate": r.background_rate, "capacity": r.capacity,
                "utilisation": r.utilisation,
                "drain_s": None if r.drain_s == float("inf") else r.drain_s, "verdict": r.verdict,
            }
            for r in storm.elements
        ],
    }
