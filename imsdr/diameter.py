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



def client_config(topology: Topology, client: Element) -> ClientConfig:
    net = topology.network
    tw = client.timers.diameter_watchdog or net.timers.diameter_watchdog
    hss = sorted(topology.by_type.get("hss", []), key=lambda e: e.id)
    slf = sorted(topology.by_type.get("slf", []), key=lambda e: e.id)
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
    if slf:
        lines.append('LoadExtension = "rt_redirect.fdx";  # follow the SLF\'s Redirect-Host answers (Dx)')
    lines += [_peer(topology, s, tw) for s in [*hss, *slf]]
    scores = _scores(topology, hss)
    routes = [
        f"# realm routes of {client.id}: higher score first; the standby of an active-standby pair scores lower",
    ]
    routes += [f'dr="{realm}" : "{topology.fqdn(s)}" += {scores[s.id]} ;' for s in hss]
    return ClientConfig(client.id, {
        "freeDiameter.conf": "\n".join(lines) + "\n",
        "rt_default.conf": "\n".join(routes) + "\n",
    })


def diameter_configs(topology: Topology) -> list[ClientConfig]:
    """One configuration per Diameter client; none when there is no HSS/SLF."""
    if not topology.by_type.get("hss") and not topology.by_type.get("slf"):
        return []
    return [client_config(topology, c) for c in diameter_clients(topology)]


def _icscf():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import CscfRole

    return CscfRole.ICSCF
