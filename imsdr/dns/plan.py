"""The whole DNS plan, in memory, as data: zones -> names -> rrsets, views -> overrides.

Nothing here writes files. ``build_dns_plan(topology)`` is the one entry point; the zone
writer, the per-server named.conf renderer, the lint, and the offline resolver/runbook helpers
all read the returned :class:`DnsPlan`.

Design (see docs/dns.md): access and core data are kept apart.

* **Core zones** (``DnsPlan.zones``), one per home domain (and the 3GPP home domain): SOA, NS,
  NAPTR -> SRV -> A/AAAA for the I-CSCF entry, SRV (+NAPTR) for every pair/pool with a
  ``dns_name``, and A/AAAA for every element FQDN (an SBC by its core-side addresses). Served
  only in core views (``core-<site>``), whose overrides put the same site first.
* **Access zones** (``DnsPlan.access_zones``), same origins, holding only what a UE may see:
  the SBC discovery names, the home domain's NAPTR/SRV leading to the SBCs, the SBCs' access
  addresses and the name servers' addresses. Served in user views (``users-<local network>``,
  matched by the access resolvers and UE prefixes), whose overrides answer the local SBC first
  (SRV) and only the local SBC(s) for A/AAAA (the DR SBC under a second name).
* **SBC zones** (``DnsPlan.sbc_zones``), same origins, for the SBCs' core interfaces (views
  ``sbc-<site>``, before the site's core view): the P-CSCF pair/pool names and the P-CSCFs' and
  name servers' addresses only, same site first.
* **ENUM zones**, one per ENUM block (origin = reversed block prefix + suffix), plus the country
  code's parent zone delegating to them (numbers outside every block: NXDOMAIN), served in core
  views only. A block is the wildcard(s) that cover it (or, ``style: numbers``, one NAPTR per
  number, computed on demand, never enumerated); per-number exceptions from a provisioning file
  (:mod:`imsdr.dns.enum_exceptions`) are stored rrsets. Lookups follow RFC 4592 as BIND does
  (closest encloser, empty non-terminals), so ``resolve`` answers what ``dig`` gets.
* **Host zones** (``network.dns.host_zone``, ``DnsPlan.host_zones``): ``<label>.<home domain>`` on
  each side, holding the host records of the elements named under it; no view overrides them
  (one file per side, shared with ``in-view``); the home-domain zone delegates each (NS + glue).
* The **default view** refuses, unless ``network.dns.default_view: access`` serves it the access
  base content (every SBC, no preference).

``excluded`` element ids (a drained element) are left out of every SRV and SBC answer; their own
address records stay.

Why one module (~1,550 lines, most of it :class:`_Builder`): the plan's types, their lookups and
the builder share one representation that none of them explains alone. The builder computes core,
access and ENUM zones and every view's overrides from common intermediate state (the SBC DR
orders, the name servers, each site's preference) and, for a lazy plan, leaves closures in
``DnsPlan.pending`` that :meth:`DnsPlan.materialise` calls back; the lookups (RFC 4592 closest
encloser, ``existing_nodes``, ENUM wildcard ``stems``) read wildcards and empty non-terminals
exactly as the builder and :func:`apply_exceptions` store them. Split in two, each half would
hold the other's invariants without their code, and the plan's readers would import both.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, Literal

from imsdr.dns.names import is_subdomain, reverse_digits
from imsdr.dns.records import AAAA, NAPTR, NS, SOA, SRV, TYPE_ORDER, A, Rdata, RecordMaker, RRset
from imsdr.model.areas import Area, area_of_domain, delegating_zone, service_areas
from imsdr.model.selection import (  # noqa: F401 - re-exported: the DNS plan's selection data
    PRIORITY_OTHER,
    PRIORITY_SAME_REGION,
    PRIORITY_SAME_SITE,
    capacity_of,
    site_tier,
    srv_weights,
)

if TYPE_CHECKING:
    from imsdr.dns.enum_exceptions import EnumExceptions
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

# RFC 3263 transport -> (NAPTR service, SRV label prefix)
TRANSPORTS: dict[str, tuple[str, str]] = {
    "udp": ("SIP+D2U", "_sip._udp"),
    "tcp": ("SIP+D2T", "_sip._tcp"),
    "tls": ("SIPS+D2T", "_sips._tcp"),
}
SIP_TYPES = frozenset({"sbc", "pcscf", "cscf", "mgcf", "as"})
ENUM_ORDER, ENUM_PREFERENCE = 100, 10
NAPTR_ORDER = 10
PRIORITY_LOCAL_SBC, PRIORITY_DR_SBC = 10, 20

RRKey = tuple[str, str]  # (name, rdtype)
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a planned rrset comes from, so lint can point at the inventory line."""

    ident: str  # an inventory id ('' for network-wide settings)
    field: tuple[str | int, ...] = ()
    what: str = ""


@dataclass(frozen=True, slots=True)
class PlanIssue:
    """A reason the plan cannot be written (found while building it)."""

    origin: Origin
    message: str


@dataclass(frozen=True, slots=True)
class EnumBlockPlan:
    """One ENUM block: a zone whose NAPTR records are computed from the block, not stored."""

    id: str
    prefix: str  # E.164 digits incl. country code, no '+'
    style: Literal["wildcard", "numbers"]
    domain: str
    zone: str
    ttl: int
    first: int | None = None  # numbers style, or a ranged wildcard block
    last: int | None = None
    length: int | None = None
    # wildcard style: the digit strings below the prefix whose wildcards cover the block ('' the
    # whole prefix); a stem as long as a number is that number's own record, not a wildcard
    stems: tuple[str, ...] = ("",)
    skip: frozenset[int] = frozenset()  # numbers style: numbers a provisioned exception replaces

    @property
    def count(self) -> int:
        """NAPTR records this block writes."""
        if self.style == "wildcard":
            return len(self.stems)
        assert self.first is not None and self.last is not None
        return self.last - self.first + 1 - len(self.skip)

    @property
    def free(self) -> int | None:
        """Digits of a number after the prefix (None: a wildcard without a length)."""
        return None if self.length is None else self.length - len(self.prefix)

    def stem_owner(self, stem: str) -> str:
        """The owner (relative to the zone) the block writes for ``stem``: ``*.<stem>``, or the
        number itself when the stem is a whole number."""
        if self.free is not None and len(stem) == self.free:
            return ".".join(reversed(stem))
        return "*" + ("." + ".".join(reversed(stem)) if stem else "")

    def naptr(self, number: str | None = None) -> NAPTR:
        """The NAPTR for ``number`` (numbers style) or the block's wildcard NAPTR."""
        if self.style == "wildcard":
            regexp = f"!^(.*)$!sip:\\1@{self.domain}!"
        else:
            regexp = f"!^.*$!sip:+{number}@{self.domain}!"
        return NAPTR(ENUM_ORDER, ENUM_PREFERENCE, "u", "E2U+sip", regexp, ".")

    def covers(self, digits: str) -> bool:
        """True when the number ``digits`` gets a NAPTR from this block (exceptions aside)."""
        if not digits.startswith(self.prefix):
            return False
        if self.style == "wildcard":
            rest = digits[len(self.prefix):]
            return any(rest == s if len(s) == self.free else rest.startswith(s) and len(rest) > len(s)
                       for s in self.stems)
        assert self.first is not None and self.last is not None
        return len(digits) == self.length and self.first <= int(digits) <= self.last

    def has_node(self, rest: str) -> bool:
        """True when the name of digits ``rest`` (below the prefix) exists in the zone because of
        this block: a record's owner or an ancestor of one (an empty non-terminal)."""
        if self.style == "wildcard":
            return any(s.startswith(rest) for s in self.stems)
        assert self.first is not None and self.last is not None and self.free is not None
        if len(rest) > self.free:
            return False
        scale = 10 ** (self.free - len(rest))
        low = int(self.prefix + rest) * scale
        return low <= self.last and low + scale - 1 >= self.first

    def owner(self, number: str) -> str:
        return f"{reverse_digits(number[len(self.prefix) :])}.{self.zone}"


@dataclass
class ZonePlan:
    name: str
    kind: Literal["home", "access", "enum", "enum_parent", "delegation"]
    purpose: str
    default_ttl: int
    rrsets: dict[RRKey, RRset] = field(default_factory=dict)
    blocks: list[EnumBlockPlan] = field(default_factory=list)
    area: str = ""  # the service area whose servers are authoritative ('' every area, or no areas)
    # ENUM zones: every name below the apex the stored rrsets make exist (owners and empty
    # non-terminals), relative, labels left to right (existing_nodes)
    nodes: frozenset[str] = frozenset()
    # records imsdr does not model, kept from an imported configuration (network.dns.kept_records):
    # master-file lines written back unchanged
    kept: tuple[str, ...] = ()

    @property
    def soa(self) -> SOA:
        return self.rrsets[(self.name, "SOA")].rdatas[0]  # type: ignore[return-value]

    def sorted_rrsets(self) -> list[RRset]:
        """The rrsets in file order: names by :func:`sort_key`, then types in TYPE_ORDER."""
        order = {t: i for i, t in enumerate(TYPE_ORDER)}
        rrsets = list(self.rrsets.values())
        # decorated once (a national ENUM zone: 100,000s of rrsets); the label list compares as
        # sort_key's tuple does, and the index keeps the sort stable
        names = [r.name for r in rrsets]
        suffix = "." + self.name
        if sum(map(str.endswith, names, repeat(suffix))) + names.count(self.name) == len(names):
            # every name at or below the apex: the apex's labels lead every key, so they are left
            # out (the apex's own key is empty, before every other) and the order is the same
            cut = len(suffix)
            labels = [n[:-cut].split(".")[::-1] if n != self.name else [] for n in names]
        else:
            labels = [n.split(".")[::-1] for n in names]
        keyed = [(label, order.get(r.rdtype, 99), i) for i, (label, r) in enumerate(zip(labels, rrsets, strict=True))]
        keyed.sort()
        return [rrsets[k[2]] for k in keyed]

    def names(self) -> set[str]:
        return {name for name, _ in self.rrsets}


