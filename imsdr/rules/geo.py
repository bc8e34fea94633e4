"""Geo-separation: members of a pair or pool must not fail together (domain.md §1)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import group_members_by_site, haversine_km, join


def _site_pairs(ctx: RuleContext) -> dict[tuple[str, str], list[str]]:
    """(site, site) in inventory order → ids of the groups with members at both."""

    def build() -> dict[tuple[str, str], list[str]]:
        order = {site_id: i for i, site_id in enumerate(ctx.topology.sites)}
        out: dict[tuple[str, str], list[str]] = {}
        for group_id, by_site in group_members_by_site(ctx).items():
            sites = sorted(by_site, key=lambda s: order.get(s, len(order)))
            for i, first in enumerate(sites):
                for second in sites[i + 1:]:
                    out.setdefault((first, second), []).append(group_id)
        return out

    return ctx.cached("geo.site_pairs", build)


def check_same_site(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for group_id, by_site in group_members_by_site(ctx).items():
        group = ctx.topology.groups[group_id]
        size = len(group.members)
        for site_id, members in by_site.items():
            if group.kind == "pair" and len(members) >= 2:
                yield rule.finding(
                    f"pair {group_id}: {members[0]} and {members[1]} are both at site {site_id}; "
                    f"losing {site_id} loses the primary and its backup together",
                    subjects=(group_id, *members, site_id),
                    location=ctx.locate(members[-1], "site"),
                    hint=f"move {members[-1]} to a site other than {site_id} with independent power "
                         "and transmission",
                )
            elif group.kind == "pool" and len(members) > group.spare and size > 1:
                yield rule.finding(
                    f"pool {group_id}: {len(members)} of its {size} members ({join(members)}) are at "
                    f"site {site_id}; losing {site_id} takes down more than the {group.spare} spare "
                    "the pool is designed to lose",
                    subjects=(group_id, *members, site_id),
                    location=ctx.locate(members[-1], "site"),
                    hint=f"spread the pool so that no site holds more than {group.spare} member(s), "
                         "or raise 'spare' and size the pool for it",
                )


def _shared(rule: Rule, ctx: RuleContext, attr: str, what: str) -> Iterator[Finding]:
    sites = ctx.topology.sites
    for (first, second), groups in _site_pairs(ctx).items():
        a, b = sites.get(first), sites.get(second)
        if a is None or b is None:
            continue
        mine = getattr(b, attr)
        for shared in [x for x in getattr(a, attr) if x in mine]:
            yield rule.finding(
                f"sites {first} and {second} share {what} {shared}, yet {len(groups)} redundancy "
                f"group(s) have members at both ({join(groups)}): one {what} failure takes down both sides",
                subjects=(first, second, *groups),
                location=ctx.locate(second, attr, mine.index(shared)),
                hint=f"give {second} a {what} independent of {first}, or move one side of the "
                     "groups to a site that has one",
            )


def check_power(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    yield from _shared(rule, ctx, "power", "power feed")


def check_transmission(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    yield from _shared(rule, ctx, "transmission", "transmission route")


def check_distance(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    minimum = ctx.topology.network.capacity_model.min_site_distance_km
    if minimum <= 0:
        return
    sites = ctx.topology.sites
    for (first, second), groups in _site_pairs(ctx).items():
        a, b = sites.get(first), sites.get(second)
        if a is None or b is None or None in (a.lat, a.lon, b.lat, b.lon):
            continue
        distance = haversine_km(a.lat, a.lon, b.lat, b.lon)  # type: ignore[arg-type]
        if distance < minimum:
            yield rule.finding(
                f"sites {first} and {second} are {distance:.1f} km apart, closer than the minimum "
                f"{minimum:g} km, yet {len(groups)} redundancy group(s) have members at both "
                f"({join(groups)}): a regional disaster can hit both",
                subjects=(first, second, *groups),
                location=ctx.locate(second, "lat"),
                hint="use a site further away for one side, or lower "
                     "network.capacity_model.min_site_distance_km if the risk is accepted",
            )


def check_coordinates(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if ctx.topology.network.capacity_model.min_site_distance_km <= 0:
        return
    involved: dict[str, None] = {}
    for first, second in _site_pairs(ctx):
        involved.setdefault(first)
        involved.setdefault(second)
    for site_id in involved:
        site = ctx.topology.sites.get(site_id)
        if site is not None and (site.lat is None or site.lon is None):
            yield rule.finding(
                f"site {site_id} hosts members of redundancy groups spanning sites but has no "
                "lat/lon, so the distance to its partner sites cannot be checked",
                subjects=(site_id,),
                location=ctx.locate(site_id),
                hint=f"add lat: and lon: to site {site_id}",
            )


RULES: list[Rule] = [
    Rule(
        "GEO-001", Severity.ERROR,
        "Members of a pair, or more than the spare of a pool, sit in the same site",
        make_doc(
            """
            DR is element level: a whole backup element takes over from a failed one, so the
            members of a primary/backup pair or of a load-sharing pool must sit in different
            sites (domain.md §1). A pair with both members in one site, or a pool that loses
            more members than its spare when one site fails, does not survive a site loss.
            The location points at the `site` of the member to move.
            """,
            """
            elements:
              - {id: hss-a-1, type: hss, site: site-a, ...}
              - {id: hss-b-1, type: hss, site: site-a, ...}   # backup in the primary's site
            redundancy:
              pairs:
                - {id: hss-pair, members: [hss-a-1, hss-b-1]}
            """,
            """
            elements:
              - {id: hss-a-1, type: hss, site: site-a, ...}
              - {id: hss-b-1, type: hss, site: site-b, ...}
            """,
        ),
        check_same_site, production_only=True,
    ),
    Rule(
        "GEO-002", Severity.ERROR,
        "Sites holding members of one pair or pool share a power feed",
        make_doc(
            """
            The sites of a pair or pool must have independent power (domain.md §1): a shared
            feed is a common failure that takes both sides down at once. Reported once per
            site pair and feed, naming every group affected.
            """,
            """
            sites:
              - {id: site-a, power: [grid-east], ...}
              - {id: site-b, power: [grid-east], ...}   # same feed as site-a
            """,
            """
            sites:
              - {id: site-a, power: [grid-east], ...}
              - {id: site-b, power: [grid-harbour], ...}
            """,
        ),
        check_power, production_only=True,
    ),
    Rule(
        "GEO-003", Severity.ERROR,
        "Sites holding members of one pair or pool share a transmission route",
        make_doc(
            """
            The sites of a pair or pool must have independent transmission (domain.md §1): a
            shared route (one fibre ring, one backbone link) cut once isolates both sides.
            """,
            """
            sites:
              - {id: site-a, transmission: [backbone-ring-1], ...}
              - {id: site-b, transmission: [backbone-ring-1], ...}
            """,
            """
            sites:
              - {id: site-a, transmission: [backbone-ring-1], ...}
              - {id: site-b, transmission: [backbone-ring-2], ...}
            """,
        ),
        check_transmission, production_only=True,
    ),
    Rule(
        "GEO-004", Severity.WARNING,
        "Sites holding members of one pair or pool are closer than the minimum distance",
        make_doc(
            """
            Sites that are too close share regional risks (flood, earthquake, city-wide power
            cut; domain.md §1). When both sites have coordinates, their great-circle (haversine) distance must
            be at least `network.capacity_model.min_site_distance_km` (default 30 km; 0 turns
            the rule off).
            """,
            """
            network: {capacity_model: {min_site_distance_km: 30}, ...}
            sites:
              - {id: site-a, lat: 39.90, lon: 116.40, ...}
              - {id: site-b, lat: 39.95, lon: 116.45, ...}   # about 7 km away
            """,
            """
            sites:
              - {id: site-a, lat: 39.90, lon: 116.40, ...}
              - {id: site-b, lat: 39.08, lon: 117.20, ...}   # about 114 km away
            """,
        ),
        check_distance, production_only=True,
    ),
    Rule(
        "GEO-005", Severity.INFO,
        "A site hosting members of a cross-site group has no coordinates",
        make_doc(
            """
            Sites of one pair or pool must be far enough apart not to share regional risks;
            without `lat`/`lon` on a site the minimum-distance rule (GEO-004) cannot check it,
            so the plan silently assumes the distance is fine (domain.md §1).
            """,
            """
            sites:
              - {id: site-b, name: Harbour City DC, region: south, power: [...], transmission: [...]}
            """,
            """
            sites:
              - {id: site-b, ..., lat: 39.08, lon: 117.20}
            """,
        ),
        check_coordinates, production_only=True,
    ),
]
