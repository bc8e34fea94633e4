"""One ``named.conf`` per DNS server: ACLs, locked-down views, and each zone by the sync mode.

Every server gets the same views (first match wins): one per local network (``users-*``, the
access zones), one per site (``core-*``, the core and ENUM zones) and ``default`` (refuses, or
the access data only). Each view is locked down: ``recursion no``, ``allow-query`` its own match
list, ``allow-transfer`` only that view's TSIG key. The key *names* are rendered; the secrets are
never written here (the operator includes a keys file, see :mod:`imsdr.dns.keys`). A request
signed with a view's key matches that view and no other (``!"imsdr-view-keys"``), which is how a
secondary transfers each view's zones.

Sync modes (``redundancy.enum_dns.sync``):

* ``provisioning`` (and unset): every server is a primary of identical zone files;
* ``master-slave``: the master set (``redundancy.enum_dns.primaries``, default the first name
  server) holds ``type primary`` zones and NOTIFYs the others (``also-notify`` with the view's
  key); the others hold ``type secondary`` zones transferred with the view's key;
* ``backend-db``: the back-end (``primaries``) is a hidden primary fed by the database; the
  front-ends are its secondaries, rendered like master-slave.

Zone files that are the same in several views (the ENUM zones, a base zone no view overrides)
are defined once, in the first view that serves them, and shared by later views with ``in-view``
— a 10-million-number ENUM zone is loaded once, not once per view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from imsdr.dns.plan import DnsPlan, Side, ViewPlan

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

VIEW_KEYS_ACL = "imsdr-view-keys"
RRSET_ORDER_NOTE = (
    "// Answer order: BIND rotates the records of an rrset, so in the user views the A/AAAA of the\n"
    "// SBC discovery name hold the local SBC(s) only (a client taking the first address never lands\n"
    "// on the DR SBC); the DR SBC has its own name and is second in the SRV priorities.\n"
)


@dataclass(frozen=True)
class ZoneFileRef:
    view: str | None  # None: a base file shared by every view of its side without an override
    zone: str
    path: str  # relative to the output directory (= named's 'directory')
    side: Side = "core"


BIND_MAX_RECORDS_PER_TYPE = 100  # BIND's default max-records-per-type (9.18.28 and later)


def zone_file_path(view: ViewPlan, zone: str, plan: DnsPlan) -> ZoneFileRef:
    """Where the zone as served in ``view`` is written."""
    if view.overrides.get(zone):
        return ZoneFileRef(view.name, zone, f"zones/{view.name}/{zone}.zone", view.side)
    kind = plan.zones_of(view.side)[zone].kind
    folder = "enum" if kind in ("enum", "enum_parent") else view.side
    return ZoneFileRef(None, zone, f"zones/{folder}/{zone}.zone", view.side)


def view_zone_refs(plan: DnsPlan, view: ViewPlan) -> list[ZoneFileRef]:
    plan.materialise(view)
    return [zone_file_path(view, zone, plan) for zone in plan.zones_of(view.side)]


def zone_files(plan: DnsPlan) -> list[ZoneFileRef]:
    """Every distinct zone file of the plan (those some view serves), sorted by path."""
    seen: dict[str, ZoneFileRef] = {}
    for view in plan.views:
        for ref in view_zone_refs(plan, view):
            seen.setdefault(ref.path, ref)
    return sorted(seen.values(), key=lambda r: r.path)


# --- servers and their roles ---------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    id: str
    fqdn: str
    address: str  # the address it serves and talks to its peers from (first IPv4, else first)
    site: str
    region: str
    role: Literal["primary", "secondary"]
    hidden: bool = False  # a back-end primary that is not a name server (not in NS)


@dataclass(frozen=True)
class ServerLayout:
    sync: str  # provisioning | master-slave | backend-db
    servers: tuple[Server, ...]
    notes: tuple[str, ...] = ()

    @property
    def primaries(self) -> list[Server]:
        return [s for s in self.servers if s.role == "primary"]

    @property
    def secondaries(self) -> list[Server]:
        return [s for s in self.servers if s.role == "secondary"]


def _address(el: Element) -> str:
    v4 = [a for a in el.addresses if ":" not in a]
    return (v4 or list(el.addresses))[0]


def server_layout(topology: Topology) -> ServerLayout:
    """Which ENUM/DNS element loads what: the name servers, plus a hidden back-end if any."""
    topo = topology
    design = topo.inventory.redundancy.enum_dns
    ns_ids = list(topo.network.dns.nameservers) or [e.id for e in topo.by_type["enum_dns"]]
    sync = design.sync or "provisioning"
    notes: list[str] = []
    if design.sync is None:
        notes.append("redundancy.enum_dns.sync is not set: every name server is rendered as a primary "
                     "of identical zone files (as provisioning)")
    ids = [i for i in ns_ids if i in topo.elements]
    primaries: list[str] = []
    if sync in ("master-slave", "backend-db"):
        primaries = [i for i in design.primaries if i in topo.elements] or ids[:1]
        ids += [i for i in primaries if i not in ids]
        if not design.primaries and ids:
            notes.append(f"redundancy.enum_dns.primaries is not set: {ids[0]} is the {sync} primary")
        if len(ids) == len(primaries):
            notes.append(f"sync {sync}: every server is a primary, so no server is a secondary")
    servers = []
    for ident in ids:
        el = topo.elements[ident]
        site = topo.sites[el.site]
        role: Literal["primary", "secondary"] = (
            "primary" if sync == "provisioning" or ident in primaries else "secondary")
        servers.append(Server(ident, topo.fqdn(el), _address(el), el.site, site.region, role,
                              hidden=ident not in ns_ids))
    return ServerLayout(sync, tuple(servers), tuple(notes))


def server_conf_path(server: Server) -> str:
    return f"named/{server.id}.conf"


# --- named.conf ----------------------------------------------------------------------------------


def _q(name: str) -> str:
    return f'"{name}"'


def _acl_body(prefixes: tuple[str, ...]) -> str:
    return " ".join(f"{p};" for p in prefixes)


def _source_options(server: Server) -> list[str]:
    v6 = ":" in server.address
    return [
        f"    notify-source{'-v6' if v6 else ''} {server.address};",
        f"    transfer-source{'-v6' if v6 else ''} {server.address};",
    ]


def secondary_file(directory: str, view: str, zone: str) -> str:
    """Where a secondary keeps a transferred zone (the view that defines it, then the zone)."""
    return f"{directory}/{view}.{zone}.zone"  # flat: named creates files, not directories


def render_named_conf(plan: DnsPlan, inventory: str, layout: ServerLayout, server: Server,
                      secondary_directory: str, parts: NamedConfParts | None = None) -> str:
    """The named.conf fragment ``server`` loads (include it after 'options' and the keys file).

    ``parts``: shared by the servers of one render (see :class:`NamedConfParts`)."""
    keyed = [v for v in plan.views if v.side != "none"]
    out = [
        f"// named.conf fragment for {server.id} ({server.fqdn}, {server.address}) of {plan.network}:",
        f"// {server.role} ({'hidden back-end, ' if server.hidden else ''}sync {layout.sync}); rendered by "
        f"imsdr from inventory {inventory}; do not edit by hand.",
        "//",
        "// Include from named.conf, after 'options' (zone file names are relative to its 'directory',",
        "// which must point at this output directory):",
        '//     include "/etc/bind/imsdr-tsig.keys";   // the keys below; secrets never rendered by imsdr',
        f'//     include "/etc/bind/imsdr/named/{server.id}.conf";',
        "// Once views exist, every zone must be inside a view: drop Debian's default-zones include.",
        "// TSIG keys this file needs (one per view; 'imsdr render dns --keys FILE' generates them):",
    ]
    out += [f"//     {v.key_name}" for v in keyed]
    out.append("//")
    out += RRSET_ORDER_NOTE.rstrip("\n").split("\n")
    out.append("")
    parts = parts or NamedConfParts(plan, layout, secondary_directory)
    return "\n".join(out) + "\n" + parts.body(server)


class NamedConfParts:
    """What the named.conf fragments of one render share: each view's zone files, computed once,
    and the ACL/view text itself, which is the same for servers of the same role and source
    options (every server under provisioning: hundreds of views written once, not per server)."""

    def __init__(self, plan: DnsPlan, layout: ServerLayout, secondary_directory: str) -> None:
        self.plan = plan
        self.layout = layout
        self.secondary_directory = secondary_directory
        self.refs = [view_zone_refs(plan, view) for view in plan.views]  # in plan.views order
        self.bodies: dict[tuple[object, ...], str] = {}
        self.base_largest: dict[tuple[str, str], int] = {}  # (side, zone) -> its largest rrset

    def largest_rrset(self, view: ViewPlan, zone: str) -> int:
        """Records in the largest rrset of ``zone`` as ``view`` serves it (base or override)."""
        key = (view.side, zone)
        base = self.base_largest.get(key)
        if base is None:
            rrsets = self.plan.zones_of(view.side)[zone].rrsets.values()
            base = self.base_largest[key] = max((len(r.rdatas) for r in rrsets), default=0)
        override = max((len(r.rdatas) for r in view.overrides.get(zone, {}).values()), default=0)
        return max(base, override)

    def body(self, server: Server) -> str:
        layout = self.layout
        my_primaries = [s for s in layout.primaries if s.id != server.id] if server.role == "secondary" else []
        options = tuple(_source_options(server)) if layout.sync != "provisioning" else ()
        key = (server.role, options, tuple(s.id for s in my_primaries))
        text = self.bodies.get(key)
        if text is None:
            text = self.bodies[key] = self._body(server, my_primaries, list(options))
        return text

    def _body(self, server: Server, my_primaries: list[Server], source_options: list[str]) -> str:
        plan, layout, secondary_directory = self.plan, self.layout, self.secondary_directory
        keyed = [v for v in plan.views if v.side != "none"]
        out: list[str] = []
        for view in plan.views:
            if view.kind != "default":
                out.append(f"acl {_q(view.name)} {{ {_acl_body(view.match_clients)} }};")
        if keyed:
            out.append(f"acl {_q(VIEW_KEYS_ACL)} {{ {' '.join(f'key {_q(v.key_name)};' for v in keyed)} }};")
        out.append("")
        peers_notify = layout.secondaries if server.role == "primary" else []
        users: dict[str, list[ViewPlan]] = {}  # file path -> views serving it
        for view, refs in zip(plan.views, self.refs, strict=True):
            if view.side != "none":
                for ref in refs:
                    users.setdefault(ref.path, []).append(view)
        defined: dict[str, str] = {}  # file path -> view that defined it
        for view, refs in zip(plan.views, self.refs, strict=True):
            out.append(f"// {view.description}")
            out.append(f"view {_q(view.name)} {{")
            if view.side == "none":
                out += [
                    "    match-clients { any; };",
                    "    allow-query { none; };",
                    "    allow-transfer { none; };",
                    "    recursion no;",
                    "};",
                    "",
                ]
                continue
            key = f"key {_q(view.key_name)};"
            if view.kind == "default":
                out.append(f"    match-clients {{ {key} !{_q(VIEW_KEYS_ACL)}; any; }};")
                out.append(f"    allow-query {{ any; {key} }};")
            else:
                out.append(f"    match-clients {{ {key} !{_q(VIEW_KEYS_ACL)}; {_q(view.name)}; }};")
                out.append(f"    allow-query {{ {_q(view.name)}; {key} }};")
            out.append(f"    allow-transfer {{ {key} }};")
            out.append("    recursion no;")
            out.append(f"    notify {'explicit' if peers_notify else 'no'};")
            out += source_options
            for ref in refs:
                zone = ref.zone
                if ref.path in defined:
                    out.append(f"    zone {_q(zone)} {{ in-view {_q(defined[ref.path])}; }};")
                    continue
                defined[ref.path] = view.name
                sharing = users.get(ref.path, [view])
                body: list[str] = []
                if server.role == "primary":
                    body.append(f"type primary; file {_q(ref.path)};")
                    if peers_notify:
                        body.append("also-notify { " + " ".join(
                            f"{s.address} key {_q(view.key_name)};" for s in peers_notify) + " };")
                else:
                    body.append(f"type secondary; file {_q(secondary_file(secondary_directory, view.name, zone))};")
                    body.append("primaries { " + " ".join(
                        f"{s.address} key {_q(view.key_name)};" for s in my_primaries) + " };")
                largest = self.largest_rrset(view, zone)
                if largest > BIND_MAX_RECORDS_PER_TYPE:
                    # BIND 9.18.28+ refuses to load (or transfer) a zone with a larger rrset than
                    # max-records-per-type (100 by default): raise it for this zone only
                    body.append(f"max-records-per-type {largest};")
                if plan.enum_updates and server.role == "primary" and plan.zones_of(view.side)[zone].kind == "enum":
                    # RFC 2136: provisioning changes the numbers' NAPTRs only, signed with a view's key
                    body.append("update-policy { " + " ".join(
                        f"grant {_q(v.key_name)} zonesub NAPTR;" for v in sharing) + " };")
                if len(sharing) > 1:  # shared with in-view: zone options apply to every sharing view
                    acls = " ".join(
                        ("any;" if v.kind == "default" else f"{_q(v.name)};") + f" key {_q(v.key_name)};"
                        for v in sharing)
                    keys = " ".join(f"key {_q(v.key_name)};" for v in sharing)
                    body.append(f"allow-query {{ {acls} }};")
                    body.append(f"allow-transfer {{ {keys} }};")
                out.append(f"    zone {_q(zone)} {{")
                out += [f"        {line}" for line in body]
                out.append("    };")
            out.append("};")
            out.append("")
        return "\n".join(out)


# --- access resolvers ----------------------------------------------------------------------------


def server_order(topology: Topology, layout: ServerLayout, region: str | None) -> list[Server]:
    """The name servers in the order a client of ``region`` uses them (``load_sharing``)."""
    visible = [s for s in layout.servers if not s.hidden]
    mode = topology.inventory.redundancy.enum_dns.load_sharing
    if mode == "regional" and region is not None:
        return [s for s in visible if s.region == region] + [s for s in visible if s.region != region]
    return visible


def render_resolver_conf(plan: DnsPlan, topology: Topology, layout: ServerLayout, ln_id: str,
                         inventory: str) -> str:
    """Forward zones for the access resolvers of one local network (what they must forward where)."""
    ln = topology.local_networks[ln_id]
    region = topology.sites[ln.home_sites[0]].region if ln.home_sites[0] in topology.sites else None
    mode = topology.inventory.redundancy.enum_dns.load_sharing or "unset"
    servers = server_order(topology, layout, region)
    how = {
        "regional": f"the servers of region {region} first, in this order",
        "rtt": "BIND picks the forwarder with the lowest measured round-trip time",
        "anycast": "one anycast service address in production; the sets' unicast addresses are listed",
        "unset": "redundancy.enum_dns.load_sharing is not set: listed in name-server order",
    }[mode]
    resolvers = ", ".join(ln.resolvers) or "none listed: the UE prefixes' resolvers"
    out = [
        f"// Access resolvers of local network {ln.id} ({ln.name}): {resolvers}.",
        f"// Rendered by imsdr from inventory {inventory}; include inside the resolvers' view or options.",
        f"// Forward the IMS home domains to the IMS name servers; load_sharing {mode}: {how}.",
        f"// The name servers answer these resolvers from view users-{ln.id} (their addresses are in its",
        "// match list). Without 'resolvers' in the inventory the view matches UE prefixes only, which works",
        "// only if the resolvers forward with EDNS Client Subnet or the operator deploys the views on them.",
    ]
    forwarders = " ".join(f"{s.address};" for s in servers)
    for zone in plan.access_zones:
        out.append(f'zone "{zone}" {{ type forward; forward only; forwarders {{ {forwarders} }}; }};')
    return "\n".join(out)
