"""What the plan expects, published as series beside the live ones, so one rule per runbook page
watches every destination and peer (a rule per destination would be tens of thousands of rules
on a national network, each evaluated every interval).

* ``imsdr_dispatcher_destination_planned{source, element, page, detection_s} 1``: every
  destination of every SBC's and P-CSCF's dispatcher set, with the runbook page of the destination
  and the OPTIONS detection time of the source (interval × threshold + timeout);
* ``imsdr_dispatcher_source_planned{source} 1``: every SBC and P-CSCF with a set;
* ``imsdr_diameter_peer_expected{client, peer, page, for_s} 1``: every peer the plan expects a
  Diameter client (or DRA) to hold OPEN, with the page of the peer and 2 × Tw of the client.

``imsdr exporter`` and ``verify --format prometheus`` publish them from the same plan the rules
were rendered from (imsdr.monitoring.live_rules groups its rules by the same labels).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.monitoring.ruletext import Pages
from imsdr.runbook import alerts

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass(frozen=True, slots=True)
class PlannedDestination:
    source: str
    element: str
    page: str
    detection_s: str  # seconds, as text (a label value)
    formula: str


@dataclass(frozen=True, slots=True)
class ExpectedPeer:
    client: str
    peer: str
    page: str
    for_s: int  # 2 × Tw of the client
    tw: int


def planned_destinations(topology: Topology) -> list[PlannedDestination]:
    from imsdr.dns.dispatcher import dispatcher_sets, element_timers

    pages = Pages(topology)
    out = []
    for ds in dispatcher_sets(topology):
        interval, threshold, timeout = element_timers(topology, topology.elements[ds.source])
        seconds = interval * threshold + timeout
        formula = f"{interval} s × {threshold} + {timeout:g} s timeout = {seconds:g} s"
        out += [PlannedDestination(ds.source, d.element, pages.of(topology.elements[d.element]), f"{seconds:g}",
                                   formula) for d in ds.destinations]
    return out


def watchdog(topology: Topology, el: object) -> int:
    value = el.timers.diameter_watchdog  # type: ignore[attr-defined]
    return int(value if value is not None else topology.network.timers.diameter_watchdog)


def expected_peers(topology: Topology) -> list[ExpectedPeer]:
    pages = Pages(topology)
    out = []
    for client, peer in alerts.expected_open_peers(topology):
        tw = watchdog(topology, client)
        out.append(ExpectedPeer(client.id, peer.id, pages.of(peer), 2 * tw, tw))
    return out


def _line(name: str, labels: dict[str, str]) -> str:
    from imsdr.resolve.metrics import sample

    return sample(name, labels, 1)


def plan_exposition(topology: Topology) -> str:
    """The plan's expectations as Prometheus text (appended to the live exposition)."""
    destinations = planned_destinations(topology)
    lines = ["# HELP imsdr_dispatcher_destination_planned A destination of a dispatcher set in the plan.",
             "# TYPE imsdr_dispatcher_destination_planned gauge"]
    lines += [_line("imsdr_dispatcher_destination_planned", {"source": d.source, "element": d.element,
                                                             "page": d.page, "detection_s": d.detection_s})
              for d in destinations]
    lines += ["# HELP imsdr_dispatcher_source_planned An SBC or P-CSCF with a dispatcher set in the plan.",
              "# TYPE imsdr_dispatcher_source_planned gauge"]
    lines += [_line("imsdr_dispatcher_source_planned", {"source": s})
              for s in dict.fromkeys(d.source for d in destinations)]
    lines += ["# HELP imsdr_diameter_peer_expected A Diameter peer the plan expects the client to hold open.",
              "# TYPE imsdr_diameter_peer_expected gauge"]
    lines += [_line("imsdr_diameter_peer_expected", {"client": p.client, "peer": p.peer, "page": p.page,
                                                     "for_s": str(p.for_s)}) for p in expected_peers(topology)]
    return "\n".join(lines) + "\n"
