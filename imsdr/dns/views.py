"""One ``named.conf`` per DNS server: ACLs, locked-down views, and each zone by the sync mode.

Every server gets the same views (first match wins): one per local network (``users-*``, the
access zones), per site one for its SBCs' core interfaces (``sbc-*``, the P-CSCF names only) and
one for its core (``core-*``, the core and ENUM zones), and ``default`` (refuses, or the access
data only). Each view is locked down: ``recursion no``, ``allow-query`` its own match
list, ``allow-transfer`` only that view's TSIG key. The key *names* are rendered; the secrets are
never written here (the operator includes a keys file, see :mod:`imsdr.dns.keys`). A request
signed with a view's key matches that view and no other (``!"imsdr-view-keys"``), which is how a
secondary transfers each view's zones.

Sync modes (``redundancy.enum_dns.sync``):

* ``provisioning`` (and unset): every server is a primary of identical zone files;
* ``master-slave``: the master set (``redundancy.enum_dns.primaries``, default the first name
  server) holds ``type primary`` zones and NOTIFYs the others (``also-notify`` with the view's
  key), and publishes one catalog zone per view (:mod:`imsdr.dns.catalog`); the others hold per
  view only that catalog, and BIND transfers its member zones with the view's key;
* ``backend-db``: the back-end (``primaries``) is a hidden primary fed by the database; the
  front-ends are its secondaries, rendered like master-slave.

Zone files that are the same in several views (the ENUM zones, a base zone no view overrides)
are defined once, in the first view that serves them, and shared by later views with ``in-view``
— a 10-million-number ENUM zone is loaded once, not once per view.
"""

from __future__ import annotations

import ipaddress
import operator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from imsdr.dns.catalog import CATALOG_MIN_UPDATE, catalog_path, catalog_zone
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

_RDATAS = operator.attrgetter("rdatas")


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
    folder = "enum" if kind in ("enum", "enum_parent") else "national" if kind == "delegation" else view.side
    return ZoneFileRef(None, zone, f"zones/{folder}/{zone}.zone", view.side)


def view_zone_refs(plan: DnsPlan, view: ViewPlan) -> list[ZoneFileRef]:
    plan.materialise(view)
    return [zone_file_path(view, zone, plan) for zone in plan.view_zones(view)]


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
    area: str = ""  # its service area ('' without areas: it serves every view)
    access_address: str = ""  # what access resolvers forward to (its access_addresses, else address)

    def holds(self, view: ViewPlan) -> bool:
        """Whether this server's configuration has ``view`` (every view without areas)."""
        return area_holds(self.area, view.area)


def area_holds(server_area: str, view_area: str) -> bool:
    """Whether a server of ``server_area`` has the views of ``view_area`` ('': a server or view of
    no service area, as every one without areas)."""
    return not server_area or not view_area or view_area == server_area


def server_areas(topology: Topology) -> dict[str, str]:
    """The service area of each name server (element id -> area; '' without areas)."""
    return {s.id: s.area for s in server_layout(topology).servers}


@dataclass(frozen=True)
class ServerLayout:
    sync: str  # provisioning | master-slave | backend-db
    servers: tuple[Server, ...]
    notes: tuple[str, ...] = ()
    promoted: tuple[str, ...] = ()  # secondaries made primary because every primary is drained

    @property
    def promotion(self) -> bool:
        return bool(self.promoted)

    @property
    def primaries(self) -> list[Server]:
        return [s for s in self.servers if s.role == "primary"]

    @property
    def secondaries(self) -> list[Server]:
        return [s for s in self.servers if s.role == "secondary"]


def uses_catalogs(layout: ServerLayout, server: Server) -> bool:
    """Whether ``server``'s area distributes its member zones by catalog zones (RFC 9432): under
    master-slave and backend-db, when the area has a secondary. A secondary of such an area holds
    every view's copy of a zone as its own zone (no ``in-view``: a catalog lives in one view)."""
    return layout.sync != "provisioning" and any(
        s.role == "secondary" and s.area == server.area for s in layout.servers)


def _address(el: Element, access: bool = False) -> str:
    addresses = (el.access_addresses or el.addresses) if access else el.addresses
    v4 = [a for a in addresses if ":" not in a]
    return (v4 or list(addresses))[0]


