"""Import a BIND configuration and its zone files: what DNS can tell about the IMS core.

From the views, ACLs and zones (``namedconf``) and the zone data (``zonedata``: imsdr's own form
line by line, anything else by dnspython, ``$INCLUDE`` expanded inside the configuration's tree
by ``zoneinclude``; ENUM zones are streamed), it derives:

* home domains: zones whose apex has SIP NAPTR records; the SIP transports they publish;
  the operator domain and hostmaster label from the SOA contact; the TTLs the records carry;
* what each view is, from what it matches and serves, never from its name: a site's core view
  (its services answer with several sets of hosts, its match list holds hosts it publishes, or
  it names HSS/CSCF hosts), a local network's view (every service answers with the same hosts,
  which no core view lists: the SBCs), the default view; a view it cannot tell is reported with
  the reason and kept as a local network to confirm. The view's name only names the entity;
* elements: every host name with A/AAAA and no NAPTR/SRV of its own (addresses, name),
  its SIP and SIPS ports from the SRV records that target it, its type where the records or its
  name say it (name servers are ENUM/DNS servers; the home domain's own SRV set lists I-CSCFs in
  core views and SBCs in access views; the SBC discovery name lists SBCs; otherwise a name like
  ``hss-a-1``), its site where one of its addresses lies in exactly one core view's match list;
  an SBC's core-side name (``north1-core`` beside ``north1``) is that SBC's ``core_addresses``;
* services: the other NAPTR/SRV names become pairs (two members) or pools, with their SRV name;
* the SBC DR order from the per-view SRV priorities of the SBC discovery name (or of the home
  domain itself where the access views list their SBCs there);
* ENUM blocks from the ``e164.arpa`` zones: a wildcard (also one below the zone's apex), or runs
  of consecutive numbers; numbers that answer otherwise (ported, another domain, ``user=phone``)
  become ENUM exceptions (the ``--enum-exceptions`` file), records imsdr cannot express are kept;
* records of kinds imsdr does not model (TXT, CNAME...): ``network.dns.kept_records``, which
  ``render dns`` writes back unchanged; one warning per kind.

Nothing else is guessed: what these do not tell becomes a placeholder in ``draft.complete``.
Two facts of one configuration that disagree name what says each (a view and its line, a host's
name), reported at the view's line. One module past 600 lines: every derivation reads the same
per-view facts (``_Deriver``'s host index, view sides and ids), and splitting it would pass that
state between modules for no reader's benefit.
"""

from __future__ import annotations

import ipaddress
import itertools
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imsdr.importers.draft import Draft
from imsdr.importers.enumzone import EnumEntry, EnumRun, scan_enum_zone, zone_digits
from imsdr.importers.errors import ImportProblems
from imsdr.importers.namedconf import NamedConf, View, ZoneStatement, read_named_confs
from imsdr.importers.zonedata import LineMemo, Srv, ZoneData, load_home_zone
from imsdr.importers.zoneinclude import IncludeScope
from imsdr.inventory.placeholders import placeholder
from imsdr.model.topology import derived_fqdn

SERVICE_TRANSPORTS = {"SIP+D2U": "udp", "SIP+D2T": "tcp", "SIPS+D2T": "tls"}
SRV_PREFIX = {"udp": "_sip._udp", "tcp": "_sip._tcp", "tls": "_sips._tcp"}
_ID = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_TYPE_WORDS = {
    "sbc": "sbc", "pcscf": "pcscf", "cscf": "cscf", "icscf": "cscf", "scscf": "cscf", "hss": "hss",
    "slf": "slf", "mgcf": "mgcf", "imgw": "imgw", "mgw": "imgw", "as": "as", "tas": "as", "dns": "enum_dns",
    "enum": "enum_dns",
}
_THREEGPP = re.compile(r"ims\.mnc([0-9]{3})\.mcc([0-9]{3})\.3gppnetwork\.org")
PAIRED_TYPES = {"pcscf", "hss", "slf", "enum_dns"}
_TARGET = operator.attrgetter("target")  # the types the design pairs 1+1; the others pool N+K


def _is_enum(zone: str, suffix: str) -> bool:
    if not zone.endswith("." + suffix):
        return False
    labels = zone[: -len(suffix) - 1].split(".")
    return all(len(label) == 1 and label.isdigit() for label in labels)


def _zones_base(conf: NamedConf, zones_dir: Path | None) -> Path:
    """Where relative zone file names (and ``$INCLUDE`` names) are read from: BIND's working directory."""
    return zones_dir or (conf.directory if conf.directory.is_absolute() else conf.path.parent / conf.directory)


def _zone_path(conf: NamedConf, zone: ZoneStatement, zones_dir: Path | None) -> Path | None:
    if zone.file is None:
        return None
    file = Path(zone.file)
    return file if file.is_absolute() else _zones_base(conf, zones_dir) / file


def _include_scope(conf: NamedConf, zones_dir: Path | None) -> IncludeScope:
    """``$INCLUDE`` reads inside the configuration's tree (and the zones directory given for it)."""
    roots = [conf.path.parent.resolve()]
    if zones_dir is not None:
        roots.append(zones_dir.resolve())
    return IncludeScope(_zones_base(conf, zones_dir), tuple(roots))


@dataclass
class _Seen:
    """Everything read from the configuration, by view."""

    conf: NamedConf
    home: dict[str, dict[str, ZoneData]] = field(default_factory=dict)  # view -> zone -> data
    enum_runs: list[EnumRun] = field(default_factory=list)
    enum_parents: list[str] = field(default_factory=list)  # digits of ENUM zones that hold no numbers
    enum_kept: dict[str, list[str]] = field(default_factory=dict)  # ENUM zone -> records imsdr cannot express


