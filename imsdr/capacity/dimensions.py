"""Every capacity dimension an element type needs, checked on the loads of the one load model.

The load model routes *users*; the other dimensions follow from the users an element carries:

* **sessions** (SBC, P-CSCF, CSCF, AS) against busy-hour Erlangs: an element carrying ``u`` users
  carries ``u × E/S`` Erlangs (an AS ``× as_session_share``, the share of calls holding an AS
  session) (the network's busy-hour Erlangs ``E`` over its subscribers ``S``),
  i.e. that many simultaneous sessions on average in the busy hour. For the large groups of an
  IMS core Erlang B needs only a few per cent above the mean (60,000 E at 1% needs 60,000 + ~0.5%),
  which ``max_utilisation`` covers; so sessions are held to Erlangs ≤ sessions × max_utilisation.
* **queries per second** (ENUM/DNS): ``u × (BHCA × q_call / 3,600 + q_reg / refresh)`` — busy-hour
  call attempts per subscriber (``busy_hour_call_attempts``) times the queries one call attempt
  causes at the servers (``dns_queries_per_call_attempt``), plus one registration refresh per
  user per refresh period times ``dns_queries_per_registration``.
* **Diameter transactions per second** (HSS, SLF, DRA) in the background: the subscribers an
  HSS/SLF serves × the per-subscriber rate of ``storm.background_per_user`` (re-registration UAR,
  + SAR with restoration data, per refresh interval; LIR per terminating call), normally and with
  the subscribers it serves in each site and region loss (the storm comes on top, ``storm.py``).
  A DRA relays every Cx/Sh request of its province's clients: the subscribers it serves × the
  HSS's rate.

Each is checked normally and in every site and region loss (the loads the scenarios compute).
The registration and Diameter rates of a failure are the registration storm (``storm.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.capacity.storm import StormIndex
    from imsdr.model.topology import Topology

REGISTRATION_RATE = ("registrations_per_second", "register_transactions_per_second")  # either sizes the storm
#: capacity fields each element type's checks read; any other field given is never checked
CHECKED: dict[str, frozenset[str]] = {
    "sbc": frozenset({"registered_users", "sessions", *REGISTRATION_RATE}),
    "pcscf": frozenset({"registered_users", "sessions", *REGISTRATION_RATE}),
    "cscf": frozenset({"registered_users", "sessions", *REGISTRATION_RATE}),
    "hss": frozenset({"subscribers", "registered_users", "transactions_per_second"}),
    "slf": frozenset({"subscribers", "registered_users", "transactions_per_second"}),
    "dra": frozenset({"transactions_per_second"}),
    "mgcf": frozenset({"circuits", "busy_hour_erlangs"}),
    "imgw": frozenset({"circuits", "busy_hour_erlangs"}),
    "as": frozenset({"sessions"}),
    "enum_dns": frozenset({"queries_per_second"}),
}
#: dimensions an element of each type needs to be sized (any one of a tuple will do)
NEEDED: dict[str, tuple[tuple[str, ...], ...]] = {
    "sbc": (("registered_users",), ("sessions",), REGISTRATION_RATE),
    "pcscf": (("registered_users",), REGISTRATION_RATE),
    "cscf": (("registered_users",), ("sessions",), REGISTRATION_RATE),
    "hss": (("subscribers", "registered_users"), ("transactions_per_second",)),
    "slf": (("subscribers", "registered_users"), ("transactions_per_second",)),
    "dra": (("transactions_per_second",),),
    "mgcf": (("circuits", "busy_hour_erlangs"),),
    "imgw": (("circuits", "busy_hour_erlangs"),),
    "as": (("sessions",),),
    "enum_dns": (("queries_per_second",),),
}
SESSION_TYPES = ("sbc", "pcscf", "cscf", "as")


@dataclass(frozen=True)
class DimensionCheck:
    id: str
    element_type: str
    dimension: str  # sessions | queries_per_second | transactions_per_second
    per_user: float  # Erlangs, queries or Diameter transactions per second one user brings
    normal: float
    worst: float
    worst_scenario: str | None  # None: the normal load is the worst
    capacity: float
    utilisation: float  # worst / capacity
    verdict: str  # ok | fail
    formula: str
    message: str


def erlangs_per_user(eng: Engine) -> float:
    subs = eng.model.subscribers
    return float(eng.model.erlangs_total) / subs if subs else 0.0


def queries_per_user(topology: Topology) -> float:
    """ENUM/DNS queries per second one registered user brings in the busy hour."""
    cm = topology.network.capacity_model
    from imsdr.capacity.timing import refresh_interval

    refresh = refresh_interval(topology).seconds
    return (cm.busy_hour_call_attempts * cm.dns_queries_per_call_attempt / 3600
            + cm.dns_queries_per_registration / refresh)


def dimension_checks(
    topology: Topology, eng: Engine, scenarios: list[tuple[str, Outcome]], storm_index: StormIndex | None = None
) -> list[DimensionCheck]:
    """Sessions against Erlangs and DNS queries against the query model, normally and in each of
    ``scenarios`` (label, outcome), for every element that gives the capacity; ``storm_index``:
    the engine's :class:`StormIndex`, when the caller has built it already."""
    from imsdr.capacity.formulas import fmt, pct
    from imsdr.capacity.storm import DIAMETER_SERVICES, StormIndex, background_per_user, subscribers_served

    erl = erlangs_per_user(eng)
    qpu = queries_per_user(topology)
    diameter = background_per_user(topology)
    index = (storm_index or StormIndex(eng)) if any(el.capacity.transactions_per_second for t in DIAMETER_SERVICES
                                   for el in topology.by_type.get(t, [])) else None
    cm = topology.network.capacity_model
    # each element's highest load over the scenarios, first scenario on a tie (one pass over the
    # elements whose load each scenario changes, not over every element per scenario)
    peak: dict[str, tuple[float, str]] = {}
    for label, outcome in scenarios:
        failed = set(outcome.failed)
        for el_id, load in outcome.loads.items():
            if el_id in failed:
                continue
            best = peak.get(el_id)
            if best is None or load > best[0] + 1e-9:
                peak[el_id] = (load, label)
    # each scenario's assignment, built once and shared by every HSS/SLF (not per element), with
    # the flows it may assign otherwise than normally: an element none of whose flows is among
    # them serves exactly its normal subscribers there (a province's loss touches its own HSSs)
    scenario_parts = [(label, outcome, _parts_of(eng, outcome)) for label, outcome in scenarios] \
        if index is not None else []
    touching = _touching(eng, index, scenarios) if index is not None else {}
    out: list[DimensionCheck] = []
    for el in topology.elements.values():
        t = el.type.value
        if t in SESSION_TYPES and el.capacity.sessions:
            share = cm.as_session_share if t == "as" else 1.0  # not every call holds an AS session
            dimension, per_user, capacity, unit = "sessions", erl * share, float(el.capacity.sessions), "E"
        elif t in DIAMETER_SERVICES and el.capacity.transactions_per_second:
            dimension, unit = "transactions_per_second", "Diameter/s"
            per_user = diameter.dx if t == "slf" else diameter.cx  # a DRA relays the HSS's Cx
            capacity = float(el.capacity.transactions_per_second)
            x = eng.index[el.id]
            normal = subscribers_served(eng, index, x, lambda i: eng.normal_assign[i][0]) * per_user
            worst, worst_scenario = normal, None
            for k in touching.get(x, ()):  # (elsewhere: the normal value, never above the worst so far)
                label, outcome, parts = scenario_parts[k]
                if el.id in outcome.failed:
                    continue
                value = subscribers_served(eng, index, x, parts) * per_user
                if value > worst * (1 + 1e-9) + 1e-6:  # more subscribers, not float noise
                    worst, worst_scenario = value, label
            limit = eng.max_util
            formula = (f"{fmt(worst / per_user if per_user else 0)} subscribers × ({diameter.formula}) = "
                       f"{fmt(round(worst, 2))} Diameter/s vs {fmt(capacity)} × {pct(limit)}")
            when = "in normal operation" if worst_scenario is None else f"when {worst_scenario} is lost"
            message = (f"{el.id}: {fmt(round(worst, 1))} {unit} {when} before any storm, {pct(worst / capacity)} of "
                       f"its {fmt(capacity)} transactions per second (limit {pct(limit)})")
            ok = worst <= capacity * limit + 1e-9
            out.append(DimensionCheck(
                el.id, t, dimension, round(per_user, 8), round(normal, 3), round(worst, 3), worst_scenario,
                capacity, round(worst / capacity, 4), "ok" if ok else "fail", formula, message,
            ))
            continue
        elif t == "enum_dns" and el.capacity.queries_per_second:
            dimension, per_user, unit = "queries_per_second", qpu, "qps"
            capacity = float(el.capacity.queries_per_second)
        else:
            continue
        x = eng.index[el.id]
        users_per_load = eng.users_per_load.get(x, 1.0)
        normal = eng.normal[x] * users_per_load * per_user
        worst, worst_scenario = normal, None
        if el.id in peak:
            load, label = peak[el.id]
            value = load * users_per_load * per_user
            if value > worst + 1e-9:
                worst, worst_scenario = value, label
        limit = eng.max_util
        ok = worst <= capacity * limit + 1e-9
        if dimension == "sessions":
            formula = (f"{fmt(worst / per_user if per_user else 0)} users × {fmt(per_user, 5)} E/user = "
                       f"{fmt(worst)} E vs {fmt(capacity)} sessions × {pct(limit)}")
        else:
            formula = (f"{fmt(worst / per_user if per_user else 0)} users × ({fmt(cm.busy_hour_call_attempts)} "
                       f"BHCA × {fmt(cm.dns_queries_per_call_attempt)} / 3,600 + "
                       f"{fmt(cm.dns_queries_per_registration)} / {refresh_of(topology)} s)"
                       f" = {fmt(worst)} qps vs {fmt(capacity)} × {pct(limit)}")
        when = "in normal operation" if worst_scenario is None else f"when {worst_scenario} is lost"
        message = (f"{el.id}: {fmt(round(worst, 1))} {unit} {when}, {pct(worst / capacity)} of its "
                   f"{fmt(capacity)} {dimension.replace('_', ' ')} (limit {pct(limit)})")
        out.append(DimensionCheck(
            el.id, t, dimension, round(per_user, 8), round(normal, 3), round(worst, 3), worst_scenario,
            capacity, round(worst / capacity, 4), "ok" if ok else "fail", formula, message,
        ))
    return out