def server_layout(topology: Topology, excluded: frozenset[str] | tuple[str, ...] = frozenset()) -> ServerLayout:
    """Which ENUM/DNS element loads what: the name servers, plus a hidden back-end if any.

    ``excluded``: the drained elements. Under master-slave or backend-db, when they contain every
    primary (of an area), the first surviving server (in name server order) is promoted to primary
    and the drained primaries are rendered as its secondaries: when one comes back it loads that
    configuration first and transfers the zones at the survivor's serials (a secondary first)."""
    topo = topology
    from imsdr.model.areas import service_areas

    areas = service_areas(topo)
    layout = _area_layout(topo, areas) if areas else _plain_layout(topo)
    return _promoted(layout, frozenset(excluded)) if excluded else layout


def _promoted(layout: ServerLayout, excluded: frozenset[str]) -> ServerLayout:
    """``layout`` with a survivor promoted wherever every primary (per area) is excluded."""
    if layout.sync == "provisioning":
        return layout
    servers = list(layout.servers)
    promoted: list[str] = []
    for area in dict.fromkeys(s.area for s in servers):
        group = [s for s in servers if s.area == area]
        primaries = [s for s in group if s.role == "primary"]
        survivors = [s for s in group if s.id not in excluded and not s.hidden]
        if not primaries or not all(s.id in excluded for s in primaries) or not survivors:
            continue
        new = survivors[0]
        promoted.append(new.id)
        for i, s in enumerate(servers):
            if s.id == new.id:
                servers[i] = replace(s, role="primary")
            elif s in primaries:
                servers[i] = replace(s, role="secondary")
    if not promoted:
        return layout
    note = (f"every {layout.sync} primary is drained: {', '.join(promoted)} promoted to primary; the drained "
            "primaries are rendered as its secondaries (they come back as secondaries first)")
    return ServerLayout(layout.sync, tuple(servers), (*layout.notes, note), tuple(promoted))


def _plain_layout(topo: Topology) -> ServerLayout:
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
                              hidden=ident not in ns_ids, access_address=_address(el, access=True)))
    return ServerLayout(sync, tuple(servers), tuple(notes))


def _area_layout(topo: Topology, areas: tuple[object, ...]) -> ServerLayout:
    """With service areas every area's name servers get a configuration; under master-slave or
    backend-db each area has its own primary (``primaries`` listed in it, else its first server)."""
    design = topo.inventory.redundancy.enum_dns
    sync = design.sync or "provisioning"
    notes: list[str] = []
    if design.sync is None:
        notes.append("redundancy.enum_dns.sync is not set: every name server is rendered as a primary "
                     "of identical zone files (as provisioning)")
    if topo.network.dns.nameservers:
        notes.append("network.dns.areas is set: network.dns.nameservers is not used (each area lists its own)")
    servers = []
    for area in areas:
        ids = [i for i in area.nameservers if i in topo.elements]  # type: ignore[attr-defined]
        primaries = [i for i in design.primaries if i in ids] or ids[:1]
        for ident in ids:
            el = topo.elements[ident]
            role: Literal["primary", "secondary"] = (
                "primary" if sync == "provisioning" or ident in primaries else "secondary")
            servers.append(Server(ident, topo.fqdn(el), _address(el), el.site, topo.sites[el.site].region, role,
                                  area=area.id, access_address=_address(el, access=True)))  # type: ignore[attr-defined]
    return ServerLayout(sync, tuple(servers), tuple(notes))


def server_conf_path(server: Server) -> str:
    return f"named/{server.id}.conf"


# --- named.conf ----------------------------------------------------------------------------------


def _q(name: str) -> str:
    return f'"{name}"'


def _acl_body(prefixes: tuple[str, ...]) -> str:
    return " ".join(f"{p};" for p in prefixes)


def transfer_acl(keys: list[str], peers: list[str]) -> str:
    """``allow-transfer``: a view's key AND the address of another server of the set (BIND joins
    the elements of an ACL by OR; ``!{ !peers; any; }`` refuses every other address first)."""
    if not peers:
        return "{ none; }"
    addresses = " ".join(f"{a};" for a in peers)
    return "{ !{ !{ " + addresses + " }; any; }; " + " ".join(f"key {_q(k)};" for k in keys) + " }"


CORE_CACHE, CORE_CACHE_NAME = "64m", "imsdr-core"  # the recursing core views' one shared cache
RATE_LIMIT_WINDOW = 5  # seconds over which BIND averages a client's identical responses


