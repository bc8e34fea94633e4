"""DNS service areas: which ENUM/DNS set is authoritative for what (``network.dns.areas``).

A network without areas has one implicit area: every name server serves every view and zone
(:func:`service_areas` returns ``()``, and the DNS plan is what it always was). With areas:

* a **province** area (level-2 ENUM/DNS) is authoritative for its home domains, its number
  blocks, and has the views of its own sites and of the local networks homed on them, plus a
  ``peers-<area>`` view answering the other areas' servers (which recurse on behalf of their
  core clients) from the core data of its own zones;
* the **national** area (level-1) holds only delegations: NS and glue for each province's home
  domain(s) in the parent zone(s) it is given (``zones``, default the closest common parent),
  and NS for each province's number-block zones in the ENUM country-code zone (numbers outside
  every block: NXDOMAIN there).

A core client reaches another province's home domain and numbers through its own province's
servers: their core views recurse for the core only, through static-stub zones pointing at the
national set, which refers them to the other province's servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class Area:
    id: str
    level: Literal["province", "national"]
    nameservers: tuple[str, ...]  # enum_dns element ids
    home_domains: tuple[str, ...] = ()
    blocks: frozenset[str] = frozenset()  # ENUM block ids
    sites: frozenset[str] = frozenset()
    local_networks: frozenset[str] = frozenset()
    zones: tuple[str, ...] = ()  # national: the parent zones holding the home-domain delegations

    @property
    def national(self) -> bool:
        return self.level == "national"


def common_parent(domains: list[str]) -> str:
    """The closest zone above every one of ``domains`` ('' when they share no label)."""
    if not domains:
        return ""
    split = [d.split(".") for d in domains]
    common: list[str] = []
    for labels in zip(*(reversed(s) for s in split), strict=False):
        if len(set(labels)) != 1:
            break
        common.append(labels[0])
    shortest = min(len(s) for s in split)
    if len(common) >= shortest:  # one domain is the parent of another: go one label up
        common = common[: shortest - 1]
    return ".".join(reversed(common))


def service_areas(topology: Topology) -> tuple[Area, ...]:
    """The areas of ``topology`` (``()`` when the inventory has none): national first."""
    spec = topology.network.dns.areas
    if not spec:
        return ()
    inv = topology.inventory
    provinces: list[Area] = []
    national = None
    for area in spec:
        if area.level == "national":
            national = area
            continue
        wanted = set(area.provinces or [area.id])
        sites = frozenset(s.id for s in inv.sites if s.province in wanted)
        lns = frozenset(ln.id for ln in topology.local_networks.values()
                        if ln.home_sites and ln.home_sites[0] in sites)
        homes = tuple(area.home_domains)
        blocks = frozenset(area.enum_blocks) if area.enum_blocks else frozenset(
            b.id for b in inv.enum_blocks if b.domain in homes)
        provinces.append(Area(area.id, "province", tuple(area.nameservers), homes, blocks, sites, lns))
    out = []
    if national is not None:
        homes = [d for a in provinces for d in a.home_domains]
        zones = tuple(national.zones) or ((common_parent(homes),) if common_parent(homes) else ())
        out.append(Area(national.id, "national", tuple(national.nameservers), zones=zones))
    return tuple(out + provinces)


def area_of_domain(areas: tuple[Area, ...], domain: str) -> Area | None:
    return next((a for a in areas if domain in a.home_domains), None)


def is_subdomain(name: str, zone: str) -> bool:
    return name == zone or name.endswith("." + zone)


def delegating_zone(area: Area, domain: str) -> str | None:
    """The national zone that delegates ``domain`` (the most specific one above it)."""
    above = [z for z in area.zones if is_subdomain(domain, z) and domain != z]
    return max(above, key=len) if above else None


def dns_clients(topology: Topology) -> tuple[list[str], dict[str, frozenset[str]] | None]:
    """Which ENUM/DNS servers the rendered DNS sends queries to: (the serving servers' ids,
    local network -> the servers of its area, or None when every serving server serves every
    local network). What the DNS plan renders (NS records, named.conf per server, views per area)
    and what capacity loads are the same: a national (level-1) server only answers delegation
    referrals, cached for the NS TTL at the province servers, so it carries no user load."""
    areas = service_areas(topology)
    if not areas:
        ids = list(topology.network.dns.nameservers) or [e.id for e in topology.by_type["enum_dns"]]
        return [i for i in ids if i in topology.elements], None
    serving: list[str] = []
    scope: dict[str, frozenset[str]] = {}
    for area in areas:
        if area.national:
            continue
        own = frozenset(i for i in area.nameservers if i in topology.elements)
        serving.extend(sorted(own))
        for ln in area.local_networks:
            scope[ln] = own
    return serving, scope
