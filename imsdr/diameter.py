"""Diameter client configuration as deployed: freeDiameter and Kamailio ``cdp`` files per client.

Each I-CSCF, S-CSCF and AS is a Diameter client of the HSS (Cx, TS 29.228/29.229; Sh, TS
29.328/29.329). Which server a client talks to, over what and how, is decided here once per
province (``Topology.scope``) and written per client:

* **Transport** — plain TCP on 3868 by default (``Port``, ``No_TLS`` per ``ConnectPeer``); an
  element's ``diameter`` block makes it SCTP, TLS from the first byte on 5868 (RFC 6733 §13) or
  plain Diameter inside IPsec (NDS/IP, TS 33.210).
* **Applications** — ``dict_dcca_3gpp.fdx`` (freeDiameter 1.2.1) holds the Cx/Dx (29.229) and Sh
  (29.329) AVPs but no application or command; ``dict_ims_cxsh.c`` (written beside the clients'
  directories, built once per host) adds the Cx/Dx (16777216) and Sh (16777217) applications and
  their commands and registers them, so every CER advertises them.
* **Routing** — per province: with a DRA pair the clients connect to that pair only and the DRA
  routes each subscriber range; else with an SLF the clients send to one SLF pair, which answers
  with a redirect (DIAMETER_REDIRECT_INDICATION, Dx) that ``rt_redirect`` follows to the holding
  HSS; else ``un=`` rules per range in ``rt_default.conf``. The realm is the element's home domain.
* **Roles** — both members of a pair score the same: an HSS that is not active refuses the
  connection (no CEA) until it is promoted, so the clients' only OPEN peer of the pair is the
  active one, through switchover and failback alike. A drained server (``plan --drain``) is
  scored NO_DELIVERY.

Every value written comes from validated inventory fields (DNS names, IP addresses, integers,
prefixes of ``[A-Za-z0-9+._@-]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

from imsdr.capacity.load import is_scscf

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Group, Topology

VENDOR_3GPP = 10415
CX_APP, SH_APP = 16777216, 16777217
#: rt_default scores (freeDiameter adds REALM = 15 to every peer advertising the Destination-Realm)
SLF_SCORE = 5         # below REDIR_HOST (25): the redirect's target beats the SLF
HSS_UNREDIRECTED = -20  # SLF routing: an HSS gets a request only through the SLF's redirect
                        # (REALM 15 - 20 < 0: not a candidate; + REDIR_USER 45 after it)
RANGE_SCORE = 40      # a pair holding the User-Name's range
DEFAULT_HOLDER_SCORE = 5  # a pair without ranges: everyone else of its realm
DRA_SCORE = 40
EXTENSION_SOURCE = "dict_ims_cxsh.c"
SERVER_TYPES = ("hss", "slf", "dra")


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


def realm_of(topology: Topology, el: Element) -> str:
    """The element's Diameter realm: the home domain its host name is under (the longest), else
    the primary home domain (``Topology.home_domain``, which the HSS routing rule reads too)."""
    return topology.home_domain(el)


@dataclass
class Province:
    """The Diameter servers of one scope (province) and how its clients reach them."""

    scope: str
    hss_pairs: list[tuple[str, list[Element], list[str]]]  # (group id, members, user ranges)
    slf_groups: list[list[Element]]
    dra_groups: list[list[Element]]

    @property
    def routing(self) -> str:
        """dra | slf | direct: how this province's clients find the HSS holding a subscriber."""
        return "dra" if self.dra_groups else "slf" if self.slf_groups else "direct"

    @property
    def hss(self) -> list[Element]:
        return [m for _, members, _ in self.hss_pairs for m in members]


def _groups_of_type(topology: Topology, elements: list[Element]) -> list[list[Element]]:
    """The elements grouped by their pair/pool (first group each belongs to), singletons kept;
    in element-id order of each group's first member."""
    seen: set[str] = set()
    out: list[list[Element]] = []
    ids = {e.id for e in elements}
    for el in elements:
        if el.id in seen:
            continue
        group = next(iter(topology.groups_of.get(el.id, [])), None)
        members = [topology.elements[m] for m in group.members if m in ids] if group else [el]
        members = [m for m in members if m.id not in seen] or [el]
        seen.update(m.id for m in members)
        out.append(members)
    return out


