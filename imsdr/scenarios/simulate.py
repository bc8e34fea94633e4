"""`simulate`: fail sites and/or elements, and report what the design does about it.

One piece past 600 lines: the report of a failure (takeover, loads, switchover, impact and
failback texts per element type and access type) is computed from one engine outcome; the texts
read the same takeover and timing figures the tables print, so they stay next to them.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from imsdr.capacity.engine import NO_LOSS, Engine, Outcome
from imsdr.capacity.formulas import fmt, pct
from imsdr.capacity.load import is_scscf
from imsdr.capacity.storm import MovedUsers, Storm, StormIndex, moved_users, registration_storm, storm_to_dict
from imsdr.capacity.timing import (
    Switchover,
    access_types,
    access_windows,
    active_standby_pair,
    diameter_detection,
    failback_time,
)
from imsdr.errors import ImsdrError
from imsdr.model.risk import RISK_KINDS, Radius, shared_risks
from imsdr.model.topology import TYPE_LABELS

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology



@dataclass(frozen=True)
class FailedElement:
    id: str
    element_type: str
    site: str
    load: float
    unit: str
    takeover: tuple[str, ...]  # surviving elements that take its load, busiest first
    takeover_how: str
    unserved: float  # load nothing takes over (its unit)
    switchover: Switchover | None  # None: nothing takes over
    impact: tuple[str, ...]
    failback: tuple[str, ...]


@dataclass(frozen=True)
class LoadRow:
    id: str
    element_type: str
    unit: str
    load_before: float
    load_after: float
    capacity: float | None
    utilisation: float | None
    status: str  # ok | over limit | over capacity
    blocking: float | None = None  # trunks: Erlang B blocking of the load on the element's circuits
    occupancy: float | None = None  # trunks: carried Erlangs per circuit, A × (1 − B) / circuits


@dataclass(frozen=True)
class LocalNetworkImpact:
    id: str
    subscribers: int
    unserved_users: float
    busy_hour_erlangs: float
    unserved_erlangs: float


@dataclass(frozen=True)
class SimulationReport:
    network: str
    requested: tuple[str, ...]
    failed_sites: tuple[str, ...]
    failed: tuple[FailedElement, ...]
    survivors: tuple[tuple[str, tuple[str, ...]], ...]  # group id → surviving members
    loads: tuple[LoadRow, ...]
    local_networks: tuple[LocalNetworkImpact, ...]
    unserved_by_service: tuple[tuple[str, float], ...]
    unserved_users: float
    unserved_erlangs: float
    switchover_s: int
    switchover_from: str | None
    verdict: str
    storm: Storm | None = None  # the registration storm of the failure
    moved: MovedUsers | None = None  # instead of the storm (``simulate(storm=False)``): who moves


_PREFIXES = ("site", "element", "region", "power", "route")


def risk_sites(topology: Topology) -> dict[str, dict[str, tuple[str, ...]]]:
    """Kind (region, power, route) -> risk id -> the sites that depend on it."""
    risks: dict[str, dict[str, tuple[str, ...]]] = {k: {} for k in RISK_KINDS}
    for risk in shared_risks(topology):
        risks[risk.kind][risk.id] = risk.sites
    return risks


def resolve_ids(
    topology: Topology, ids: list[str], radius: Radius | None = None,
    risks: dict[str, dict[str, tuple[str, ...]]] | None = None,
) -> tuple[list[str], set[str]]:
    """Split what to fail into sites and elements; unknown ids are a usage error (exit 2).

    An id is a site, an element, a service region, a power feed or a transmission route (each
    of these last three fails every site that depends on it); ``kind:id`` (``region:north``,
    ``power:grid-a``, ``route:ring-1``, ``site:``, ``element:``) says which when a name is used
    by several kinds. ``radius`` fails every site inside the circle.
    """
    if not ids and radius is None:
        raise ImsdrError("nothing to fail: give at least one --fail ID or a --radius")
    risks = risks if risks is not None else risk_sites(topology)  # (given: one map for many calls)
    sites: list[str] = []
    elements: set[str] = set()
    unknown: list[str] = []
    errors: list[str] = []

    def add_sites(site_ids: tuple[str, ...] | list[str]) -> None:
        for site_id in site_ids:
            if site_id not in sites:
                sites.append(site_id)
            elements.update(e.id for e in topology.by_site.get(site_id, []))

    for ident in ids:
        kind, sep, name = ident.partition(":")
        if sep and kind in _PREFIXES:
            found = _lookup(topology, risks, name, (kind,))
        else:
            kind, name = "", ident
            found = _lookup(topology, risks, name, _PREFIXES)
        if not found:
            unknown.append(ident)
        elif len(found) > 1:
            kinds = ", ".join(f"{k}:{name}" for k, _v in found)
            errors.append(f"--fail {ident}: ambiguous, it names a {' and a '.join(k for k, _v in found)}; "
                          f"write one of {kinds}")
        else:
            what, value = found[0]
            if what == "element":
                elements.add(name)
            else:
                add_sites(value)
    if radius is not None:
        inside, unplaced = radius.sites(topology)
        if unplaced and not inside:
            errors.append(f"--radius: no site has coordinates inside {radius.km:g} km "
                          f"and {len(unplaced)} site(s) have no lat/lon to place them")
        add_sites(inside)
    if unknown:
        known = [*topology.sites, *topology.elements, *(r for by in risks.values() for r in by)]
        for ident in unknown:
            close = difflib.get_close_matches(ident.partition(":")[2] or ident, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            errors.append(f"--fail {ident}: not a site, element, region, power feed or transmission "
                          f"route of this inventory{hint}")
    if errors:
        raise ImsdrError("\n".join(errors))
    return sites, elements


def _lookup(
    topology: Topology, risks: dict[str, dict[str, tuple[str, ...]]], name: str, kinds: tuple[str, ...]
) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, sites) for every kind ``name`` is an id of (elements: no sites)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for kind in kinds:
        if kind == "site" and name in topology.sites:
            out.append((kind, (name,)))
        elif kind == "element" and name in topology.elements:
            out.append((kind, ()))
        elif kind in risks and name in risks[kind]:
            out.append((kind, risks[kind][name]))
    # a site id that is also its own region/feed name fails the same thing: no ambiguity
    if len(out) > 1 and len({v for k, v in out if k != "element"}) == 1 and all(k != "element" for k, _ in out):
        return out[:1]
    return out


def simulate(
    topology: Topology, failed_ids: list[str], engine: Engine | None = None, radius: Radius | None = None,
    storm_index: StormIndex | None = None, risks: dict[str, dict[str, tuple[str, ...]]] | None = None,
    storm: bool = True, outcome: Outcome | None = None, known_storm: Storm | None = None,
) -> SimulationReport:
    """Fail ``failed_ids`` (sites, elements, regions, power feeds, transmission routes) and the
    sites inside ``radius``; report takeover, capacity, time and impact.

    ``storm_index``: the engine's :class:`StormIndex`, when the caller simulates many failures with
    one engine (the plan simulates every element: building it for each costs ~30 ms nationally);
    ``risks``: :func:`risk_sites` of the topology, likewise. ``storm=False``: the report's
    ``moved`` (who moves, the failback storm) instead of the registration storm at every survivor
    (the plan's element failures read only that: most of a single element's simulation is its storm).
    ``outcome``: ``eng.evaluate(<the failed elements>, detail=True)`` when the caller has it (for one
    whole site ``eng.evaluate_sites((site,), detail=True)`` is the same, from the engine's cached
    site state); ``known_storm``: the registration storm of this very failure with this engine, when
    the caller has it (the capacity report's of a site loss, ``Analysis.storms``)."""
    eng = engine or Engine(topology, exact_numbers=False)
    sites, elements = resolve_ids(topology, list(failed_ids), radius, risks)
    if outcome is None:
        outcome = eng.evaluate(elements, detail=True)
    failed = tuple(
        _failed_element(topology, eng, outcome, topology.elements[e])
        for e in sorted(elements, key=lambda x: (_type_order(topology.elements[x]), x))
    )
    # the groups of the failed elements, in inventory order (without walking every group)
    touched = {g.id: g for e in elements for g in topology.groups_of.get(e, [])}
    survivors = [
        (group.id, tuple(m for m in group.members if m not in elements))
        for group in sorted(touched.values(), key=lambda g: eng.group_pos[g.id])
    ]
    loads = []
    for el_id, after in sorted(outcome.loads.items()):
        if el_id in elements:
            continue
        x = eng.index[el_id]
        cap_x = eng.cap_after[x] if after > eng.normal[x] else eng.cap[x]
        cap = None if cap_x == math.inf else cap_x
        util = None if cap is None else after / cap
        status = "ok"
        if util is not None and util > 1 + 1e-9:
            status = "over capacity"
        elif util is not None and util > eng.limit[x] + 1e-9:
            status = "over limit"
        loads.append(
            LoadRow(
                el_id,
                eng.type_of[x],
                eng.model.unit.get(el_id, "users"),
                round(eng.normal[x], 3),
                round(after, 3),
                None if cap is None else round(cap, 3),
                None if util is None else round(util, 4),
                status,
                *_trunk_figures(topology, el_id, eng.model.unit.get(el_id), after),
            )
        )
    lns = []
    for ln_id in sorted(set(outcome.unserved_users) | set(outcome.unserved_erlangs)):
        ln = topology.local_networks[ln_id]
        lns.append(
            LocalNetworkImpact(
                ln_id,
                ln.subscribers,
                round(outcome.unserved_users.get(ln_id, 0.0), 1),
                float(ln.busy_hour_erlangs),
                round(outcome.unserved_erlangs.get(ln_id, 0.0), 3),
            )
        )
    return SimulationReport(
        network=topology.network.name,
        requested=tuple(failed_ids) + ((radius.label,) if radius is not None else ()),
        failed_sites=tuple(sites),
        failed=failed,
        survivors=tuple(survivors),
        loads=tuple(loads),
        local_networks=tuple(lns),
        unserved_by_service=tuple(sorted((k, round(v, 3)) for k, v in outcome.service_unserved.items())),
        unserved_users=round(outcome.users, 1),
        unserved_erlangs=round(outcome.erlangs, 3),
        switchover_s=outcome.switchover_s,
        switchover_from=outcome.worst_switchover_from,
        verdict=outcome.verdict,
        storm=(known_storm or registration_storm(topology, eng, outcome, storm_index)) if storm else None,
        moved=None if storm else moved_users(topology, eng, outcome, storm_index),
    )


_ORDER = ("sbc", "pcscf", "cscf", "hss", "slf", "dra", "enum_dns", "mgcf", "imgw", "as")


def _type_order(el: Element) -> int:
    t = el.type.value
    return _ORDER.index(t) if t in _ORDER else len(_ORDER)


def _failed_element(topology: Topology, eng: Engine, outcome: Outcome, el: Element) -> FailedElement:
    x = eng.index[el.id]
    t = el.type.value
    load = eng.normal[x]
    unit = eng.model.unit.get(el.id, "users")
    got = outcome.receivers.get(el.id, {})
    takers = tuple(sorted(got, key=lambda k: (-got[k], k)))
    unserved = outcome.no_takeover.get(el.id, 0.0)
    how = _how(topology, el, takers)
    if load <= 0:
        how = "carries no load normally (standby or unused): nothing needs to take over"
    sw = eng.switchovers[x] if (takers or load <= 0) and unserved <= 1e-9 else None
    impact, failback = _texts(topology, eng, outcome, el, takers, got)
    return FailedElement(
        el.id, t, el.site, round(load, 3), unit, takers, how, round(unserved, 3), sw, impact, failback
    )


def _how(topology: Topology, el: Element, takers: tuple[str, ...]) -> str:
    t = el.type.value
    names = ", ".join(takers) if takers else "nothing"
    if not takers:
        return "nothing takes over: no surviving peer in the design"
    if t == "sbc":
        dr = topology.dr_sbc_ids
        layout = (
            topology.inventory.redundancy.sbc_dr.layout if topology.inventory.redundancy.sbc_dr else "none"
        )
        kinds = [
            "DR SBC (" + layout + ")" if s in dr and s not in _local_peers(topology, el) else "local SBC"
            for s in takers
        ]
        return "UEs move to " + ", ".join(f"{s} [{k}]" for s, k in zip(takers, kinds, strict=True))
    if t == "pcscf":
        return f"the SBCs send users to the next P-CSCF in their lists: {names}"
    if t == "cscf":
        sel = [g.spec.selection for g in topology.groups_of.get(el.id, []) if g.kind == "pool"]  # type: ignore[union-attr]
        how = f"pool peers by {sel[0]} selection" if sel else "peers"
        return f"{how}: {names}"
    if t in ("hss", "slf"):
        return f"its mate takes over: {names}"
    if t == "enum_dns":
        return f"the other ENUM/DNS set answers: {names}"
    return f"peers take over: {names}"


def _local_peers(topology: Topology, el: Element) -> set[str]:
    out: set[str] = set()
    for ln in el.serves:
        out.update(s.id for s in topology.sbcs_of_ln.get(ln, []))
    return out


def _timer(topology: Topology, el: Element, name: str) -> int:
    value = getattr(el.timers, name, None)
    return int(value if value is not None else getattr(topology.network.timers, name))


def _trunk_figures(
    topology: Topology, el_id: str, unit: str | None, erlangs: float
) -> tuple[float | None, float | None]:
    """(blocking, occupancy) of ``erlangs`` offered to the circuits of the MGCF/IM-MGW ``el_id``:
    B = Erlang B(A, circuits) and A × (1 − B) / circuits (none for other elements)."""
    from imsdr.capacity.erlang import erlang_b
    from imsdr.capacity.load import ERLANGS

    circuits = topology.elements[el_id].capacity.circuits
    if unit != ERLANGS or not circuits:
        return None, None
    blocking = erlang_b(erlangs, circuits)
    return float(f"{blocking:.3g}"), round(erlangs * (1 - blocking) / circuits, 4)


def _texts(
    topology: Topology,
    eng: Engine,
    outcome: Outcome,
    el: Element,
    takers: tuple[str, ...],
    got: dict[str, float],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    t = el.type.value
    from imsdr.capacity.timing import registration_refresh

    refresh = registration_refresh(topology, el)
    session = topology.network.timers.session_timer
    names = ", ".join(takers) or "nothing"
    lost_calls = (
        f"calls in progress through {el.id} are lost; they are released by SIP session timers "
        f"({session} s) or the long-call audit"
    )
    charging = "charging: open records are closed by the CCF's long-call protection"
    impact: list[str] = []
    failback: list[str] = []
    # the access types of the users registered through it (a backup listing adds none): the fixed
    # refresh applies to fixed users only, PS users are restored by P-CSCF restoration (TS 23.380)
    kinds = access_types(topology, el, eng.access) if t in ("sbc", "pcscf") else ()
    if t == "sbc":
        impact += [
            lost_calls,
            *([f"registered fixed-access users cannot receive calls until they re-register via {names} "
               f"(up to the {refresh} s refresh)"] if "fixed" in kinds else []),
            f"new calls and registrations: the UE gets no answer and retries the next address in its "
            f"{'DNS answer' if 'fixed' in kinds else 'P-CSCF list'} ({names})",
            charging,
        ]
        for s in takers:
            other = topology.elements[s]
            if not other.has(_feature("virtual_sbc")) and s not in _local_peers(topology, el):
                impact.append(
                    f"{s} lacks virtual SBC support: P-Access-Network-Info and phone-context of "
                    f"{', '.join(el.serves)} are wrong (charging, emergency calls)"
                )
        if "fixed" in kinds:
            failback.append(
                f"Fixed-access UEs that resolve their proxy per request try {el.id} first again for a new call "
                f"or registration; the recovered {el.id} answers {_answer(topology)} to a UE not registered on "
                f"it, the UE re-registers and lands on {el.id}; RFC 5626 outbound UEs keep their flow and come "
                "back only at their next registration"
            )
        if "ps" in kinds:
            failback.append(_ps_failback(topology, el))
    elif t == "pcscf":
        impact += [
            lost_calls,
            *([f"terminating calls to fixed-access users still bound to {el.id} fail until they re-register "
               f"(up to the {refresh} s refresh)"] if "fixed" in kinds else []),
            f"new originating calls: the SBC sees {el.id} down, answers {_answer(topology)}, the UE "
            f"re-registers via {names}",
            charging,
        ]
        if "fixed" in kinds:
            failback.append(
                f"Fixed-access UEs that resolve their proxy per request: the SBC marks {el.id} available again "
                f"(OPTIONS); it answers {_answer(topology)} to users not registered there and the UE "
                f"re-registers onto it; RFC 5626 outbound UEs keep their flow and come back only at their "
                "next registration"
            )
        if "ps" in kinds:
            failback.append(_ps_failback(topology, el))
    elif t == "cscf" and is_scscf(el):
        if el.has(_feature("restoration_data")):
            impact.append(
                f"{names} fetch the users' restoration data (Path, Contact, authentication) from the HSS "
                "and serve originating and terminating calls at once"
            )
        else:
            impact.append(
                f"no restoration data: registered users move only when they re-register (up to "
                f"{refresh} s); terminating calls to them fail meanwhile; originating calls recover "
                f"through {_answer(topology)} → re-register"
            )
        impact += [lost_calls, charging]
        kept = ", ".join(
            f"{s} keeps +{fmt(got[s])} ({pct(outcome.loads.get(s, 0) / eng.cap[eng.index[s]])})"
            if eng.cap[eng.index[s]] != math.inf
            else f"{s} keeps +{fmt(got[s])}"
            for s in takers
        )
        failback.append(
            f"no failback: moved users stay until they de-register, so {el.id} returns nearly empty "
            f"and the load stays unbalanced{': ' + kept if kept else ''}"
        )
        if el.has(_feature("restoration_data")):
            failback.append(
                "the HSS arbitrates which S-CSCF owns a user, so users left on the recovered "
                f"{el.id} can be served again"
            )
    elif t in ("hss", "slf", "dra"):
        detection = diameter_detection(topology, el)
        hung = diameter_detection(topology, el, "application")
        pair = active_standby_pair(topology, el)
        standby = pair is not None and pair.members[0] != el.id
        if standby:
            active = pair.members[0]
            target = topology.inventory.recovery_targets.get(el.type)
            within = f"within {target.rto} s (recovery target of {t})" if target else "(no recovery target declared)"
            impact.append(
                f"redundancy lost: {active} serves alone, no Diameter client notices; restore {el.id} {within} "
                f"- until then the loss of {active} stops the service"
            )
        elif takers:
            sw = eng.switchovers[eng.index[el.id]]
            impact.append(
                f"Diameter clients (I-CSCF, S-CSCF, AS) detect a host or path loss in {detection.seconds} s "
                f"({detection.how}), a hung application in {hung.seconds} s ({hung.how}), and fail over to {names}"
                + (f"; {sw.formula()} with promotion and reconnection" if pair is not None else "")
            )
        elif t == "dra":
            impact.append(
                f"DRA pair lost: the Diameter clients of {_province_name(topology, el)} connect to "
                "their DRA pair only, so no Cx/Sh request reaches an HSS: registrations, re-registrations "
                "and terminating calls (LIR) fail until a DRA is back"
            )
        else:
            impact.append(f"{TYPE_LABELS[t]} unreachable: registrations and re-registrations fail")
        passthrough = eng.passthrough
        impact.append(
            "until the Diameter failover completes, S-CSCFs keep basic calls going on cached data "
            "(passthrough); services needing their own passthrough (e.g. one-number) fail"
            + (
                f"; passthrough configured on {', '.join(passthrough)}"
                if passthrough
                else "; no element declares passthrough"
            )
        )
        for group in topology.groups_of.get(el.id, []):
            if group.spec.sync == "periodic":
                interval = group.spec.backup_interval
                restore = group.spec.restore_time
                impact.append(
                    f"{group.id} syncs periodically: the backup serves only after restoring its latest copy"
                    + (f" ({restore} s)" if restore else " (restore_time not stated)")
                    + f"; RPO {interval} s: users provisioned or changed in the {interval} s before the "
                    "copy are unserved (registrations fail, profiles are stale) until the provisioning "
                    "system replays them"
                )
            elif group.spec.sync == "none":
                impact.append(f"{group.id} has no data sync: the backup holds no current data")
        if t == "dra":  # a relay: routes, no subscriber data
            failback.append(
                f"install {el.id}'s rendered diameter/ files and start it; its clients reconnect within "
                f"Tc ({topology.network.timers.diameter_reconnect} s) and share the load again (nothing to "
                "resynchronise: a DRA holds routes, not subscribers)"
            )
        else:
            failback.append(
                f"resynchronise {el.id} from {names if takers else 'backup'} before it serves again; "
                "switch back in a maintenance window"
            )
        if pair is not None and not standby:
            failback.append(
                f"swap the roles back: {el.id} returns as standby, the serving member is demoted, {el.id} "
                f"promotes and the clients reconnect to it: {failback_time(topology, el).formula()}"
            )
    elif t == "enum_dns":
        if takers:
            impact.append(
                f"resolvers time out on {el.id} and query {names}; answers stay the same (synchronised data)"
            )
        else:
            impact.append(
                "ENUM and IMS name resolution fail once cached answers expire (TTL): calls to E.164 "
                "numbers and new registrations fail"
            )
        failback.append(
            f"resynchronise {el.id} (sync mode: {topology.inventory.redundancy.enum_dns.sync or 'unset'}) "
            "and resume load sharing"
        )
    elif t in ("mgcf", "imgw"):
        impact += [
            f"PSTN calls in progress through {el.id} are lost",
            f"new PSTN calls go to {names}" if takers else "no PSTN interworking is left for this traffic",
            charging,
        ]
        h248 = topology.network.timers
        if t == "imgw":
            impact.append(
                f"the MGCFs detect the loss of {el.id} over H.248 (inactivity timer {h248.h248_inactivity} s, "
                f"ITU-T H.248.14, + {h248.h248_transaction_timeout} s transaction timeout), not by SIP OPTIONS"
            )
        else:
            for gw in topology.imgws_by_mgcf.get(el.id, []):
                backup = next((m for m in gw.controlled_by[1:] if m in topology.elements), None)
                impact.append(
                    f"IM-MGW {gw.id} notices its MGCF is gone when the H.248.14 inactivity timer "
                    f"({h248.h248_inactivity} s) expires and re-registers with "
                    + (f"its backup MGCF {backup} (H.248.1 ServiceChange)" if backup
                       else "no backup MGCF: its trunks stay idle")
                )
        failback.append(
            f"new calls return to {el.id} once OPTIONS marks it available; calls in progress stay"
        )
    else:
        impact += [
            lost_calls if t == "as" else f"sessions handled by {el.id} are lost",
            f"new sessions go to {names} after detection"
            if takers
            else "nothing takes over: the services it provides are unavailable",
        ]
        failback.append(f"new sessions return to {el.id} once it answers OPTIONS; existing ones stay")
    if t in ("sbc", "pcscf"):
        windows = access_windows(topology, el, eng.access)
        if "ps" in windows:
            mode = topology.network.restoration.pcscf_restoration
            if mode != "none":
                clause = ("HSS-based P-CSCF restoration (TS 23.380 §5.4)" if mode == "hss" else
                          "PCRF/PCF-based P-CSCF restoration (TS 23.380 §5.5)")
                impact.append(
                    f"PS (VoLTE) users are restored per user, at the first terminating request that fails, by "
                    f"{clause}: {windows['ps'].formula()} for that user; a user no terminating request reaches "
                    "moves at its own next registration")
            else:
                impact.append(
                    "PS (VoLTE) users have no P-CSCF restoration and stay unreachable for terminating calls "
                    f"until their registration expires: {windows['ps'].formula()}")
    return tuple(impact), tuple(failback)


def _ps_failback(topology: Topology, el: Element) -> str:
    """How PS users come back to a recovered SBC/P-CSCF: not by the restoration answer (their
    IPsec security associations, or RFC 5626 flow, stay with the element they registered through)."""
    return (f"PS (VoLTE) UEs keep their flow (IPsec security associations to the P-CSCF they registered "
            f"through): {_answer(topology)} does not move them; they come back to {el.id} at their next "
            "registration (the P-GW/SMF P-CSCF list puts it first again) or by P-CSCF restoration")


def _answer(topology: Topology) -> str:
    """How the configured restoration answer is written in impact lines."""
    mode = topology.network.restoration.scscf_restoration_response
    return "502" if mode == "502" else "504 with the 3GPP restoration body"


@cache
def _feature(name: str):  # type: ignore[no-untyped-def]
    """The Feature member ``name`` (looked up once per name: the Enum call is not free)."""
    from imsdr.inventory.schema import Feature

    return Feature(name)


def simulation_to_dict(report: SimulationReport) -> dict[str, Any]:
    """JSON data of a simulation (keys documented in docs/capacity.md)."""
    return {
        "network": report.network,
        "requested": list(report.requested),
        "failed_sites": list(report.failed_sites),
        "verdict": report.verdict,
        "loses_traffic": report.verdict != NO_LOSS,
        "switchover_s": report.switchover_s,
        "switchover_from": report.switchover_from,
        "unserved_users": report.unserved_users,
        "unserved_erlangs": report.unserved_erlangs,
        "unserved_by_service": dict(report.unserved_by_service),
        "storm": None if report.storm is None else storm_to_dict(report.storm),
        "failed": [failed_to_dict(f) for f in report.failed],
        "survivors": {gid: list(members) for gid, members in report.survivors},
        "loads": [
            {
                "id": r.id,
                "type": r.element_type,
                "unit": r.unit,
                "before": r.load_before,
                "after": r.load_after,
                "capacity": r.capacity,
                "utilisation": r.utilisation,
                "status": r.status,
                **({} if r.blocking is None else {"blocking": r.blocking, "occupancy": r.occupancy}),
            }
            for r in report.loads
        ],
        "local_networks": [
            {
                "id": ln.id,
                "subscribers": ln.subscribers,
                "unserved_users": ln.unserved_users,
                "busy_hour_erlangs": ln.busy_hour_erlangs,
                "unserved_erlangs": ln.unserved_erlangs,
            }
            for ln in report.local_networks
        ],
    }


def failed_to_dict(f: FailedElement) -> dict[str, Any]:
    """JSON data of one failed element (an entry of :func:`simulation_to_dict`'s ``failed``)."""
    return {
        "id": f.id,
        "type": f.element_type,
        "site": f.site,
        "load": f.load,
        "unit": f.unit,
        "takeover": list(f.takeover),
        "takeover_how": f.takeover_how,
        "unserved": f.unserved,
        "switchover": None
        if f.switchover is None
        else {
            "seconds": f.switchover.seconds,
            "parts": [
                {"name": p.name, "seconds": p.seconds, "how": p.how} for p in f.switchover.parts
            ],
        },
        "impact": list(f.impact),
        "failback": list(f.failback),
    }


def element_simulation(
    topology: Topology, element_id: str, engine: Engine, storm_index: StormIndex | None = None,
    risks: dict[str, dict[str, tuple[str, ...]]] | None = None, outcome: Outcome | None = None,
) -> tuple[FailedElement, str, MovedUsers]:
    """What ``simulate(topology, [element_id], engine, storm=False)`` reports of its failed element:
    that element (``report.failed[0]``), the verdict and who moves (``report.moved``), computed
    alike but without the survivors' load rows, the local networks and the other figures of the
    whole report (the plan's element pages read only these, for every element of the network).
    ``outcome``: ``engine.evaluate({element_id}, detail=True)`` when the caller has it already
    (``run_scenarios(…, element_outcomes=…)``)."""
    _sites, elements = resolve_ids(topology, [element_id], None, risks)  # (an ambiguous id: the same error)
    if outcome is None:
        outcome = engine.evaluate(elements, detail=True)
    failed = [
        _failed_element(topology, engine, outcome, topology.elements[e])
        for e in sorted(elements, key=lambda x: (_type_order(topology.elements[x]), x))
    ]
    return failed[0], outcome.verdict, moved_users(topology, engine, outcome, storm_index)


def _province_name(topology: Topology, el: Element) -> str:
    scope = topology.scope(el)
    return f"province {scope}" if scope else "the network"
