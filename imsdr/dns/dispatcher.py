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
* ``duid`` = the target's element id (call-load dispatching and readable ``dispatcher.list`` RPC output);
* **transport**: per hop, the first transport of ``network.dns.transports`` (the order the network
  publishes in NAPTR) that both the source and the target accept, so a network that publishes TCP
  first relays over TCP (IMS REGISTER/INVITE routinely exceed the 1,300 bytes of RFC 3261 §18.1.1).

One list file per source element (``kamailio/<element>/dispatcher.list``) holding only that
element's set: the dispatcher probes every destination of every set it loads, so a shared file
would make each SBC probe the P-CSCFs of sets it never uses. Set ids are numbered 1.. per hop in
inventory order (stable across drains); the comment above the set names the source element.
Next to it, ``kamailio/<element>/dispatcher-probing.cfg`` holds that element's probing timers
(:func:`render_probing_cfg`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.dns.plan import capacity_of, site_tier
from imsdr.model.selection import same_home_domain, sbc_pcscf_targets

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

KAMAILIO_DIR = "kamailio"
DS_PING_FROM = "sip:dispatcher@localhost"  # the dispatcher's default; the probing include sets it


def dispatcher_list_path(source: str) -> str:
    """Where the dispatcher list of one source element (an SBC or a P-CSCF) is written."""
    return f"{KAMAILIO_DIR}/{source}/dispatcher.list"


def probing_cfg_path(source: str) -> str:
    return f"{KAMAILIO_DIR}/{source}/dispatcher-probing.cfg"


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


def hop_transport(topo: Topology, source: Element, target: Element) -> str:
    """The transport ``source`` uses towards ``target``: the network's published order first."""
    accepted = {t.value for t in target.transports}
    sent = {t.value for t in source.transports} or accepted
    for t in topo.network.dns.transports:
        if t.value in accepted and t.value in sent:
            return t.value
    return target.transports[0].value if target.transports else "udp"


def sip_uri(el: Element, transport: str | None = None) -> str:
    """The SIP URI of ``el`` over ``transport`` (default: its first transport)."""
    transport = transport or (el.transports[0].value if el.transports else "udp")
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
    topo: Topology, setid: int, source: Element, targets: list[Element], tiers: list[int], comment: str
) -> DispatcherSet:
    return DispatcherSet(setid, source.id, comment, _destinations(topo, source, targets, tiers))


