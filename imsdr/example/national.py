"""A generator of national-scale synthetic inventories (deterministic for a seed).

Shape of what it builds (defaults in brackets):

* one IMS core per province [31], each with its own home domain ``ims.<province>.example.net``
  (listed in ``network.home_domains``; every element gets an explicit ``fqdn`` under its
  province's domain, or ``<name>.hosts.<domain>`` with ``host_zone`` [off] ``hosts``: their host
  records in one zone per side that every view shares, docs/dns.md);
* per province [4] sites in two active-active service regions (``<province>-a``/``-b``,
  sites alternating between them), each site with its own power feeds and transmission routes
  and coordinates at least ~60 km from its neighbours;
* per province [10] local networks, one SBC each, homed on the sites in turn; one national SBC
  DR ring ordered province by province (the schema has a single ring), so a local network is
  backed up by the previous one, which always sits at another site and in the other region.
  Where the ring crosses from one province to the next, the province's first local network also
  has a second SBC of its own at the next site, so DR leaves the province only as a last resort;
* per site: 2 ENUM/DNS, 6 P-CSCF, 8 combined I/S/E-CSCF/BGCF, 4 HSS, 1 SLF, 4 MGCF, 6 IM-MGW
  and 7 AS. Pairs (ENUM/DNS, P-CSCF, HSS, SLF) join two consecutive sites; pools (CSCF, MGCF,
  IM-MGW, AS) take one member from every site of the province, spare 1;
* capacities sized from the local networks' subscribers and busy-hour Erlangs so that every
  pair and pool survives the loss of a whole region (half the sites) at no more than 75 %
  utilisation, hence also any single site (N+1) — trunks by Erlang B at 1 % blocking; the rate
  capacities (registrations/s of SBCs, P-CSCFs and CSCFs, Diameter transactions/s of HSSs and
  SLFs) carry the registration storm of every user an element may carry, arriving as the storm
  model has it (imsdr.capacity.storm: 30 % of fixed-access users within 60 s, the rest over the
  refresh interval; 2 REGISTER, 4 Cx + 1 Sh, 4 Dx per registration) on top of the background,
  so every site and region loss passes CAP-010;
* ENUM blocks totalling ``enum_numbers`` [10,000,000] numbers in blocks of ``enum_block_size``
  [100,000] (13-digit +86 138… mobile numbers), shared out between the provinces, plus one
  wildcard block per province for its fixed-line range. A block is published as the wildcard(s)
  that cover it (``enum_style`` [wildcard]); ``write_exceptions`` writes the provisioning file of
  its per-number exceptions: ``ported_share`` [2 %] of the mobile numbers ported out (70 % to
  another operator's SIP domain, 20 % as RFC 4769 ``tel:…;npdi;rn=``, 10 % routed to another
  province with ``;user=phone``). ``enum_style: numbers`` (one NAPTR per number, 10 million
  records) is the benchmarks' stress input, not the example.

Addresses come from ranges reserved for documentation and benchmarking only: IPv4 from
198.18.0.0/15 (RFC 2544 benchmarking range — 192.0.2.0/24 and friends are far too small for
5,000 elements): site core subnets are /24s of 198.18.0.0/16, local-network user prefixes
/26s of 198.19.0.0/16; IPv6 from 2001:db8::/32 (RFC 3849): a /48 per site and per local
network. Domains are under example.net (RFC 2606).

One module past 600 lines: it is one generator whose parts (addresses, sites, elements, DNS
areas, sizing) share the numbering and the per-province counters; split, every part would take
the generator's whole state as arguments.
"""

from __future__ import annotations

import ipaddress
import json
import math
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from imsdr.errors import ImsdrError

PROVINCES = (
    "beijing", "tianjin", "hebei", "shanxi", "neimenggu", "liaoning", "jilin", "heilongjiang",
    "shanghai", "jiangsu", "zhejiang", "anhui", "fujian", "jiangxi", "shandong", "henan",
    "hubei", "hunan", "guangdong", "guangxi", "hainan", "chongqing", "sichuan", "guizhou",
    "yunnan", "xizang", "shaanxi", "gansu", "qinghai", "ningxia", "xinjiang",
)