def _read(conf: NamedConf, zones_dir: Path | None, enum_suffix: str, problems: ImportProblems) -> _Seen:
    seen = _Seen(conf)
    loaded: dict[Path, ZoneData | None] = {}
    memo: LineMemo = {}  # the per-view copies of a zone repeat most of their lines
    enum_done: set[str] = set()
    paths: dict[str | None, Path | None] = {}
    enum_names: dict[str, bool] = {}  # zone name -> an ENUM zone (the views name the same zones again and again)
    by_view = {v.name: {z.name: z for z in v.zones} for v in conf.views}
    scope = _include_scope(conf, zones_dir)
    for view in conf.views:
        zones = seen.home.setdefault(view.name, {})
        for zone in view.zones:
            source = zone
            if zone.in_view:
                found = by_view.get(zone.in_view, {}).get(zone.name)
                if found is None:
                    file, line = zone.where.rsplit(":", 1)
                    problems.add(file, int(line), 1, f"in-view {zone.in_view!r} has no zone {zone.name}")
                    continue
                source = found
            if source.type not in (None, "primary", "master", "secondary", "slave"):
                continue  # hint, forward, stub, redirect...: not data this network publishes
            if source.file not in paths:  # the views name the same files again and again
                paths[source.file] = _zone_path(conf, source, zones_dir)
            path = paths[source.file]
            if path is None:
                continue  # a secondary without a file, a forward zone: nothing to read here
            is_enum = enum_names.get(zone.name)
            if is_enum is None:
                is_enum = enum_names[zone.name] = _is_enum(zone.name, enum_suffix)
            if is_enum:
                if zone.name not in enum_done:
                    enum_done.add(zone.name)
                    runs = scan_enum_zone(path, zone.name, enum_suffix, problems, scope)
                    for run in runs:
                        if run.style == "kept":
                            seen.enum_kept.setdefault(zone.name, []).extend(e.text for e in run.entries)
                    runs = [run for run in runs if run.style != "kept"]
                    seen.enum_runs.extend(runs)
                    if not runs:
                        seen.enum_parents.append(zone_digits(zone.name, enum_suffix))
                continue
            if path not in loaded:
                loaded[path] = load_home_zone(path, zone.name, problems, source.where, memo, scope)
            if loaded[path] is not None:
                zones[zone.name] = loaded[path]  # type: ignore[assignment]
    return seen