def _hss_pairs(topology: Topology, hss: list[Element]) -> list[tuple[str, list[Element], list[str]]]:
    out = []
    for members in _groups_of_type(topology, hss):
        group: Group | None = next(iter(topology.groups_of.get(members[0].id, [])), None)
        ranges = list(getattr(group.spec, "user_ranges", []) or []) if group else []
        out.append((group.id if group else members[0].id, members, ranges))
    return out


def provinces(topology: Topology) -> dict[str, Province]:
    """Scope -> its Diameter servers (a scope with no server of its own uses every server)."""
    by_scope: dict[str, dict[str, list[Element]]] = {}
    for t in SERVER_TYPES:
        for el in sorted(topology.by_type.get(t, []), key=lambda e: e.id):
            by_scope.setdefault(topology.scope(el), {}).setdefault(t, []).append(el)
    out = {}
    for scope, types in sorted(by_scope.items()):
        out[scope] = Province(scope, _hss_pairs(topology, types.get("hss", [])),
                              _groups_of_type(topology, types.get("slf", [])),
                              _groups_of_type(topology, types.get("dra", [])))
    return out


def _nearest(topology: Topology, client: Element, groups: list[list[Element]], index: int) -> list[Element]:
    """The group with a member at the client's site, else one chosen by the client's index (the
    clients of a site share out the groups evenly); members in their group order."""
    if not groups:
        return []
    local = [g for g in groups if any(m.site == client.site for m in g)]
    pool = local or groups
    return pool[index % len(pool)]


def _province_of(topology: Topology, plan: dict[str, Province], el: Element) -> Province | None:
    scope = topology.scope(el)
    if scope in plan:
        return plan[scope]
    if not plan:
        return None
    # a client outside every province with servers: all of them, as one province
    merged = Province("", [p for pr in plan.values() for p in pr.hss_pairs],
                      [g for pr in plan.values() for g in pr.slf_groups],
                      [g for pr in plan.values() for g in pr.dra_groups])
    return merged


@dataclass
class Peering:
    """Whom one Diameter node connects to and how it scores them."""

    node: Element
    realm: str
    routing: str
    peers: list[Element]
    routes: list[str] = field(default_factory=list)
    accepts: list[Element] = field(default_factory=list)  # a DRA: the clients it accepts


def _range_routes(topology: Topology, province: Province, drained: frozenset[str]) -> list[str]:
    lines = []
    for group_id, members, ranges in province.hss_pairs:
        realms = sorted({realm_of(topology, m) for m in members})
        for prefix in ranges:
            lines.append(f"# {group_id} holds User-Names starting {prefix}")
            lines += [f'un=["^{_ere_literal(prefix)}"] : "{topology.fqdn(m)}" += {RANGE_SCORE} ;' for m in members]
        if not ranges:
            lines.append(f"# {group_id} holds everyone of {', '.join(realms)} that no range names")
            lines += [f'dr="{realm_of(topology, m)}" : "{topology.fqdn(m)}" += {DEFAULT_HOLDER_SCORE} ;'
                      for m in members]
    return lines + _drain_routes(topology, province.hss, drained)


def _drain_routes(topology: Topology, servers: Iterable[Element], drained: frozenset[str]) -> list[str]:
    return [f'* : "{topology.fqdn(s)}" += NO_DELIVERY ;  # drained' for s in servers if s.id in drained]


def _ere_literal(text: str) -> str:
    """``text`` as a POSIX ERE matching it literally (bracket classes: no backslashes to quote)."""
    return "".join(f"[{c}]" if c in "+." else c for c in text)


