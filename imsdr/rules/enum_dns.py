"""ENUM/DNS: two sets at separate sites, kept in sync, sharing load (domain.md §4.1)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import join


def _dns_elements(ctx: RuleContext) -> list:  # type: ignore[type-arg]
    return list(ctx.topology.by_type.get("enum_dns", []))


def check_two_sets(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    cores = topo.by_type.get("cscf", []) or topo.by_type.get("pcscf", [])
    core_sites = sorted({el.site for el in cores})
    if len(core_sites) < 2:
        return
    dns = _dns_elements(ctx)
    dns_sites = sorted({el.site for el in dns})
    if len(dns_sites) >= 2:
        return
    where = f"only at site {dns_sites[0]}" if dns_sites else "none at all"
    yield rule.finding(
        f"IMS cores sit at {len(core_sites)} sites ({join(core_sites)}) but the ENUM/DNS sets are {where}: "
        "losing that site stops number and name resolution everywhere",
        subjects=(*(el.id for el in dns), *dns_sites),
        location=ctx.locate(dns[-1].id, "site") if dns else ctx.locate_path("elements"),
        hint="deploy two ENUM/DNS sets at different sites, load sharing, with synchronised data",
    )


def check_master_slave_vendors(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    design = ctx.topology.inventory.redundancy.enum_dns
    if design.sync != "master-slave":
        return
    dns = _dns_elements(ctx)
    vendors: dict[str, list[str]] = {}
    for el in dns:
        vendors.setdefault(el.vendor, []).append(el.id)
    if len(vendors) > 1:
        desc = "; ".join(f"{v}: {join(ids)}" for v, ids in vendors.items())
        yield rule.finding(
            f"ENUM/DNS data sync is master-slave (NOTIFY/IXFR) across different vendors ({desc}); "
            "zone transfer between vendors is hard to make work and to arbitrate",
            subjects=tuple(el.id for el in dns),
            location=ctx.locate_path("redundancy", "enum_dns", "sync"),
            hint="use sync: provisioning (the BOSS/NMS writes both sets, with roll-back), or "
                 "backend-db for vendors with split front-/back-end designs",
        )


def _design_missing(rule: Rule, ctx: RuleContext, field: str, advice: str) -> Iterator[Finding]:
    dns = _dns_elements(ctx)
    if len(dns) < 2 or getattr(ctx.topology.inventory.redundancy.enum_dns, field) is not None:
        return
    yield rule.finding(
        f"{len(dns)} ENUM/DNS sets but no redundancy.enum_dns.{field}: {advice}",
        subjects=tuple(el.id for el in dns),
        location=ctx.locate_path("redundancy", "enum_dns", field),
        hint=f"set redundancy.enum_dns.{field}",
    )


def check_sync_missing(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    yield from _design_missing(
        rule, ctx, "sync",
        "how the sets keep their data identical is not stated (master-slave, provisioning, backend-db)")


def check_load_sharing_missing(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    yield from _design_missing(
        rule, ctx, "load_sharing",
        "how queries are shared between the sets is not stated (regional, rtt, anycast)")


def check_anycast(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if ctx.topology.inventory.redundancy.enum_dns.load_sharing == "anycast":
        yield rule.finding(
            "ENUM/DNS load sharing by anycast adds routing configuration and is strongest with many "
            "nodes; with two sets, regional split or RTT-based forwarders are recommended",
            subjects=tuple(el.id for el in _dns_elements(ctx)),
            location=ctx.locate_path("redundancy", "enum_dns", "load_sharing"),
            hint="consider load_sharing: rtt (balances well) or regional (simple)",
        )



# --- service areas: every ENUM/DNS element serves something; no address in two views' lists ----


def _serving_ids(ctx: RuleContext) -> tuple[set[str], str]:
    """The enum_dns ids that get a named configuration, and the field that decides it."""
    from imsdr.model.areas import service_areas

    topo = ctx.topology
    areas = service_areas(topo)
    if areas:
        return {i for a in areas for i in a.nameservers}, "network.dns.areas"
    design = topo.inventory.redundancy.enum_dns
    listed = set(topo.network.dns.nameservers) or {e.id for e in _dns_elements(ctx)}
    if design.sync in ("master-slave", "backend-db"):
        listed |= set(design.primaries)
    return listed, "network.dns.nameservers"


def check_unused_servers(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    serving, field = _serving_ids(ctx)
    for el in _dns_elements(ctx):
        if el.id not in serving:
            yield rule.finding(
                f"ENUM/DNS element {el.id} serves nothing: {field} does not list it, so no named "
                "configuration is rendered for it and no NS record names it",
                subjects=(el.id,),
                location=ctx.locate(el.id),
                hint=f"list it in {field} (an area's nameservers), or remove it from the inventory",
            )


def _view_lists(ctx: RuleContext) -> list[tuple[str, str, str, tuple[str | int, ...]]]:
    """(server group, view, prefix, inventory path) of every match-list entry the rendered views
    hold: a local network's resolvers and UE prefixes, a site's core subnets and its SBCs' core
    addresses. With areas a group is an area (its servers hold only its views)."""
    from imsdr.model.areas import service_areas

    topo = ctx.topology
    areas = service_areas(topo)
    area_of_site = {s: a.id for a in areas for s in a.sites}
    area_of_ln = {ln: a.id for a in areas for ln in a.local_networks}
    out: list[tuple[str, str, str, tuple[str | int, ...]]] = []
    for i, ln in enumerate(topo.inventory.local_networks):
        group = area_of_ln.get(ln.id, "")
        for j, r in enumerate(ln.resolvers):
            out.append((group, f"users-{ln.id}", r, ("local_networks", i, "resolvers", j)))
        for j, p in enumerate(ln.prefixes):
            out.append((group, f"users-{ln.id}", p, ("local_networks", i, "prefixes", j)))
    for i, site in enumerate(topo.inventory.sites):
        for j, p in enumerate(site.core_subnets):
            out.append((area_of_site.get(site.id, ""), f"core-{site.id}", p, ("sites", i, "core_subnets", j)))
    for i, el in enumerate(topo.inventory.elements):
        if el.type.value == "sbc":
            for j, a in enumerate(el.core_addresses):
                out.append((area_of_site.get(el.site, ""), f"sbc-{el.site}", a, ("elements", i, "core_addresses", j)))
    return out


def _site_key(view: str) -> str:
    """A site's SBC view and core view as one (see check_view_overlap)."""
    return "core-" + view[4:] if view.startswith("sbc-") else view


