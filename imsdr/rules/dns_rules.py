"""DNS-related design rules: sticky clients, TTLs (domain.md §3)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

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


def _served(block: Any) -> tuple[int, int, int] | None:
    """(first, last, digits) a numbers block answers; None for a wildcard (it answers everything
    below its prefix, whatever the length)."""
    from imsdr.inventory.build import block_range

    ranged = block.style == "numbers" or block.first is not None or block.last is not None
    return block_range(block) if ranged else None


def _span(prefix: str, digits: int) -> tuple[int, int]:
    """Every number of ``digits`` digits that starts with ``prefix``."""
    free = digits - len(prefix)
    return int(prefix + "0" * free), int(prefix + "9" * free)


def _gaps(low: int, high: int, inner: tuple[int, int]) -> list[tuple[int, int]]:
    """Parts of [low, high] outside ``inner``."""
    out = []
    if low < inner[0]:
        out.append((low, min(high, inner[0] - 1)))
    if high > inner[1]:
        out.append((max(low, inner[1] + 1), high))
    return [(a, b) for a, b in out if a <= b]


def check_nested_enum_blocks(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    """Each ENUM block is a zone of its own: a block nested inside another hides the outer block's
    answers below its prefix, so numbers the outer block served but the inner one does not list
    get NXDOMAIN."""
    blocks = ctx.topology.inventory.enum_blocks
    for inner in blocks:
        enclosing = [b for b in blocks if b is not inner and len(b.prefix) < len(inner.prefix)
                     and inner.prefix.startswith(b.prefix)]
        if not enclosing or _served(inner) is None:
            continue  # an inner wildcard answers everything below it: nothing is lost
        outer = max(enclosing, key=lambda b: len(b.prefix))  # the zone the inner one is carved from
        first, last, digits = _served(inner)  # type: ignore[misc]
        outer_range = _served(outer)
        if outer_range is None:  # a wildcard answered every number below: judge the inner block's length
            low, high = _span(inner.prefix, digits)
        else:  # the outer block's own numbers below the inner prefix
            low, high = _span(inner.prefix, outer_range[2])
            low, high = max(low, outer_range[0]), min(high, outer_range[1])
            if low > high:
                continue
        served = (first, last) if outer_range is None or outer_range[2] == digits else (high + 1, high + 1)
        gaps = _gaps(low, high, served)
        if not gaps:
            continue
        text = ", ".join(f"+{a}…+{b}" if a != b else f"+{a}" for a, b in gaps)
        count = sum(b - a + 1 for a, b in gaps)
        outer_kind = "wildcard block" if outer_range is None else "numbers block"
        yield rule.finding(
            f"{count:,} number{'s' if count != 1 else ''} get no ENUM record: {text}. ENUM block '{inner.id}' "
            f"(+{inner.prefix}, numbers +{first}…+{last}) is a zone of its own inside {outer_kind} "
            f"'{outer.id}' (+{outer.prefix}), so '{outer.id}' no longer answers below +{inner.prefix} and "
            "these numbers get NXDOMAIN",
            subjects=(inner.id, outer.id),
            location=ctx.locate(inner.id, "prefix"),
            hint=f"widen '{inner.id}' (first/last) to cover them, make it a wildcard, or give it a prefix "
                 f"outside +{outer.prefix}",
        )


def check_publishable(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    """What ``render dns`` and ``plan`` would refuse, reported by ``check`` already."""
    if ctx.dns_problems is None:
        return
    for problem in ctx.dns_problems():
        where = f"{problem.path}: " if problem.path else ""
        yield rule.finding(
            f"{where}{problem.message}",
            location=problem.location,
            hint="`imsdr render dns` and `imsdr plan` refuse to write a DNS plan with this problem",
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
    Rule(
        "DNS-004", Severity.ERROR,
        "A nested ENUM block leaves numbers of the enclosing block without a record",
        make_doc(
            """
            Every ENUM block is rendered as a zone of its own (RFC 6116 names under e164.arpa). A
            block whose prefix lies inside another block's prefix is therefore authoritative for
            everything below its prefix: the enclosing block's wildcard (or numbers) no longer
            answers there, and each number the inner block does not list gets NXDOMAIN, so calls
            to it fail (domain.md §4.1).
            """,
            """
            enum_blocks:
              - {id: wide, prefix: "+86105", style: wildcard, domain: ims.example.net}
              - {id: trial, prefix: "+8610555", length: 11, style: numbers, domain: ims.example.net,
                 first: "+86105550000", last: "+86105550099"}   # +86105550100..+86105559999 lost
            """,
            """
            enum_blocks:
              - {id: wide, prefix: "+86105", style: wildcard, domain: ims.example.net}
              - {id: trial, prefix: "+8610555", style: wildcard, domain: ims.example.net}
            """,
        ),
        check_nested_enum_blocks,
    ),
    Rule(
        "DNS-005", Severity.ERROR,
        "The DNS plan cannot publish a name the inventory asks for",
        make_doc(
            """
            Every element FQDN and every pair/pool `dns_name` is published in the zone of a home
            domain (domain.md §8.4); a name outside every home domain (or produced twice) has no
            zone to go in, so `render dns` and `plan` refuse the whole DNS plan. `check` reports the
            same problems first, so a pre-commit hook never lets through what `plan` refuses.
            """,
            """
            network: {home_domains: [ims.example.net], ...}
            elements:
              - {id: cscf-a-1, fqdn: cscf-a-1.other.example.org, ...}
            """,
            """
            elements:
              - {id: cscf-a-1, fqdn: cscf-a-1.ims.example.net, ...}
            """,
        ),
        check_publishable,
    ),
]
