"""Verification queries for the runbook, with the expected answers taken from the DNS plan.

The zone files and views are rendered from the same :class:`~imsdr.dns.plan.DnsPlan`, so the
answers printed in the runbook are exactly what a BIND serving the rendered files returns —
runbook and DNS cannot disagree.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from imsdr.dns.drain import platform_of
from imsdr.dns.plan import home_domain_of
from imsdr.dns.zonefile import RdataTexts, rdata_texts
from imsdr.runbook.context import holding, sample_source

if TYPE_CHECKING:
    from imsdr.dns.plan import DnsPlan, ViewPlan
    from imsdr.model.topology import Topology

SRV_LABELS = {"udp": "_sip._udp", "tcp": "_sip._tcp", "tls": "_sips._tcp"}


def dns_servers(topo: Topology) -> list[dict[str, str]]:
    """The ENUM/DNS servers the zones are loaded on: id, first IPv4 (else IPv6) address, name, how
    to query it (its platform's dig) and its service area ('' without areas: every view)."""
    from imsdr.dns.views import server_areas

    ids = list(topo.network.dns.nameservers) or sorted(e.id for e in topo.by_type.get("enum_dns", []))
    areas = server_areas(topo)
    out = []
    for ident in ids:
        el = topo.elements.get(ident)
        if el is None:
            continue
        v4 = [a for a in el.addresses if ":" not in a]
        out.append({"id": el.id, "address": (v4 or list(el.addresses))[0], "fqdn": topo.fqdn(el),
                    "dig": platform_of(topo, el).dig, "area": areas.get(el.id, "")})
    return out


def _source(view: ViewPlan) -> str | None:
    return sample_source(list(view.match_clients), 4) or sample_source(list(view.match_clients), 6)


def _check(plan: DnsPlan, memo: _CheckMemo, view: ViewPlan, qname: str, rdtype: str, purpose: str,
           ordered: bool, source: str | None = None) -> dict[str, Any] | None:
    rrset = memo.lookup(plan, view, qname, rdtype)
    if rrset is None:
        return None
    return _checked(rrset, view, qname, rdtype, purpose, ordered, source, memo)


def _checked(rrset: Any, view: ViewPlan, qname: str, rdtype: str, purpose: str, ordered: bool,
             source: str | None, memo: _CheckMemo) -> dict[str, Any]:
    """The check of :func:`_check` once its answer ``rrset`` is found, asked of the first server
    that holds ``view``."""
    if source is None:
        source = memo.source(view) if view.kind != "default" else None
    server = memo.server(view)
    command = f"{server['dig']} @{server['address']}"
    if source is not None:
        command += f" -b {source}"
    command += f" {qname} {rdtype} +noall +answer"
    expected = memo.expected(rrset)
    return {
        "purpose": purpose,
        "command": command,
        "server": server["address"],
        "dig": server["dig"],  # how to query this server (its platform's dig, e.g. with -p PORT)
        "source": source,
        "view": view.name,
        "view_kind": view.kind,
        "view_subject": view.subject,
        "view_area": view.area,
        "qname": qname,
        "rdtype": rdtype,
        "ttl": rrset.ttl,
        "expected": expected,
        "ordered": ordered,
    }


class _CheckMemo:
    """What the checks of one ``dns_checks`` call share: each view's sample source address (one
    per view, not per query: a national plan asks ~100,000 queries of 124 site views) and the
    text of each record (the SRV records of a pool recur in every site view, reordered), and the
    expected answer of each record set (~6,000 distinct answers among ~60,000 national checks:
    one list per record set, which every check of it shares; nothing changes a check's list)."""

    def __init__(self, servers: list[dict[str, str]]) -> None:
        self._servers = servers  # dns_servers: a check asks the first that holds its view
        self._server_of: dict[str, dict[str, str]] = {}  # view area -> that server
        self._sources: dict[int, tuple[ViewPlan, str | None]] = {}  # id(view) -> (view, source address)
        self._texts = RdataTexts()
        self._zones: dict[tuple[str, str, str], tuple[Any, str, str]] = {}  # (qname, type, side) -> zone, key
        self._delegated: dict[tuple[str, str], Any] = {}  # (name, type) -> a site view's delegated answer
        self._expected: dict[int, tuple[Any, list[str]]] = {}  # id(rrset) -> (rrset, its answer lines)

    def lookup(self, plan: DnsPlan, view: ViewPlan, qname: str, rdtype: str) -> Any:
        """``plan.lookup_rrset(view, qname, rdtype)``, with the zone of each name found once (the
        same pool names are asked of every site view)."""
        key = (qname, rdtype, view.side, view.area)  # (service areas: a view serves its area's zones)
        found = self._zones.get(key)
        if found is None:
            name = qname.rstrip(".").lower()
            found = self._zones[key] = (plan.find_zone(name, view.side, view if plan.areas else None), name,
                                        rdtype.upper())
        zone, name, rtype = found
        if zone is None and not plan.pending:  # what lookup_rrset answers when no zone is found
            if not (plan.areas and view.kind == "site"):
                return None
            # recursion through the national delegations: the same for every site view (a pool's
            # name is asked of each of them)
            key = (name, rtype)
            if key not in self._delegated:
                self._delegated[key] = plan.lookup_rrset(view, qname, rdtype)
            return self._delegated[key]
        if zone is None or zone.kind == "enum" or plan.pending:
            return plan.lookup_rrset(view, qname, rdtype)  # (ENUM answers are computed; lazy views)
        key = (name, rtype)
        overrides = view.overrides.get(zone.name)
        if overrides and key in overrides:
            return overrides[key]
        return zone.rrsets.get(key)

    def source(self, view: ViewPlan) -> str | None:
        hit = self._sources.get(id(view))
        if hit is None or hit[0] is not view:
            hit = self._sources[id(view)] = (view, _source(view))
        return hit[1]

    def server(self, view: ViewPlan) -> dict[str, str]:
        """The first server whose configuration has ``view`` (the first server if none has)."""
        hit = self._server_of.get(view.area)
        if hit is None:
            hit = self._server_of[view.area] = (holding(self._servers, view.area) or self._servers)[0]
        return hit

    def texts(self, rdatas: tuple[Any, ...]) -> list[str]:
        return rdata_texts(rdatas, self._texts)

    def expected(self, rrset: Any) -> list[str]:
        """The lines ``dig +noall +answer`` prints for ``rrset``."""
        hit = self._expected.get(id(rrset))
        if hit is None or hit[0] is not rrset:
            head = f"{rrset.name}. {rrset.ttl} IN {rrset.rdtype} "
            hit = self._expected[id(rrset)] = (rrset, [head + text for text in self.texts(rrset.rdatas)])
        return hit[1]


def dns_checks(topo: Topology, plan: DnsPlan) -> dict[str, list[dict[str, Any]]]:
    """Per runbook type page: the queries that verify its DR design, with expected answers."""
    servers = dns_servers(topo)
    if not servers:
        return {}
    memo = _CheckMemo(servers)
    check = partial(_check, plan, memo)
    transports = [t.value for t in topo.network.dns.transports]
    srv_label = SRV_LABELS[transports[0]] if transports else "_sip._udp"
    primary = topo.network.primary_domain
    local_views = {v.subject: v for v in plan.views if v.kind == "local"}
    site_views = [v for v in plan.views if v.kind == "site"]
    sbc_views = {v.subject: v for v in plan.views if v.kind == "sbc"}
    default_view = next(v for v in plan.views if v.kind == "default")
    probe_view = site_views[0] if site_views else default_view
    out: dict[str, list[dict[str, Any]]] = {}

    def add(key: str, item: dict[str, Any] | None) -> None:
        if item is not None:
            out.setdefault(key, []).append(item)

    # SBC: every local network's view answers its own SBC first, the DR SBC second.
    for ln in sorted(topo.local_networks.values(), key=lambda x: x.id):
        view = local_views.get(ln.id)
        if view is None:
            continue
        order = ", ".join(e.id for e in topo.sbc_answer(ln.id)) or "every SBC"
        add("sbc", check(view, f"{srv_label}.{plan.sbc_name}", "SRV",
                          f"Users of {ln.name} ({ln.id}) find {order} (lowest priority number first).", True))
        local_a = check(view, plan.sbc_name, "A",
                         f"A-only clients of {ln.name} ({ln.id}) get their local SBC only.", False)
        add("sbc", {**local_a, "local_only": True} if local_a else None)
        add("sbc", check(view, plan.sbc_dr_name, "A",
                          f"Their second proxy {plan.sbc_dr_name} is the DR SBC.", False))

    # Pool names and the I-CSCF entry: same-site first in each site view.
    named_groups = sorted((g for g in topo.groups.values() if g.spec.dns_name), key=lambda g: g.id)
    sbc_core = {el.site: el.core_addresses[0] for el in reversed(topo.by_type.get("sbc", [])) if el.core_addresses}
    group_names = []  # (group, runbook page, SRV name): the same in every site view
    for group in named_groups:
        members = [topo.elements[m] for m in group.members if m in topo.elements]
        if not members:
            continue
        key = {"pcscf": "pcscf", "cscf": "cscf", "as": "as", "mgcf": "mgcf", "sbc": "sbc"}.get(
            members[0].type.value)
        if key is not None:
            domain = home_domain_of(topo, plan.home_domains, members)  # where the plan publishes it
            group_names.append((group, key, f"{srv_label}.{group.spec.dns_name}.{domain}"))
    lookup = memo.lookup
    for view in site_views:
        site = topo.sites[view.subject]
        add("cscf", check(view, f"{srv_label}.{primary}", "SRV",
                           f"Core elements at {site.name} ({site.id}) reach the I-CSCFs of their own "
                           "site first.",
                           True))
        # the SBCs are the P-CSCFs' clients: ask from an SBC's core side (its site's SBC view)
        # when the site has one
        pcscf_source = sbc_core.get(site.id)
        pcscf_asked = sbc_views.get(site.id, view) if pcscf_source is not None else view
        for group, key, qname in group_names:
            source, asked = (pcscf_source, pcscf_asked) if key == "pcscf" else (None, view)
            rrset = lookup(plan, asked, qname, "SRV")  # (~100,000 queries nationally: the text only when answered)
            if rrset is not None:
                add(key, _checked(rrset, asked, qname, "SRV",
                                  f"From {site.name} ({site.id}), {group.kind} {group.id} lists its members "
                                  "same site first, then same region, then the rest.", True, source, memo))
    add("cscf", check(probe_view, primary, "NAPTR",
                       f"The home domain {primary} publishes its SIP transports (RFC 3263).", True))

    # Databases, gateways and DNS servers: address records of every element.
    for key, types in (("hss", ("hss", "slf", "dra")), ("mgcf", ("mgcf", "imgw")), ("enum_dns", ("enum_dns",))):
        for t in types:
            for el in sorted(topo.by_type.get(t, []), key=lambda e: e.id):
                add(key, check(probe_view, topo.fqdn(el), "A",
                                f"{el.id} resolves to its signalling address.", False))

    # ENUM/DNS: the zones' name servers, and one number per ENUM block.
    add("enum_dns", check(probe_view, primary, "NS",
                           f"The home domain {primary} is served by the planned ENUM/DNS sets.", False))
    for block in sorted(topo.inventory.enum_blocks, key=lambda b: b.id):
        number = _sample_number(block)
        if number is None:
            continue
        from imsdr.dns.names import enum_name

        add("enum_dns", check(probe_view, enum_name(number, plan.enum_suffix), "NAPTR",
                               f"ENUM: +{number} (block {block.id}) maps to a SIP URI.", False))
    return out


def _sample_number(block: Any) -> str | None:
    """A number of the block the plan answers for: the first one, or the prefix plus zeros."""
    if block.style == "numbers" or block.first:
        if block.first:
            return str(block.first).lstrip("+")
        if block.length:
            return block.prefix + "0" * (block.length - len(block.prefix))
        return None
    length = block.length or max(len(block.prefix) + 4, 11)
    return block.prefix + "0" * max(length - len(block.prefix), 1)