def render_options(plan: DnsPlan, rate_limit: int) -> str:
    """What every server's ``options { }`` must include (``named-options.conf``): statements BIND
    allows there only. The fragments carry the rest."""
    return "\n".join([
        f"// options of every name server of {plan.network}; rendered by imsdr: do not edit by hand.",
        "// Include INSIDE the options block of named.conf:",
        '//     options { ...; include "/etc/bind/imsdr/named-options.conf"; };',
        "// Nothing answers who or what the server is (version.bind, hostname.bind, id.server):",
        "version none;",
        "hostname none;",
        "server-id none;",
        f"// Access views rate-limit identical responses to {rate_limit}/s per client block "
        "(network.dns.access_rate_limit; 0: off); over the limit BIND answers truncated, so a real",
        "// client retries over TCP, which is never limited.",
        "",
    ])


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
                      secondary_directory: str, parts: NamedConfParts | None = None,
                      topology_rate_limit: int = 0) -> str:
    """The named.conf fragment ``server`` loads (include it after 'options' and the keys file).

    ``parts``: shared by the servers of one render (see :class:`NamedConfParts`)."""
    keyed = [v for v in plan.views if v.side != "none" and server.holds(v)]
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
    parts = parts or NamedConfParts(plan, layout, secondary_directory, topology_rate_limit)
    return "\n".join(out) + "\n" + parts.body(server)


