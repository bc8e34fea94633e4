"""The names of the alerts ``render monitoring`` writes, as the runbook pages name them.

The Declare step of an element's page says which alert fires when the element fails; the rule
files (imsdr.monitoring) use these same names, so the page and the alert cannot disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

DNS_DRIFT = "ImsdrDnsDrift"
DNS_SERVER_DOWN = "ImsdrDnsServerDown"
DNS_PROBE_FAILED = "ImsdrDnsProbeFailed"
DNS_SERIALS_DIFFER = "ImsdrDnsSerialsDiffer"
DNS_VIEW_UNMONITORED = "ImsdrDnsViewNotMonitored"
VERIFY_FAILED = "ImsdrVerifyFailed"
DISPATCHER_DOWN = "ImsdrDispatcherDestinationDown"
DISPATCHER_UNKNOWN = "ImsdrDispatcherStateUnknown"
DIAMETER_PEER_NOT_OPEN = "ImsdrDiameterPeerNotOpen"
HEADROOM_LOST = "ImsdrFailureHeadroomLost"


def standby_servers(topology: Topology) -> set[str]:
    """The standby member of every active-standby pair: it refuses Diameter connections until
    promoted (imsdr.diameter), so no client is expected to hold it open and no alert watches it."""
    out: set[str] = set()
    for grp in topology.groups.values():
        if grp.kind == "pair" and getattr(grp.spec, "mode", None) == "active-standby" and len(grp.members) == 2:
            out.add(grp.members[1])
    return out


def labelled(alert: str, **labels: str) -> str:
    """An alert as the Declare step names it: ``Name{label="value", ...}`` (a PromQL selector
    of the ALERTS series in Prometheus)."""
    return alert + "{" + ", ".join(f'{key}="{value}"' for key, value in labels.items()) + "}"


def expected_open_peers(topology: Topology) -> list[tuple[Element, Element]]:
    """(client, peer) for every Diameter peer the plan expects OPEN: every peer of each client's
    and DRA's peering except the standby member of an active-standby pair (it refuses the
    connection until promoted)."""
    from imsdr.diameter import client_peering, diameter_clients, dra_peering, provinces

    standby = standby_servers(topology)
    plan = provinces(topology)
    if not plan:
        return []
    out: list[tuple[Element, Element]] = []
    clients = diameter_clients(topology)
    per_site: dict[str, int] = {}
    for client in clients:
        index = per_site.get(client.site, 0)
        per_site[client.site] = index + 1
        peering = client_peering(topology, client, plan, index)
        if peering is not None:
            out += [(client, peer) for peer in peering.peers if peer.id not in standby]
    for dra in sorted(topology.by_type.get("dra", []), key=lambda e: e.id):
        out += [(dra, peer) for peer in dra_peering(topology, dra, plan, clients).peers if peer.id not in standby]
    return out