def client_peering(topology: Topology, client: Element, plan: dict[str, Province],
                   index: int = 0, drained: frozenset[str] = frozenset()) -> Peering | None:
    province = _province_of(topology, plan, client)
    if province is None:
        return None
    realm = realm_of(topology, client)
    routing = province.routing
    if routing == "dra":
        dras = _nearest(topology, client, province.dra_groups, index)
        routes = [f"# {province.scope or 'network'}: every request goes to the province's DRA pair, which "
                  "routes each subscriber range to its HSS pair"]
        routes += [f'* : "{topology.fqdn(d)}" += {DRA_SCORE} ;' for d in dras]
        return Peering(client, realm, routing, dras, routes + _drain_routes(topology, dras, drained))
    if routing == "slf":
        slfs = _nearest(topology, client, province.slf_groups, index)
        routes = ["# the SLF answers DIAMETER_REDIRECT_INDICATION (3006) naming the HSS pair that holds the "
                  "user (Dx/Dh);",
                  "# rt_redirect then scores that HSS REDIR_USER (+45) above the SLF (+5); before it an HSS is",
                  "# no candidate (REALM 15 - 20 < 0): with the SLF unreachable a request fails (3002), it never",
                  "# reaches an HSS that does not hold the user"]
        routes += [f'dr="{realm_of(topology, s)}" : "{topology.fqdn(s)}" += {SLF_SCORE} ;' for s in slfs]
        routes += [f'* : "{topology.fqdn(h)}" += {HSS_UNREDIRECTED} ;' for h in province.hss]
        routes += _drain_routes(topology, [*slfs, *province.hss], drained)
        return Peering(client, realm, routing, [*province.hss, *slfs], routes)
    return Peering(client, realm, routing, list(province.hss), _range_routes(topology, province, drained))


def dra_peering(topology: Topology, dra: Element, plan: dict[str, Province], clients: list[Element],
                drained: frozenset[str] = frozenset()) -> Peering:
    province = plan[topology.scope(dra)]
    mine = [c for c in clients if topology.scope(c) == province.scope]
    return Peering(dra, realm_of(topology, dra), "direct", list(province.hss),
                   _range_routes(topology, province, drained), accepts=mine)


# --- freeDiameter ---------------------------------------------------------------------------------

def _connect_peer(topology: Topology, server: Element, tw: int, tc: int) -> str:
    svc = server.diameter
    parts = [f'ConnectTo = "{a}";' for a in server.addresses]
    if svc.security == "tls":
        parts.append(f"Port = {svc.tls_port};")  # TLS from the first byte (RFC 6733 §13)
    else:
        parts += [f"Port = {svc.port};", "No_TLS;"]  # plain; ipsec: protected below Diameter
    parts.append("No_TCP;" if svc.transport == "sctp" else "No_SCTP;")
    parts += [f"TwTimer = {tw};", f"TcTimer = {tc};", f'Realm = "{realm_of(topology, server)}";']
    note = {"tls": "  # TLS, RFC 6733 §13", "ipsec": "  # inside IPsec (NDS/IP, TS 33.210)"}.get(svc.security, "")
    return f'ConnectPeer = "{topology.fqdn(server)}" {{ {" ".join(parts)} }};{note}'


