"""DNS-related design rules: sticky clients, TTLs (DOMAIN.md §3)."""

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


RULES: list[Rule] = [
    Rule(
        "DNS-001", Severity.ERROR,
        "An element used by sticky clients resolves to more than one address of a family",
        make_doc(
            """
            A sticky client (event channel with heartbeats) must keep reaching the same server:
            each SRV target's A/AAAA record must resolve to exactly one address (DOMAIN.md §3).
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
            the failover time includes it (DOMAIN.md §3).
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
]