def _networks(view: View, acls: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for item in view.match_clients:
        out.extend(acls.get(item, [item]))
    return [p for p in out if "/" in p]


class _AddressIndex:
    """Which hosts have an address inside a prefix: sorted addresses and a binary search, so a
    national configuration (hundreds of views, thousands of hosts) is matched in milliseconds."""

    def __init__(self, hosts: dict[str, list[str]]) -> None:
        # each (address, host) once: a national network's views repeat the same records hundreds of times
        unique = dict.fromkeys((a, fqdn) for fqdn, addrs in hosts.items() for a in addrs)
        parsed = [(ipaddress.ip_address(a), fqdn) for a, fqdn in unique]
        self.by_version = {v: sorted((int(ip), fqdn) for ip, fqdn in parsed if ip.version == v) for v in (4, 6)}
        self.keys = {v: [k for k, _ in self.by_version[v]] for v in (4, 6)}

    def inside(self, prefixes: list[str]) -> list[str]:
        import bisect

        found: dict[str, None] = {}
        for text in prefixes:
            net = ipaddress.ip_network(text)
            keys = self.keys[net.version]
            lo = bisect.bisect_left(keys, int(net.network_address))
            hi = bisect.bisect_right(keys, int(net.broadcast_address))
            found.update((fqdn, None) for _, fqdn in self.by_version[net.version][lo:hi])
        return list(found)


def _type_from_name(ident: str) -> str | None:
    """'hss-a-1', 'hss1', 'dns-01' name their type; 'core-1' or 'sbc-as-1' (two types) do not."""
    words = {_TYPE_WORDS[w.rstrip("0123456789")] for w in ident.split("-") if w.rstrip("0123456789") in _TYPE_WORDS}
    return words.pop() if len(words) == 1 else None


def _host_ids(fqdns: list[str]) -> dict[str, str]:
    """An element id for each host name: its first label, or, where several hosts share it, the
    label that tells them apart in front (dns-01.ims.beijing.example.net -> beijing-dns-01)."""
    by_label: dict[str, list[str]] = {}
    for fqdn in fqdns:
        by_label.setdefault(fqdn.split(".", 1)[0], []).append(fqdn)
    out: dict[str, str] = {}
    taken: set[str] = set()  # out's values
    for label, names in by_label.items():
        if len(names) == 1:
            out[names[0]] = label if _ID.fullmatch(label) else _fallback_id(label, taken)
            taken.add(out[names[0]])
            continue
        rests = [n.split(".")[1:] for n in names]
        # a label position tells the names apart where they do not all hold the same label there
        varies = [len({r[i] if i < len(r) else None for r in rests}) > 1 for i in range(max(map(len, rests)))]
        for name, rest in zip(names, rests, strict=True):
            differing = [part for i, part in enumerate(rest) if varies[i]]
            candidate = f"{differing[0]}-{label}" if differing else label
            out[name] = candidate if _ID.fullmatch(candidate) and candidate not in taken \
                else _fallback_id(label, taken)
            taken.add(out[name])
    return out


def _fallback_id(label: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9-]", "-", label.lower()).strip("-")[:55] or "host"
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def _view_id(view: str, side: str, taken: set[str]) -> str:
    """The id a view's site or local network gets: imsdr's own ``core-<site>`` / ``users-<id>``
    give the id back; any other name (``INTERNAL-DC1``) in lower case, other characters as '-'.
    The name only names the entity: what the view is was decided by what it matches and serves."""
    name = view.lower()
    for prefix, suffix in (("core-", "-core"),) if side == "core" else (("users-", "-users"), ("", "-access")):
        if prefix and name.startswith(prefix):
            name = name.removeprefix(prefix)
            break
        if name.endswith(suffix):
            name = name.removesuffix(suffix)
            break
    ident = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", name)).strip("-")[:63].strip("-")
    if not _ID.fullmatch(ident) or ident in taken:
        ident = _fallback_id(ident or f"{side}-view", taken)
    taken.add(ident)
    return ident


def _view_services(zones: dict[str, ZoneData], memo: dict[tuple[int, ...], frozenset[str]]
                   ) -> tuple[list[str], set[str]]:
    """(the service names of one view's home zones when they answer with more than one set of
    hosts, else none; every host its services list). An access view answers everything with
    its SBCs (one set, in whatever order); a core view has I-CSCFs, S-CSCFs, P-CSCFs, pools.
    ``memo``: the hosts of a NAPTR set and its SRV sets, by identity (the views' copies share them)."""
    answers: dict[frozenset[str], str] = {}  # a set of hosts -> the first service name answering with it
    every: set[str] = set()
    for data in zones.values():
        for owner, naptrs in data.naptr.items():
            srvs = [data.srv.get(replacement, ()) for _o, _p, _s, replacement in naptrs]
            key = (id(naptrs), *map(id, srvs))
            targets = memo.get(key)
            if targets is None:
                targets = memo[key] = frozenset(srv.target for found in srvs for srv in found)
            if targets:
                answers.setdefault(targets, owner)
                every |= targets
    return (sorted(answers.values()) if len(answers) > 1 else []), every


def _relative(name: str, zone: str) -> str:
    return "@" if name == zone else name[: -len(zone) - 1]


class _Deriver:
    def __init__(self, seen: _Seen, source: str, enum_suffix: str) -> None:
        self.seen = seen
        self.source = source
        self.enum_suffix = enum_suffix
        self.draft = Draft()
        self.conflicts: list[Any] = []
        self.hosts: dict[str, dict[str, list[str]]] = {}  # fqdn -> side (access/core/other) -> addresses
        self.side: dict[str, str] = {}  # view -> access | core
        self.why: dict[str, str] = {}  # view -> what made it access or core
        self.view_id: dict[str, str] = {}  # view -> the id of its site or local network
        self.view_where = {view.name: view.where for view in seen.conf.views}
        self.conflict_at: dict[int, str] = {}  # conflict (by identity) -> FILE:LINE of the fact that contradicts
        self.ident: dict[str, str] = {}  # fqdn -> element id

    def state(self, where: str, target: dict[str, Any], key: str, value: Any, by: str | None = None,
              at: str | None = None) -> None:
        """``by``: what in the source says it (a view, a host's name), so that two facts of one
        source that disagree name two different things; ``at``: its FILE:LINE, where a
        disagreement is reported."""
        before = len(self.conflicts)
        self.draft.state(by or self.source, where, target, key, value, self.conflicts)
        if len(self.conflicts) > before and at:
            self.conflict_at[id(self.conflicts[-1])] = at

    def said_by_view(self, view: str) -> tuple[str, str]:
        where = self.view_where.get(view, self.source)
        return f"view {view!r} ({where})", where

    def element(self, fqdn: str) -> dict[str, Any]:
        return self.draft.entity("elements", self.ident[fqdn])

    def zones(self) -> Iterator[tuple[str, ZoneData]]:
        for view, zones in self.seen.home.items():
            for data in zones.values():
                yield view, data

    def distinct_zones(self) -> list[ZoneData]:
        """Each zone file's data once (views that share a file share its data), in view order."""
        return list({id(data): data for _view, data in self.zones()}.values())

    def run(self) -> Draft:
        self.home_domains()
        self.classify_views()
        self.find_hosts()
        self.views_to_sites_and_networks()
        self.services()
        self.attach_core_sides()
        self.kept_home_records()
        self.inventory_order()
        self.enum_blocks()
        return self.draft

    def home_domains(self) -> None:
        net = self.draft.network
        domains: list[str] = []
        transports: list[str] = []
        walked: set[int] = set()  # NAPTR sets, by identity: the per-view copies of a zone share them
        for data in self.distinct_zones():  # a zone seen again tells nothing new here
            threegpp = _THREEGPP.fullmatch(data.name)
            if threegpp:  # TS 23.003 13.2: ims.mnc<MNC>.mcc<MCC>.3gppnetwork.org, MNC padded to three digits
                net.setdefault("mcc", threegpp[2])
                net.setdefault("mnc", threegpp[1])
            elif data.naptr.get(data.name) and data.name not in domains:
                domains.append(data.name)
            for naptrs in data.naptr.values():  # services publish the network's transports they accept
                if id(naptrs) in walked:
                    continue
                walked.add(id(naptrs))
                for _order, _pref, service, _repl in sorted(naptrs):
                    t = SERVICE_TRANSPORTS.get(service.upper())
                    if t and t not in transports:
                        transports.append(t)
            if data.soa_rname and "operator_domain" not in net and "." in data.soa_rname:
                hostmaster, domain = data.soa_rname.split(".", 1)
                self.state("network.operator_domain", net, "operator_domain", domain)
                if hostmaster != "hostmaster":
                    net.setdefault("dns", {})["hostmaster"] = hostmaster
        if domains:
            self.state("network.home_domains", net, "home_domains", domains)
        transports = [t for t in SERVICE_TRANSPORTS.values() if t in transports]
        if transports and transports != ["udp", "tcp"]:
            net.setdefault("dns", {})["transports"] = transports
        self.draft.network.setdefault("enum_suffix", self.enum_suffix)
        ttl = self.ttls()
        if ttl:
            net["ttl"] = ttl

    def ttls(self) -> dict[str, int]:
        """The TTL of each record kind; where zones use several, the most common (and a note)."""
        from collections import Counter

        kinds = ("soa", "ns", "naptr", "srv", "a", "aaaa", "negative")
        every = [data.ttls for _view, data in self.zones()]  # every view's copy counts
        # one count per kind over all copies' lists (the order a kind's TTLs are counted in tells nothing)
        seen: dict[str, Counter[int]] = {
            kind: Counter(itertools.chain.from_iterable([ttls[kind] for ttls in every if kind in ttls]))
            for kind in kinds}
        seen["enum"] = Counter(run.ttl for run in self.seen.enum_runs)
        defaults = {"soa": 3600, "ns": 86400, "naptr": 300, "srv": 60, "a": 60, "aaaa": 60, "enum": 3600,
                    "negative": 300}
        out: dict[str, int] = {}
        for kind, counts in seen.items():
            if not counts:
                continue
            ttl = min(counts, key=lambda t: (-counts[t], t))
            if len(counts) > 1:
                self.draft.notes.append(f"{kind.upper()} records use TTLs {sorted(counts)}; the inventory "
                                          f"has one per kind: the draft uses {ttl}, the most common")
            if defaults[kind] != ttl:
                out[kind] = ttl
        return out

    def kept_home_records(self) -> None:
        """Records of kinds imsdr does not model (TXT, CNAME...): kept unchanged, one warning per kind."""
        kinds: dict[str, int] = {}
        for data in self.distinct_zones():
            kept = self.draft.kept_records.setdefault(data.name, [])
            for line in data.other:
                if line not in kept:
                    kept.append(line)
                    kind = line.split(" ", 4)[3]
                    kinds[kind] = kinds.get(kind, 0) + 1
        self.draft.kept_records = {zone: lines for zone, lines in self.draft.kept_records.items() if lines}
        for kind, count in sorted(kinds.items()):
            self.draft.warnings.append(f"{count} {kind} record(s) imsdr does not model: kept unchanged in "
                                       "network.dns.kept_records (render dns writes them back)")

    def classify_views(self) -> None:
        """What each view is, from what it matches and what it serves, never from its name:

        * core (a site's view): it serves service names beyond the home domain and the SBCs
          (S-CSCF, P-CSCF, HSS pools...), its match list holds addresses of hosts it publishes,
          or it names HSS/CSCF hosts;
        * access (a local network's view): its home domain answers with hosts no core view's home
          domain lists (the SBCs), and it serves nothing else;
        * sbc (imsdr's ``sbc-<site>``): its match list holds only single addresses of hosts other
          views publish (SBCs' core interfaces), and it publishes none of them nor an HSS/CSCF;
        * a view matching ``any`` with no list of its own is the default view;
        * anything else is reported with its reason and kept as a placeholder."""
        conf = self.seen.conf
        every: dict[str, list[str]] = {}
        added: set[tuple[str, int]] = set()  # address sets by identity: the index takes each pair once anyway
        for data in self.distinct_zones():
            for owner, addresses in data.a.items():
                if (owner, id(addresses)) not in added:
                    added.add((owner, id(addresses)))
                    every.setdefault(owner, []).extend(addresses)
        index = _AddressIndex(every)
        apex_targets: dict[str, set[str]] = {}  # view -> the hosts its services' SRV sets list
        memo: dict[tuple[int, ...], frozenset[str]] = {}
        pending: list[tuple[View, list[str]]] = []
        for view in conf.views:
            prefixes = _networks(view, conf.acls)
            zones = self.seen.home.get(view.name, {})
            if not prefixes and "any" in view.match_clients:
                if zones:
                    self.draft.network.setdefault("dns", {})["default_view"] = "access"
                continue
            services, apex = _view_services(zones, memo)
            apex_targets[view.name] = apex
            own = {owner for data in zones.values() for owner in data.a}
            inside = [fqdn for fqdn in index.inside(prefixes) if fqdn in own]
            named = sorted(o for o in own if _type_from_name(o.split(".", 1)[0]) in ("hss", "cscf", "slf"))
            single = bool(prefixes) and all(p.endswith(("/32", "/128")) for p in prefixes)
            if single and not inside and not named and all(index.inside([p]) for p in prefixes):
                self.side[view.name] = "sbc"  # SBCs' core interfaces, published by the other views
                self.why[view.name] = f"its match list holds only single addresses of hosts other views publish " \
                                      f"({index.inside(prefixes)[0]}), none of them its own"
            elif services and single and not inside:  # other areas' name servers, recursing for their clients
                self.draft.notes.append(
                    f"view {view.name!r} ({view.where}) serves the core data to {len(prefixes)} single addresses, "
                    "none of them a host it publishes: another service area's name servers (a peers view), not "
                    "a site; service areas (network.dns.areas) are not imported")
            elif services:
                self.side[view.name] = "core"
                self.why[view.name] = f"its services {', '.join(services[:3])} answer with different hosts"
            elif inside:
                self.side[view.name] = "core"
                self.why[view.name] = f"its match list holds {inside[0]}, a host it publishes"
            elif named:
                self.side[view.name] = "core"
                self.why[view.name] = f"it publishes {named[0]}"
            else:
                pending.append((view, prefixes))
        core_apex = set().union(*(apex_targets[v] for v, side in self.side.items() if side == "core"))
        for view, prefixes in pending:
            apex = apex_targets[view.name]
            if not self.seen.home.get(view.name):
                why = "it serves no home zone"
            elif not apex:
                why = "its home zones have no SIP NAPTR/SRV records"
            elif apex & core_apex:
                why = f"its services list {sorted(apex & core_apex)[0]}, as a core view does, but it serves " \
                      "no pool and its match list holds no host it publishes"
            else:
                self.side[view.name] = "access"
                self.why[view.name] = "its services all answer with the same hosts, which no core view lists"
                continue
            self.unclassified(view, prefixes, why)
        taken: set[str] = set()
        for view in conf.views:
            if view.name in self.side:
                self.view_id[view.name] = _view_id(view.name, self.side[view.name], taken)

    def unclassified(self, view: View, prefixes: list[str], why: str) -> None:
        """A view imsdr cannot tell: reported, and kept as a local network to confirm or move."""
        taken = set(self.draft.local_networks) | set(self.draft.sites)
        ident = _view_id(view.name, "access", taken)
        self.draft.warnings.append(f"view {view.name!r} ({view.where}) is neither a site's core view nor a "
                                   f"local network's: {why}; kept as local network {ident!r} to confirm")
        entity = self.draft.entity("local_networks", ident)
        entity["name"] = placeholder(f"view {view.name!r} could not be classified ({why}): confirm it is a local "
                                     "network, or move its match list to a site's core_subnets")
        if prefixes:
            entity["prefixes"] = prefixes

    def find_hosts(self) -> None:
        """Element host names: A/AAAA owners without NAPTR or SRV of their own, with the addresses
        each side (access views, core views) sees; names that only repeat another host's
        addresses in the access views (the DR SBC's second name) are aliases, not elements."""
        distinct = self.distinct_zones()
        targets = {srv.target for srvs in {id(srvs): srvs for data in distinct for srvs in data.srv.values()}.values()
                   for srv in srvs}
        targets |= {ns for data in distinct for ns in data.ns}
        aliases: dict[str, bool] = {}  # name -> an alias in every access view that has it
        twins: dict[str, set[tuple[str, ...]]] = {}  # access view -> address lists of its SRV/NS targets
        targeted: dict[int, list[tuple[str, ...]]] = {}  # zone data (by identity) -> its targets' address lists
        # zone data (by identity) -> its hosts as (host, addresses, targeted, (host, address set id)),
        # the set of its hosts and the set of those (host, address set id) keys
        hosts: dict[int, tuple[list[tuple[str, tuple[str, ...], bool, tuple[str, int]]], frozenset[str],
                               frozenset[tuple[str, int]]]] = {}
        for data in distinct:
            targeted[id(data)] = [addrs for t, addrs in data.a.items() if t in targets]
            entries = [(owner, addrs, owner in targets, (owner, id(addrs))) for owner, addrs in data.a.items()
                       if owner not in data.naptr and owner != data.name]
            hosts[id(data)] = (entries, frozenset(e[0] for e in entries), frozenset(e[3] for e in entries))
        for view, data in self.zones():
            if self.side.get(view) == "access":
                twins.setdefault(view, set()).update(targeted[id(data)])
        # a zone's hosts are mostly known already: set operations pick the few that still say something
        not_aliases: set[str] = set()  # hosts already seen not to be an alias (that stays so)
        added: dict[str, set[tuple[str, int]]] = {}  # side -> (host, address set id) already taken
        for view, data in self.zones():
            side = self.side.get(view, "other")
            view_twins = twins.get(view, set())
            taken = added.setdefault(side, set())
            entries, owners, keys = hosts[id(data)]
            open_aliases = owners - not_aliases
            new_keys = keys - taken
            if not open_aliases and not new_keys:
                continue
            for owner, addresses, is_target, key in entries:
                if owner in open_aliases:
                    aliases[owner] = is_alias = aliases.get(owner, True) and not is_target and addresses in view_twins
                    if not is_alias:
                        not_aliases.add(owner)
                if key in new_keys:
                    taken.add(key)
                    known = self.hosts.setdefault(owner, {}).setdefault(side, [])
                    known.extend(a for a in addresses if a not in known)
        for fqdn in [f for f, alias in aliases.items() if alias]:
            del self.hosts[fqdn]  # the DR SBC's second name: it repeats the DR SBC's addresses
            label = fqdn.split(".", 1)[0]
            if label != "sbc-dr":
                self.draft.network.setdefault("dns", {})["sbc_dr_name"] = label
        for fqdn, ident in _host_ids(sorted(self.hosts)).items():
            self.ident[fqdn] = ident
            self.draft.derived_ids.add(ident)
        primary = (self.draft.network.get("home_domains") or [None])[0]
        for fqdn in sorted(self.hosts, key=lambda f: self.ident[f]):
            ident = self.ident[fqdn]
            el = self.draft.entity("elements", ident)
            sides = self.hosts[fqdn]
            access, core = sides.get("access", []), sides.get("core", [])
            if access and core and access != core:  # two interfaces: the SBC's UE side and core side
                self.state(f"elements[{ident}].addresses", el, "addresses", list(access))
                self.state(f"elements[{ident}].core_addresses", el, "core_addresses", list(core))
            else:
                merged = list(dict.fromkeys([*access, *core, *sides.get("other", [])]))
                self.state(f"elements[{ident}].addresses", el, "addresses", merged)
            if fqdn != derived_fqdn(ident, primary, (self.draft.network.get("dns") or {}).get("host_zone")):
                self.state(f"elements[{ident}].fqdn", el, "fqdn", fqdn)
            by_name = _type_from_name(ident)
            if by_name:
                self.state(f"elements[{ident}].type", el, "type", by_name, f"its name {fqdn}")
        servers: list[str] = []
        for _view, data in self.zones():
            for ns in data.ns:
                if ns in self.ident:
                    self.state(f"elements[{self.ident[ns]}].type", self.element(ns), "type", "enum_dns",
                               f"the NS records of {data.name}")
                    if self.ident[ns] not in servers:
                        servers.append(self.ident[ns])
        every = [i for i, el in self.draft.elements.items() if el.get("type") == "enum_dns"]
        if servers and sorted(servers) != sorted(every):  # the default publishes every DNS element
            self.draft.network.setdefault("dns", {})["nameservers"] = servers

    def views_to_sites_and_networks(self) -> None:
        conf = self.seen.conf
        site_addresses = {fqdn: [*sides.get("core", []), *sides.get("other", [])] or sides.get("access", [])
                          for fqdn, sides in self.hosts.items()}
        index = _AddressIndex(site_addresses)
        own_hosts = {f"{a}/{32 if ':' not in a else 128}" for sides in self.hosts.values()
                     for a in sides.get("core", []) if sides.get("access") and sides["access"] != sides["core"]}
        for view in conf.views:
            side = self.side.get(view.name)
            prefixes = _networks(view, conf.acls)
            if side == "core":
                site = self.view_id[view.name]
                subnets = [p for p in prefixes if p not in own_hosts]  # an SBC's core side is matched alone
                self.state(f"sites[{site}].core_subnets", self.draft.entity("sites", site), "core_subnets", subnets)
                for fqdn in index.inside(prefixes):
                    self.state(f"elements[{self.ident[fqdn]}].site", self.element(fqdn), "site", site)
            elif side == "sbc":  # imsdr's sbc-<site> beside its site's core view: that site's SBCs
                site = view.name.removeprefix("sbc-")
                core_sites = {self.view_id[v] for v, s in self.side.items() if s == "core"}
                if view.name.startswith("sbc-") and site in core_sites:
                    for fqdn in index.inside(prefixes):
                        self.state(f"elements[{self.ident[fqdn]}].site", self.element(fqdn), "site", site)
            elif side == "access":
                local = self.view_id[view.name]
                hosts = 0  # the access resolvers come first, as single addresses
                while hosts < len(prefixes) - 1 and prefixes[hosts].endswith(("/32", "/128")):
                    hosts += 1
                entity = self.draft.entity("local_networks", local)
                if hosts:
                    self.state(f"local_networks[{local}].resolvers", entity, "resolvers",
                               [p.rsplit("/", 1)[0] for p in prefixes[:hosts]])
                if prefixes[hosts:]:  # a view matched by a TSIG key alone: its prefixes stay a placeholder
                    self.state(f"local_networks[{local}].prefixes", entity, "prefixes", prefixes[hosts:])

    def services(self) -> None:
        """NAPTR+SRV names: the home domain's I-CSCFs, the SBC discovery name, pairs and pools.

        The SBC discovery name is the one service whose SRV sets differ from view to view (each
        user view puts its own SBC first); without views to compare, the default label ``sbc``.
        """
        # label -> view -> its SRV records, as the parts each zone adds: the per-view copies of a zone
        # share their record tuples, so a part is built once per distinct set of SRV rrsets
        parts: dict[str, dict[str, list[tuple[tuple[str, Srv], ...]]]] = {}
        built: dict[tuple[int, ...], tuple[tuple[str, Srv], ...]] = {}  # SRV rrsets by identity -> part
        # zone -> owner -> (its label, its three SRV names, the label's view -> parts)
        names: dict[str, dict[str, tuple[str, str, str, str, dict[str, list[tuple[tuple[str, Srv], ...]]]]]] = {}
        known: dict[tuple[int, str], tuple[tuple[str, Srv], ...]] = {}  # (rrset, transport) -> its known targets
        for view, data in self.zones():
            srv_get = data.srv.get
            zone_names = names.get(data.name)
            if zone_names is None:
                zone_names = names[data.name] = {}
            for owner in data.naptr:
                entry = zone_names.get(owner)
                if entry is None:
                    label = _relative(owner, data.name)
                    udp, tcp, tls = (f"{p}.{owner}" for p in SRV_PREFIX.values())
                    entry = zone_names[owner] = (label, udp, tcp, tls, parts.setdefault(label, {}))
                _label, udp, tcp, tls, by_view = entry
                found = (srv_get(udp), srv_get(tcp), srv_get(tls))
                key = (id(found[0]), id(found[1]), id(found[2]))
                part = built.get(key)
                if part is None:
                    part = built[key] = self._srv_part(found, known)
                view_parts = by_view.get(view)
                if view_parts is None:
                    view_parts = by_view[view] = []
                view_parts.append(part)
        sets: dict[str, dict[str, list[tuple[str, Srv]]]] = {}  # label -> view -> (transport, srv)
        for label, views in parts.items():
            joined: dict[tuple[int, ...], list[tuple[str, Srv]]] = {}  # views with the same parts share one list
            per_label = sets[label] = {}
            for view, view_parts in views.items():
                ids = (*map(id, view_parts),)
                if ids not in joined:
                    joined[ids] = [entry for part in view_parts for entry in part]
                per_label[view] = joined[ids]
        varying = [label for label, views in sets.items() if label != "@"
                   and len({tuple((t, s.priority, s.target) for t, s in v)
                            for v in {id(v): v for v in views.values()}.values()}) > 1]
        sbc_label = varying[0] if len(varying) == 1 else ("sbc" if "sbc" in sets else None)
        if sbc_label and sbc_label != "sbc":
            self.draft.network.setdefault("dns", {})["sbc_name"] = sbc_label
        ported: set[tuple[str, str, int]] = set()  # the views repeat the same SRV records
        for label, views in sets.items():
            members: dict[str, None] = {}  # an ordered set
            # the members' own order is the one a set without per-site tiers keeps (the base zone's)
            tiers = {id(v): len({srv.priority for _t, srv in v}) for v in {id(v): v for v in views.values()}.values()}
            flattest = sorted(views.values(), key=lambda per_view: tiers[id(per_view)])
            walked: set[tuple[tuple[str, Srv], ...]] = set()  # a set two views publish alike adds nothing
            walked_lists: set[int] = set()
            for per_view in flattest:
                if id(per_view) in walked_lists:
                    continue
                walked_lists.add(id(per_view))
                key = tuple(per_view)
                if key in walked:
                    continue
                walked.add(key)
                for transport, srv in per_view:
                    ident = self.ident[srv.target]
                    if (ident, transport, srv.port) not in ported:
                        ported.add((ident, transport, srv.port))
                        self.ports(ident, transport, srv.port)
                    members[ident] = None
            if label == "@":  # the home domain: I-CSCFs for the core; for access clients, their SBCs
                kinds: dict[tuple[str, str], str] = {}  # (element, type) -> the first view saying it, in view order
                said: set[tuple[int, str]] = set()  # (part, type): a part said again adds nothing
                for view, view_parts in parts[label].items():
                    kind = {"access": "sbc", "core": "cscf"}.get(self.side.get(view, ""))
                    if kind is None:
                        continue  # a view imsdr could not classify says nothing about its hosts
                    for part in view_parts:
                        if (id(part), kind) not in said:
                            said.add((id(part), kind))
                            for _t, srv in part:
                                kinds.setdefault((self.ident[srv.target], kind), view)
                for (ident, kind), view in kinds.items():
                    by, at = self.said_by_view(view)
                    self.state(f"elements[{ident}].type", self.draft.elements[ident], "type", kind, by, at)
                    if kind == "cscf":
                        self.state(f"elements[{ident}].roles", self.draft.elements[ident], "roles", ["icscf"])
                if sbc_label is None:  # the access views list their SBCs at the home domain itself
                    self.sbc_ring({view: [srv for _t, srv in per_view] for view, per_view in views.items()
                                   if self.side.get(view) == "access"})
            elif label == sbc_label:
                for ident in members:
                    self.state(f"elements[{ident}].type", self.draft.elements[ident], "type", "sbc",
                               f"the SBC discovery name {label}")
                self.sbc_ring({view: [srv for _t, srv in per_view] for view, per_view in views.items()})
            else:
                self.group(label, list(members))
        for ident, el in self.draft.elements.items():
            accepted = el.pop("_transports", None)
            if accepted and sorted(accepted) != ["tcp", "udp"]:
                order = [t for t in ("udp", "tcp", "tls") if t in accepted]
                self.state(f"elements[{ident}].transports", el, "transports", order)

    def attach_core_sides(self) -> None:
        """An SBC's core-side name (``north1-core.sbc...`` beside ``north1.sbc...``: a host no SRV or
        NS names, its type untold, its first label the SBC's and a suffix, in the same domain) is
        that SBC's core interface, not an element; only SBCs have two sides in the inventory, so
        another element seen at two addresses keeps them both as its addresses."""
        fqdn_of = {ident: fqdn for fqdn, ident in self.ident.items()}
        sbcs = {(fqdn.split(".", 1)[0], fqdn.partition(".")[2]): ident for fqdn, ident in self.ident.items()
                if self.draft.elements[ident].get("type") == "sbc"}
        for fqdn, ident in sorted(self.ident.items()):
            el = self.draft.elements.get(ident)
            if el is None or "type" in el:
                continue
            label, _, parent = fqdn.partition(".")
            owners = [sbc for (sbc_label, sbc_parent), sbc in sbcs.items()
                      if parent == sbc_parent and label.startswith(sbc_label + "-")]
            if len(owners) != 1:
                continue
            sbc = self.draft.elements[owners[0]]
            known = sbc.setdefault("core_addresses", [])
            known.extend(a for a in el.get("addresses", []) if a not in known)
            del self.draft.elements[ident]
            self.draft.derived_ids.discard(ident)
            self.draft.notes.append(f"{fqdn} is the core side of SBC {owners[0]} ({fqdn_of[owners[0]]}): its "
                                    "core_addresses")
        for el in self.draft.elements.values():
            if el.get("type") == "enum_dns" and "core_addresses" in el:  # its user-view glue: access_addresses
                el["access_addresses"], el["addresses"] = el.get("addresses", []), el.pop("core_addresses")
            elif el.get("type") != "sbc" and "core_addresses" in el:  # the schema gives two sides to SBCs only
                el["addresses"] = list(dict.fromkeys([*el.get("addresses", []), *el.pop("core_addresses")]))
        self.ident = {fqdn: ident for fqdn, ident in self.ident.items() if ident in self.draft.elements}

    def _srv_part(self, found: tuple[tuple[Srv, ...] | None, ...],
                  known: dict[tuple[int, str], tuple[tuple[str, Srv], ...]]) -> tuple[tuple[str, Srv], ...]:
        """(transport, record) of a name's SRV sets (udp, tcp, tls), for the targets that are elements."""
        pieces = []
        for transport, srvs in zip(SRV_PREFIX, found, strict=True):
            if srvs:
                piece = known.get((id(srvs), transport))
                if piece is None:  # (a 3GPP home domain's SRV set lists every I-CSCF: ~10^3)
                    every = self.ident.keys() >= set(map(_TARGET, srvs))
                    piece = known[id(srvs), transport] = tuple(zip(itertools.repeat(transport), srvs)) \
                        if every else tuple((transport, srv) for srv in srvs if srv.target in self.ident)
                pieces.append(piece)
        return pieces[0] if len(pieces) == 1 else tuple(itertools.chain(*pieces))

    def inventory_order(self) -> None:
        """imsdr lists the members of one SRV priority tier in inventory order, so each tier is a
        chain of 'comes before' facts; a topological sort of them (ties by id) recovers the order
        the elements were listed in, which dispatcher set numbers and weights follow."""
        import heapq

        after: dict[str, set[str]] = {}
        indegree: dict[str, int] = dict.fromkeys(self.draft.elements, 0)
        done: set[tuple[Srv, ...]] = set()  # the views repeat the same SRV sets: each says it once
        done_ids: set[int] = set()  # ... mostly as the very same tuple
        for data in self.distinct_zones():
            for srvs in data.srv.values():
                if id(srvs) in done_ids:
                    continue
                done_ids.add(id(srvs))
                key = tuple(srvs)
                if key in done:
                    continue
                done.add(key)
                tiers: dict[int, list[str]] = {}
                for srv in srvs:
                    if srv.target in self.ident:
                        tiers.setdefault(srv.priority, []).append(self.ident[srv.target])
                for chain in tiers.values():
                    for before, later in zip(chain, chain[1:], strict=False):
                        if later not in after.setdefault(before, set()):
                            after[before].add(later)
                            indegree[later] += 1
        ready = [ident for ident, n in indegree.items() if n == 0]
        heapq.heapify(ready)
        rank = 0
        while ready:
            ident = heapq.heappop(ready)
            self.draft.order[ident] = rank
            rank += 1
            for later in sorted(after.get(ident, ())):
                indegree[later] -= 1
                if indegree[later] == 0:
                    heapq.heappush(ready, later)

    def ports(self, ident: str, transport: str, port: int) -> None:
        el = self.draft.elements[ident]
        key = "tls_port" if transport == "tls" else "port"
        if port != (5061 if transport == "tls" else 5060):
            self.state(f"elements[{ident}].{key}", el, key, port)
        accepted = el.setdefault("_transports", [])
        if transport not in accepted:
            accepted.append(transport)

    def group(self, label: str, members: list[str]) -> None:
        """A 1+1 pair (two P-CSCF, HSS, SLF or DNS members) or an N+K pool published under ``label``."""
        types = {self.draft.elements[m].get("type") for m in members}
        section = "pairs" if len(members) == 2 and types <= PAIRED_TYPES else "pools"
        group = self.draft.entity(section, f"{label}-{'pair' if section == 'pairs' else 'pool'}")
        group.update({"members": members, "dns_name": label})
        if label in ("icscf", "scscf", "ecscf", "bgcf") and section == "pools":
            group["role"] = label
            for m in members:
                self.state(f"elements[{m}].roles", self.draft.elements[m], "roles", [label])

    def sbc_ring(self, sbc_views: dict[str, list[Srv]]) -> None:
        """Per user view: priority 10 = the local SBC(s), priority 20 = the DR SBC."""
        local_of: dict[str, str] = {}  # local network -> its SBC
        backup_of: dict[str, str] = {}  # local network -> DR SBC
        for view, srvs in sbc_views.items():
            local = self.view_id.get(view, "")
            if local not in self.draft.local_networks:
                continue
            tiers = sorted({s.priority for s in srvs})
            first = [self.ident[s.target] for s in srvs if s.priority == tiers[0] and s.target in self.ident]
            for ident in first:
                serves = self.draft.elements[ident].setdefault("serves", [])
                if local not in serves:
                    serves.append(local)
                local_of.setdefault(local, ident)
            if len(tiers) > 1:
                second = [self.ident[s.target] for s in srvs if s.priority == tiers[1] and s.target in self.ident]
                if second:
                    backup_of[local] = second[0]
        if not backup_of:
            return
        served_by = {sbc: local for local, sbc in local_of.items()}
        backers = {served_by.get(sbc) for sbc in backup_of.values()}
        hubs = set(backup_of.values())
        if len(hubs) == 1 and (len(backup_of) > 1 or next(iter(hubs)) not in served_by):
            self.draft.sbc_dr.update({"layout": "hub", "hub": hubs.pop()})  # one SBC backs up all the others
            return
        # ring: each local network is backed up by the SBC of the one before it in the order
        start = next(iter(local_of))
        order = [start]
        backed_by_me = {served_by.get(sbc): local for local, sbc in backup_of.items()}
        while backed_by_me.get(order[-1]) and backed_by_me[order[-1]] not in order:
            order.append(backed_by_me[order[-1]])
        if None not in backers and len(order) == len(backup_of):
            self.draft.sbc_dr.update({"layout": "ring", "order": order})

    def enum_blocks(self) -> None:
        for run in self.seen.enum_runs:
            ident = placeholder(f"a name (id) for the ENUM block +{run.first or run.prefix}")
            block: dict[str, Any] = {"prefix": "+" + run.prefix, "style": run.style, "domain": run.domain}
            if run.style == "numbers":
                block["length"] = len(run.first)
                if not run.whole_prefix:
                    block["first"] = "+" + run.first
                    block["last"] = "+" + run.last
            self.draft.enum_blocks[ident] = block
            self.draft.origin[f"enum_blocks[{ident}]"] = self.source
            for entry in run.entries:
                self.enum_exception(run, entry)
        for zone, lines in self.seen.enum_kept.items():  # owners relative to the zone, as the readers give them
            self.draft.kept_records.setdefault(zone, []).extend(
                f"{zone}. {rest}" if owner == "@" else f"{owner}.{zone}. {rest}"
                for owner, rest in (line.split(" ", 1) for line in lines))
        if self.draft.enum_exceptions:
            self.draft.warnings.append(
                f"{len(self.draft.enum_exceptions)} ENUM number(s) answer otherwise than their block (ported, "
                "another domain, URI parameters): kept as ENUM exceptions (the .enum-exceptions.csv file "
                "beside the draft)")
        kept = sum(map(len, self.seen.enum_kept.values()))
        if kept:
            self.draft.warnings.append(
                f"{kept} ENUM record(s) imsdr cannot express (another service, a fixed URI, a rewrite of "
                "another number): kept unchanged in network.dns.kept_records")

    def enum_exception(self, run: EnumRun, entry: EnumEntry) -> None:
        """One number the block's NAPTR does not say, as a row of an ENUM exceptions file."""
        from imsdr.dns.enum_exceptions import PARAMS

        number = "+" + entry.number if entry.number != "\\1" else "+" + run.first
        if entry.kind == "tel":
            self.draft.enum_exceptions.append((number, "ported-tel", "+" + entry.domain, ""))  # rn, with its +
            return
        if entry.params not in PARAMS:
            zone = ".".join(reversed(run.prefix)) + "." + self.enum_suffix
            owner = ".".join(reversed(number[1 + len(run.prefix):])) + f".{zone}."
            uri = f"sip:{number}@{entry.domain};{entry.params}"
            self.draft.kept_records.setdefault(zone, []).append(
                f'{owner} {run.ttl} IN NAPTR 100 10 "u" "E2U+sip" "!^.*$!{uri}!" .')
            return
        if entry.domain == run.domain:
            kind, target = "uri", ""
        elif entry.domain in (self.draft.network.get("home_domains") or []):
            kind, target = "routed", entry.domain
        else:
            kind, target = "ported", entry.domain
        self.draft.enum_exceptions.append((number, kind, target, entry.params))


def _servers(confs: list[NamedConf], draft: Draft, source: str) -> None:
    """ENUM/DNS synchronisation from several servers' configurations: zones of type secondary
    take transfers from the primaries (master-slave or backend-db: the configuration does not
    say which); identical primaries on every server are kept in step by provisioning."""
    kinds = {conf.path: {z.type for v in conf.views for z in v.zones if z.type} for conf in confs}
    secondaries = [conf for conf in confs if kinds[conf.path] & {"secondary", "slave"}]
    by_address = {a: ident for ident, el in draft.elements.items() for a in el.get("addresses", [])}
    if secondaries:
        addresses = {p for conf in secondaries for v in conf.views for z in v.zones for p in z.primaries}
        primaries = sorted({by_address[a] for a in addresses if a in by_address})
        if primaries:
            draft.enum_dns["primaries"] = primaries
        draft.enum_dns["sync"] = placeholder("master-slave or backend-db: secondaries transfer the zones from "
                                             f"{', '.join(primaries) or 'the primaries'}")
        directories = {str(Path(z.file).parent) for conf in secondaries for v in conf.views for z in v.zones
                       if z.type in ("secondary", "slave") and z.file and Path(z.file).is_absolute()}
        if len(directories) == 1 and directories != {"/var/cache/bind/imsdr"}:
            draft.network.setdefault("dns", {})["secondary_directory"] = directories.pop()
    elif len(confs) > 1:
        draft.enum_dns["sync"] = "provisioning"
    else:
        draft.enum_dns["sync"] = placeholder("how the ENUM/DNS servers synchronise (master-slave, provisioning or "
                                             "backend-db): one server's configuration does not tell")
    servers = [i for i, el in draft.elements.items() if el.get("type") == "enum_dns"]
    if servers:
        draft.enum_dns["load_sharing"] = placeholder("how clients share the ENUM/DNS servers (regional, rtt or "
                                                     "anycast)")
    if draft.enum_dns:
        draft.origin.update({f"redundancy.enum_dns.{k}": source for k in draft.enum_dns})


def _country_code(seen: _Seen, draft: Draft) -> None:
    """The ENUM parent zone (delegations only, no numbers) is the country code's zone."""
    digits = [p for p in seen.enum_parents if 1 <= len(p) <= 3 and p[0] != "0"]
    blocks = [r.prefix for r in seen.enum_runs]
    if len(digits) == 1 and all(b.startswith(digits[0]) for b in blocks):
        draft.network["country_code"] = digits[0]


def import_bind(named_confs: list[Path], problems: ImportProblems, zones_dir: Path | None = None,
                enum_suffix: str = "e164.arpa") -> Draft:
    """A draft from one or more name servers' configurations: the first one that holds primary
    zones is read for the data; all of them tell how the servers synchronise."""
    from imsdr.analysis import cyclic_gc_paused

    # a national import builds millions of tuples (tokens, records, memo keys) and frees almost
    # none: each full collection would walk them all again, for nothing (half the CPU time)
    with cyclic_gc_paused():
        return _import_bind(named_confs, problems, zones_dir, enum_suffix)


def _import_bind(named_confs: list[Path], problems: ImportProblems, zones_dir: Path | None,
                 enum_suffix: str) -> Draft:
    confs = read_named_confs(named_confs, problems)
    if problems.problems:
        return Draft()
    main = next((c for c in confs if any(z.type in ("primary", "master") for v in c.views for z in v.zones)),
                confs[0])
    seen = _read(main, zones_dir, enum_suffix, problems)
    source = str(main.path)
    deriver = _Deriver(seen, source, enum_suffix)
    draft = deriver.run()
    _servers(confs, draft, source)
    if draft.kept_records:
        draft.network.setdefault("dns", {})["kept_records"] = [
            {"zone": zone, "records": lines} for zone, lines in draft.kept_records.items()]
    _country_code(seen, draft)
    for conflict in deriver.conflicts:
        file, _, line = deriver.conflict_at.get(id(conflict), f"{source}:1").rpartition(":")
        problems.add(file, int(line) if line.isdigit() else 1, 1, str(conflict))
    numbers = sum(r.count for r in seen.enum_runs)
    draft.sources.append(
        f"{source}: {len(main.views)} views, {sum(len(z) for z in seen.home.values())} home zone(s), "
        f"{len(draft.elements)} elements, {len(seen.enum_runs)} ENUM block(s) ({numbers} numbers)")
    draft.sources.extend(f"{c.path}: server synchronisation" for c in confs if c is not main)
    return draft