# Province capitals (the generated sites lie around them), latitude and longitude in degrees.
CAPITALS: dict[str, tuple[float, float]] = {
    "beijing": (39.904, 116.407), "tianjin": (39.084, 117.201), "hebei": (38.042, 114.515),
    "shanxi": (37.870, 112.549), "neimenggu": (40.842, 111.749), "liaoning": (41.805, 123.431),
    "jilin": (43.817, 125.324), "heilongjiang": (45.803, 126.535), "shanghai": (31.230, 121.474),
    "jiangsu": (32.060, 118.797), "zhejiang": (30.274, 120.155), "anhui": (31.821, 117.227),
    "fujian": (26.074, 119.296), "jiangxi": (28.683, 115.858), "shandong": (36.651, 117.120),
    "henan": (34.747, 113.625), "hubei": (30.593, 114.305), "hunan": (28.228, 112.939),
    "guangdong": (23.129, 113.264), "guangxi": (22.817, 108.366), "hainan": (20.044, 110.199),
    "chongqing": (29.563, 106.551), "sichuan": (30.573, 104.066), "guizhou": (26.647, 106.630),
    "yunnan": (25.038, 102.718), "xizang": (29.652, 91.172), "shaanxi": (34.341, 108.940),
    "gansu": (36.061, 103.834), "qinghai": (36.617, 101.778), "ningxia": (38.487, 106.231),
    "xinjiang": (43.825, 87.617),
}
SBC_ACCESS_BASE = "198.19.192.0"  # SBC access sides: 198.19.192.0/18, outside every core subnet

# Per-site element counts of one province's core, and how each type is made redundant.
PER_SITE: tuple[tuple[str, str, int, str], ...] = (
    # (type, id label, count per site, redundancy)
    ("enum_dns", "dns", 1, "pair"),  # a province: two ENUM/DNS pairs (level 2) at its sites
    ("pcscf", "pcscf", 6, "pair"),
    ("cscf", "cscf", 8, "pool"),
    ("hss", "hss", 4, "pair"),
    ("slf", "slf", 1, "pair"),
    ("mgcf", "mgcf", 4, "pool"),
    ("imgw", "imgw", 6, "pool"),
    ("as", "as", 7, "pool"),
)

MAX_PROVINCES = 200
MAX_SITES_PER_PROVINCE = 16
MAX_SITES = 256            # /24s in 198.18.0.0/16
MAX_LOCAL_NETWORKS = 1024  # /26s in 198.19.0.0/16
MAX_ENUM_NUMBERS = 100_000_000  # validation caps numbers blocks at 100 million in all
MOBILE_BASE = 86_138_0000_0000  # +86 138 0000 0000, 13 digits
UTILISATION = 0.75         # highest load/capacity after losing a region
MAX_ERLANGS_PER_USER = 0.025  # the busiest local network's busy-hour Erlangs per subscriber
# The registration storm as imsdr.capacity.storm models it (tests/test_example.py holds these
# equal to the model's): users of a lost SBC/P-CSCF register again with IMS AKA, the fixed-access
# share at once and the rest over the refresh interval; the generator sizes every rate capacity
# so that the storm of all the users an element can carry stays within UTILISATION.
REGISTRATION_REFRESH = 1800  # s, network.timers.registration_refresh of the example
REGISTERS_PER_REGISTRATION = 2  # REGISTER, 401, REGISTER with the answer
CX_PER_REGISTRATION = 4  # 2 UAR + MAR + SAR at the HSS
SH_PER_REGISTRATION = 1  # the AS reads the user's data (UDR) after the third-party REGISTER
DX_PER_REGISTRATION = 4  # each Cx request located at the SLF first
CX_PER_RESTORATION = 1  # SAR fetching a restored user's data from the HSS
FIXED_IMMEDIATE_SHARE = 0.3  # fixed access: registering within FIXED_IMMEDIATE_WITHIN s
FIXED_IMMEDIATE_WITHIN = 60
BUSY_HOUR_CALL_ATTEMPTS = 1.0  # capacity_model default: one LIR per terminating attempt
# initial registrations per second one moved user causes at the storm's peak
STORM_PEAK_PER_USER = (FIXED_IMMEDIATE_SHARE / FIXED_IMMEDIATE_WITHIN
                       + (1 - FIXED_IMMEDIATE_SHARE) / REGISTRATION_REFRESH)
# background Diameter/s per subscriber at the HSS and the SLF: UAR + SAR (restoration data) per
# refresh, LIR per busy-hour call attempt (imsdr.capacity.storm.background_per_user)
DIAMETER_BACKGROUND_PER_USER = 2 / REGISTRATION_REFRESH + BUSY_HOUR_CALL_ATTEMPTS / 3600
PSTN_SHARE = 0.15          # share of busy-hour voice traffic that interworks with the PSTN/CS
AS_SESSION_SHARE = 0.6     # share of busy-hour calls that involve an AS session
CSCF_RESTORATION_LOAD = 1.10  # +10 % S-CSCF load with restoration data (upper end of 4-10 %)
HSS_RESTORATION_OVERHEAD = 0.08
HSS_MOVED_USER_COST = 1.8


