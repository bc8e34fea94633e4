"""How a client picks its next hop: the data every part of imsdr reads.

The DNS plan publishes SRV records with these priorities and weights, the dispatcher lists
order the SBC's P-CSCFs the same way, and the load model routes traffic by them, so capacity,
``simulate``, the rendered DNS and the dispatcher lists cannot disagree about a hop.

* SRV priority of a target as seen from a site (:func:`site_tier`): same site 10, same region
  20, other regions 30 (domain.md §5: each region's record lists its own peers first).
* SRV weights inside one priority (:func:`srv_weights`): proportional to capacity, the largest
  100, never 0; equal when a capacity is missing.
* The first-try probability of each target of a priority: RFC 2782 selection
  (:func:`imsdr.model.rfc2782.first_pick_probabilities`, the code ``resolve`` uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

PRIORITY_SAME_SITE, PRIORITY_SAME_REGION, PRIORITY_OTHER = 10, 20, 30
_CAPACITY_FIELDS: dict[str, tuple[str, ...]] = {
    "sbc": ("registered_users", "sessions"),
    "pcscf": ("registered_users", "sessions"),
    "cscf": ("registered_users", "sessions"),
    "as": ("sessions", "registered_users"),
    "mgcf": ("circuits", "busy_hour_erlangs"),
    "imgw": ("circuits", "busy_hour_erlangs"),
    "hss": ("subscribers",),
    "slf": ("subscribers",),
    "enum_dns": ("queries_per_second",),
}


def capacity_of(el: Element) -> float | None:
    """The capacity number weights are proportional to (per element type)."""
    for name in _CAPACITY_FIELDS.get(el.type.value, ()):
        value = getattr(el.capacity, name)
        if value is not None:
            return float(value)
    return None


def srv_weights(elements: list[Element]) -> list[int]:
    """RFC 2782 weights for one priority tier: proportional to capacity, largest = 100, never 0.

    When a member has no capacity in the unit its type uses, every member gets the same weight.
    """
    caps = [capacity_of(e) for e in elements]
    if not elements:
        return []
    if any(c is None for c in caps):
        return [100] * len(elements)
    top = max(caps)  # type: ignore[type-var]
    return [max(1, round(100 * c / top)) for c in caps]  # type: ignore[operator]


def site_tier(topo: Topology, el: Element, site: str | None) -> int:
    """SRV priority of ``el`` as seen from ``site``: same site 10, same region 20, other 30."""
    if site is None:
        return PRIORITY_SAME_SITE
    if el.site == site:
        return PRIORITY_SAME_SITE
    if topo.sites[el.site].region == topo.sites[site].region:
        return PRIORITY_SAME_REGION
    return PRIORITY_OTHER


def srv_tiers(topo: Topology, members: list[Element], site: str | None) -> list[list[tuple[str, int]]]:
    """The SRV answer of a pool name as a client at ``site`` gets it: priority tiers (preferred
    first), each a list of (element id, weight) in member order."""
    by_tier: dict[int, list[Element]] = {}
    for el in members:
        by_tier.setdefault(site_tier(topo, el, site), []).append(el)
    return [
        list(zip((e.id for e in by_tier[p]), srv_weights(by_tier[p]), strict=True)) for p in sorted(by_tier)
    ]


def same_home_domain(
    topo: Topology, source: Element, candidates: list[Element], memo: dict[str, list[Element]] | None = None
) -> list[Element]:
    """The candidates whose FQDN is under the home domain of ``source`` (all when none is).

    ``memo`` (home domain -> answer) lets a caller asking for many sources against the same
    ``candidates`` filter them once per home domain instead of once per source.
    """
    fqdn = topo.fqdn(source)
    domains = [d for d in topo.network.home_domains if _under(fqdn, d)]
    if not domains:
        return candidates
    home = max(domains, key=len)
    if memo is not None and home in memo:
        return memo[home]
    own = [c for c in candidates if _under(topo.fqdn(c), home)] or candidates
    if memo is not None:
        memo[home] = own
    return own


def _under(name: str, origin: str) -> bool:
    return name == origin or name.endswith("." + origin)


def sbc_pcscf_targets(
    topo: Topology, sbc: Element, exclude: frozenset[str] = frozenset(),
    memo: dict[str, list[Element]] | None = None,
) -> tuple[list[Element], list[int]]:
    """The SBC's P-CSCFs and their preference tiers (lower first): its ``pcscfs`` list in order
    (the SBC tries the first available, then the next: serial failover), or, without a list,
    the P-CSCFs of its home domain, same site first, same region next. The dispatcher list and
    the load model both read this. ``exclude``: drained P-CSCFs, left out."""
    if sbc.pcscfs:
        targets = [topo.elements[p] for p in sbc.pcscfs if p in topo.elements and p not in exclude]
        return targets, list(range(len(targets)))
    pcscfs = [p for p in topo.by_type["pcscf"] if p.id not in exclude]
    targets = same_home_domain(topo, sbc, pcscfs, memo)
    return targets, [site_tier(topo, t, sbc.site) for t in targets]