def missing_dimensions(topology: Topology, eng: Engine) -> list[tuple[str, str, tuple[str, ...]]]:
    """(element, type, missing field names) for loaded elements lacking a needed dimension."""
    out = []
    for el in topology.elements.values():
        t = el.type.value
        x = eng.index[el.id]
        if eng.normal[x] <= 0 or t not in NEEDED:
            continue
        # an I-CSCF/E-CSCF/BGCF only: no users held
        needed = (("sessions",), REGISTRATION_RATE) if t == "cscf" and x not in eng.users_per_load else NEEDED[t]
        for options in needed:
            if not any(getattr(el.capacity, f) for f in options):
                out.append((el.id, t, options))
    return out


def unchecked_capacities(topology: Topology) -> list[tuple[str, str, str]]:
    """(element, type, field) for every capacity given that no check of its type reads."""
    out = []
    for el in topology.elements.values():
        t = el.type.value
        for name in type(el.capacity).model_fields:
            if getattr(el.capacity, name) is not None and name not in CHECKED.get(t, frozenset()):
                out.append((el.id, t, name))
    return out


def refresh_of(topology: Topology) -> str:
    """The network's refresh interval with its basis, as the query model's formula shows it."""
    from imsdr.capacity.timing import refresh_interval

    refresh = refresh_interval(topology)
    return f"{refresh.seconds} ({refresh.basis})"


