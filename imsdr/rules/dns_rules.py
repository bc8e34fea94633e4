"""DNS-related design rules: sticky clients, TTLs (domain.md §3)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import Feature
from imsdr.rules.base import Rule, RuleContext, make_doc

MAX_FAILOVER_TTL = 300


def check_sticky(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for el in ctx.topology.inventory.elements:
        if not el.has(Feature.STICKY_CLIENTS):
            continue
        v4 = [a for a in el.addresses if ipaddress.ip_address(a).version == 4]
        v6 = [a for a in el.addresses if ipaddress.ip_address(a).version == 6]
        for family, addrs in (("A", v4), ("AAAA", v6)):
            if len(addrs) > 1:
                yield rule.finding(
                    f"{el.id} serves sticky clients but its name {ctx.topology.fqdn(el)} resolves to "
                    f"{len(addrs)} {family} addresses ({', '.join(addrs)}): a client that must keep reaching "
                    "the same server can land on another one",
                    subjects=(el.id,),
                    location=ctx.locate(el.id, "addresses"),
                    hint=f"give each server its own FQDN with exactly one {family} address (list them as "
                         "SRV targets), and a separate FQDN for round-robin clients; or front them with a "
                         "load balancer that keeps session persistence",
                )


def check_ttl(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    ttl = ctx.topology.network.ttl
    for kind in ("srv", "a", "aaaa"):
        value = getattr(ttl, kind)
        if value > MAX_FAILOVER_TTL:
            yield rule.finding(
                f"{kind.upper()} records have a TTL of {value} s: clients see a DNS change only after the "
                f"TTL, so every DNS-driven failover takes at least {value} s",
                subjects=(),
                location=ctx.locate_path("network", "ttl", kind),
                hint=f"use a TTL of {MAX_FAILOVER_TTL} s or less for {kind.upper()} records "
                     "(60-90 s is common)",
            )


def check_nameservers(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    listed = topo.network.dns.nameservers
    if not listed:
        return  # default: every ENUM/DNS element serves the zones
    dns_sites = sorted({el.site for el in topo.by_type.get("enum_dns", [])})
    ns_sites = sorted({topo.elements[n].site for n in listed if n in topo.elements})
    if len(dns_sites) >= 2 and len(ns_sites) < 2:
        others = [el.id for el in topo.by_type.get("enum_dns", []) if el.id not in listed]
        yield rule.finding(
            f"network.dns.nameservers lists only ENUM/DNS at site {', '.join(ns_sites)} "
            f"({', '.join(listed)}), "
            f"although sets exist at {len(dns_sites)} sites: the zones' NS records name one site, so "
            "resolvers cannot fail over to the other set",
            subjects=(*listed, *others),
            location=ctx.locate_path("network", "dns", "nameservers"),
            hint=f"add an ENUM/DNS element of another site (e.g. {others[0]}) to network.dns.nameservers, "
                 "or remove the list to use every set" if others else "list ENUM/DNS elements of two sites",
        )


RULES: list[Rule] = [
    Rule(
        "DNS-001", Severity.ERROR,
        "An element used by sticky clients resolves to more than one address of a family",
        make_doc(
            """
            A sticky client (event channel with heartbeats) must keep reaching the same server:
            each SRV target's A/AAAA record must resolve to exactly one address (domain.md §3).
            Clients that want round-robin A records get a separate FQDN.
            """,
            """
            elements:
              - {id: as-a-1, type: as, features: [sticky_clients], addresses: [192.0.2.50, 192.0.2.51]}
            """,
            """
            elements:
              - {id: as-a-1, type: as, features: [sticky_clients], addresses: [192.0.2.50, "2001:db8:a::50"]}
            """,
        ),
        check_sticky,
    ),
    Rule(
        "DNS-002", Severity.WARNING,
        "SRV/A/AAAA TTL longer than 300 s slows DNS-driven failover",
        make_doc(
            """
            After DNS changes, clients only see them after the record's TTL (60-90 s is common):
            the failover time includes it (domain.md §3).
            """,
            """
            network:
              ttl: {srv: 3600}
            """,
            """
            network:
              ttl: {srv: 60}
            """,
        ),
        check_ttl,
    ),
    Rule(
        "DNS-003", Severity.ERROR,
        "The zones' name servers are all at one site",
        make_doc(
            """
            The two ENUM/DNS sets at separate sites only protect resolution if both serve the
            zones: the NS records come from `network.dns.nameservers` (default: every ENUM/DNS
            element). Listing the sets of one site only makes that site a single point of failure
            for every DNS and ENUM lookup (domain.md §4.1).
            """,
            """
            network:
              dns: {nameservers: [dns-a-1]}      # dns-b-1 (site-b) not a name server
            """,
            """
            network:
              dns: {nameservers: [dns-a-1, dns-b-1]}
            """,
        ),
        check_nameservers,
    ),
]