def freediameter_files(topology: Topology, peering: Peering) -> dict[str, str]:
    net = topology.network
    node = peering.node
    tw = node.timers.diameter_watchdog or net.timers.diameter_watchdog
    tc = net.timers.diameter_reconnect
    what = {"dra": "the DRA pair of its province", "slf": "its SLF pair and the HSSs of its province",
            "direct": "the HSSs of its province"}[peering.routing if node.type.value != "dra" else "direct"]
    lines = [
        f"# freeDiameter configuration of {node.id}, rendered by imsdr from the DR design:",
        f"# peers: {what}; routes in rt_default.conf.",
        f'Identity = "{topology.fqdn(node)}";',
        f'Realm = "{peering.realm}";',
    ]
    if node.type.value == "dra":
        # freeDiameter 1.2.1 listens on every local address whatever ListenOn says
        lines += ["Port = 3868;", "SecPort = 5868;"]
    else:
        lines += ["Port = 0;  # a client connects out; HSS-initiated requests (RTR, PPR, PNR) use that connection",
                  "SecPort = 0;"]
    lines += [
        f"TwTimer = {tw};  # RFC 3539 watchdog: a hung peer is failed after 2 x Tw",
        f"TcTimer = {tc};  # RFC 6733 Tc: a refused or closed peer is retried this often",
    ]
    if all(p.diameter.transport == "tcp" for p in peering.peers):
        lines.append("No_SCTP;  # every peer is reached over TCP")
    if node.type.value != "dra":
        lines.append("NoRelay;  # a client, not an agent")
    lines += [f'ListenOn = "{a}";  # its Host-IP-Address in CER/CEA' for a in node.addresses]
    lines += [
        "# freeDiameter needs credentials even when every peer is plain; the operator installs them",
        f'TLS_Cred = "tls/{node.id}.cert.pem", "tls/{node.id}.key.pem";',
        'TLS_CA = "tls/ca.pem";',
        'LoadExtension = "dict_nasreq.fdx";  # dict_dcca_3gpp needs dict_dcca, which needs it',
        'LoadExtension = "dict_dcca.fdx";',
        'LoadExtension = "dict_dcca_3gpp.fdx";  # Cx/Dx (TS 29.229) and Sh (TS 29.329) AVPs',
        'LoadExtension = "dict_ims_cxsh.fdx";  # Cx/Dx 16777216, Sh 16777217: commands, advertised in CER',
        'LoadExtension = "rt_default.fdx" : "rt_default.conf";',
    ]
    if peering.routing == "slf":
        lines.append("LoadExtension = \"rt_redirect.fdx\";  # follow the SLF's redirect (Dx)")
    if peering.accepts:
        lines.append('LoadExtension = "acl_wl.fdx" : "acl_wl.conf";  # the clients of its province')
    lines += [_connect_peer(topology, s, tw, tc) for s in peering.peers]
    routes = [f"# routes of {node.id} ({peering.routing}): highest score first; both members of a pair score "
              "the same,", "# a standby refuses the connection until promoted, so the active is the OPEN one",
              *peering.routes]
    files = {"freeDiameter.conf": "\n".join(lines) + "\n", "rt_default.conf": "\n".join(routes) + "\n"}
    if peering.accepts:
        names = " ".join(topology.fqdn(c) for c in peering.accepts)
        files["acl_wl.conf"] = f"# clients of {node.id}'s province (plain or IPsec-protected)\nALLOW_IPSEC {names}\n"
    return files


# --- Kamailio cdp ---------------------------------------------------------------------------------

def cdp_xml(topology: Topology, peering: Peering) -> str:
    """Kamailio ``cdp`` configuration: the same peers, realm and routes (cdp routes by realm only and
    does not follow redirects: with an SLF it sends to the SLF first, then to the HSS by metric)."""
    node = peering.node
    tc = topology.network.timers.diameter_reconnect
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<!-- Kamailio cdp configuration of {node.id}, rendered by imsdr ({peering.routing} routing) -->",
        f'<DiameterPeer FQDN="{topology.fqdn(node)}" Realm="{peering.realm}" Vendor_Id="{VENDOR_3GPP}" '
        f'Product_Name="CDiameterPeer" AcceptUnknownPeers="0" DropUnknownOnDisconnect="1" Tc="{tc}" '
        'Workers="4" QueueLength="32" TransactionTimeout="5" SessionsHashSize="128" '
        'DefaultAuthSessionTimeout="3600" MaxAuthSessionTimeout="3600">',
    ]
    for server in peering.peers:
        svc = server.diameter
        port = svc.tls_port if svc.security == "tls" else svc.port
        proto = ' proto="sctp"' if svc.transport == "sctp" else ""
        lines.append(f'  <Peer FQDN="{topology.fqdn(server)}" Realm="{realm_of(topology, server)}" '
                     f'port="{port}"{proto}/>')
    lines += [f'  <Acceptor port="3868" bind="{a}"/>' for a in node.addresses[:1]]
    lines += [f'  <Auth id="{CX_APP}" vendor="{VENDOR_3GPP}"/>',
              f'  <Auth id="{SH_APP}" vendor="{VENDOR_3GPP}"/>']
    metric = {"dra": lambda s: 10, "slf": lambda s: 10 if s.type.value == "slf" else 20,
              "direct": lambda s: 10}[peering.routing]
    realms: dict[str, list[Element]] = {}
    for server in peering.peers:
        realms.setdefault(realm_of(topology, server), []).append(server)
    for realm, servers in realms.items():
        lines.append(f'  <Realm name="{realm}">')
        lines += [f'    <Route FQDN="{topology.fqdn(s)}" metric="{metric(s)}"/>' for s in servers]
        lines.append("  </Realm>")
    lines += [f'  <DefaultRoute FQDN="{topology.fqdn(s)}" metric="{metric(s)}"/>' for s in peering.peers]
    lines.append("</DiameterPeer>")
    return "\n".join(lines) + "\n"


# --- the tree -------------------------------------------------------------------------------------

