"""Traffic: the registration storm of every site and region loss against the SBC, P-CSCF, CSCF
and HSS rate capacities (``imsdr.capacity.storm``); sessions, Diameter transactions and ENUM/DNS
queries per second normally and in those losses (``imsdr.capacity.dimensions``); the capacities
missing for those rates, and those given but never checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import FAIL, OK, CapacityCheck, CheckInputs
from imsdr.capacity.formulas import fmt, pct

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.capacity.storm import Storm, StormIndex
    from imsdr.model.topology import Topology


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


def _scenarios(losses: dict[str, Outcome]) -> list[tuple[str, Outcome]]:
    """Every site and service-region loss (not the power feeds and routes), in evaluation order."""
    return [(label, outcome) for label, outcome in losses.items() if label.startswith(("site:", "region:"))]


def _storm_checks(topology: Topology, eng: Engine, losses: dict[str, Outcome], index: StormIndex,
                  kept: dict[str, Storm] | None = None) -> list[StormCheck]:
    """The registration storm of every site and region loss that moves or restores users;
    ``kept``, when given, gets every one of those losses' storms by scenario label."""
    from imsdr.capacity.storm import registration_storm

    scenarios = _scenarios(losses)
    storms = []
    for label, outcome in scenarios:
        storm = registration_storm(topology, eng, outcome, index)
        if kept is not None:
            kept[label] = storm
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
    return storms


def _dimensions(inputs: CheckInputs) -> list[object]:
    from imsdr.capacity.dimensions import dimension_checks

    return list(dimension_checks(inputs.topology, inputs.eng, _scenarios(inputs.losses), inputs.storm_index))


def _missing(inputs: CheckInputs) -> list[object]:
    from imsdr.capacity.dimensions import missing_dimensions

    return list(missing_dimensions(inputs.topology, inputs.eng))


def _unchecked(inputs: CheckInputs) -> list[object]:
    from imsdr.capacity.dimensions import unchecked_capacities

    return list(unchecked_capacities(inputs.topology))


CHECKS = [
    CapacityCheck(
        "storms",
        "the registration storm of each site or region loss overloads no SBC, P-CSCF, CSCF or HSS",
        lambda inputs: _storm_checks(inputs.topology, inputs.eng, inputs.losses, inputs.storm_index, inputs.storms),
        lab_shown=True,
    ),
    CapacityCheck(
        "dimensions",
        "sessions, Diameter transactions and ENUM/DNS queries per second stay within the rate "
        "capacities, normally and with each site or region lost",
        _dimensions,
    ),
    CapacityCheck(
        "missing",
        "the elements that receive a checked rate but give no capacity for it",
        _missing,
    ),
    CapacityCheck(
        "unchecked",
        "the capacity fields given that no check reads",
        _unchecked,
    ),
]
