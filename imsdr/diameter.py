"""Diameter peer and realm-route configuration for every Diameter client, as freeDiameter files.

Each I-CSCF, S-CSCF and AS is a Diameter client of the HSS (Cx/Sh) and of the SLF. For each
client imsdr writes ``<client>/freeDiameter.conf`` (identity, realm, watchdog Tw, one
``ConnectPeer`` per HSS/SLF with all its addresses) and ``<client>/rt_default.conf`` (realm
routes: messages for the home realm go to the preferred HSS first; for an active-standby pair the
standby scores lower, for active-active both score the same). The SLF answers as a redirect agent
(RFC 6733 §6.1.7/§6.13; TS 29.228 §6.6 Dx), so clients load ``rt_redirect.fdx`` to follow its
Redirect-Host answers. TLS credentials are referenced under ``tls/`` next to the file: the
operator installs them; imsdr never writes keys.

Every value written comes from validated inventory fields (DNS names, IP addresses, integers).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.load import is_scscf

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

DIAMETER_PORT = 3868
DIAMETER_TLS_PORT = 5868
PRIMARY_SCORE, SECONDARY_SCORE = 100, 50


@dataclass(frozen=True, slots=True)
class ClientConfig:
    client: str
    files: dict[str, str]  # relative file name -> text


def diameter_clients(topology: Topology) -> list[Element]:
    """I-CSCFs, S-CSCFs and ASs: the elements that talk Diameter to the HSS/SLF."""
    out = []
    for el in sorted(topology.elements.values(), key=lambda e: e.id):
        if el.type.value == "as" or (el.type.value == "cscf" and (is_scscf(el) or el.has_role(_icscf()))):
            out.append(el)
    return out


def _scores(topology: Topology, servers: list[Element]) -> dict[str, int]:
    """Route score per HSS/SLF: the standby of an active-standby pair scores lower."""
    scores = {s.id: PRIMARY_SCORE for s in servers}
    for server in servers:
        for group in topology.groups_of.get(server.id, []):
            if getattr(group.spec, "mode", None) == "active-standby" and group.members[0] != server.id:
                scores[server.id] = SECONDARY_SCORE
    return scores


def _peer(topology: Topology, server: Element, tw: int) -> str:
    connect = " ".join(f'ConnectTo = "{a}";' for a in server.addresses)
    # no Port: the peer is reached over TLS on the RFC 6733 secure port (SecPort, 5868)
    return f'ConnectPeer = "{topology.fqdn(server)}" {{ {connect} TwTimer = {tw}; }};'


@dataclass
class _Servers:
    """The HSS/SLF side, the same for every client: built once per run, not once per client
    (a national network has ~1,900 clients and ~600 HSS/SLF)."""

    topology: Topology
    hss: list[Element]
    slf: list[Element]
    routes: list[str]  # rt_default.conf's route lines
    peers: dict[int, list[str]]  # watchdog Tw -> the ConnectPeer lines

    @classmethod
    def of(cls, topology: Topology) -> _Servers:
        hss = sorted(topology.by_type.get("hss", []), key=lambda e: e.id)
        slf = sorted(topology.by_type.get("slf", []), key=lambda e: e.id)
        realm = topology.network.primary_domain
        scores = _scores(topology, hss)
        routes = [f'dr="{realm}" : "{topology.fqdn(s)}" += {scores[s.id]} ;' for s in hss]
        return cls(topology, hss, slf, routes, {})

    def peer_lines(self, tw: int) -> list[str]:
        lines = self.peers.get(tw)
        if lines is None:
            lines = self.peers[tw] = [_peer(self.topology, s, tw) for s in [*self.hss, *self.slf]]
        return lines


def client_config(topology: Topology, client: Element, servers: _Servers | None = None) -> ClientConfig:
    net = topology.network
    servers = servers or _Servers.of(topology)
    tw = client.timers.diameter_watchdog or net.timers.diameter_watchdog
    realm = net.primary_domain
    lines = [
        f"# freeDiameter configuration of {client.id}, rendered by imsdr from the DR design:",
        "# peers are the HSS/SLF members, routes prefer the active member (rt_default.conf).",
        f'Identity = "{topology.fqdn(client)}";',
        f'Realm = "{realm}";',
        f"Port = {DIAMETER_PORT};",
        f"SecPort = {DIAMETER_TLS_PORT};",
        f"TwTimer = {tw};  # RFC 3539 watchdog; failover after 2 x Tw without answers",
        "TcTimer = 30;",
    ]
    if net.timers.diameter_transport.sctp_heartbeat is None:
        lines.append("No_SCTP;  # TCP: no SCTP heartbeat is declared (network.timers.diameter_transport)")
    lines += [f'ListenOn = "{a}";' for a in client.addresses]
    lines += [
        f'TLS_Cred = "tls/{client.id}.cert.pem", "tls/{client.id}.key.pem";',
        'TLS_CA = "tls/ca.pem";',
        'LoadExtension = "dict_sip.fdx";',
        'LoadExtension = "rt_default.fdx" : "rt_default.conf";',
    ]
    if servers.slf:
        lines.append('LoadExtension = "rt_redirect.fdx";  # follow the SLF\'s Redirect-Host answers (Dx)')
    lines += servers.peer_lines(tw)
    routes = [
        f"# realm routes of {client.id}: higher score first; the standby of an active-standby pair scores lower",
        *servers.routes,
    ]
    return ClientConfig(client.id, {
        "freeDiameter.conf": "\n".join(lines) + "\n",
        "rt_default.conf": "\n".join(routes) + "\n",
    })


def iter_diameter_configs(topology: Topology) -> Iterator[ClientConfig]:
    """One configuration per Diameter client, one at a time (the files are written as they come:
    at national scale they hold ~200 MB); none when there is no HSS/SLF."""
    if not topology.by_type.get("hss") and not topology.by_type.get("slf"):
        return
    servers = _Servers.of(topology)
    for client in diameter_clients(topology):
        yield client_config(topology, client, servers)


def diameter_configs(topology: Topology) -> list[ClientConfig]:
    """One configuration per Diameter client; none when there is no HSS/SLF."""
    return list(iter_diameter_configs(topology))


def _icscf():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import CscfRole

    return CscfRole.ICSCF