@dataclass(frozen=True)
class NationalParams:
    provinces: int = 31
    sites_per_province: int = 4
    local_networks_per_province: int = 10
    seed: int = 1
    enum_numbers: int = 10_000_000
    enum_block_size: int = 100_000
    wildcard_blocks: bool = True
    enum_style: str = "wildcard"  # or "numbers": one NAPTR per number (the stress input)
    ported_share: float = 0.02  # of the mobile numbers, in the exceptions file
    # network.dns.host_zone: the elements are named under <label>.<home domain> (None: under the
    # home domain itself, the host records in every view's copy of the home-domain zone)
    host_zone: str | None = None

    def check(self) -> None:
        problems = []
        if not 1 <= self.provinces <= MAX_PROVINCES:
            problems.append(f"provinces must be 1-{MAX_PROVINCES}, got {self.provinces}")
        if not 2 <= self.sites_per_province <= MAX_SITES_PER_PROVINCE:
            problems.append(f"sites per province must be 2-{MAX_SITES_PER_PROVINCE} (pairs and pools "
                            f"need two sites), got {self.sites_per_province}")
        if self.provinces * self.sites_per_province > MAX_SITES:
            problems.append(f"at most {MAX_SITES} sites in all (one /24 of 198.18.0.0/16 each), got "
                            f"{self.provinces * self.sites_per_province}")
        if self.local_networks_per_province < 1:
            problems.append("local networks per province must be at least 1")
        if self.provinces * self.local_networks_per_province > MAX_LOCAL_NETWORKS:
            problems.append(f"at most {MAX_LOCAL_NETWORKS} local networks in all (one /26 of 198.19.0.0/16 "
                            f"each), got {self.provinces * self.local_networks_per_province}")
        if self.provinces * self.local_networks_per_province < 2:
            problems.append("an SBC DR ring needs at least 2 local networks in all")
        if not 0 <= self.enum_numbers <= MAX_ENUM_NUMBERS:
            problems.append(f"ENUM numbers must be 0-{MAX_ENUM_NUMBERS:,}, got {self.enum_numbers:,}")
        if not 1 <= self.enum_block_size <= 100_000_000:
            problems.append(f"ENUM block size must be 1-100,000,000, got {self.enum_block_size:,}")
        if self.enum_style not in ("wildcard", "numbers"):
            problems.append(f"ENUM style must be wildcard or numbers, got {self.enum_style!r}")
        if not 0 <= self.ported_share <= 0.5:
            problems.append(f"ported share must be 0-0.5, got {self.ported_share}")
        if problems:
            raise ImsdrError("; ".join(problems))


# --- helpers -----------------------------------------------------------------------------------


def erlang_b(traffic: float, circuits: int) -> float:
    """Blocking probability, recursive form B(A,n) = A·B(A,n−1) / (n + A·B(A,n−1))."""
    b = 1.0
    for n in range(1, circuits + 1):
        b = traffic * b / (n + traffic * b)
    return b


def circuits_for(traffic: float, grade_of_service: float = 0.01) -> int:
    """Smallest n with Erlang B blocking ≤ the grade of service."""
    b, n = 1.0, 0
    while b > grade_of_service:
        n += 1
        b = traffic * b / (n + traffic * b)
    return n


def _round_up(value: float, step: int) -> int:
    return max(step, int(math.ceil(value / step)) * step)


def province_names(count: int) -> list[str]:
    names = list(PROVINCES[:count])
    names.extend(f"province{i + 1:03d}" for i in range(len(names), count))
    return names


# --- the generator -----------------------------------------------------------------------------