def extension_source() -> str:
    """The C source of ``dict_ims_cxsh.fdx`` (package data, the same for every network)."""
    return resources.files("imsdr.diameter_ext").joinpath(EXTENSION_SOURCE).read_text(encoding="utf-8")


def iter_diameter_configs(topology: Topology, drained: Iterable[str] = ()) -> Iterator[ClientConfig]:
    """One configuration per Diameter client and per DRA, one at a time (the files are written as
    they come); none when there is no HSS/SLF/DRA. ``drained``: element ids scored NO_DELIVERY."""
    plan = provinces(topology)
    if not plan:
        return
    gone = frozenset(drained)
    clients = diameter_clients(topology)
    per_site: dict[str, int] = {}
    for client in clients:
        index = per_site.get(client.site, 0)
        per_site[client.site] = index + 1
        peering = client_peering(topology, client, plan, index, gone)
        if peering is None:
            continue
        files = freediameter_files(topology, peering)
        if client.type.value == "cscf":
            files["cdp.xml"] = cdp_xml(topology, peering)
        yield ClientConfig(client.id, files)
    for dra in sorted(topology.by_type.get("dra", []), key=lambda e: e.id):
        yield ClientConfig(dra.id, freediameter_files(topology, dra_peering(topology, dra, plan, clients, gone)))


def diameter_configs(topology: Topology, drained: Iterable[str] = ()) -> list[ClientConfig]:
    """One configuration per Diameter client (and DRA); none when there is no HSS/SLF/DRA."""
    return list(iter_diameter_configs(topology, drained))


@dataclass(frozen=True, slots=True)
class PeerCount:
    clients: int
    max_peers: int
    max_allowed: int  # the largest "province's HSSs + 2" of any client
    connections: int  # client connections plus DRA connections to HSSs


def peer_count(topology: Topology) -> PeerCount:
    """Peers per client and Diameter connections network-wide, as rendered."""
    plan = provinces(topology)
    clients = diameter_clients(topology)
    per_site: dict[str, int] = {}
    total = most = allowed = 0
    for client in clients:
        index = per_site.get(client.site, 0)
        per_site[client.site] = index + 1
        peering = client_peering(topology, client, plan, index)
        if peering is None:
            continue
        province = _province_of(topology, plan, client)
        assert province is not None
        total += len(peering.peers)
        most = max(most, len(peering.peers))
        allowed = max(allowed, len(province.hss) + 2)
    for dra in topology.by_type.get("dra", []):
        total += len(plan[topology.scope(dra)].hss)
    return PeerCount(len(clients), most, allowed, total)


def _icscf():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import CscfRole

    return CscfRole.ICSCF


def runbook_facts(topology: Topology) -> dict[str, object]:
    """What the HSS/SLF runbook page says about Diameter: routing per province and, per
    active-standby pair, its promotion, failover time per failure mode and failback time (the same
    figures as the simulation: imsdr.capacity.timing)."""
    from imsdr.capacity.timing import diameter_failure_modes, failback_time

    plan = provinces(topology)
    pairs = []
    for group in sorted(topology.groups.values(), key=lambda g: g.id):
        spec = group.spec
        members = [topology.elements[m] for m in group.members if m in topology.elements]
        if group.kind != "pair" or getattr(spec, "mode", None) != "active-standby" or len(members) != 2 \
                or members[0].type.value not in SERVER_TYPES:
            continue
        active, standby = members
        modes = diameter_failure_modes(topology, active)
        pairs.append({
            "id": group.id, "active": active.id, "standby": standby.id,
            "active_fqdn": topology.fqdn(active), "standby_fqdn": topology.fqdn(standby),
            "promotion": spec.promotion, "promotion_s": spec.promotion_seconds,  # type: ignore[union-attr]
            "user_ranges": list(getattr(spec, "user_ranges", [])),
            "failover": {mode: {"seconds": sw.seconds, "formula": sw.formula()} for mode, sw in modes.items()},
            "failback": {"seconds": failback_time(topology, active).seconds,
                         "formula": failback_time(topology, active).formula()},
        })
    return {
        "routing": {scope or "network": p.routing for scope, p in plan.items()},
        "tc": topology.network.timers.diameter_reconnect,
        "pairs": pairs,
    }