def _touching(eng: Engine, index: StormIndex, scenarios: list[tuple[str, Outcome]]) -> dict[int, list[int]]:
    """HSS/SLF/DRA element → the indexes (ascending) of the ``scenarios`` whose assignment
    (``_parts_of``) may differ from the normal one at one of its flows: the flows the outcome
    assigned and those its failed elements can reach. Every other flow a scenario answers with
    the normal assignment, so there the element serves exactly its normal subscribers."""
    reaching: dict[int, list[int]] = {}  # HSS/SLF/DRA flow → the elements it can reach
    for x, flows in enumerate(eng.flows_of):
        for i in flows:
            if i in index.diameter_set:
                reaching.setdefault(i, []).append(x)
    out: dict[int, list[int]] = {}
    for k, (_label, outcome) in enumerate(scenarios):
        changed = set(outcome.assignments) | eng.affected_flows(eng.index[e] for e in outcome.failed)
        for x in {x for i in changed & index.diameter_set for x in reaching.get(i, ())}:
            out.setdefault(x, []).append(k)
    return out


def _parts_of(eng: Engine, outcome: Outcome):  # type: ignore[no-untyped-def]
    """The assignment of each flow in ``outcome``: the engine's own for the flows it touched
    (each other affected flow assigned once, however many elements ask for it)."""
    failed = {eng.index[e] for e in outcome.failed}
    assignments = outcome.assignments
    affected: set[int] | None = None
    assigned: dict[int, list[tuple[int, float]]] = {}

    def parts(i: int) -> list[tuple[int, float]]:
        nonlocal affected
        got = assignments.get(i)
        if got is not None:
            return got
        if affected is None:
            affected = eng.affected_flows(failed)
        if i not in affected:
            return eng.normal_assign[i][0]
        got = assigned.get(i)
        if got is None:
            got = assigned[i] = eng._assign(i, failed)[0]
        return got

    return parts