def generate_national(params: NationalParams) -> dict[str, Any]:
    """The inventory as plain data (what ``national_yaml`` writes)."""
    params.check()
    rng = random.Random(params.seed)
    provinces = province_names(params.provinces)
    S = params.sites_per_province
    L = params.local_networks_per_province
    home_domains = [f"ims.{p}.example.net" for p in provinces]

    sites: list[dict[str, Any]] = []
    local_networks: list[dict[str, Any]] = []
    elements: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []
    pools: list[dict[str, Any]] = []
    ring: list[str] = []
    ln_subs: list[int] = []

    # Sites and local networks first: the subscribers drive every capacity.
    site_base = int(ipaddress.IPv4Address("198.18.0.0"))
    ln_base = int(ipaddress.IPv4Address("198.19.0.0"))
    province_info: list[dict[str, Any]] = []
    for pi, prov in enumerate(provinces):
        lat0, lon0 = CAPITALS.get(prov, (22.0 + (pi * 7 % 23) * 1.1, 88.0 + (pi * 11 % 31) * 1.1))
        radius = max(0.6, 0.12 * S)
        psites = []
        for s in range(S):
            gi = pi * S + s
            sid = f"{prov}-s{s + 1}"
            angle = 2 * math.pi * s / S
            v4 = ipaddress.IPv4Network((site_base + gi * 256, 24))
            v6 = ipaddress.IPv6Network(f"2001:db8:{0x1000 + gi:x}::/48")
            sites.append({
                "id": sid,
                "name": f"{prov.capitalize()} DC{s + 1}",
                "region": f"{prov}-{'ab'[s % 2]}",
                "province": prov,
                "power": [f"{sid}-grid-a", f"{sid}-grid-b"],
                "transmission": [f"{sid}-ring-{1 + s % 2}", f"{sid}-spur"],
                "lat": round(lat0 + radius * math.cos(angle), 3),
                "lon": round(lon0 + radius * math.sin(angle), 3),
                "core_subnets": [str(v4), str(v6)],
            })
            psites.append((sid, v4, v6))
        plns = []
        for j in range(L):
            gj = pi * L + j
            lid = f"{prov}-ln{j + 1:02d}"
            subs = rng.randint(120, 900) * 1000 * (2 if j == 0 else 1)
            erl = round(subs * rng.uniform(0.015, 0.025))
            local_networks.append({
                "id": lid,
                "name": f"{prov.capitalize()} local network {j + 1}",
                "prefixes": [str(ipaddress.IPv4Network((ln_base + gj * 64, 26))),
                             str(ipaddress.IPv6Network(f"2001:db8:{0x8000 + gj:x}::/48"))],
                "home_sites": [psites[j % S][0]],
                "subscribers": subs,
                "busy_hour_erlangs": erl,
                # what a DR (virtual) SBC emits for these users in a failover (EMERG-001)
                "emergency": {"pani": f"IEEE-802.3; dsl-location={lid}", "phone_context": f"+86-{10 + pi}",
                              "psap_route": f"+86{10 + pi}110"},
            })
            ring.append(lid)
            ln_subs.append(subs)
            plns.append((lid, subs, erl, j % S))
        province_info.append({"name": prov, "sites": psites, "lns": plns})

    # SBC capacity: its own local network plus the one it backs up in the ring (the next one).
    n_ln = len(ring)
    sbc_load = [ln_subs[i] + ln_subs[(i + 1) % n_ln] for i in range(n_ln)]

    vendors_core = ("vendor-y", "vendor-q")
    hosts = f"{params.host_zone}." if params.host_zone else ""  # the elements' names: <name>.<hosts><domain>
    sbc_access: list[str] = []
    for pi, info in enumerate(province_info):
        prov = info["name"]
        domain = home_domains[pi]
        psites = info["sites"]
        plns = info["lns"]
        subscribers = sum(x[1] for x in plns)
        erlangs = sum(x[2] for x in plns)
        survivors = max(1, S // 2)  # members left in a pool after losing a region
        core_vendor = vendors_core[pi % 2]
        next_host = [10] * S  # next free host number per site

        def add(type_: str, label: str, n: int, s: int, vendor: str, capacity: dict[str, Any],
                prov: str = prov, domain: str = domain, psites: list[Any] = psites,
                next_host: list[int] = next_host, **extra: Any) -> str:
            eid = f"{prov}-{label}-{n:02d}"
            sid, v4, v6 = psites[s]
            host = next_host[s]
            next_host[s] += 1
            if host > 250:
                raise ImsdrError(f"too many elements at site {sid} for its /24 (more than 240)")
            el: dict[str, Any] = {"id": eid, "type": type_, "site": sid, "vendor": vendor}
            el.update({k: v for k, v in extra.items() if k == "roles"})
            el["addresses"] = [str(v4.network_address + host), str(v6.network_address + host)]
            if "sbc_access" in extra:  # the SBC's signalling (access) side lies outside the core subnets
                el["addresses"] = [extra["sbc_access"]]
                el["core_addresses"] = [str(v4.network_address + host), str(v6.network_address + host)]
            el["fqdn"] = f"{label}-{n:02d}.{hosts}{domain}"
            el["capacity"] = capacity
            el.update({k: v for k, v in extra.items() if k not in ("roles", "sbc_access")})
            elements.append(el)
            return eid

        # Core elements by type, round-robin over the sites; groups follow the round-robin.
        made: dict[str, list[tuple[str, int]]] = {}
        for type_, label, per_site, style in PER_SITE:
            count = per_site * S
            if style == "pair" and count % 2:
                count += 1
            groups = count // 2 if style == "pair" else count // S
            capacity, extra = _core_capacity(type_, groups, survivors, subscribers, erlangs, S)
            vendor = {"enum_dns": "vendor-d", "hss": "vendor-z", "slf": "vendor-z",
                      "as": "vendor-w"}.get(type_, core_vendor)
            ids = []
            for n in range(count):
                s = n % S
                ids.append((add(type_, label, n + 1, s, vendor, dict(capacity), **extra), s))
            made[type_] = ids
            if style == "pair":
                for k in range(count // 2):
                    pair: dict[str, Any] = {"id": f"{prov}-{label}-pair-{k + 1:02d}",
                                            "members": [ids[2 * k][0], ids[2 * k + 1][0]],
                                            "mode": "active-standby" if type_ == "hss" else "active-active",
                                            "sync": "realtime"}
                    if type_ == "pcscf":
                        pair["dns_name"] = f"{prov}-pcscf{k + 1}"
                    pairs.append(pair)
            else:
                for k in range(count // S):
                    pool: dict[str, Any] = {"id": f"{prov}-{label}-pool-{k + 1:02d}",
                                            "members": [i for i, _ in ids[k * S:(k + 1) * S]],
                                            "spare": 1}
                    if type_ == "cscf":
                        pool.update(selection="capabilities", role="scscf", dns_name=f"{prov}-scscf{k + 1}")
                    elif type_ in ("mgcf", "imgw"):
                        pool.update(selection="dns" if type_ == "mgcf" else "static",
                                    busy_hour_erlangs=round(erlangs * PSTN_SHARE / groups, 1),
                                    grade_of_service=0.01)
                    else:
                        pool.update(selection="dns", dns_name=f"{prov}-mmtel{k + 1}")
                    pools.append(pool)

        # SBCs: one per local network, at its home site; P-CSCF list: a pair with a member at the
        # SBC's site (that member first) — pairs join consecutive sites, so the other is elsewhere.
        pcscfs = made["pcscf"]
        pcscf_pairs = [(pcscfs[2 * k], pcscfs[2 * k + 1]) for k in range(len(pcscfs) // 2)]
        pair_load = [0] * len(pcscf_pairs)

        def add_sbc(n: int, lid: str, s: int, load: int, pick: int,
                    pcscf_pairs: list[Any] = pcscf_pairs, pair_load: list[int] = pair_load) -> None:
            candidates = [k for k, p in enumerate(pcscf_pairs) if s in (p[0][1], p[1][1])]
            chosen = candidates[pick % len(candidates)]
            first, second = pcscf_pairs[chosen]
            order = [first[0], second[0]] if first[1] == s else [second[0], first[0]]
            pair_load[chosen] += load
            access = ipaddress.IPv4Address(SBC_ACCESS_BASE) + len(sbc_access)
            sbc_access.append(str(access))
            add("sbc", "sbc", n, s, "vendor-x", _sip_capacity(load, sessions=True),
                transports=["udp", "tcp", "tls"], serves=[lid], pcscfs=order,
                features=["virtual_sbc"], options_probing="active", sbc_access=str(access))

        for j, (lid, subs, _erl, s) in enumerate(plns):
            # its own users and those of the local network it backs up in the ring
            add_sbc(j + 1, lid, s, sbc_load[pi * L + j], j // S)
            if j == 0 and len(provinces) > 1:
                # The one ring is national, so the first local network of a province is backed
                # up by the last one of the previous province: give it a second SBC of its own
                # (a local pool at the next site) so that crossing provinces is a last resort.
                add_sbc(L + 1, lid, (s + 1) % S, subs, 0)
        # Each side of a P-CSCF pair carries the whole pair's load alone.
        pcscf_users = _round_up(max(max(pair_load), subscribers / len(pcscf_pairs)) / UTILISATION, 10_000)
        pcscf_ids = {eid for eid, _ in made["pcscf"]}
        for el in elements:
            if el["id"] in pcscf_ids:
                el["capacity"] = _sip_capacity(pcscf_users * UTILISATION)
        # H.248: each IM-MGW is controlled by the MGCF of its site, backed up by the next site's
        mgcfs = made.get("mgcf", [])
        controllers = {eid: [mgcfs[n % len(mgcfs)][0], mgcfs[(n + 1) % len(mgcfs)][0]]
                       for n, (eid, _s) in enumerate(made.get("imgw", []))} if len(mgcfs) > 1 else {}
        for el in elements:
            if el["id"] in controllers:
                el["controlled_by"] = controllers[el["id"]]

    # DNS service areas: each province's ENUM/DNS pairs (level 2) are authoritative for its home
    # domain and number blocks; a national pair (level 1, at the first and the last province's
    # first site) holds only the delegations to them.
    areas: list[dict[str, Any]] = []
    national: list[str] = []
    if len(provinces) > 1:
        for n, pi in enumerate((0, len(provinces) - 1)):
            sid = province_info[pi]["sites"][0][0]
            v4, v6 = province_info[pi]["sites"][0][1:]
            host = 251 + n  # above every province element's host number
            nid = f"national-dns-{n + 1:02d}"
            elements.append({"id": nid, "type": "enum_dns", "site": sid, "vendor": "vendor-d",
                             "addresses": [str(v4.network_address + host), str(v6.network_address + host)],
                             "fqdn": f"ns{n + 1}.example.net",
                             "capacity": {"queries_per_second": 20_000}})
            national.append(nid)
        pairs.append({"id": "national-dns-pair", "members": national, "mode": "active-active", "sync": "realtime"})
        areas.append({"id": "national", "level": "national", "nameservers": national,
                      "zones": ["example.net"]})
        for pi, prov in enumerate(provinces):
            own = [e["id"] for e in elements if e["type"] == "enum_dns" and e["id"].startswith(prov + "-")]
            areas.append({"id": prov, "nameservers": own, "home_domains": [home_domains[pi]]})
    dns: dict[str, Any] = {"sbc_name": "sbc", "transports": ["udp", "tcp"]}
    if params.host_zone:
        dns["host_zone"] = params.host_zone
    if areas:
        dns["areas"] = areas

    return {
        "version": 1,
        "network": {
            "name": (f"Example National IMS ({params.provinces} provinces)" if params.provinces > 1
                     else f"Example Province IMS ({provinces[0]})"),
            "operator_domain": "example.net",
            "home_domains": home_domains,
            "mcc": "460",
            "mnc": "01",
            "country_code": "86",
            "enum_suffix": "e164.arpa",
            "deployment": "production",
            "timers": {"options_interval": 10, "options_failure_threshold": 3, "options_timeout": 2,
                       "diameter_watchdog": 8, "registration_refresh": REGISTRATION_REFRESH, "session_timer": 1800,
                       "diameter_transport": {"bfd": {"interval_ms": 300, "multiplier": 3}}},
            "capacity_model": {"hss_restoration_overhead": HSS_RESTORATION_OVERHEAD,
                               "failover_cost_per_moved_user": HSS_MOVED_USER_COST,
                               "grade_of_service": 0.01,
                               "as_session_share": AS_SESSION_SHARE},
            "dns": dns,
        },
        "sites": sites,
        "local_networks": local_networks,
        "elements": elements,
        "redundancy": {
            "pairs": pairs,
            "pools": pools,
            "sbc_dr": {"layout": "ring", "order": ring},
            "enum_dns": {"sync": "provisioning", "load_sharing": "rtt"},
        },
        "enum_blocks": list(_enum_blocks(params, provinces, home_domains)),
        "waivers": [],
    }


def _sip_capacity(load: float, sessions: bool = False) -> dict[str, Any]:
    """An SBC's or P-CSCF's capacity for ``load`` registered users (and their sessions)."""
    users = _round_up(load / UTILISATION, 10_000)
    capacity: dict[str, Any] = {"registered_users": users}
    if sessions:
        capacity["sessions"] = _round_up(load * MAX_ERLANGS_PER_USER / UTILISATION, 1_000)
    capacity["registrations_per_second"] = _registrations_per_second(users)
    return capacity


def _registrations_per_second(users: float) -> int:
    """Initial registrations/s of a SIP element for ``users`` (its capacity, headroom included):
    each of them registering again at the storm's peak rate (2 REGISTER each) on top of one
    re-REGISTER per refresh of each, in REGISTER/s = 2 × registrations_per_second."""
    register_tx = users * (REGISTERS_PER_REGISTRATION * STORM_PEAK_PER_USER + 1 / REGISTRATION_REFRESH)
    return _round_up(register_tx / REGISTERS_PER_REGISTRATION, 100)


def _diameter_tps(users: float, per_registration: int, restoration: bool) -> int:
    """Diameter transactions/s of an HSS (Cx + Sh, restoration SARs) or SLF (Dx) for ``users``
    it carries after a failure: each registering again at the storm's peak, on top of the
    background, within UTILISATION."""
    per_user = per_registration * STORM_PEAK_PER_USER + DIAMETER_BACKGROUND_PER_USER
    if restoration:
        per_user += CX_PER_RESTORATION / REGISTRATION_REFRESH
    return _round_up(users * per_user / UTILISATION, 100)


def _core_capacity(type_: str, groups: int, survivors: int, subscribers: int, erlangs: int,
                   sites: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Capacity of one member and the type's other fields, sized for a region loss."""
    u = UTILISATION
    if type_ == "pcscf":
        # Provisional even split; resized below from the SBCs that list each pair.
        users = _round_up(subscribers / groups / u, 10_000)
        return {"registered_users": users}, {"options_probing": "passive"}
    if type_ == "cscf":
        users = subscribers / groups * CSCF_RESTORATION_LOAD / survivors
        sessions = erlangs / groups / survivors
        return ({"registered_users": _round_up(users / u, 10_000),
                 "sessions": _round_up(sessions / u, 1_000),
                 "registrations_per_second": _registrations_per_second(users / u)},
                {"roles": ["icscf", "scscf", "ecscf", "bgcf"], "features": ["restoration_data"],
                 "options_probing": "passive"})
    if type_ == "hss":
        # subscribers × (1 + overhead) + users of the largest S-CSCF × (moved-user cost − 1)
        per_pair = subscribers / groups
        cscf_groups = next(n for t, _, n, _ in PER_SITE if t == "cscf")  # pools of one member per site
        largest_scscf = subscribers / cscf_groups * CSCF_RESTORATION_LOAD / max(1, sites // 2) / u
        need = per_pair * (1 + HSS_RESTORATION_OVERHEAD) + largest_scscf * (HSS_MOVED_USER_COST - 1)
        # the storm: every user of the pair (one member left) registering again, and restored
        tps = _diameter_tps(per_pair, CX_PER_REGISTRATION + SH_PER_REGISTRATION, restoration=True)
        return ({"subscribers": _round_up(need / u, 10_000), "transactions_per_second": tps},
                {"features": ["passthrough"]})
    if type_ == "slf":
        # holds the whole province; the storm reaches each pair with its share of the users
        return {"subscribers": _round_up(subscribers / u, 100_000),
                "transactions_per_second": _diameter_tps(subscribers / groups, DX_PER_REGISTRATION,
                                                         restoration=False)}, {}
    if type_ in ("mgcf", "imgw"):
        traffic = erlangs * PSTN_SHARE / groups
        circuits = circuits_for(traffic, 0.01)
        extra = {"options_probing": "active"} if type_ == "mgcf" else {}
        return {"circuits": _round_up(circuits / survivors / u, 30)}, extra
    if type_ == "as":
        sessions = erlangs * AS_SESSION_SHARE / groups / survivors
        return {"sessions": _round_up(sessions / u, 1_000)}, {"options_probing": "active"}
    if type_ == "enum_dns":
        qps = subscribers * 0.02 / groups  # ~0.02 queries/s per subscriber in the busy hour
        return {"queries_per_second": _round_up(qps / u, 5_000)}, {}
    raise AssertionError(type_)


def _enum_blocks(params: NationalParams, provinces: list[str],
                 domains: list[str]) -> Iterator[dict[str, Any]]:
    """Numbers-style blocks of the mobile range shared out between provinces, then wildcards."""
    total, size = params.enum_numbers, params.enum_block_size
    blocks = (total + size - 1) // size
    for k in range(blocks):
        first = MOBILE_BASE + k * size
        last = MOBILE_BASE + min(total, (k + 1) * size) - 1
        f, la = str(first), str(last)
        common = 0
        while common < len(f) and f[common] == la[common]:
            common += 1
        prefix = f[:common]
        free = 13 - common
        pi = k * len(provinces) // blocks
        block: dict[str, Any] = {"id": f"{provinces[pi]}-mobile-{k + 1:04d}", "prefix": f"+{prefix}",
                                 "length": 13, "style": params.enum_style, "domain": domains[pi]}
        whole = f.endswith("0" * free) and la.endswith("9" * free)
        if not whole:
            block["first"] = f"+{f}"
            block["last"] = f"+{la}"
        elif params.enum_style == "wildcard":
            del block["length"]  # one wildcard for the whole prefix, whatever the length
        yield block
    if params.wildcard_blocks:
        for pi, prov in enumerate(provinces):
            yield {"id": f"{prov}-fixed", "prefix": f"+86{200 + pi:03d}555", "style": "wildcard",
                   "domain": domains[pi]}


def write_exceptions(params: NationalParams, out: IO[str]) -> int:
    """Write the ENUM exceptions file of the mobile blocks (``ported_share`` of their numbers,
    deterministic for the seed); return the rows written."""
    params.check()
    provinces = province_names(params.provinces)
    domains = [f"ims.{p}.example.net" for p in provinces]
    rng = random.Random(params.seed * 7919 + 1)  # its own stream: the inventory's bytes stay the same
    total, size = params.enum_numbers, params.enum_block_size
    blocks = (total + size - 1) // size
    out.write("# ENUM exceptions of the synthetic national network: ported and routed numbers\n"
              f"# ({params.ported_share:.1%} of the mobile numbers; format: docs/dns.md)\n"
              "number,kind,target,params\n")
    rows = 0
    for k in range(blocks):
        first = MOBILE_BASE + k * size
        count = min(total, (k + 1) * size) - k * size
        pi = k * len(provinces) // blocks
        lines = []
        for offset in sorted(rng.sample(range(count), round(count * params.ported_share))):
            number = first + offset
            draw = rng.random()
            if draw < 0.7:
                lines.append(f"+{number},ported,ims.operator-b.example.net,\n")
            elif draw < 0.9:
                lines.append(f"+{number},ported-tel,+86199{pi:03d}0000,\n")
            else:
                lines.append(f"+{number},routed,{domains[(pi + 1) % len(domains)]},user=phone\n")
        out.write("".join(lines))
        rows += len(lines)
    return rows


# --- YAML output ---------------------------------------------------------------------------------

_PLAIN = re.compile(r"[a-z][a-z0-9._/-]*")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf"}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return "null"
    text = str(value)
    if _PLAIN.fullmatch(text) and text not in _RESERVED:
        return text
    return json.dumps(text)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _block(mapping: dict[str, Any], indent: int) -> Iterator[str]:
    pad = " " * indent
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            yield f"{pad}{key}:\n"
            yield from _block(value, indent + 2)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            yield f"{pad}{key}:\n"
            for item in value:
                yield f"{pad}  - {_flow(item)}\n"
        else:
            yield f"{pad}{key}: {_flow(value)}\n"


def _header(params: NationalParams, doc: dict[str, Any]) -> Iterable[str]:
    numbers = params.enum_numbers
    yield "# Synthetic national IMS inventory generated by:\n"
    yield (f"#   imsdr example national --provinces {params.provinces} --sites-per-province "
           f"{params.sites_per_province} --local-networks-per-province {params.local_networks_per_province} "
           f"--seed {params.seed} --enum-numbers {numbers} --enum-block-size {params.enum_block_size}"
           f"{'' if params.wildcard_blocks else ' --no-wildcards'}"
           f"{' --enum-style numbers' if params.enum_style == 'numbers' else ''}\n")
    yield (f"# {len(doc['sites'])} sites, {len(doc['local_networks'])} local networks, "
           f"{len(doc['elements'])} elements, {len(doc['enum_blocks'])} ENUM blocks "
           f"({numbers:,} numbers in style: {params.enum_style} blocks).\n")
    yield "# Addresses: 198.18.0.0/15 (RFC 2544 benchmarking range) and 2001:db8::/32 (RFC 3849);\n"
    yield "# domains under example.net (RFC 2606). Not a real network.\n"


def write_yaml(params: NationalParams, out: IO[str]) -> dict[str, Any]:
    """Write the inventory as YAML to ``out``; byte-identical for identical parameters."""
    doc = generate_national(params)
    chunk: list[str] = list(_header(params, doc))
    for key in ("version", "network"):
        chunk.extend(_block({key: doc[key]}, 0))
    for key in ("sites", "local_networks", "elements", "redundancy", "enum_blocks", "waivers"):
        chunk.append("\n")
        chunk.extend(_block({key: doc[key]}, 0))
    out.write("".join(chunk))
    return doc


def national_yaml(params: NationalParams) -> str:
    import io

    buf = io.StringIO()
    write_yaml(params, buf)
    return buf.getvalue()