Side = Literal["access", "core", "sbc", "none"]


@dataclass(frozen=True)
class ViewPlan:
    name: str
    kind: Literal["local", "site", "sbc", "default", "peers", "national"]
    subject: str  # local network id, site id, area id (peers, national) or '' for the default view
    match_clients: tuple[str, ...]  # prefixes in order; () for the default view (matches any)
    description: str
    overrides: dict[str, dict[RRKey, RRset]] = field(default_factory=dict)  # zone -> rrsets replaced
    side: Side = "core"  # which zones it serves: access zones, core (+ENUM) zones, the SBCs' core-side
    # zones (P-CSCF names only), or none (refuses)
    area: str = ""  # the service area whose servers hold the view ('' every server)

    @property
    def key_name(self) -> str:
        """The TSIG key name transfers and NOTIFY of this view use (the secret is never rendered)."""
        return f"imsdr-{self.name}"

    def matches(self, address: str) -> bool:
        if self.kind == "default":
            return True
        ip = ipaddress.ip_address(address)
        return any(ip in ipaddress.ip_network(p) for p in self.match_clients)


@dataclass
class DnsPlan:
    network: str
    home_domains: tuple[str, ...]
    enum_suffix: str
    sbc_name: str  # absolute SBC discovery name
    zones: dict[str, ZonePlan]  # core side: home zones, ENUM zones, the ENUM parent zone
    views: list[ViewPlan]
    access_zones: dict[str, ZonePlan] = field(default_factory=dict)
    # what an SBC's core interface may see (the P-CSCF names and addresses), per home domain
    sbc_zones: dict[str, ZonePlan] = field(default_factory=dict)
    sbc_dr_name: str = ""  # absolute name of the DR SBC alone (A-only clients' second proxy)
    excluded: frozenset[str] = frozenset()  # element ids left out of every answer (drained)
    enum_updates: bool = False  # primaries accept TSIG-signed RFC 2136 updates of ENUM NAPTRs
    internal_names: dict[str, str] = field(default_factory=dict)  # core-only name -> what it is
    origins: dict[tuple[str, str, str], Origin] = field(default_factory=dict)  # (zone, name, type): see origin_of
    # ENUM zone -> the exceptions file (Origin) its provisioned numbers' NAPTRs come from (origin_of)
    exception_origins: dict[str, Origin] = field(default_factory=dict)
    issues: list[PlanIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    areas: tuple[Area, ...] = ()  # service areas (network.dns.areas); () = one set serves everything
    # network.dns.host_zone: the zones <label>.<home domain> holding element host records, on
    # every side (no view overrides them: one file per side, shared by every view with in-view)
    host_zones: tuple[str, ...] = ()
    # lazy plans only: view name -> computes that view's overrides on first use
    pending: dict[str, Callable[[], None]] = field(default_factory=dict, repr=False)
    _view_index: dict[str, ViewPlan] = field(default_factory=dict, repr=False, compare=False)
    _view_count: int = field(default=-1, repr=False, compare=False)

    # --- queries ---------------------------------------------------------------------------------

    def origin_of(self, zone: str, name: str, rdtype: str) -> Origin | None:
        """The inventory part the ``rdtype`` records at ``name`` in ``zone`` come from (None: none
        is known): ``origins``, or the exceptions file for a provisioned number's NAPTR.

        Those (hundreds of thousands nationally) are not listed in ``origins``: an ENUM zone stores
        no NAPTR below its apex but the exceptions' (its blocks' records are computed, not stored:
        ``apply_exceptions``), so one in a zone the exceptions touched is a number's, unless it is
        a wildcard repeated below their ancestors (which comes from no inventory part)."""
        if rdtype == "NAPTR" and name != zone and not name.startswith("*."):
            file = self.exception_origins.get(zone)
            if file is not None:
                core = self.zones.get(zone)
                if core is not None and (name, "NAPTR") in core.rrsets:
                    return file
        return self.origins.get((zone, name, rdtype))

    def materialise(self, view: ViewPlan) -> ViewPlan:
        """Compute ``view``'s overrides now if the plan was built lazily and they are not yet."""
        build = self.pending.pop(view.name, None)
        if build is not None:
            build()
        return view

    def materialise_all(self) -> None:
        for view in self.views:
            self.materialise(view)

    def _views_by_name(self) -> dict[str, ViewPlan]:
        if self._view_count != len(self.views):  # (re)index: views are appended while the plan is built
            self._view_index.clear()
            for view in self.views:
                self._view_index.setdefault(view.name, view)  # the first view of a name, as before
            self._view_count = len(self.views)
        return self._view_index

    def view(self, name: str) -> ViewPlan:
        view = self._views_by_name().get(name)
        if view is not None:
            return self.materialise(view)
        raise KeyError(f"no view {name!r} (views: {', '.join(v.name for v in self.views)})")

    def view_for_client(self, address: str) -> ViewPlan:
        """The view BIND answers ``address`` from: the first whose match-clients contains it."""
        for view in self.views:
            if view.matches(address):
                return self.materialise(view)
        return self.materialise(self.views[-1])

    def zones_of(self, side: Side) -> dict[str, ZonePlan]:
        """The zones a view of ``side`` serves."""
        if side == "access":
            return self.access_zones
        if side == "sbc":
            return self.sbc_zones
        return self.zones if side == "core" else {}

    def serves(self, view: ViewPlan, zone: ZonePlan) -> bool:
        """Whether the servers holding ``view`` serve ``zone`` in it (always, without areas): a
        peers or national view its own area's zones only, any other view its area's and the
        zones every area serves (the 3GPP home domain)."""
        if not self.areas or not view.area:
            return True
        if view.kind in ("peers", "national"):
            return zone.area == view.area
        return zone.area in (view.area, "")

    def view_zones(self, view: ViewPlan) -> dict[str, ZonePlan]:
        """The zones ``view`` serves, by name (its side's zones; with areas, its area's)."""
        zones = self.zones_of(view.side)
        if not self.areas or not view.area:
            return zones
        return {name: zone for name, zone in zones.items() if self.serves(view, zone)}

    def find_zone(self, qname: str, side: Side = "core", view: ViewPlan | None = None) -> ZonePlan | None:
        """The most specific zone of ``side`` that contains ``qname`` (that ``view`` serves)."""
        name = qname.rstrip(".").lower()
        zones = self.zones_of(side)
        while True:  # walk up the labels: O(labels), not O(zones)
            zone = zones.get(name)
            if zone is not None and (view is None or self.serves(view, zone)):
                return zone
            dot = name.find(".")
            if dot < 0:
                return None
            name = name[dot + 1 :]

    def zone_for_view(self, view: ViewPlan | str, zone_name: str) -> ZonePlan:
        """The zone as ``view`` serves it: base content with the view's overrides applied."""
        v = self.view(view) if isinstance(view, str) else self.materialise(view)
        return merged_zone(self.zones_of(v.side)[zone_name], v.overrides.get(zone_name, {}))

    def lookup_rrset(self, view: ViewPlan | str, qname: str, rdtype: str) -> RRset | None:
        """The rrset ``view`` answers for (qname, rdtype), ENUM computed from blocks; None if none."""
        v = self.view(view) if isinstance(view, str) else view
        if self.pending:
            self.materialise(v)
        qname = qname.rstrip(".").lower()
        rdtype = rdtype.upper()
        zone = self.find_zone(qname, v.side, v if self.areas else None)
        if zone is None and self.areas and v.kind == "site":
            return self._delegated(qname, rdtype)  # recursion through the national delegations
        if zone is None:
            return None
        if self.areas and zone.kind == "delegation" and v.kind == "site":
            return self._delegated(qname, rdtype)
        overrides = v.overrides.get(zone.name, {})
        if (qname, rdtype) in overrides:
            return overrides[(qname, rdtype)]
        if (qname, rdtype) in zone.rrsets:
            return zone.rrsets[(qname, rdtype)]
        if zone.kind == "enum" and rdtype == "NAPTR" and not overrides:
            return self._enum_rrset(zone, qname)
        return None

    def _delegated(self, qname: str, rdtype: str) -> RRset | None:
        """What a core view's recursion finds for a name another area is authoritative for: the
        national set refers it to that area's servers, which answer from their peers view."""
        zone = self.find_zone(qname, "core")
        if zone is None or not zone.area or zone.kind in ("delegation", "enum_parent"):
            return None  # outside every area's zones: NXDOMAIN from the national set
        peers = self._views_by_name().get(f"peers-{zone.area}")
        return self.lookup_rrset(peers, qname, rdtype) if peers is not None else None

    def lookup(self, view: ViewPlan | str, qname: str, rdtype: str) -> list[Rdata]:
        """The records ``view`` answers for (qname, rdtype), in plan order; [] when none."""
        rrset = self.lookup_rrset(view, qname, rdtype)
        return list(rrset.rdatas) if rrset else []

    def enum_lookup(self, number: str) -> list[NAPTR]:
        """NAPTR records for an E.164 number ('+86...' or digits) as the most specific ENUM zone
        answers it (a stored exception, a block's record or wildcard); [] when none does."""
        digits = number.lstrip("+")
        qname = f"{reverse_digits(digits)}.{self.enum_suffix}"
        zone = self.find_zone(qname)
        if zone is None or zone.kind != "enum":
            return []
        rrset = zone.rrsets.get((qname, "NAPTR")) or self._enum_rrset(zone, qname)
        return list(rrset.rdatas) if rrset else []  # type: ignore[arg-type]

    def _enum_rrset(self, zone: ZonePlan, qname: str) -> RRset | None:
        """The NAPTR rrset BIND answers at ``qname`` (not a stored one) in ENUM ``zone``: RFC 4592.

        A name that exists (a block's record, or an empty non-terminal) answers its own records
        or none (NODATA); otherwise the wildcard at its closest encloser answers, if there is one
        (else NXDOMAIN). Names exist because of stored rrsets (``zone.nodes``) or the blocks."""
        suffix = "." + zone.name
        if not qname.endswith(suffix):
            return None
        labels = qname[: -len(suffix)].split(".")  # left to right; the apex's child is the last

        def exists(k: int) -> tuple[bool, str | None]:
            """Does the ancestor without the ``k`` leftmost labels exist; its digits below the apex."""
            part = labels[k:]
            rest = "".join(reversed(part)) if all(len(x) == 1 and x in "0123456789" for x in part) else None
            if not part or ".".join(part) in zone.nodes:
                return True, rest
            return rest is not None and any(b.has_node(rest) for b in zone.blocks), rest

        found, rest = exists(0)
        if found:  # the name exists: its own record, or NODATA
            for block in zone.blocks:
                if rest is None or not block.covers(block.prefix + rest):
                    continue
                if block.style == "numbers" and int(block.prefix + rest) not in block.skip:
                    return RRset(qname, "NAPTR", block.ttl, (block.naptr(block.prefix + rest),))
                if block.style == "wildcard" and rest in block.stems:  # a stem that is one number
                    return RRset(qname, "NAPTR", block.ttl, (block.naptr(),))
            return None
        for k in range(1, len(labels) + 1):  # the closest encloser: drop labels from the left
            found, rest = exists(k)
            if not found:
                continue
            rel = ".".join(labels[k:])
            stored = zone.rrsets.get((f"*.{rel}{suffix}" if rel else f"*{suffix}", "NAPTR"))
            if stored is not None:
                return RRset(qname, "NAPTR", stored.ttl, stored.rdatas)
            for block in zone.blocks:
                if block.style == "wildcard" and rest is not None and rest in block.stems and (
                        block.free is None or len(rest) < block.free):
                    return RRset(qname, "NAPTR", block.ttl, (block.naptr(),))
            return None
        return None

    def all_rrsets(self, views: bool = True, base: bool = True) -> Iterable[tuple[str, ViewPlan | None, RRset]]:
        """(zone, view or None for base, rrset) for every stored rrset (ENUM numbers excluded).

        Base rrsets of the access zones come with :data:`ACCESS_BASE`, of the core zones with None.
        ``views=False``: the base zones only (a lazy plan's views are then not computed);
        ``base=False``: the views' overrides only (what follows the base zones' rrsets).
        """
        if views:
            self.materialise_all()
        if base:
            yield from self._base_rrsets()
        if not views:
            return
        for view in self.views:
            for zone_name, rrsets in view.overrides.items():
                for rrset in rrsets.values():
                    yield zone_name, view, rrset

    def _base_rrsets(self) -> Iterable[tuple[str, ViewPlan | None, RRset]]:
        for zone, view in self.base_zones():
            for rrset in zone.rrsets.values():
                yield zone.name, view, rrset

    def base_zones(self) -> Iterable[tuple[ZonePlan, ViewPlan | None]]:
        """(zone, what ``all_rrsets`` gives its rrsets as their view) for every zone of the base
        content, in ``all_rrsets``' order: core zones (None), access (:data:`ACCESS_BASE`), SBC."""
        for zone in self.zones.values():
            yield zone, None
        for zone in self.access_zones.values():
            yield zone, ACCESS_BASE
        for zone in self.sbc_zones.values():
            yield zone, SBC_BASE


    def first_try(self, view: ViewPlan | str, srv_name: str) -> dict[str, float]:
        """Target name -> probability that a client of ``view`` tries it first for ``srv_name``.

        RFC 2782 selection over the SRV rrset the view answers (lowest priority, then weights),
        computed by the same code ``resolve`` uses; {} when the view has no SRV there.
        """
        from imsdr.model.rfc2782 import first_pick_probabilities

        srvs = [rd for rd in self.lookup(view, srv_name, "SRV") if isinstance(rd, SRV) and rd.target != "."]
        if not srvs:
            return {}
        best = min(rd.priority for rd in srvs)
        tier = [rd for rd in srvs if rd.priority == best]
        out: dict[str, float] = {}
        for rd, p in zip(tier, first_pick_probabilities([rd.weight for rd in tier]), strict=True):
            out[rd.target] = out.get(rd.target, 0.0) + float(p)
        return out


CORE_BASE = ViewPlan("(core base)", "default", "", (), "core base content", side="core")
ACCESS_BASE = ViewPlan("(access base)", "default", "", (), "access base content", side="access")
SBC_BASE = ViewPlan("(sbc base)", "default", "", (), "SBC core-side base content", side="sbc")


def base_view(side: Side) -> ViewPlan:
    """The pseudo-view whose content is ``side``'s base zones (a zone file no view overrides)."""
    return ACCESS_BASE if side == "access" else SBC_BASE if side == "sbc" else CORE_BASE

# --- building ------------------------------------------------------------------------------------


def _port(el: Element, transport: str) -> int:
    return el.tls_port if transport == "tls" else el.port


class _Builder:
    def __init__(self, topo: Topology, excluded: frozenset[str] = frozenset(),
                 exceptions: EnumExceptions | None = None) -> None:
        self.topo = topo
        self.excluded = excluded
        self.exceptions = exceptions
        net = topo.network
        self.net = net
        self.ttl = net.ttl
        self.primary = net.primary_domain
        self.transports = [t.value for t in net.dns.transports]
        self._accepts: dict[str, frozenset[str]] = {}  # element id -> transports it accepts
        self._fqdn: dict[str, str] = {}  # element id -> FQDN
        self._weight_memo: dict[tuple[str, ...], list[int]] = {}  # member ids of one tier -> SRV weights
        self._srv_memo: dict[tuple[int, int, int, str], SRV] = {}  # equal SRV rdatas: one object
        # (id(member list), transport) -> (that list, (index, (id, port, FQDN)) of its members accepting it)
        self._usable_memo: dict[tuple[int, str], tuple[list[Element], list[tuple[int, tuple[str, int, str]]]]] = {}
        # (name, side) -> its zone: every zone exists before the first record is placed
        self._zone_memo: dict[tuple[str, Side], ZonePlan | None] = {}
        # (id(usable list), tiers) -> (that list, its SRV records); ids of SRVs -> their tuple
        self._rdatas_memo: dict[tuple[int, tuple[int, ...]], tuple[list[tuple[int, tuple[str, int, str]]],
                                                                   tuple[SRV, ...]]] = {}
        self._srv_tuples: dict[tuple[int, ...], tuple[SRV, ...]] = {}
        # id(member list) -> (that list, each member's site, a member at each site)
        self._sites_memo: dict[int, tuple[list[Element], tuple[str, ...], dict[str, Element]]] = {}
        self.area_ns: dict[str, list[str]] = {}  # service areas: area id -> its name servers' FQDNs
        # id(services list) -> (that list, indexes of its P-CSCF-only services): asked once per site
        self._pcscf_memo: dict[int, tuple[list[tuple[str, list[Element], Origin]], list[int]]] = {}
        # element id -> its addresses as one-address prefixes: each area's peers view lists every
        # other area's name servers (32 areas x ~120 servers nationally)
        self._host_prefixes: dict[str, tuple[str, ...]] = {}
        self.plan = DnsPlan(
            network=net.name,
            home_domains=tuple(net.home_domains),
            enum_suffix=net.enum_suffix,
            sbc_name=f"{net.dns.sbc_name}.{net.primary_domain}",
            zones={},
            views=[],
            sbc_dr_name=f"{net.dns.sbc_dr_name}.{net.primary_domain}",
            excluded=excluded,
            enum_updates=net.dns.enum_updates,
        )

    # --- helpers ---------------------------------------------------------------------------------

    def issue(self, origin: Origin, message: str) -> None:
        self.plan.issues.append(PlanIssue(origin, message))

    def zone_of(self, name: str, side: Side = "core") -> ZonePlan | None:
        """``plan.find_zone``, once per name and side (the same names come back in every view)."""
        key = (name, side)
        if key in self._zone_memo:
            return self._zone_memo[key]
        zone = self._zone_memo[key] = self.plan.find_zone(name, side)
        return zone

    def serving(self, elements: Iterable[Element]) -> list[Element]:
        """``elements`` without the excluded (drained) ones."""
        return [e for e in elements if e.id not in self.excluded]

    def add(self, target: dict[RRKey, RRset], zone: ZonePlan, rrset: RRset, origin: Origin) -> None:
        key = (rrset.name, rrset.rdtype)
        okey = (zone.name, rrset.name, rrset.rdtype)
        if key in target:
            first = self.plan.origin_of(*okey)
            self.issue(
                origin,
                f"{rrset.name} {rrset.rdtype} is produced twice: by {origin.what} and by "
                f"{first.what if first else 'another part of the plan'}; give one of them another name",
            )
            return
        target[key] = rrset
        self.plan.origins.setdefault(okey, origin)

    def add_base(self, rrset: RRset, origin: Origin, side: Side = "core") -> None:
        zone = self.zone_of(rrset.name, side)
        if zone is None or zone.kind not in ("home", "access"):
            self.issue(
                origin,
                f"{rrset.name} is not under any home domain "
                f"({', '.join(self.plan.home_domains)}), so imsdr has no zone to publish it in",
            )
            return
        self.add(zone.rrsets, zone, rrset, origin)

    def sip_srv_sets(
        self, name: str, members: list[Element], tiers: tuple[int, ...], transports: list[str]
    ) -> dict[str, RRset]:
        """transport -> SRV rrset at ``<_sip._proto>.<name>`` for members supporting it."""
        return self._srv_sets_at(name, self.srv_rdatas(members, tiers, transports))

    def _srv_sets_at(self, name: str, rdatas: dict[str, tuple[SRV, ...]]) -> dict[str, RRset]:
        ttl = self.ttl.srv
        return {t: RRset(f"{TRANSPORTS[t][1]}.{name}", "SRV", ttl, rds) for t, rds in rdatas.items()}

    def srv_rdatas(
        self, members: list[Element], tiers: tuple[int, ...], transports: list[str]
    ) -> dict[str, tuple[SRV, ...]]:
        """transport -> the SRV rdatas of the members supporting it (the same for every name);
        ``tiers``: each member's priority, in member order.

        The same member lists come back in every site view (a national network has hundreds of
        views and SRV sets of hundreds of members): who supports a transport, on which port and
        under which name is worked out once per list, the records once per list and tiers, equal
        SRV records are one object and equal tuples of them one tuple (so the lint and the zone
        writer, which remember by identity, judge and render each once)."""
        out: dict[str, tuple[SRV, ...]] = {}
        for transport in transports:
            usable = self._usable(members, transport)  # (UDP and TCP: mostly one list)
            key = (id(usable), tiers)
            found = self._rdatas_memo.get(key)
            if found is None or found[0] is not usable:
                found = self._rdatas_memo[key] = (usable, self._srv_tuple(usable, tiers))
            if found[1]:
                out[transport] = found[1]
        return out

    def _srv_tuple(self, usable: list[tuple[int, tuple[str, int, str]]], tiers: tuple[int, ...]) -> tuple[SRV, ...]:
        by_tier: dict[int, list[tuple[str, int, str]]] = {}
        for index, member in usable:
            by_tier.setdefault(tiers[index], []).append(member)
        srv = self._srv_memo
        rdatas: list[SRV] = []
        for prio in sorted(by_tier):
            group = by_tier[prio]
            for (_, port, target), weight in zip(group, self._weights_of(group), strict=True):
                key = (prio, weight, port, target)
                rd = srv.get(key)
                if rd is None:
                    rd = srv[key] = SRV(prio, weight, port, target)
                rdatas.append(rd)
        ids = tuple(map(id, rdatas))  # (every SRV is held by _srv_memo: its id is not reused)
        shared = self._srv_tuples.get(ids)
        if shared is None:
            shared = self._srv_tuples[ids] = tuple(rdatas)
        return shared

    def _usable(self, members: list[Element], transport: str) -> list[tuple[int, tuple[str, int, str]]]:
        """(index in ``members``, (id, port, FQDN)) of the members that accept ``transport``, in
        member order; one list for the transports of ``members`` that give equal lists."""
        key = (id(members), transport)
        found = self._usable_memo.get(key)
        if found is None or found[0] is not members:
            usable = [(i, (e.id, _port(e, transport), self._fqdn_of(e))) for i, e in enumerate(members)
                      if transport in self._accepts_of(e)]
            for other in self.transports:
                seen = self._usable_memo.get((id(members), other))
                if seen is not None and seen[0] is members and seen[1] == usable:
                    usable = seen[1]
                    break
            found = self._usable_memo[key] = (members, usable)
        return found[1]

    def _tiers(self, members: list[Element], site: str | None) -> tuple[int, ...]:
        """Each member's SRV priority seen from ``site`` (:func:`site_tier`), in member order: worked
        out per site a member is at, then spread over the members (pools of hundreds of members
        sit at a few sites)."""
        found = self._sites_memo.get(id(members))
        if found is None or found[0] is not members:
            at = {e.site: e for e in members}  # a member at each site: the tier depends on its site only
            found = self._sites_memo[id(members)] = (members, tuple(e.site for e in members), at)
        tier_of = {s: site_tier(self.topo, e, site) for s, e in found[2].items()}
        return tuple(map(tier_of.__getitem__, found[1]))

    def _accepts_of(self, el: Element) -> frozenset[str]:
        accepts = self._accepts.get(el.id)
        if accepts is None:
            accepts = self._accepts[el.id] = frozenset(t.value for t in el.transports)
        return accepts

    def _fqdn_of(self, el: Element) -> str:
        fqdn = self._fqdn.get(el.id)
        if fqdn is None:
            fqdn = self._fqdn[el.id] = self.topo.fqdn(el)
        return fqdn

    def _weights_of(self, group: list[tuple[str, int, str]]) -> list[int]:
        key = tuple(member[0] for member in group)
        weights = self._weight_memo.get(key)
        if weights is None:
            weights = self._weight_memo[key] = srv_weights([self.topo.elements[i] for i in key])
        return weights

    def naptr_set(self, name: str, transports: Iterable[str]) -> RRset:
        rdatas = tuple(
            NAPTR(NAPTR_ORDER, 10 * (i + 1), "s", TRANSPORTS[t][0], "", f"{TRANSPORTS[t][1]}.{name}")
            for i, t in enumerate(transports)
        )
        return RRset(name, "NAPTR", self.ttl.naptr, rdatas)

    def address_sets(self, name: str, elements: list[Element], side: Side = "core") -> list[RRset]:
        """A/AAAA of ``elements`` at ``name``; an SBC by its access or core interface addresses."""
        v4: list[Rdata] = []
        v6: list[Rdata] = []
        for el in elements:
            side_addresses = el.access_addresses if side == "access" else el.core_addresses
            for addr in side_addresses or el.addresses:  # validated by the inventory schema: ':' only in IPv6
                if ":" not in addr:
                    if A(addr) not in v4:
                        v4.append(A(addr))
                elif AAAA(addr) not in v6:
                    v6.append(AAAA(addr))
        out = []
        if v4:
            out.append(RRset(name, "A", self.ttl.a, tuple(v4)))
        if v6:
            out.append(RRset(name, "AAAA", self.ttl.aaaa, tuple(v6)))
        return out

    # --- services: (name, members, origin) that get NAPTR + SRV --------------------------------------

    def home_domain_of(self, elements: list[Element]) -> str:
        return home_domain_of(self.topo, self.plan.home_domains, elements)

    def services(self) -> list[tuple[str, list[Element], Origin]]:
        """(name, members, origin) of every NAPTR+SRV service name.

        The I-CSCF entry of a home domain lists the I-CSCFs whose FQDN is under that domain (every
        I-CSCF when none is); a pair/pool name goes under the home domain all its members' FQDNs
        share (the primary home domain otherwise).
        """
        topo = self.topo
        out: list[tuple[str, list[Element], Origin]] = []
        icscfs = self.serving(topo.with_role("icscf"))
        for domain in self.entry_domains():
            own = [e for e in icscfs if is_subdomain(topo.fqdn(e), domain)]
            origin = Origin("", ("network", "home_domains"), f"the I-CSCF entry of {domain}")
            out.append((domain, own or icscfs, origin))
        for group in topo.groups.values():
            dns_name = group.spec.dns_name
            if dns_name is None:
                continue
            members = self.serving(topo.elements[m] for m in group.members if m in topo.elements)
            origin = Origin(group.id, ("dns_name",), f"{group.kind} '{group.id}' (dns_name {dns_name})")
            if not all(m.type.value in SIP_TYPES for m in members):
                kinds = sorted({m.type.value for m in members} - SIP_TYPES)
                self.plan.notes.append(
                    f"{group.kind} '{group.id}': dns_name {dns_name} not published; "
                    f"imsdr publishes SIP SRV names only, and {', '.join(kinds)} is not SIP"
                )
                continue
            out.append((f"{dns_name}.{self.home_domain_of(members)}", members, origin))
        return out

    # --- the build -------------------------------------------------------------------------------------

    def entry_domains(self) -> list[str]:
        """Home domains whose entry (NAPTR/SRV at the apex) is published, in order."""
        publish = self.net.dns.publish
        out = [d for d in dict.fromkeys(self.net.home_domains)] if "home_domains" in publish else []
        gpp = self.net.threegpp_domain
        if "3gpp" in publish and gpp is not None and gpp not in out:
            out.append(gpp)
        return out

    def zone_domains(self) -> list[str]:
        """Home-domain zones of each side: every home domain, plus the 3GPP one when published."""
        out = list(dict.fromkeys(self.net.home_domains))
        gpp = self.net.threegpp_domain
        if "3gpp" in self.net.dns.publish and gpp is not None and gpp not in out:
            out.append(gpp)
        return out

    def build(self, lazy: bool = False) -> DnsPlan:
        topo, net, plan = self.topo, self.net, self.plan

        def overrides(view: ViewPlan, compute: Callable[[], None]) -> None:
            if lazy:
                plan.pending[view.name] = compute
            else:
                compute()

        areas = plan.areas = service_areas(topo)
        area_ns: dict[str, list[str]] = self.area_ns  # area id -> the FQDNs of its serving name servers
        for area in areas:
            area_ns[area.id] = [topo.fqdn(e) for e in self.serving(
                topo.elements[i] for i in area.nameservers if i in topo.elements)]
        if areas:  # the provinces' servers; the national set holds only its own zones
            ns_ids = [i for a in areas if not a.national for i in a.nameservers]
        else:
            ns_ids = list(net.dns.nameservers) or [e.id for e in topo.by_type["enum_dns"]]
        nameservers = self.serving(topo.elements[i] for i in ns_ids if i in topo.elements)
        ns_names = [topo.fqdn(e) for e in nameservers]
        if not ns_names:
            self.issue(
                Origin("", ("network", "dns", "nameservers"), "network.dns.nameservers"),
                "no nameserver: add an enum_dns element (or list them in network.dns.nameservers); "
                "every zone needs NS records",
            )
        soa = SOA(
            ns_names[0] if ns_names else f"ns.{self.primary}",
            f"{net.dns.hostmaster}.{net.operator_domain}",
            0,
            minimum=self.ttl.negative,
        )
        ns_origin = Origin("", ("network", "dns", "nameservers"), "network.dns.nameservers")

        def apex(zone: ZonePlan) -> None:
            names = area_ns.get(zone.area, ns_names) if zone.area else ns_names
            zone_soa = soa if not names or names[0] == soa.mname else dataclasses.replace(soa, mname=names[0])
            zone.rrsets[(zone.name, "SOA")] = RRset(zone.name, "SOA", self.ttl.soa, (zone_soa,))
            if names:
                zone.rrsets[(zone.name, "NS")] = RRset(zone.name, "NS", self.ttl.ns, tuple(NS(n) for n in names))
            plan.origins[(zone.name, zone.name, "SOA")] = ns_origin
            plan.origins[(zone.name, zone.name, "NS")] = ns_origin

        if "3gpp" in net.dns.publish and net.threegpp_domain is None and "publish" in net.dns.model_fields_set:
            plan.notes.append("network.dns.publish lists 3gpp but mcc/mnc are not given: no 3GPP home domain")
        for domain in self.zone_domains():
            gpp = domain == net.threegpp_domain and domain not in net.home_domains
            what = "3GPP home domain (TS 23.003 13.2)" if gpp else "IMS home domain"
            core = ZonePlan(domain, "home", f"{what} {domain}, core side: CSCF, pools, every element", self.ttl.soa)
            access = ZonePlan(domain, "access", f"{what} {domain}, access side: SBC discovery only", self.ttl.soa)
            owner = area_of_domain(areas, domain)
            core.area = access.area = owner.id if owner is not None else ""
            if areas and owner is None and not gpp:
                self.issue(Origin("", ("network", "dns", "areas"), "network.dns.areas"),
                           f"home domain {domain} is in no area's home_domains: no server would be "
                           "authoritative for it")
            plan.zones[domain] = core
            plan.access_zones[domain] = access
            apex(core)
            apex(access)
            if net.dns.host_zone and domain in net.home_domains:
                self._host_zone(f"{net.dns.host_zone}.{domain}", core, access, apex)
        self._enum_zones(apex)
        if areas:
            self._national(apex, area_ns)
        else:
            self._enum_parent(apex, ns_names)
        apply_exceptions(plan, self.exceptions)

        # core: element addresses (an SBC by its core side)
        for el in topo.elements.values():
            origin = Origin(el.id, ("fqdn",) if el.fqdn else ("id",), f"element '{el.id}'")
            if areas and self._national_host(el, origin):
                continue
            if el.type.value not in ("sbc", "enum_dns"):
                plan.internal_names[topo.fqdn(el)] = f"{el.type.value} '{el.id}'"
            for rrset in self.address_sets(topo.fqdn(el), [el], "core"):
                self.add_base(rrset, origin)

        # core: NAPTR + SRV services, flat (no site preference) in the base
        services = self.services()
        for name, members, origin in services:
            self._service(name, members, origin, site=None, target=None)
            if name not in self.zone_domains():
                plan.internal_names[name] = origin.what

        # access: the name servers' and the SBCs' addresses, the SBC discovery names and each
        # published home domain's entry leading to the SBCs; base = every SBC, no preference
        for el in nameservers:
            origin = Origin(el.id, ("addresses",), f"name server '{el.id}'")
            for rrset in self.address_sets(topo.fqdn(el), [el], "access"):
                if self.zone_of(rrset.name, "access") is not None:
                    self.add_base(rrset, origin, "access")
        sbcs = self.serving(topo.by_type["sbc"])
        for el in sbcs:
            origin = Origin(el.id, ("access_addresses",) if el.access_addresses else ("addresses",),
                            f"SBC '{el.id}' (access side)")
            for rrset in self.address_sets(topo.fqdn(el), [el], "access"):
                self.add_base(rrset, origin, "access")
        sbc_origin = Origin("", ("network", "dns", "sbc_name"), f"the SBC discovery name {plan.sbc_name}")
        if sbcs:
            self._sbc(sbcs, [], sbc_origin, target=None)
        else:
            plan.notes.append(f"no SBC in the inventory: {plan.sbc_name} is not published")
        if plan.host_zones:
            self._delegate_hosts(plan.zones)
            self._delegate_hosts(plan.access_zones)
            self._host_zone_clashes([plan.sbc_name, plan.sbc_dr_name, *(name for name, _, _ in services)])

        # views
        area_of_ln = {ln: a.id for a in areas for ln in a.local_networks}
        area_of_site = {site: a.id for a in areas for site in a.sites}
        gpp_entry = net.threegpp_domain if net.threegpp_domain in self.entry_domains() else None
        for ln in topo.local_networks.values():
            answer = self.serving(topo.sbc_answer(ln.id))
            local = [e for e in answer if ln.id in e.serves]
            backup = [e for e in answer if ln.id not in e.serves]
            if areas and backup:  # another area's SBC has its name in a zone this area's servers do not serve
                foreign = [e for e in backup if area_of_site.get(e.site) != area_of_ln.get(ln.id)]
                if foreign and local:
                    backup = [e for e in backup if e not in foreign]
                    plan.notes.append(
                        f"local network '{ln.id}': DR SBC {', '.join(e.id for e in foreign)} is in another area; its "
                        "view does not publish it (the SBC name lives in a zone of that area's servers)")
            said = ", ".join(e.id for e in local) or "no local SBC"
            if backup:
                said += f" first, DR {', '.join(e.id for e in backup)} second"
            view = ViewPlan(
                f"users-{ln.id}",
                "local",
                ln.id,
                tuple(_host_prefix(r) for r in ln.resolvers) + tuple(ln.prefixes),
                f"users of local network {ln.id} ({ln.name}), via its access resolvers: "
                f"{plan.sbc_name} answers {said}",
                side="access",
                area=area_of_ln.get(ln.id, ""),
            )
            if not answer:
                plan.notes.append(
                    f"local network '{ln.id}' has no SBC: its view answers {plan.sbc_name} with every SBC"
                )
            else:
                origin = Origin(ln.id, ("prefixes",), f"the SBC answer of local network '{ln.id}'")
                overrides(view, partial(self._user_view, local, backup, origin, view, area_ns))
            plan.views.append(view)
        # (version, first, last) integer ranges: overlap tests without ipaddress objects per pair
        user_nets: dict[int, list[tuple[int, int, IpNetwork, str]]] = {4: [], 6: []}
        for view in plan.views:
            for n in map(ipaddress.ip_network, view.match_clients):
                user_nets[n.version].append((int(n.network_address), int(n.broadcast_address), n, view.subject))
        # services by the regions their members are in: a site view overrides a service only when
        # some member is in the site's region (otherwise every member is 'other region', one tier)
        regions_of = [{topo.sites[m.site].region for m in members} for _, members, _ in services]
        sbc_core: dict[str, list[str]] = {}
        for el in topo.by_type["sbc"]:
            sbc_core.setdefault(el.site, []).extend(_host_prefix(a) for a in el.core_addresses)
        self._sbc_zones(services)
        for site in topo.sites.values():
            if sbc_core.get(site.id):  # before the core view: an SBC's address may lie in the core subnets
                self._sbc_view(site.id, tuple(dict.fromkeys(sbc_core[site.id])), services, regions_of,
                               area_of_site.get(site.id, ""), area_ns, overrides)
            match = tuple(site.core_subnets)
            if not match:
                continue
            for subnet in map(ipaddress.ip_network, match):
                low, high = int(subnet.network_address), int(subnet.broadcast_address)
                for first, last, net_, ln_id in user_nets[subnet.version]:
                    if first <= high and low <= last:
                        plan.notes.append(
                            f"site '{site.id}' core subnet {subnet} overlaps local network '{ln_id}' "
                            f"{net_}: the users view comes first, so those core addresses get user answers"
                        )
            view = ViewPlan(
                f"core-{site.id}",
                "site",
                site.id,
                match,
                f"core elements at site {site.id} ({site.name}): same-site first",
                side="core",
                area=area_of_site.get(site.id, ""),
            )
            site_services = [svc for svc, regions in zip(services, regions_of, strict=True) if site.region in regions
                             and not (areas and svc[0] == gpp_entry)]
            overrides(view, partial(self._site_view, site_services, site.id, view, area_ns, gpp_entry))
            plan.views.append(view)
        for area in areas:
            self._area_views(area, area_ns)
        if net.dns.default_view == "access":
            plan.views.append(ViewPlan("default", "default", "", (), "everyone else: access data only "
                                       "(network.dns.default_view: access)", side="access"))
        else:
            plan.views.append(ViewPlan("default", "default", "", (), "everyone else: refused", side="none"))
        return plan

    # --- host zones (network.dns.host_zone) -----------------------------------------------------------

    def _host_zone(self, name: str, core: ZonePlan, access: ZonePlan, apex: Callable[[ZonePlan], None]) -> None:
        """``<label>.<home domain>`` on the core and access sides (the SBC side copies the core
        one, :meth:`_sbc_zones`) when some element is named under it. No view overrides a host
        record, so each side's zone is one file every view of that side shares (``in-view``)."""
        plan = self.plan
        if not any(is_subdomain(self._fqdn_of(e), name) for e in self.topo.elements.values()):
            return
        if name in plan.zones:
            self.issue(Origin("", ("network", "dns", "host_zone"), "network.dns.host_zone"),
                       f"host zone {name} is also a zone of its own (a home domain): choose another host_zone label")
            return
        sides = ((core, plan.zones, "core side: every element's addresses, the same in every view"),
                 (access, plan.access_zones, "access side: the SBCs' access and the name servers' addresses"))
        for parent, zones, what in sides:
            zone = ZonePlan(name, parent.kind, f"host records under {name}, {what}", parent.default_ttl,
                            area=parent.area)
            zones[name] = zone
            apex(zone)
        plan.host_zones = (*plan.host_zones, name)

    def _delegate_hosts(self, zones: dict[str, ZonePlan]) -> None:
        """Each home-domain zone delegates its host zone to the same name servers (NS, and glue
        for a name server named inside it): a zone is a name subtree, so the host names are below
        a zone cut; named's integrity check (and named-checkzone) want an address for every NS
        name inside the parent's own tree, and a resolver that follows the referral needs it."""
        for name in self.plan.host_zones:
            host, parent = zones.get(name), zones.get(name.split(".", 1)[1])
            ns = host.rrsets.get((name, "NS")) if host is not None else None
            if host is None or parent is None or ns is None:
                continue
            origin = Origin("", ("network", "dns", "host_zone"), f"the delegation of the host zone {name}")
            self.add(parent.rrsets, parent, ns, origin)
            for rd in ns.rdatas:
                target = rd.target  # type: ignore[union-attr]
                for rdtype in ("A", "AAAA") if is_subdomain(target, name) else ():
                    glue = host.rrsets.get((target, rdtype))
                    if glue is not None:
                        self.add(parent.rrsets, parent, glue, origin)

    def _host_zone_clashes(self, names: list[str]) -> None:
        """A name a view answers differently (the SBC names, a pair's or pool's SRV) cannot be in
        a host zone: that zone is the same in every view."""
        for name in names:
            zone = self.zone_of(name)
            if zone is not None and zone.name in self.plan.host_zones:
                self.issue(Origin("", ("network", "dns", "host_zone"), "network.dns.host_zone"),
                           f"{name} is under the host zone {zone.name}, whose records are the same in every "
                           "view: choose another host_zone label (or another name)")

    # --- the SBCs' core side: the P-CSCF names only ------------------------------------------------

    def _pcscf_services(self, services: list[tuple[str, list[Element], Origin]]) -> list[int]:
        """Indexes of the services an SBC resolves: names whose members are all P-CSCFs (worked
        out once per services list: every site's SBC view asks)."""
        memo = self._pcscf_memo.get(id(services))
        if memo is not None and memo[0] is services:
            return memo[1]
        found = [i for i, (_, members, _) in enumerate(services)
                 if members and all(m.type.value == "pcscf" for m in members)]
        self._pcscf_memo[id(services)] = (services, found)
        return found

    def _sbc_zones(self, services: list[tuple[str, list[Element], Origin]]) -> None:
        """One zone per home domain for the SBCs' core interfaces: SOA, NS and the name servers'
        addresses, the P-CSCF names (NAPTR + SRV) and the P-CSCFs' addresses; no CSCF, HSS, SLF,
        MGCF, AS or ENUM name (an SBC asks for nothing else)."""
        plan, topo = self.plan, self.topo
        wanted: set[str] = set()
        for i in self._pcscf_services(services):
            name, members, _ = services[i]
            wanted.add(name)
            wanted.update(f"{TRANSPORTS[t][1]}.{name}" for t in TRANSPORTS)
            wanted.update(self._fqdn_of(m) for m in members)
        wanted.update(self._fqdn_of(e) for e in topo.by_type["pcscf"])
        wanted.update(plan.host_zones)  # the home domain's delegation of its host zone
        for core in plan.zones.values():
            if core.kind != "home":
                continue
            zone = ZonePlan(core.name, "home", f"{core.purpose.split(',')[0]}, SBC core side: the P-CSCF names only",
                            core.default_ttl, area=core.area)
            ns = core.rrsets.get((core.name, "NS"))
            hosts = {rd.target for rd in ns.rdatas} if ns else set()  # type: ignore[union-attr]
            for key, rrset in core.rrsets.items():
                if key[0] == core.name and key[1] in ("SOA", "NS") or key[0] in wanted or key[0] in hosts:
                    zone.rrsets[key] = rrset
            plan.sbc_zones[core.name] = zone

    def _sbc_view(self, site: str, match: tuple[str, ...], services: list[tuple[str, list[Element], Origin]],
                  regions_of: list[set[str]], area: str, area_ns: dict[str, list[str]],
                  overrides: Callable[[ViewPlan, Callable[[], None]], None]) -> None:
        """``sbc-<site>``: the site's SBC core interfaces; the P-CSCF names same site first."""
        view = ViewPlan(f"sbc-{site}", "sbc", site, match,
                        f"core interfaces of the SBCs at site {site}: the P-CSCF names only, same site first",
                        side="sbc", area=area)
        region = self.topo.sites[site].region
        own = [services[i] for i in self._pcscf_services(services) if region in regions_of[i]]

        def compute() -> None:
            for name, members, origin in own:
                self._service(name, members, origin, site=site, target=view)
            if self.plan.areas and view.area:
                self._area_apex(view, area_ns, None)

        overrides(view, compute)
        self.plan.views.append(view)

    # --- service areas ---------------------------------------------------------------------------------

    def _area_apex(self, view: ViewPlan, area_ns: dict[str, list[str]], gpp: str | None) -> None:
        """A view of a province area: the zones every area serves (the 3GPP home domain) carry the
        area's own NS, and in a core view the 3GPP entry answers the area's own I-CSCFs only —
        which province holds a subscriber is the job of delegation and the SLF, not of an rrset
        of every I-CSCF of the country."""
        area = next(a for a in self.plan.areas if a.id == view.area)
        names = area_ns.get(area.id, [])
        origin = Origin("", ("network", "dns", "areas"), f"area '{area.id}'")
        for zone in self.plan.zones_of(view.side).values():
            if zone.area == "" and names:
                self._override(view, RRset(zone.name, "NS", self.ttl.ns, tuple(NS(n) for n in names)), origin)
        if gpp is not None and view.side == "core":
            own = [e for e in self.serving(self.topo.with_role("icscf")) if e.site in area.sites]
            self._service(gpp, own, Origin("", ("network", "dns", "areas"), f"the I-CSCF entry of {gpp} in area "
                                                 f"'{area.id}'"), site=view.subject, target=view, force=True)

    def _area_views(self, area: Area, area_ns: dict[str, list[str]]) -> None:
        """The peers view of a province area (the other areas' servers, recursing for their core
        clients, get the area's core zones without site preference), or the national view (the
        provinces' servers get the delegations)."""
        topo, plan = self.topo, self.plan
        others = [i for a in plan.areas if a.id != area.id and not a.national for i in a.nameservers]
        match = tuple(dict.fromkeys(prefix for i in others if i in topo.elements
                                    for prefix in self._address_prefixes(topo.elements[i])))
        if not match:
            return
        if area.national:
            plan.views.append(ViewPlan("national", "national", area.id, match,
                                       "the provinces' name servers (recursing for their core): the national "
                                       "delegations only", side="core", area=area.id))
        else:
            plan.views.append(ViewPlan(f"peers-{area.id}", "peers", area.id, match,
                                       f"the other areas' name servers, recursing for their core clients: area "
                                       f"{area.id}'s home domains and number blocks, core data", side="core",
                                       area=area.id))

    def _address_prefixes(self, el: Element) -> tuple[str, ...]:
        """``el``'s addresses as one-address prefixes, in order (worked out once per element)."""
        prefixes = self._host_prefixes.get(el.id)
        if prefixes is None:
            prefixes = self._host_prefixes[el.id] = tuple(_host_prefix(a) for a in el.addresses)
        return prefixes

    def _national_host(self, el: Element, origin: Origin) -> bool:
        """A national server whose name is under a national zone: its addresses go there."""
        fqdn = self.topo.fqdn(el)
        zone = self.zone_of(fqdn)  # the most specific zone: a home domain's name stays there
        if zone is None or zone.kind != "delegation":
            return False
        for rrset in self.address_sets(fqdn, [el], "core"):
            self.add(zone.rrsets, zone, rrset, origin)
        return True

    def _national(self, apex, area_ns: dict[str, list[str]]) -> None:  # type: ignore[no-untyped-def]
        """The national (level-1) zones: each parent zone with NS + glue delegating the provinces'
        home domains, and the ENUM country-code zone with NS delegating each province's block
        zones (numbers outside every block: NXDOMAIN)."""
        topo, net, plan = self.topo, self.net, self.plan
        national = next((a for a in plan.areas if a.national), None)
        if national is None:
            plan.notes.append("network.dns.areas has no national area: the provinces' servers do not reach "
                              "each other's home domains and numbers (no delegation)")
            return
        host_of = {topo.fqdn(e): e for e in topo.by_type["enum_dns"]}
        origin = Origin("", ("network", "dns", "areas"), f"the national area '{national.id}'")
        for name in national.zones:
            zone = ZonePlan(name, "delegation", f"national (level-1) zone {name}: delegations of the provinces' "
                            "home domains only (NS + glue)", self.ttl.soa, area=national.id)
            plan.zones[name] = zone
            apex(zone)
        for area in plan.areas:
            if area.national:
                continue
            names = area_ns.get(area.id, [])
            for domain in area.home_domains:
                parent = delegating_zone(national, domain)
                if parent is None:
                    self.issue(origin, f"home domain {domain} of area '{area.id}' is under no zone of the national "
                                       f"area ({', '.join(national.zones) or 'none'}): list its parent in zones")
                    continue
                zone = plan.zones[parent]
                zone.rrsets[(domain, "NS")] = RRset(domain, "NS", self.ttl.ns, tuple(NS(n) for n in names))
                plan.origins[(parent, domain, "NS")] = origin
                for host in names:
                    if is_subdomain(host, domain) and host in host_of:  # in-bailiwick: glue needed
                        for rrset in self.address_sets(host, [host_of[host]], "core"):
                            zone.rrsets.setdefault((host, rrset.rdtype), rrset)
        blocks = [z for z in plan.zones.values() if z.kind == "enum"]
        parent = f"{reverse_digits(net.country_code)}.{net.enum_suffix}"
        if not blocks or parent in plan.zones:
            return
        zone = ZonePlan(parent, "enum_parent", f"national (level-1) ENUM zone of +{net.country_code}: delegates "
                        "each province's block zones; numbers outside every block get NXDOMAIN",
                        self.ttl.enum, area=national.id)
        plan.zones[parent] = zone
        apex(zone)
        for child in blocks:
            names = area_ns.get(child.area, [])
            if is_subdomain(child.name, parent) and names:
                zone.rrsets[(child.name, "NS")] = RRset(child.name, "NS", self.ttl.ns, tuple(NS(n) for n in names))
                plan.origins[(parent, child.name, "NS")] = origin

    def _user_view(self, local: list[Element], backup: list[Element], origin: Origin, view: ViewPlan,
                   area_ns: dict[str, list[str]]) -> None:
        self._sbc(local, backup, origin, target=view)
        if self.plan.areas and view.area:
            self._area_apex(view, area_ns, None)

    def _site_view(self, services: list[tuple[str, list[Element], Origin]], site: str, view: ViewPlan,
                   area_ns: dict[str, list[str]] | None = None, gpp: str | None = None) -> None:
        for name, members, origin in services:
            self._service(name, members, origin, site=site, target=view)
        if self.plan.areas and view.area and area_ns is not None:
            self._area_apex(view, area_ns, gpp)

    def _override(self, view: ViewPlan, rrset: RRset, origin: Origin) -> None:
        zone = self.zone_of(rrset.name, view.side)
        if zone is not None and self.plan.areas and not self.plan.serves(view, zone):
            return  # another area's zone: the view's servers do not serve it
        if zone is None:
            self.issue(origin, f"{rrset.name} is not under any home domain")
            return
        self.add(view.overrides.setdefault(zone.name, {}), zone, rrset, origin)

    def _service(
        self, name: str, members: list[Element], origin: Origin, site: str | None, target: ViewPlan | None,
        force: bool = False,
    ) -> None:
        tiers = self._tiers(members, site)
        if target is not None and len(set(tiers)) <= 1 and not force:
            return  # one tier only: same order as the base answer, no override needed
        srvs = self.sip_srv_sets(name, members, tiers, self.transports)
        if target is None:
            missing = [t for t in self.transports if t not in srvs]
            if missing and members:
                self.plan.notes.append(f"{name}: {', '.join(missing)} not published (no member accepts it)")
            if not members:
                self.plan.notes.append(f"{name}: no members, no NAPTR/SRV published")
            if srvs:
                self.add_base(self.naptr_set(name, list(srvs)), origin)
            for rrset in srvs.values():
                self.add_base(rrset, origin)
            return
        base_zone = self.zone_of(name)
        for rrset in srvs.values():
            if base_zone is not None and base_zone.rrsets.get((rrset.name, "SRV")) == rrset:
                continue  # same as the base: no override needed
            self._override(target, rrset, origin)

    def _sbc(self, local: list[Element], backup: list[Element], origin: Origin, target: ViewPlan | None) -> None:
        """The access answer: SBC discovery name, each published home domain's entry, the DR name.

        SRV: local SBC(s) at priority 10, the DR SBC at 20. A/AAAA of the discovery name: the
        local SBC(s) only (the DR SBC when none is left), so a client that takes the first address
        never lands on the DR SBC; the DR SBC alone under ``sbc_dr_name`` (a UE's second proxy).
        """
        plan = self.plan
        tier_of = {e.id: PRIORITY_LOCAL_SBC for e in local}
        tier_of.update({e.id: PRIORITY_DR_SBC for e in backup if e.id not in tier_of})
        members = local + [e for e in backup if e not in local]
        rrsets: list[RRset] = []
        naptrs: list[RRset] = []
        tiers = tuple(tier_of[e.id] for e in members)
        srv_rdatas = self.srv_rdatas(members, tiers, self.transports)  # the same at every name
        for name in [plan.sbc_name, *self.entry_domains()]:
            srvs = self._srv_sets_at(name, srv_rdatas)
            rrsets.extend(srvs.values())
            if srvs:
                naptrs.append(self.naptr_set(name, list(srvs)))
            if target is not None:
                base_zone = self.zone_of(name, "access")
                base = base_zone.rrsets.get((name, "NAPTR")) if base_zone is not None else None
                for naptr in base.rdatas if base else ():
                    srv_name = naptr.replacement  # type: ignore[union-attr]
                    if not any(r.name == srv_name for r in srvs.values()):
                        # the local answer has no server for this transport: say so ('.' = no service)
                        rrsets.append(RRset(srv_name, "SRV", self.ttl.srv, (SRV(0, 0, 0, "."),)))
        rrsets += self.address_sets(plan.sbc_name, local or members, "access")
        if target is None:
            for rrset in naptrs + rrsets:
                self.add_base(rrset, origin, "access")
            return
        if local and backup:
            rrsets += self.address_sets(plan.sbc_dr_name, backup, "access")
        for rrset in rrsets:
            self._override(target, rrset, origin)

    def _enum_parent(self, apex, ns_names: list[str]) -> None:  # type: ignore[no-untyped-def]
        """The country code's ENUM zone, delegating each block zone to the name servers.

        Numbers outside every block then get an authoritative NXDOMAIN from the parent (the
        S-CSCF/BGCF treats the number as not in IMS and breaks out to the PSTN), not a REFUSED.
        """
        net, plan = self.net, self.plan
        parent = f"{reverse_digits(net.country_code)}.{net.enum_suffix}"
        blocks = [z for z in plan.zones.values() if z.kind == "enum"]
        if not blocks:
            return
        if parent in plan.zones:
            plan.notes.append(
                f"ENUM: the block zone {parent} is the country code's zone itself; numbers under "
                f"+{net.country_code} outside the blocks get NXDOMAIN from it"
            )
            return
        zone = ZonePlan(
            parent,
            "enum_parent",
            f"ENUM (RFC 6116) parent zone of +{net.country_code}: delegates each block zone; "
            "numbers outside every block get NXDOMAIN",
            self.ttl.enum,
        )
        plan.zones[parent] = zone
        apex(zone)
        origin = Origin("", ("network", "country_code"), f"the ENUM parent zone {parent}")
        outside = []
        for child in blocks:
            if is_subdomain(child.name, parent) and ns_names:
                zone.rrsets[(child.name, "NS")] = RRset(child.name, "NS", self.ttl.ns, tuple(NS(n) for n in ns_names))
                plan.origins[(parent, child.name, "NS")] = origin
            elif not is_subdomain(child.name, parent):
                outside.append(child.name)
        plan.notes.append(
            f"ENUM: the parent zone {parent} delegates the block zones to the name servers and answers "
            f"NXDOMAIN for numbers under +{net.country_code} outside every block (breakout to the PSTN); "
            f"delegate {parent} itself from {net.enum_suffix} (or the operator's ENUM root) to the same name servers"
        )
        for name in outside:
            plan.notes.append(f"ENUM: block zone {name} is not under +{net.country_code}: delegate it from its parent")

    def _enum_zones(self, apex) -> None:  # type: ignore[no-untyped-def]
        from imsdr.inventory.build import block_range

        net = self.net
        for block in self.topo.inventory.enum_blocks:
            zone_name = f"{reverse_digits(block.prefix)}.{net.enum_suffix}"
            origin = Origin(block.id, ("prefix",), f"ENUM block '{block.id}'")
            if zone_name in self.plan.zones:
                other = self.plan.zones[zone_name].blocks
                self.issue(
                    origin,
                    f"ENUM block '{block.id}' has the same prefix +{block.prefix} as block "
                    f"'{other[0].id if other else '?'}'; merge them or use distinct prefixes",
                )
                continue
            if block.style == "numbers":
                first, last, length = block_range(block)
                plan_block = EnumBlockPlan(
                    block.id,
                    block.prefix,
                    "numbers",
                    block.domain,
                    zone_name,
                    self.ttl.enum,
                    first,
                    last,
                    length,
                )
            elif block.first is not None or block.last is not None:
                first, last, length = block_range(block)
                free = length - len(block.prefix)
                plan_block = EnumBlockPlan(block.id, block.prefix, "wildcard", block.domain, zone_name,
                                           self.ttl.enum, first, last, length,
                                           stems=wildcard_stems(first % 10**free, last % 10**free, free))
            else:
                plan_block = EnumBlockPlan(block.id, block.prefix, "wildcard", block.domain, zone_name, self.ttl.enum)
            if block.style == "numbers":
                what = f"{plan_block.count} numbers"
            elif plan_block.stems == ("",):
                what = "one wildcard"
            else:
                what = f"+{plan_block.first} .. +{plan_block.last} as {plan_block.count} wildcard(s) and number(s)"
            zone = ZonePlan(
                zone_name,
                "enum",
                f"ENUM (RFC 6116) block '{block.id}' +{block.prefix}: E2U+sip NAPTR ({what})",
                self.ttl.enum,
                blocks=[plan_block],
            )
            if self.plan.areas:
                owner = next((a for a in self.plan.areas if block.id in a.blocks), None)
                zone.area = owner.id if owner is not None else ""
                if owner is None:
                    self.issue(origin, f"ENUM block '{block.id}' is in no area (network.dns.areas enum_blocks, or a "
                                       "home domain of an area as its domain): no server would be authoritative for it")
            self.plan.zones[zone_name] = zone
            self.plan.origins[(zone_name, zone_name, "NAPTR")] = origin
            apex(zone)


def merged_zone(base: ZonePlan, overrides: dict[RRKey, RRset]) -> ZonePlan:
    """``base`` with ``overrides`` applied: what a view serves (``DnsPlan.zone_for_view``)."""
    if not overrides:
        return base
    merged = dict(base.rrsets)
    merged.update(overrides)
    return ZonePlan(base.name, base.kind, base.purpose, base.default_ttl, merged, list(base.blocks), kept=base.kept)


def _host_prefix(address: str) -> str:
    """An address as the one-address prefix a view's match list holds (/32 or /128)."""
    return str(ipaddress.ip_network(address))


def home_domain_of(topology: Topology, home_domains: Iterable[str], elements: list[Element]) -> str:
    """The home domain every element's FQDN is under (most specific), else the primary one: where
    a pair's or pool's ``dns_name`` is published (the runbook's checks ask for the same name)."""
    if not elements:
        return topology.network.primary_domain
    # the home domains the first FQDN is under (itself or a suffix after a dot), longest first:
    # the first that holds every other FQDN too is the answer (two domains of one length cannot
    # both hold a name); not every domain against every member (837 pools x 32 domains nationally)
    domains = set(home_domains)
    first = topology.fqdn(elements[0])
    suffixes = [first] + [first[i + 1:] for i, ch in enumerate(first) if ch == "."]
    for domain in sorted((d for d in suffixes if d in domains), key=len, reverse=True):
        if all(is_subdomain(topology.fqdn(e), domain) for e in elements[1:]):
            return domain
    return topology.network.primary_domain


def build_dns_plan(topology: Topology, lazy: bool = False, excluded: Iterable[str] = (),
                   exceptions: EnumExceptions | None = None) -> DnsPlan:
    """Build the full DNS plan of ``topology`` in memory (zones, views, ENUM blocks).

    ``lazy=True`` (``resolve``, ``verify``: they read one or a few views) builds the zones and
    the list of views at once, but each view's overrides only when that view is first used
    (``DnsPlan.view``, ``view_for_client``, ``lookup_rrset``, ``zone_for_view``, ``all_rrsets``);
    problems and notes of views never used are then not reported. Reading ``ViewPlan.overrides``
    directly needs ``DnsPlan.materialise`` first. ``excluded`` element ids (drained) are left out
    of every SRV and SBC answer. ``exceptions``: provisioned per-number ENUM records
    (:func:`imsdr.dns.enum_exceptions.load_enum_exceptions`) placed in the block zones.
    """
    if exceptions is None:
        exceptions = getattr(topology, "enum_exceptions", None)
    plan = _Builder(topology, frozenset(excluded), exceptions).build(lazy)
    for kept in topology.inventory.network.dns.kept_records:
        zone = plan.zones.get(kept.zone.rstrip(".").lower())
        if zone is not None:
            zone.kept = (*zone.kept, *kept.records)
    return plan


def wildcard_stems(low: int, high: int, free: int) -> tuple[str, ...]:
    """The fewest digit strings whose wildcards cover exactly the ``free``-digit numbers
    ``low..high`` below a prefix (decimal CIDR): ``0..99`` of 4 digits is ``('00',)``; a stem of
    ``free`` digits is one number (its own record, not a wildcard)."""
    out = []
    while low <= high:
        k = 0
        while k < free and low % 10 ** (k + 1) == 0 and low + 10 ** (k + 1) - 1 <= high:
            k += 1
        out.append(str(low).zfill(free)[: free - k])
        low += 10**k
    return tuple(out)


# --- ENUM exceptions into the plan (imsdr.dns.enum_exceptions) -------------------------------


def apply_exceptions(plan: DnsPlan, exceptions: EnumExceptions | None) -> None:
    """Put each exception (and the wildcards that keep its siblings answered) into its ENUM zone,
    and index every zone's existing names (empty non-terminals included) for lookups.

    One pass over the rows with each zone's pieces worked out once, when its first row comes (a
    national file: 200,000 rows, 281,000 wildcards): the owner and its wildcards are cut from one
    string, the records made by one :class:`RecordMaker`, and the names the exceptions make exist
    are indexed as they are stored (``existing_nodes`` of the zone's other rrsets, plus each owner
    and its ancestors, plus each wildcard: the same set)."""
    zones = {z.blocks[0].prefix: z for z in plan.zones.values() if z.kind == "enum" and z.blocks}
    lengths = sorted({len(p) for p in zones}, reverse=True)  # (longest prefix first)
    origin = Origin("", (), f"the ENUM exceptions file {exceptions.file if exceptions else ''}")
    make = RecordMaker()
    naptr, rrset = make.naptr, make.rrset
    skipped: dict[str, set[int]] = {}  # numbers-style zone -> the numbers its exceptions replace
    touched: dict[str, _ExceptionFill] = {}  # zone name -> what its exceptions made so far
    fills: dict[str, _ExceptionFill] = {}  # block prefix -> the same, for the rows' lookup
    for row in exceptions.rows if exceptions is not None else ():
        number = row.number
        fill = None
        for i in lengths:
            if i <= len(number):
                prefix = number[:i]
                fill = fills.get(prefix)
                if fill is None:
                    zone = zones.get(prefix)
                    if zone is None:
                        continue
                    fill = fills[prefix] = touched[zone.name] = _ExceptionFill.of(zone)
                break
        if fill is None:  # checked when the file was read; a block the plan refused
            continue
        name, rrsets, nodes, wilded, ttl = fill.name, fill.rrsets, fill.nodes, fill.wildcards, fill.ttl
        rest = number[fill.size:]
        rel = ".".join(rest[::-1])
        owner = f"{rel}.{name}"
        key = (owner, "NAPTR")
        if key not in rrsets:
            fill.exceptions += 1
        rrsets[key] = rrset(owner, "NAPTR", ttl, (row.naptr(fill.domain, naptr),))  # (its origin: origin_of)
        node = rel  # the owner and its ancestors (the empty non-terminals)
        while node and node not in nodes:
            nodes.add(node)
            dot = node.find(".")
            node = node[dot + 1:] if dot >= 0 else ""
        size = len(rel)
        if fill.chained:  # the new wildcards are the deepest ones, below the deepest one stored
            j = len(rest) - 1
            while j > 0 and "*." + rel[size - 2 * j + 1:] not in wilded:
                j -= 1
            start = j + 1
        else:
            start = len(rest)  # where the ancestors below the wildcard covering it start
            for stem, first in fill.fill_from:
                if len(rest) > len(stem) and rest.startswith(stem):
                    start = first
                    break
        for j in range(start, len(rest)):  # the wildcard below each ancestor rest[:j]
            wrel = "*." + rel[size - 2 * j + 1:]
            if wrel in wilded:  # (stored already: most ancestors are shared with earlier rows)
                continue
            wilded.add(wrel)
            nodes.add(wrel)
            wname = f"{wrel}.{name}"
            rrsets[(wname, "NAPTR")] = rrset(wname, "NAPTR", ttl, fill.wildcard)
        if fill.numbers and fill.block.covers(number):
            skipped.setdefault(name, set()).add(int(number))
    for name, numbers in skipped.items():  # (once per block: a set union per row would be quadratic)
        zone = plan.zones[name]
        zone.blocks[0] = _skipping(zone.blocks[0], numbers)
    for name, fill in touched.items():
        zone = plan.zones[name]
        zone.purpose += f"; {fill.exceptions} provisioned exception(s)"
        plan.exception_origins[name] = origin
        zone.nodes = frozenset(fill.nodes)
    for zone in plan.zones.values():
        if zone.kind == "enum" and zone.name not in touched:
            zone.nodes = existing_nodes(zone)


@dataclass(slots=True)
class _ExceptionFill:
    """What the exceptions of one ENUM zone made so far (``apply_exceptions``), and the pieces of
    its zone and block each row reads."""

    nodes: set[str]  # the zone's existing names: its own rrsets' first, then each owner, ancestor, wildcard
    exceptions: int  # per-number NAPTRs (not wildcards)
    wildcards: set[str]  # NAPTR wildcards stored, relative to the apex ("*.3.2")
    wildcard: tuple[NAPTR]  # the block's wildcard answer, one tuple shared by them all
    name: str  # the zone's
    rrsets: dict[tuple[str, str], RRset]  # the zone's
    block: EnumBlockPlan  # the zone's (first) block
    size: int  # digits of its prefix
    domain: str
    ttl: int
    numbers: bool  # a numbers-style block (its numbers an exception replaces are skipped)
    # wildcard style: (stem, j) for the stems whose wildcard an exception's digits ``rest`` can
    # fall under (shorter than a number); the first one ``rest`` continues gives the first j of
    # the ancestors rest[:j] the exception creates below it, each needing the block's wildcard
    # again (module doc); none (numbers style): no wildcard to repeat
    fill_from: tuple[tuple[str, int], ...]
    # a block of one wildcard (stems ('',)) and no wildcard stored below the apex but the rows':
    # every row's ancestors rest[:1] .. rest[:-1] each get one, so the wildcard of an ancestor is
    # stored only with those of all the ancestors above it, and a row's new ones are the deepest
    chained: bool = False

    @classmethod
    def of(cls, zone: ZonePlan) -> _ExceptionFill:
        suffix = "." + zone.name
        block = zone.blocks[0]
        free = block.free
        wildcards = {n[:-len(suffix)] for n, t in zone.rrsets if t == "NAPTR" and n.startswith("*.")
                     and n.endswith(suffix)}
        fill_from = () if block.style != "wildcard" else tuple(
            (stem, len(stem) + 1) for stem in block.stems if free is None or len(stem) < free)
        return cls(set(existing_nodes(zone)),
                   sum(1 for n, t in zone.rrsets if t == "NAPTR" and not n.startswith("*.")),
                   wildcards, (block.naptr(),), zone.name, zone.rrsets, block, len(block.prefix),
                   block.domain, block.ttl, block.style == "numbers", fill_from,
                   fill_from == (("", 1),) and wildcards <= {"*"})


def _skipping(block: EnumBlockPlan, numbers: set[int]) -> EnumBlockPlan:
    from dataclasses import replace

    return replace(block, skip=block.skip | numbers)


def existing_nodes(zone: ZonePlan) -> frozenset[str]:
    """Every name below the apex of ``zone`` that exists because of a stored rrset: the owners and
    their ancestors (the empty non-terminals), relative to the zone, labels left to right."""
    suffix = "." + zone.name
    out: set[str] = set()
    for owner, _ in zone.rrsets:
        if not owner.endswith(suffix):
            continue
        rel = owner[: -len(suffix)]
        while rel and rel not in out:
            out.add(rel)
            dot = rel.find(".")
            rel = rel[dot + 1:] if dot >= 0 else ""
    return frozenset(out)