class NamedConfParts:
    """What the named.conf fragments of one render share: each view's zone files, computed once,
    and the ACL/view text itself, which is the same for servers of the same role and source
    options (every server under provisioning: hundreds of views written once, not per server)."""

    def __init__(self, plan: DnsPlan, layout: ServerLayout, secondary_directory: str, rate_limit: int = 0,
                 resolvers: frozenset[str] = frozenset()) -> None:
        self.plan = plan
        self.rate_limit = rate_limit
        self.resolvers = resolvers  # the access resolvers' host prefixes (exempt from rate limiting)
        self.layout = layout
        self.secondary_directory = secondary_directory
        self.refs = [view_zone_refs(plan, view) for view in plan.views]  # in plan.views order
        self.bodies: dict[tuple[object, ...], str] = {}
        self.base_largest: dict[tuple[str, str], int] = {}  # (side, zone) -> its largest rrset

    def catalogs(self, server: Server) -> bool:
        """Whether ``server``'s area distributes its member zones by catalog zones (RFC 9432)."""
        return uses_catalogs(self.layout, server)

    def _catalog_primary(self, view: ViewPlan, peers_notify: list[Server], peers: list[str]) -> list[str]:
        """The view's catalog zone on a primary: NOTIFY and transfer to the secondaries with the
        view's key; nobody else may read it (it is a list of zones, not an answer)."""
        acl = transfer_acl([view.key_name], peers)
        return [
            f"    zone {_q(catalog_zone(view.name))} {{",
            f"        type primary; file {_q(catalog_path(view.name))};",
            "        also-notify { " + " ".join(f"{s.address} key {_q(view.key_name)};" for s in peers_notify) + " };",
            f"        allow-query {acl};",
            f"        allow-transfer {acl};",
            "    };",
        ]

    def _catalog_secondary(self, view: ViewPlan, refs: list[ZoneFileRef], my_primaries: list[Server]) -> list[str]:
        """A secondary's view: the catalog only; BIND adds, transfers and removes its members."""
        primaries = "{ " + " ".join(f"{s.address} key {_q(view.key_name)};" for s in my_primaries) + " }"
        directory = self.secondary_directory
        out = []
        largest = max((self.largest_rrset(view, ref.zone) for ref in refs), default=0)
        if largest > BIND_MAX_RECORDS_PER_TYPE:
            # a member zone's options cannot come through a catalog in BIND 9.18: the view's
            # limit covers its largest rrset
            out.append(f"    max-records-per-type {largest};")
        catalog = catalog_zone(view.name)
        # BIND records catalog-added zones in <view>.nzd: beside the transferred zones, not in
        # named's working directory (the rendered tree, which imsdr replaces whole)
        out.append(f"    new-zones-directory {_q(directory)};")
        out += [
            f"    catalog-zones {{ zone {_q(catalog)} default-primaries {primaries} zone-directory "
            f"{_q(directory)} in-memory no min-update-interval {CATALOG_MIN_UPDATE}; }};",
            f"    zone {_q(catalog)} {{",
            f"        type secondary; file {_q(secondary_file(directory, view.name, catalog))};",
            f"        primaries {primaries};",
            "    };",
        ]
        return out

    def _stub_zones(self, server: Server) -> list[tuple[str, list[str]]]:
        """(national zone, the national servers' addresses) for a province server's core views."""
        if not server.area or not self.plan.areas:
            return []
        national = next((a for a in self.plan.areas if a.national), None)
        if national is None or national.id == server.area:
            return []
        addresses = [s.address for s in self.layout.servers if s.area == national.id]
        zones = [z.name for z in self.plan.zones.values() if z.area == national.id]
        return [(z, addresses) for z in zones] if addresses else []

    def largest_rrset(self, view: ViewPlan, zone: str) -> int:
        """Records in the largest rrset of ``zone`` as ``view`` serves it (base or override)."""
        key = (view.side, zone)
        base = self.base_largest.get(key)
        if base is None:
            rrsets = self.plan.zones_of(view.side)[zone].rrsets.values()
            base = self.base_largest[key] = max(map(len, map(_RDATAS, rrsets)), default=0)  # (in C: 100,000s)
        overrides = view.overrides.get(zone, {})
        override = max((len(r.rdatas) for r in overrides.values()), default=0)
        if base > BIND_MAX_RECORDS_PER_TYPE and overrides:  # what the view serves: the base rrsets it keeps
            rrsets = self.plan.zones_of(view.side)[zone].rrsets
            base = max((len(r.rdatas) for k, r in rrsets.items() if k not in overrides), default=0)
        return max(base, override)

    def body(self, server: Server) -> str:
        layout = self.layout
        my_primaries = [s for s in layout.primaries if s.id != server.id and s.area == server.area] \
            if server.role == "secondary" else []
        options = tuple(_source_options(server)) if layout.sync != "provisioning" else ()
        key = (server.role, options, tuple(s.id for s in my_primaries), server.area)
        text = self.bodies.get(key)
        if text is None:
            text = self.bodies[key] = self._body(server, my_primaries, list(options))
        return text

    def _body(self, server: Server, my_primaries: list[Server], source_options: list[str]) -> str:
        plan, layout, secondary_directory = self.plan, self.layout, self.secondary_directory
        held = [(v, r) for v, r in zip(plan.views, self.refs, strict=True) if server.holds(v)]
        keyed = [v for v, _ in held if v.side != "none"]
        out: list[str] = []
        for view, _ in held:
            if view.kind != "default":
                out.append(f"acl {_q(view.name)} {{ {_acl_body(view.match_clients)} }};")
        if keyed:
            out.append(f"acl {_q(VIEW_KEYS_ACL)} {{ {' '.join(f'key {_q(v.key_name)};' for v in keyed)} }};")
        out.append("")
        peers_notify = [s for s in layout.secondaries if s.area == server.area] if server.role == "primary" else []
        peers = sorted({s.address for s in layout.servers if s.area == server.area and s.id != server.id},
                       key=ipaddress.ip_address)  # (an order of their own: not the inventory's element order)
        stubs = self._stub_zones(server)
        catalogs = self.catalogs(server)
        users: dict[str, list[ViewPlan]] = {}  # file path -> views serving it
        for view, refs in held:
            if view.side != "none":
                for ref in refs:
                    users.setdefault(ref.path, []).append(view)
        defined: dict[str, str] = {}  # file path -> view that defined it
        for view, refs in held:
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
            out.append(f"    allow-transfer {transfer_acl([view.key_name], peers)};")
            if view.side == "access" and self.rate_limit:
                # the access resolvers are known and aggregate many users: exempt; UEs asking
                # directly (and spoofed sources) are limited
                exempt = [p for p in view.match_clients if p in self.resolvers] if view.kind == "local" else []
                out.append(f"    rate-limit {{ responses-per-second {self.rate_limit}; window {RATE_LIMIT_WINDOW};"
                           + (f" exempt-clients {{ {_acl_body(tuple(exempt))} }};" if exempt else "") + " };")
            if stubs and view.kind == "site":
                # the core of this area reaches the other areas' home domains and numbers by
                # recursion through the national delegations (core clients only, never users)
                out.append("    recursion yes;")
                out.append(f"    allow-recursion {{ {_q(view.name)}; }};")
                out.append(f"    allow-query-cache {{ {_q(view.name)}; }};")
                out.append(f"    query-source address {server.address};")
                # the private IMS tree is not signed; every core view shares one small cache
                out.append("    dnssec-validation no;")
                out.append(f"    max-cache-size {CORE_CACHE}; attach-cache {_q(CORE_CACHE_NAME)};")
            else:
                out.append("    recursion no;")
            out.append(f"    notify {'explicit' if peers_notify else 'no'};")
            out += source_options
            if catalogs and server.role == "secondary":
                out += self._catalog_secondary(view, refs, my_primaries)
                refs = []  # the member zones come from the catalog, never from this file
            elif catalogs and peers_notify:
                out += self._catalog_primary(view, peers_notify, peers)
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
                        # with catalogs every sharing view's copy on a secondary is its own zone,
                        # transferred with that view's key: NOTIFY each of them
                        notified = sharing if catalogs else [view]
                        body.append("also-notify { " + " ".join(
                            f"{s.address} key {_q(v.key_name)};" for v in notified for s in peers_notify) + " };")
                else:
                    body.append(f"type secondary; file {_q(secondary_file(secondary_directory, view.name, zone))};")
                    body.append("primaries { " + " ".join(
                        f"{s.address} key {_q(view.key_name)};" for s in my_primaries) + " };")
                largest = self.largest_rrset(view, zone)
                if largest > BIND_MAX_RECORDS_PER_TYPE:
                    # BIND 9.18.28+ refuses to load (or transfer) a zone with a larger rrset than
                    # max-records-per-type (100 by default): raise it for this zone only
                    body.append(f"max-records-per-type {largest};")
                updatable = (plan.enum_updates and server.role == "primary"
                             and plan.zones_of(view.side)[zone].kind == "enum")
                if updatable:
                    # RFC 2136: provisioning changes the numbers' NAPTRs only, signed with a view's key
                    body.append("update-policy { " + " ".join(
                        f"grant {_q(v.key_name)} zonesub NAPTR;" for v in sharing) + " };")
                if len(sharing) > 1:  # shared with in-view: zone options apply to every sharing view
                    acls = " ".join(
                        ("any;" if v.kind == "default" else f"{_q(v.name)};") + f" key {_q(v.key_name)};"
                        for v in sharing)
                    body.append(f"allow-query {{ {acls} }};")
                if updatable:
                    # 'imsdr enum-update' reads the zone (AXFR) with the key it updates it with, from
                    # the provisioning host (any address): whoever holds the key may already change
                    # the zone, so reading it grants nothing more; secondaries use the same rule
                    body.append("allow-transfer { " + " ".join(
                        f"key {_q(v.key_name)};" for v in sharing) + " };")
                elif len(sharing) > 1:
                    body.append(f"allow-transfer {transfer_acl([v.key_name for v in sharing], peers)};")
                out.append(f"    zone {_q(zone)} {{")
                out += [f"        {line}" for line in body]
                out.append("    };")
            if view.kind == "site":
                for zone, addresses in stubs:
                    out.append(f"    zone {_q(zone)} {{ type static-stub; server-addresses {{ "
                               f"{' '.join(f'{a};' for a in addresses)} }}; }};")
            out.append("};")
            out.append("")
        return "\n".join(out)


# --- access resolvers ----------------------------------------------------------------------------


def server_order(topology: Topology, layout: ServerLayout, region: str | None, area: str = "") -> list[Server]:
    """The name servers in the order a client of ``region`` uses them (``load_sharing``)."""
    visible = [s for s in layout.servers if not s.hidden]
    if area:
        visible = [s for s in visible if s.area == area]
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
    view = next((v for v in plan.views if v.kind == "local" and v.subject == ln_id), None)
    area = view.area if view is not None else ""
    servers = server_order(topology, layout, region, area)
    how = {
        "regional": (f"the servers of region {region} are listed first, but BIND picks among forwarders\n"
                     "// by measured round-trip time and does not keep the order: in effect rtt (the region's own\n"
                     "// servers, being closer, usually answer first; all others stay as backup)"),
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
    forwarders = " ".join(f"{s.access_address or s.address};" for s in servers)
    for zone in (plan.view_zones(view) if view is not None and area else plan.access_zones):
        out.append(f'zone "{zone}" {{ type forward; forward only; forwarders {{ {forwarders} }}; }};')
    return "\n".join(out)