def check_view_overlap(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    import ipaddress

    entries: dict[tuple[str, int], list[tuple[int, int, str, str, tuple[str | int, ...]]]] = {}
    for group, view, text, path in _view_lists(ctx):
        net = ipaddress.ip_network(text, strict=False)
        entries.setdefault((group, net.version), []).append(
            (int(net.network_address), int(net.broadcast_address), view, str(net), path))
    for (_group, _version), items in sorted(entries.items()):
        items.sort(key=lambda e: (e[0], -e[1]))
        active: list[tuple[int, int, str, str, tuple[str | int, ...]]] = []  # entries still open
        for item in items:
            active = [a for a in active if a[1] >= item[0]]  # (sorted by start: the others end before)
            # (a site's SBC view comes before its core view: an SBC address inside the site's own
            # core subnets is matched by the SBC view first, as meant)
            for other in dict((a[2], a) for a in active if _site_key(a[2]) != _site_key(item[2])).values():
                yield rule.finding(
                    f"{item[3]} (view {item[2]}) is also in the match list of view {other[2]} ({other[3]}): "
                    f"BIND answers from the first view that matches, so one of them silently gets the other's "
                    "answers (another local network's SBC, or the core's names)",
                    subjects=(item[2], other[2]),
                    location=ctx.locate_path(*item[4]),
                    hint="give every resolver, UE prefix, core subnet and SBC core address to one view only",
                )
            active.append(item)


RULES: list[Rule] = [
    Rule(
        "ENUM-001", Severity.ERROR,
        "Fewer than two ENUM/DNS sets at separate sites while IMS cores sit at several sites",
        make_doc(
            """
            Where a province has IMS cores at different sites, deploy two ENUM/DNS sets at
            different sites, load sharing, with synchronised data (domain.md §4.1). One set, or
            two in one site, stops all resolution when that site fails.
            """,
            """
            elements:
              - {id: dns-a-1, type: enum_dns, site: site-a, ...}
              - {id: dns-b-1, type: enum_dns, site: site-a, ...}
              - {id: cscf-a-1, type: cscf, site: site-a, ...}
              - {id: cscf-b-1, type: cscf, site: site-b, ...}
            """,
            """
            elements:
              - {id: dns-a-1, type: enum_dns, site: site-a, ...}
              - {id: dns-b-1, type: enum_dns, site: site-b, ...}
            """,
        ),
        check_two_sets,
    ),
    Rule(
        "ENUM-002", Severity.ERROR,
        "Master-slave ENUM/DNS sync across different vendors",
        make_doc(
            """
            Master→slave sync by standard DNS transfer (NOTIFY RFC 1996 + IXFR RFC 1995) is
            simple but hard between different vendors (domain.md §4.1). Rule of thumb: mixed
            vendors → provisioning-side sync; front/back-end vendors → back-end database;
            master-slave only with the same vendor on both sides.
            """,
            """
            elements:
              - {id: dns-a-1, type: enum_dns, vendor: vendor-d, ...}
              - {id: dns-b-1, type: enum_dns, vendor: vendor-e, ...}
            redundancy:
              enum_dns: {sync: master-slave}
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning}
            """,
        ),
        check_master_slave_vendors,
    ),
    Rule(
        "ENUM-003", Severity.WARNING,
        "ENUM/DNS data sync mode not stated",
        make_doc(
            """
            Two ENUM/DNS sets only help if their data is the same; the plan must say how it is
            kept in sync: master-slave, provisioning (BOSS/NMS writes both), or backend-db (domain.md §4.1).
            """,
            """
            redundancy:
              enum_dns: {load_sharing: rtt}
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning, load_sharing: rtt}
            """,
        ),
        check_sync_missing,
    ),
    Rule(
        "ENUM-004", Severity.WARNING,
        "ENUM/DNS load-sharing mode not stated",
        make_doc(
            """
            The two sets share load: regional primary/backup split, forwarders choosing by RTT,
            or anycast (domain.md §4.1). The plan must say which so that clients are configured
            to use both.
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning}
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning, load_sharing: rtt}
            """,
        ),
        check_load_sharing_missing,
    ),
    Rule(
        "ENUM-005", Severity.INFO,
        "ENUM/DNS load sharing by anycast",
        make_doc(
            """
            Anycast is strong with many nodes but adds routing configuration; regional split
            or RTT-based forwarders are recommended (domain.md §4.1).
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning, load_sharing: anycast}
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning, load_sharing: rtt}
            """,
        ),
        check_anycast,
    ),
    Rule(
        "ENUM-006", Severity.WARNING,
        "An ENUM/DNS element that no named configuration is rendered for",
        make_doc(
            """
            Every modelled ENUM/DNS element should serve: `render dns` writes `named/<server>.conf`
            for the servers `network.dns.nameservers` (or, with service areas, an area's
            `nameservers`) lists. An element left out gets no configuration and no NS record,
            yet capacity and failure analysis count it as a server: both sets must serve
            (domain.md §4.1).
            """,
            """
            elements:
              - {id: dns-a-1, type: enum_dns, ...}
              - {id: dns-b-1, type: enum_dns, ...}
            network:
              dns: {nameservers: [dns-a-1]}
            """,
            """
            network:
              dns: {nameservers: [dns-a-1, dns-b-1]}
            """,
        ),
        check_unused_servers,
    ),
    Rule(
        "DNS-006", Severity.ERROR,
        "An address or prefix in more than one view's match list",
        make_doc(
            """
            A name server answers each client from the first view whose match list holds its
            address. A resolver shared by two local networks, a UE prefix inside another, or a
            core subnet overlapping an access prefix makes one view silently answer for the other:
            users of one local network get another's SBC, or access clients the core names.
            Checked per set of servers that hold the views together (per service area); views
            match the source address of the query (domain.md §8.4).
            """,
            """
            local_networks:
              - {id: capital, resolvers: [192.0.2.53], ...}
              - {id: harbour, resolvers: [192.0.2.53], ...}
            """,
            """
            local_networks:
              - {id: capital, resolvers: [192.0.2.53], ...}
              - {id: harbour, resolvers: [192.0.2.54], ...}
            """,
        ),
        check_view_overlap,
    ),
]
