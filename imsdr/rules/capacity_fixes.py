"""What to do about a capacity shortfall, in one or two sentences with the numbers that matter.

The capacity report keeps every formula for audit (``imsdr capacity``, runbooks/capacity.md); a
finding's fix says what capacity is needed, what there is and how much to add. Each function
reads one check of :mod:`imsdr.capacity.report` and the network's ``max_utilisation``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from imsdr.capacity.formulas import fmt, pct

if TYPE_CHECKING:
    from imsdr.capacity.dimensions import DimensionCheck
    from imsdr.capacity.report import GroupCheck, HssCheck, SiteCheck, StormCheck, Takeover, TrunkCheck


def _needed(load: float, limit: float) -> float:
    """The capacity at which ``load`` sits exactly at ``limit``, rounded up to a whole unit."""
    return float(math.ceil(load / limit - 1e-9)) if limit > 0 else math.inf


def pool_fix(check: GroupCheck, limit: float) -> str:
    members, spare = len(check.members), check.spare
    survivors = members - spare
    known = [c for c in check.capacities if c]
    if survivors <= 0 or not known:
        return (f"{check.id} has {members} members and must survive losing {spare}: add members (with "
                "capacity) until some survive")
    each = check.load / survivors
    need = _needed(each, limit)
    smallest = min(known)
    more = max(math.ceil(check.load / (limit * smallest) - 1e-9) + spare - members, 1)
    return (f"After losing {spare} of its {members} members, each of the {survivors} survivors of {check.id} "
            f"carries {fmt(each)} {check.unit} ({fmt(check.load)} shared by {survivors}); at the {pct(limit)} limit "
            f"that needs a capacity of {fmt(need)} each (the smallest has {fmt(smallest)}). Raise each member "
            f"by {fmt(max(need - smallest, 0))}, or add {more} member{'s' if more != 1 else ''} of "
            f"{fmt(smallest)}.")


def pair_fix(check: GroupCheck, limit: float) -> str:
    known = [c for c in check.capacities if c]
    if not known:
        return f"give both sides of {check.id} a capacity: each must carry the pair's {fmt(check.load)} alone"
    smallest, need = min(known), _needed(check.load, limit)
    return (f"Each side of {check.id} must carry the pair's {fmt(check.load)} {check.unit} alone; at the "
            f"{pct(limit)} limit that needs a capacity of {fmt(need)} (the smallest side has {fmt(smallest)}): "
            f"raise it by {fmt(max(need - smallest, 0))}.")


def hss_fix(check: HssCheck, limit: float) -> str:
    if not check.capacity:
        return f"give {check.id} a capacity (subscribers)"
    need = _needed(check.required, limit)
    why = (f"{fmt(check.subscribers)} subscribers with restoration data and the failover of "
           f"{check.largest_scscf or 'the largest S-CSCF'} ({fmt(check.largest_scscf_users)} users)")
    return (f"{check.id} must hold {fmt(check.required)} subscriber-equivalents ({why}); at the {pct(limit)} "
            f"limit that needs a capacity of {fmt(need)} subscribers per side (it has {fmt(check.capacity)}): "
            f"raise it by {fmt(max(need - check.capacity, 0))}.")


def trunk_fix(check: TrunkCheck) -> str:
    short = [(m, "normally") for m in check.normal if not m.ok]
    if check.worst_site:
        short += [(m, f"with {check.worst_site} lost") for m in check.after_site if not m.ok]
    if not short:
        return f"{check.id} needs {fmt(check.total_needed)} circuits in all for {fmt(check.erlangs)} Erlangs"
    parts = [f"{m.id} carries {fmt(m.erlangs)} Erlangs {when} and needs {fmt(m.needed)} circuits, it has "
             f"{fmt(m.circuits) if m.circuits is not None else 'none'}: add "
             f"{fmt(max(m.needed - (m.circuits or 0), 0))}" for m, when in short]
    return "; ".join(parts) + "."


def takeover_fix(check: Takeover, limit: float) -> str:
    if not check.takers:
        return (f"nothing takes over the {fmt(check.load)} users of {check.failed}: give it a DR "
                f"{'SBC' if check.element_type == 'sbc' else 'P-CSCF'} in another site")
    parts = []
    for taker, after, capacity, util in check.takers:
        if capacity is None or util is None or util <= limit + 1e-9:
            continue
        need = _needed(after, limit)
        parts.append(f"When {check.failed} fails, {taker} carries {fmt(after)} users of its {fmt(capacity)} "
                     f"({pct(util)}); at the {pct(limit)} limit it needs {fmt(need)}: raise it by "
                     f"{fmt(need - capacity)}, or give part of {check.failed}'s users another DR element")
    if check.unserved > 1e-6:
        parts.append(f"{fmt(check.unserved)} users of {check.failed} are taken over by nothing: add a DR element")
    return ("; ".join(parts) or f"the elements taking over {check.failed} need more capacity") + "."


def site_fix(check: SiteCheck, limit: float) -> str:
    if check.unit == "erlangs":  # trunks: Erlang B already holds the grade of service (Engine.limit)
        limit = 1.0
    if not check.surviving_capacity:
        return (f"with {check.site} lost no {check.element_type} survives to carry {fmt(check.load)} "
                f"{check.unit}: place one in another site")
    need = _needed(check.load, limit)
    fix = (f"With {check.site} lost, the surviving {check.element_type} elements carry {fmt(check.load)} "
           f"{check.unit} on {fmt(check.surviving_capacity)} ({pct(check.utilisation or 0)}); at the "
           f"{pct(limit)} limit they need {fmt(need)}: add {fmt(max(need - check.surviving_capacity, 0))} in "
           "other sites")
    if check.worst_element and check.worst_utilisation and check.worst_utilisation > limit:
        fix += f" (the busiest, {check.worst_element}, runs at {pct(check.worst_utilisation)})"
    return fix + "."


def storm_fix(check: StormCheck) -> str:
    who = check.bottleneck or (check.overloaded[0] if check.overloaded else "the busiest element")
    drain = "never, with no capacity left" if check.drain_s is None else f"after {fmt(round(check.drain_s))} s"
    return (f"After losing {check.scenario.split(':', 1)[1]}, {fmt(check.moved_users)} users re-register at up "
            f"to {fmt(check.registrations_per_second)} registrations/s ({fmt(check.sustained_registrations_per_second)}"
            f"/s sustained over {fmt(check.window_s)} s) and {who} is the bottleneck (everyone registered "
            f"{drain}): raise its registrations_per_second/transactions_per_second, or pace re-registration "
            "(restoration, SBC-driven) to lower the peak.")


def dimension_fix(check: DimensionCheck, limit: float) -> str:
    when = f"with {check.worst_scenario} lost" if check.worst_scenario else "normally"
    need = _needed(check.worst, limit)
    return (f"{check.id} has {fmt(check.worst)} {check.dimension.replace('_', ' ')} to handle {when} on a "
            f"capacity of {fmt(check.capacity)} ({pct(check.utilisation)}); at the {pct(limit)} limit it needs "
            f"{fmt(need)}: raise capacity.{check.dimension} by {fmt(max(need - check.capacity, 0))}.")