def _destinations(topo: Topology, source: Element, targets: list[Element],
                  tiers: list[int]) -> tuple[Destination, ...]:
    prios = ds_priorities(tiers)
    weights = percent_weights(targets)
    dests = [
        Destination(t.id, sip_uri(t, hop_transport(topo, source, t)), _probing_flag(source, t), p, w)
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
            out.append(_make_set(topo, i, sbc, targets, tiers, f"SBC {sbc.id} (site {sbc.site}) -> P-CSCF: {how}"))
    return out


def pcscf_icscf_sets(topo: Topology, exclude: frozenset[str] = frozenset()) -> list[DispatcherSet]:
    """One set per P-CSCF: the I-CSCFs of its home domain (all when none is under it), same site
    first, same region next, other regions last. ``exclude``: drained I-CSCFs, left out."""
    all_icscfs = [e for e in topo.with_role("icscf") if e.id not in exclude]
    out = []
    memo: dict[str, list[Element]] = {}
    # the P-CSCFs of one site and home domain get the same list (hundreds of I-CSCFs nationally):
    # (id(I-CSCF list), site, whether the source probes, its transports) -> destinations; the lists live in ``memo``
    made: dict[tuple[int, str, bool], tuple[Destination, ...]] = {}
    for i, pcscf in enumerate(topo.by_type["pcscf"], start=1):
        icscfs = same_home_domain(topo, pcscf, all_icscfs, memo)
        if not icscfs:
            continue
        key = (id(icscfs), pcscf.site, _probes(pcscf), tuple(t.value for t in pcscf.transports))
        dests = made.get(key)
        if dests is None:
            dests = made[key] = _destinations(topo, pcscf, icscfs, [site_tier(topo, t, pcscf.site) for t in icscfs])
        comment = f"P-CSCF {pcscf.id} (site {pcscf.site}) -> I-CSCF: same site first, same region next"
        out.append(DispatcherSet(i, pcscf.id, comment, dests))
    return out


def dispatcher_sets(topo: Topology, exclude: frozenset[str] = frozenset()) -> list[DispatcherSet]:
    """Every source element's set: the SBCs' (to P-CSCFs), then the P-CSCFs' (to I-CSCFs)."""
    return [*sbc_pcscf_sets(topo, exclude), *pcscf_icscf_sets(topo, exclude)]


def hop_title(topo: Topology, ds: DispatcherSet) -> str:
    return "SBC -> P-CSCF" if topo.elements[ds.source].type.value == "sbc" else "P-CSCF -> I-CSCF"


def render_dispatcher_list(sets: list[DispatcherSet], title: str, inventory: str) -> str:
    lines = [
        f"# Kamailio dispatcher.list: {title}",
        f"# rendered by imsdr from inventory {inventory}; do not edit by hand.",
        "# line format: setid destination flags priority attrs",
        "# priority: HIGHER value first (use algorithm 8 for failover in this order);",
        "# weight=N: percent of calls over the whole set, sums to 100 (algorithm 9).",
        "# flags 8: active, probed with OPTIONS (dispatcher-probing.cfg next to this file);",
        "# flags 0: passive, never probed while it works (mark it with ds_mark_dst(\"ip\") on a",
        "# failed request: it is then probed until it answers again).",
        "",
    ]
    for ds in sets:
        lines.append(f"# set {ds.setid}: {ds.comment}")
        lines.extend(d.line(ds.setid) for d in ds.destinations)
        lines.append("")
    return "\n".join(lines)


def element_timers(topo: Topology, el: Element) -> tuple[int, int, float]:
    """(OPTIONS interval, failure threshold, timeout) of ``el``: its own, else the network's."""
    net, own = topo.network.timers, el.timers
    interval = own.options_interval or net.options_interval
    threshold = own.options_failure_threshold or net.options_failure_threshold
    timeout = own.options_timeout or net.options_timeout
    return int(interval), int(threshold), timeout


def render_probing_cfg(topo: Topology, source: Element, inventory: str) -> str:
    """Kamailio parameters that make ``source``'s OPTIONS probing match its timers, so Kamailio
    marks a destination down after interval × threshold + one timeout, as the runbooks say.

    The probe timeout is set on the probes alone (``t_set_fr`` in ``event_route[tm:local-request]``
    for the OPTIONS the dispatcher sends from :data:`DS_PING_FROM`): tm's ``fr_timer`` is the
    final-response timer of every relayed transaction, and a P-CSCF that answers REGISTER in 3 s
    under load must not get a 408 from the SBC. ``ds_probing_mode 3`` probes exactly the
    destinations flagged 8 (active), continually; destinations flagged 0 (passive) are not probed."""
    interval, threshold, timeout = element_timers(topo, source)
    timeout_ms = int(round(timeout * 1000))
    active = _probes(source)
    lines = [
        f"# Kamailio dispatcher OPTIONS probing of {source.id}, rendered by imsdr from inventory",
        f"# {inventory}; do not edit by hand. include_file it after loadmodule \"dispatcher.so\" and",
        "# \"tm.so\", at the top level of kamailio.cfg (it defines event_route[tm:local-request]: merge",
        "# that block into yours if the configuration already has one).",
        f"# Detection: {interval} s x {threshold} + {timeout:g} s timeout = "
        f"{interval * threshold + timeout:g} s.",
        "# The timeout applies to the OPTIONS probes only: tm's fr_timer/fr_inv_timer (every relayed",
        "# request) keep their configured values.",
        "# ds_probing_mode 3: the destinations flagged 8 (active) are probed continually; flags 0",
        "# (passive) are probed only after a failed request marked them with ds_mark_dst(\"ip\").",
    ]
    if not active:
        lines.append(f"# {source.id} probes passively (options_probing: passive): no destination is flagged 8.")
    lines += [
        f'modparam("dispatcher", "ds_ping_interval", {interval})',
        f'modparam("dispatcher", "ds_probing_threshold", {threshold})',
        'modparam("dispatcher", "ds_probing_mode", 3)',
        f'modparam("dispatcher", "ds_ping_from", "{DS_PING_FROM}")',
        "event_route[tm:local-request] {",
        f'    if (method == "OPTIONS" && from_uri == "{DS_PING_FROM}") {{',
        f"        t_set_fr(0, {timeout_ms});",
        "    }",
        "}",
    ]
    return "\n".join(lines) + "\n"
