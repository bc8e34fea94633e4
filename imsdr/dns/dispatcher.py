"""Kamailio 5.6 ``dispatcher.list`` files for the SBC->P-CSCF and P-CSCF->I-CSCF hops.

Conventions of the target (Kamailio dispatcher module README, Debian kamailio 5.6), which
differ from SRV's, so numbers are converted, never copied:

* line: ``setid destination flags priority attrs``;
* **priority**: destinations are ordered inside a set by priority, **highest value first**
  (algorithm 8 "select destination sorted by priority" = serial failover) — the opposite of
  SRV, where the lowest priority number wins. imsdr turns preference tiers into
  ``priority = 10 * (number of tiers - tier index)``, so the preferred tier has the highest value;
* **weight** (``attrs weight=N``, algorithm 9): an integer 1..100, the *percent* of calls for the
  destination over the whole set, the sum must not exceed 100 — unlike SRV weights, which are
  relative and apply within one priority only. imsdr gives each destination its capacity share
  of the whole set, rounded by largest remainder so the set sums to exactly 100;
* **flags** 8 = probing destination (OPTIONS keepalives, with ``ds_ping_interval`` set) for
  targets that answer OPTIONS when the source element probes actively; 0 otherwise;
* ``duid`` = the target's element id (call-load dispatching and readable ``dispatcher.list`` RPC output).

Set ids: one set per source element, numbered 1.. in inventory order; the comment above
each set names the source element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.dns.plan import capacity_of, site_tier
from imsdr.model.selection import same_home_domain, sbc_pcscf_targets

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

SBC_PCSCF_LIST = "kamailio/dispatcher-sbc-pcscf.list"
PCSCF_ICSCF_LIST = "kamailio/dispatcher-pcscf-icscf.list"


@dataclass(frozen=True)
class Destination:
    element: str
    uri: str
    flags: int
    priority: int
    weight: int

    def line(self, setid: int) -> str:
        return f"{setid} {self.uri} {self.flags} {self.priority} weight={self.weight};duid={self.element}"


@dataclass(frozen=True)
class DispatcherSet:
    setid: int
    source: str
    comment: str
    destinations: tuple[Destination, ...]


def sip_uri(el: Element) -> str:
    transport = el.transports[0].value if el.transports else "udp"
    addr = el.addresses[0]
    host = f"[{addr}]" if ":" in addr else addr  # schema-validated address: ':' only in IPv6
    port = el.tls_port if transport == "tls" else el.port
    return f"sip:{host}:{port};transport={transport}"


def percent_weights(elements: list[Element]) -> list[int]:
    """Capacity shares of the whole set in percent, each >= 1, summing to 100 (largest remainder)."""
    n = len(elements)
    if n == 0:
        return []
    if n > 100:
        return [1] * n
    caps = [capacity_of(e) for e in elements]
    shares = [1.0] * n if any(c is None for c in caps) else [float(c) for c in caps]  # type: ignore[arg-type]
    total = sum(shares)
    spare = 100 - n  # every destination gets 1, the rest is shared by capacity
    raw = [spare * s / total for s in shares]
    base = [int(r) for r in raw]
    rest = spare - sum(base)
    order = sorted(range(n), key=lambda i: (-(raw[i] - base[i]), i))
    for i in order[:rest]:
        base[i] += 1
    return [b + 1 for b in base]


def ds_priorities(tiers: list[int]) -> list[int]:
    """Convert preference tiers (lower = preferred, like SRV priority) to dispatcher priorities
    (higher = preferred): ``10 * (number of distinct tiers - rank of the tier)``."""
    ranks = {t: i for i, t in enumerate(sorted(set(tiers)))}
    top = len(ranks)
    return [10 * (top - ranks[t]) for t in tiers]


def _probes(source: Element) -> bool:
    return source.probing is not None and source.probing.value == "active"  # the same default as TIMER-003


def _probing_flag(source: Element, target: Element) -> int:
    return 8 if _probes(source) and target.answers_options else 0


def _make_set(
    setid: int, source: Element, targets: list[Element], tiers: list[int], comment: str
) -> DispatcherSet:
    return DispatcherSet(setid, source.id, comment, _destinations(source, targets, tiers))


def _destinations(source: Element, targets: list[Element], tiers: list[int]) -> tuple[Destination, ...]:
    prios = ds_priorities(tiers)
    weights = percent_weights(targets)
    dests = [
        Destination(t.id, sip_uri(t), _probing_flag(source, t), p, w)
        for t, p, w in zip(targets, prios, weights, strict=True)
    ]
    dests.sort(key=lambda d: -d.priority)  # stable: keeps preference order within a priority
    return tuple(dests)


def sbc_pcscf_sets(topo: Topology, exclude: frozenset[str] = frozenset()) -> list[DispatcherSet]:
    """One set per SBC: its P-CSCF list in order of preference, or every P-CSCF same-site first.

    ``exclude``: drained P-CSCFs, left out of every set (set ids do not move)."""
    out = []
    memo: dict[str, list[Element]] = {}
    for i, sbc in enumerate(topo.by_type["sbc"], start=1):
        # the load model routes by the same list (model.selection)
        targets, tiers = sbc_pcscf_targets(topo, sbc, exclude, memo)
        how = ("its pcscfs list in order of preference" if sbc.pcscfs else
               "the P-CSCFs of its home domain, same site first, same region next")
        if targets:
            out.append(_make_set(i, sbc, targets, tiers, f"SBC {sbc.id} (site {sbc.site}) -> P-CSCF: {how}"))
    return out


def pcscf_icscf_sets(topo: Topology, exclude: frozenset[str] = frozenset()) -> list[DispatcherSet]:
    """One set per P-CSCF: the I-CSCFs of its home domain (all when none is under it), same site
    first, same region next, other regions last. ``exclude``: drained I-CSCFs, left out."""
    all_icscfs = [e for e in topo.with_role("icscf") if e.id not in exclude]
    out = []
    memo: dict[str, list[Element]] = {}
    # the P-CSCFs of one site and home domain get the same list (hundreds of I-CSCFs nationally):
    # (id(I-CSCF list), site, whether the source probes) -> destinations; the lists live in ``memo``
    made: dict[tuple[int, str, bool], tuple[Destination, ...]] = {}
    for i, pcscf in enumerate(topo.by_type["pcscf"], start=1):
        icscfs = same_home_domain(topo, pcscf, all_icscfs, memo)
        if not icscfs:
            continue
        key = (id(icscfs), pcscf.site, _probes(pcscf))
        dests = made.get(key)
        if dests is None:
            dests = made[key] = _destinations(pcscf, icscfs, [site_tier(topo, t, pcscf.site) for t in icscfs])
        comment = f"P-CSCF {pcscf.id} (site {pcscf.site}) -> I-CSCF: same site first, same region next"
        out.append(DispatcherSet(i, pcscf.id, comment, dests))
    return out


def render_dispatcher_list(sets: list[DispatcherSet], title: str, inventory: str) -> str:
    lines = [
        f"# Kamailio dispatcher.list: {title}",
        f"# rendered by imsdr from inventory {inventory}; do not edit by hand.",
        "# line format: setid destination flags priority attrs",
        "# priority: HIGHER value first (use algorithm 8 for failover in this order);",
        "# weight=N: percent of calls over the whole set, sums to 100 (algorithm 9).",
        '# flags 8: probe with OPTIONS (needs modparam("dispatcher", "ds_ping_interval", N)).',
        "",
    ]
    for ds in sets:
        lines.append(f"# set {ds.setid}: {ds.comment}")
        lines.extend(d.line(ds.setid) for d in ds.destinations)
        lines.append("")
    return "\n".join(lines)
