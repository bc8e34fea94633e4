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
]
