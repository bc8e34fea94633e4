"""The availability model's inputs: MTBF/MTTR per element and the shared-risk events.

Each element resolves its MTBF and MTTR from the most specific setting: ``availability.elements``
(by id), ``groups`` (its first pair or pool), ``platforms`` (its ``platform`` key), ``types``, then
the planning defaults below (docs/domain.md: planning defaults, to be replaced with field data).
Every basic event is an alternating renewal process (up for a mean MTBF, down for a mean MTTR):
its steady-state unavailability is ``q = MTTR / (MTBF + MTTR)`` and it starts ``f = 1 / (MTBF +
MTTR)`` outages per hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

HOURS_PER_YEAR = 8766.0  # 365.25 days
MINUTES_PER_YEAR = HOURS_PER_YEAR * 60  # 525,960

#: element type → (MTBF hours, MTTR hours): planning defaults (docs/domain.md "Availability inputs")
DEFAULT_RELIABILITY: dict[str, tuple[float, float]] = {
    "sbc": (50_000.0, 4.0), "pcscf": (40_000.0, 2.0), "cscf": (40_000.0, 2.0), "hss": (60_000.0, 4.0),
    "slf": (60_000.0, 4.0), "enum_dns": (80_000.0, 2.0), "mgcf": (50_000.0, 4.0), "imgw": (60_000.0, 4.0),
    "as": (40_000.0, 2.0), "dra": (60_000.0, 2.0),
}
#: shared-risk kind → (events per year, duration hours): planning defaults (docs/domain.md)
DEFAULT_RISK_EVENTS: dict[str, tuple[float, float]] = {
    "site": (0.05, 12.0), "power": (0.1, 4.0), "route": (0.2, 8.0), "region": (0.01, 48.0),
}
RISK_ORDER = ("site", "power", "route", "region")


@dataclass(frozen=True, slots=True)
class BasicEvent:
    """One thing that fails on its own: an element, or a shared risk taking down its sites."""

    id: str  # element:<id>, site:<id>, power:<id>, route:<id>, region:<id>
    kind: str  # element | site | power | route | region
    mtbf_hours: float  # mean time up between events
    mttr_hours: float  # mean time down per event
    elements: tuple[int, ...]  # the failure engine's element indices it takes down
    source: str  # where the figures came from: default | types | platforms | groups | elements | shared_risks

    @property
    def unavailability(self) -> float:
        return self.mttr_hours / (self.mtbf_hours + self.mttr_hours)

    @property
    def per_year(self) -> float:
        """Outages started per year (steady state)."""
        return HOURS_PER_YEAR / (self.mtbf_hours + self.mttr_hours)


def element_reliability(topology: Topology, element_id: str) -> tuple[float, float, str]:
    """(MTBF, MTTR, source) of one element, from the most specific setting."""
    settings = topology.inventory.availability
    el = topology.elements[element_id]
    if element_id in settings.elements:
        r = settings.elements[element_id]
        return r.mtbf_hours, r.mttr_hours, "elements"
    for group in topology.groups_of.get(element_id, []):
        if group.id in settings.groups:
            r = settings.groups[group.id]
            return r.mtbf_hours, r.mttr_hours, "groups"
    if el.platform is not None and el.platform in settings.platforms:
        r = settings.platforms[el.platform]
        return r.mtbf_hours, r.mttr_hours, "platforms"
    if el.type in settings.types:
        r = settings.types[el.type]
        return r.mtbf_hours, r.mttr_hours, "types"
    mtbf, mttr = DEFAULT_RELIABILITY[el.type.value]
    return mtbf, mttr, "default"


def risk_events(topology: Topology, kind: str) -> tuple[float, float, str]:
    """(events per year, duration hours, source) of one shared-risk kind."""
    settings = topology.inventory.availability.shared_risks
    if kind in settings:
        return settings[kind].rate_per_year, settings[kind].duration_hours, "shared_risks"  # type: ignore[index]
    rate, hours = DEFAULT_RISK_EVENTS[kind]
    return rate, hours, "default"


def basic_events(topology: Topology, index: dict[str, int]) -> list[BasicEvent]:
    """Every element, then every site, power feed, transmission route and region (inventory or id
    order), each with the element indices (``index``: element id → engine index) it takes down.
    A kind with a zero event rate contributes no events."""
    from imsdr.model.risk import shared_risks

    events: list[BasicEvent] = []
    for element_id in topology.elements:
        mtbf, mttr, source = element_reliability(topology, element_id)
        events.append(BasicEvent(f"element:{element_id}", "element", mtbf, mttr, (index[element_id],), source))
    at_sites = {s: tuple(index[e.id] for e in topology.by_site.get(s, [])) for s in topology.sites}
    groups: list[tuple[str, str, tuple[str, ...]]] = [("site", s, (s,)) for s in topology.sites]
    groups += [(r.kind, r.id, r.sites) for r in shared_risks(topology)]
    for kind, ident, sites in groups:
        rate, hours, source = risk_events(topology, kind)
        if rate <= 0:
            continue
        elements = tuple(sorted({x for s in sites for x in at_sites[s]}))
        if elements:
            events.append(BasicEvent(f"{kind}:{ident}", kind, HOURS_PER_YEAR / rate, hours, elements, source))
    return events
