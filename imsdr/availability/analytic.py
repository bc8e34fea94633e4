"""Minimal cut sets and the analytic availability of every service of every local network.

Basic events (elements and shared risks, :mod:`imsdr.availability.inputs`) are independent; a
shared risk is the modelled common cause. For each block the combinations of up to
``max_cut_order`` relevant basic events are tried in increasing size; a combination is a
*minimal cut set* for a local network when the engine loses part of that network's traffic with
it down and with none of its proper subsets. A service's cut sets are its blocks' (a series:
the union; a set that is a cut in several categories counts its largest loss; a set containing a
smaller cut with at least its loss is dropped).

Outage per year: each cut set C contributes ``P(C) × lost fraction × 525,960`` minutes, ``P(C) =
∏ q``. The total is exact (inclusion–exclusion over the cut sets: ``P(∪C) = Σ_{S≠∅} (−1)^{|S|+1}
∏_{e ∈ ∪S} q_e``) when every cut set loses the whole service and there are at most
:data:`EXACT_LIMIT` of them; otherwise the sum (the rare-event approximation, an upper bound).
Switchover loss per year: every basic event costs ``f × Σ share × switchover seconds / 60``
minutes for the users it moves (the longest wait of the categories it touches).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations
from operator import itemgetter
from typing import TYPE_CHECKING, TypeVar

from imsdr.availability.figures import Contributor, CutSet, Importance
from imsdr.availability.importance import fussell_vesely
from imsdr.availability.inputs import MINUTES_PER_YEAR, BasicEvent, basic_events
from imsdr.availability.services import CATEGORIES, REACHED_BY_REGISTRATION, SERVICES, ServiceModel
from imsdr.capacity.timing import ACCESS_TYPES

if TYPE_CHECKING:
    from imsdr.availability.services import Block
    from imsdr.capacity.engine import Engine
    from imsdr.inventory.schema import LocalNetwork
    from imsdr.model.topology import Topology

#: the element types whose switchover is the re-registration window of their users' access type
ACCESS_ELEMENTS = frozenset({"sbc", "pcscf"})
T = TypeVar("T")
EXACT_LIMIT = 12  # inclusion–exclusion over at most this many cut sets (2^12 terms)
KEEP_CUTS = 20  # cut sets listed per service (all are counted)
KEEP_IMPORTANCE = 10


@dataclass(frozen=True, slots=True)
class ServiceAvailability:
    service: str
    local_network: str
    access: str  # fixed | ps: the access type of these users (its switchovers differ)
    users: int
    target: float | None  # percent
    availability: float  # 1 − downtime / minutes per year
    outage_minutes: float
    switchover_minutes: float
    method: str  # exact | rare-event
    cut_set_count: int
    cut_sets: tuple[CutSet, ...]  # the largest, ranked
    contributors: tuple[Contributor, ...]
    importance: tuple[Importance, ...]

    @property
    def downtime_minutes(self) -> float:
        return self.outage_minutes + self.switchover_minutes

    @property
    def user_minutes(self) -> float:
        return self.downtime_minutes * self.users

    @property
    def below_target(self) -> bool:
        return self.target is not None and self.availability * 100 < self.target


@dataclass(frozen=True, slots=True)
class AvailabilityReport:
    network: str
    max_cut_order: int
    events: int
    defaults: tuple[str, ...]  # inputs taken from the planning defaults
    services: tuple[ServiceAvailability, ...]
    fix_first: tuple[Importance, ...]  # network-wide, by user-minutes per year removed

    def rows(self, service: str) -> list[ServiceAvailability]:
        return [s for s in self.services if s.service == service]


class AvailabilityModel:
    """One run's availability model: the service blocks, the basic events and the memoised
    per-block cut sets and switchovers (read by the report and by the Monte Carlo cross-check)."""

    def __init__(self, topology: Topology, engine: Engine) -> None:
        self.topology = topology
        self.engine = engine
        self.model = ServiceModel(topology, engine)
        self.events: list[BasicEvent] = basic_events(topology, engine.index)
        self.order = topology.inventory.availability.max_cut_order
        self.cutoff = topology.inventory.availability.probability_cutoff
        self.events_of: dict[int, list[int]] = defaultdict(list)
        for k, ev in enumerate(self.events):
            for x in ev.elements:
                self.events_of[x].append(k)
        self.q = [ev.unavailability for ev in self.events]  # read in every inner loop below
        self.per_year = [ev.per_year for ev in self.events]
        self.block_cuts: dict[int, dict[str, dict[frozenset[int], float]]] = {}
        #: block → cut set → the probability that all its events are down (recorded by the search)
        self.block_probability: dict[int, dict[frozenset[int], float]] = {}
        #: the same for the blocks of the local network being reported (see :meth:`forget`)
        self._row_probability: dict[frozenset[int], float] = {}
        #: block → local networks whose rows still need it (see :meth:`release`)
        self._pending: dict[int, int] = {b: len(block.lns) for b, block in enumerate(self.model.blocks)}
        #: block → whether every cut set it found is a pair (then no merge of its cut sets can hold
        #: one that contains another: see :meth:`merged_cuts`)
        self.block_pairs_only: dict[int, bool] = {}
        self._relevant: dict[str, tuple[list[int], dict[int, frozenset[int]]]] = {}  # block key → relevant()
        self.block_moves: dict[tuple[int, bool, str], dict[int, dict[str, float]]] = {}
        self._seconds: dict[tuple[bool, str], dict[int, int]] = {}
        #: (category, LN, with registration, access) → event → share-weighted seconds (services share categories)
        self._category_waits: dict[tuple[str, str, bool, str], dict[int, float]] = {}
        self._proper_subsets: dict[frozenset[int], tuple[frozenset[int], ...]] = {}
        self._category_cuts: dict[tuple[str, str], dict[frozenset[int], float]] = {}

    # --- per block ------------------------------------------------------------------------------

    def relevant(self, block: Block) -> tuple[list[int], dict[int, frozenset[int]]]:
        """The events that take down some of the block's members (ascending) and the members each
        takes down (the search, the switchovers and the simulation ask for each block repeatedly)."""
        known = self._relevant.get(block.key)
        if known is None:
            down: dict[int, list[int]] = defaultdict(list)
            for x in block.members:  # ascending, as each event's elements: the same sets, built alike
                for k in self.events_of.get(x, ()):
                    down[k].append(x)
            evs = sorted(down)
            known = self._relevant[block.key] = (evs, {k: frozenset(down[k]) for k in evs})
        return list(known[0]), known[1]  # a list the caller may sort

    def cuts(self, b: int) -> dict[str, dict[frozenset[int], float]]:
        """LN → minimal cut set (event indices) → lost fraction, for block ``b``."""
        known = self.block_cuts.get(b)
        if known is not None:
            return known
        block = self.model.blocks[b]
        evs, down = self.relevant(block)
        # largest cover first: the bound below then knows the most the remaining picks can add
        evs.sort(key=lambda k: (-len(down[k]), k))
        need = self.model.min_failures(block)
        found: dict[str, dict[frozenset[int], float]] = defaultdict(dict)
        sizes: set[int] = set()
        recorded: dict[frozenset[int], float] = self.block_probability.setdefault(b, {})  # found for any LN
        order, loss_of = self.order, self.model.loss

        size = [len(down[k]) for k in evs]
        size_next = [*size[1:], 0]  # size_next[j]: the cover of the pick after j (none: 0)
        memo = block.memo  # the loss memo (ServiceModel.loss fills it): looked up here first, one call less

        q = [self.q[k] for k in evs]
        best_q = q + [0.0]  # best_q[j]: the most probable event from position j on
        for j in range(len(q) - 1, -1, -1):
            best_q[j] = max(q[j], best_q[j + 1])
        cutoff = self.cutoff

        def visit(start: int, combo: list[int], failed: frozenset[int], p: float) -> None:
            room = order - len(combo) - 1  # picks left after this one
            if p * best_q[start] < cutoff:
                return  # no event left makes the combination probable enough
            for j in range(start, len(evs)):
                # the most members this pick and the remaining ones can still fail; it only
                # shrinks with j (covers are sorted), so once short of ``need`` nothing later helps
                if len(failed) + size[j] + room * size_next[j] < need:
                    return
                k = evs[j]
                pk = p * q[j]
                if pk < cutoff or down[k] <= failed:
                    continue  # too improbable to count (and so is every superset), or adds nothing
                now = failed | down[k]
                chosen = [*combo, k]
                if combo and (down[combo[0]] <= down[k] if len(combo) == 1 else _redundant(combo, k, down)):
                    continue  # an earlier pick became redundant: never minimal
                if len(now) >= need:
                    loss = memo.get(now)
                    if loss is None:
                        loss = loss_of(block, now)
                    if loss:
                        cset = frozenset(chosen)
                        if min(sizes, default=len(chosen)) < len(chosen):
                            subsets = [frozenset(s) for r in range(1, len(chosen)) for s in combinations(chosen, r)]
                        else:
                            subsets = []  # nothing smaller found yet (most searches find pairs only)
                        if any(s in recorded for s in subsets):  # a subset is a cut for some LN
                            for ln, fraction in loss.items():
                                mine = found[ln]
                                if not any(s in mine for s in subsets):
                                    mine[cset] = fraction
                        else:
                            for ln, fraction in loss.items():
                                found[ln][cset] = fraction
                        recorded[cset] = pk
                        sizes.add(len(chosen))
                if room and pk * best_q[j + 1] >= cutoff:  # else the call would return at once
                    visit(j + 1, chosen, now, pk)  # noqa: F821 (deleted only after the search)

        visit(0, [], frozenset(), 1.0)
        del visit  # it refers to itself: without this the cycle keeps the search's state until a collection
        self.block_pairs_only[b] = sizes <= {2}
        self.block_cuts[b] = dict(found)
        return self.block_cuts[b]

    def seconds(self, with_registration: bool, access: str) -> dict[int, int]:
        """Element index → its switchover seconds for a service of users of ``access`` (fixed | ps):
        an SBC's or P-CSCF's is that access type's re-registration window; the re-registration and
        restoration parts count only for services that reach registered users."""
        key = (with_registration, access)
        known = self._seconds.get(key)
        if known is None:
            from imsdr.capacity.timing import AccessTypes, reregistration_window, switchover

            top = self.topology
            types = AccessTypes(top)
            known = {}
            for x, ident in enumerate(self.engine.ids):
                el = top.elements[ident]
                parts = (reregistration_window(top, el, access) if el.type.value in ACCESS_ELEMENTS
                         else switchover(top, el, types)).parts
                known[x] = sum(p.seconds for p in parts
                               if with_registration or p.name not in ("re_registration", "restoration"))
            self._seconds[key] = known
        return known

    def moves(self, b: int, with_registration: bool, access: str) -> dict[int, dict[str, float]]:
        """Event index → LN → share-weighted switchover seconds, for block ``b`` (per access type
        only where the block holds an SBC or P-CSCF, with and without registration only where its
        members' seconds differ)."""
        block = self.model.blocks[b]
        with_registration, access = self._seconds_key(block.members, with_registration, access)
        key = (b, with_registration, access)
        known = self.block_moves.get(key)
        if known is None:
            evs, down = self.relevant(block)
            secs = self.seconds(with_registration, access)
            known = {}
            by_cover: dict[frozenset[int], dict[str, float]] = {}  # a block's events share a few covers
            for k in evs:
                moved = by_cover.get(down[k])
                if moved is None:
                    moved = by_cover[down[k]] = self.model.moved_seconds(block, down[k], secs)
                if moved:
                    known[k] = moved  # read only: events of one cover share it
            self.block_moves[key] = known
        return known

    def _seconds_key(self, members: Iterable[int], with_registration: bool, access: str) -> tuple[bool, str]:
        """The (with registration, access) whose switchover seconds ``members`` have, the first
        access type and no registration where those make no difference: the moves and waits
        computed for them serve the others too."""
        members = list(members)
        if not any(self.engine.type_of[x] in ACCESS_ELEMENTS for x in members):
            access = ACCESS_TYPES[0]  # the same seconds for every access type
        if with_registration:
            reg, plain = self.seconds(True, access), self.seconds(False, access)
            with_registration = any(reg[x] != plain[x] for x in members)
        return with_registration, access

    # --- per service ---------------------------------------------------------------------------------

    def cut_set(self, events: frozenset[int], fraction: float) -> CutSet:
        """The CutSet of these event indices, for the report."""
        p = self._row_probability.get(events)
        if p is None:
            p = math.prod(self.q[k] for k in events)
        return CutSet(tuple(self.events[k].id for k in sorted(events)), p, fraction, p * fraction * MINUTES_PER_YEAR)

    def category_waits(self, category: str, ln_id: str, with_registration: bool, access: str) -> dict[int, float]:
        """Event index → share-weighted switchover seconds of one category for the local network."""
        blocks = self.model.blocks_of[(category, ln_id)]
        seconds_key = self._seconds_key((x for b in blocks for x in self.model.blocks[b].members),
                                        with_registration, access)
        key = (category, ln_id, *seconds_key)
        known = self._category_waits.get(key)
        if known is None:
            known = defaultdict(float)
            for b in blocks:
                for k, moved in self.moves(b, *seconds_key).items():
                    secs = moved.get(ln_id)
                    if secs:
                        known[k] += secs
            known = self._category_waits[key] = dict(known)
        return known

    def switchover_waits(self, service: str, ln_id: str, access: str) -> dict[int, float]:
        """Event index → the minutes one occurrence costs the local network's users of ``service``
        and ``access`` in switchovers (share-weighted; the longest of the categories it touches)."""
        reg = service in REACHED_BY_REGISTRATION
        waits: dict[int, float] = {}
        for cat in self.model.categories(service, ln_id):
            for k, secs in self.category_waits(cat, ln_id, reg, access).items():
                if secs > waits.get(k, 0.0):
                    waits[k] = secs
        return {k: secs / 60 for k, secs in waits.items() if secs > 0}

    def category_cuts(self, category: str, ln_id: str) -> dict[frozenset[int], float]:
        """Cut set → lost fraction of one category for the local network (the sum over its
        blocks), kept for the local network's other services until :meth:`forget` is called."""
        key = (category, ln_id)
        known = self._category_cuts.get(key)
        if known is None:
            blocks = self.model.blocks_of[key]
            for b in blocks:
                self.cuts(b)
                self._row_probability.update(self.block_probability[b])
            if len(blocks) == 1:
                known = self.cuts(blocks[0]).get(ln_id, {})
            else:
                known = {}
                for b in blocks:
                    part = self.cuts(b).get(ln_id, {})
                    # as ``known[c] = min(1.0, known.get(c, 0.0) + f)`` for each entry in turn, with
                    # the entries new to ``known`` (most of them) added by one update in their order
                    before = {c: known[c] for c in part.keys() & known.keys()}
                    known.update(part)
                    for cset, fraction in before.items():
                        known[cset] = min(1.0, fraction + part[cset])
            self._category_cuts[key] = known
        return known

    def forget(self) -> None:
        """Drop the per-local-network merges (the report asks one local network at a time)."""
        self._category_cuts.clear()
        self._category_waits.clear()
        self._row_probability.clear()
        self._proper_subsets.clear()

    def release(self, ln_id: str) -> None:
        """The local network's rows are made: drop what only blocks no later row needs hold (their
        cut sets, switchovers and loss memo), so that memory follows one province's blocks, not
        the country's. A later question about a dropped block computes it again."""
        self.forget()
        for b in {b for cat in CATEGORIES for b in self.model.blocks_of.get((cat, ln_id), ())}:
            self._pending[b] -= 1
            if self._pending[b] <= 0:
                self.block_cuts.pop(b, None)
                self.block_probability.pop(b, None)
                self.block_pairs_only.pop(b, None)
                self._relevant.pop(self.model.blocks[b].key, None)
                self.model.blocks[b].memo.clear()
                self.model.blocks[b].moved.clear()
                for reg in (True, False):
                    for access in ACCESS_TYPES:
                        self.block_moves.pop((b, reg, access), None)

    def merged_cuts(self, service: str, ln_id: str, cats: list[str]) -> tuple[dict[frozenset[int], float], bool]:
        """Minimal cut set → lost fraction of the service for the local network: per category the
        sum over its blocks, the largest over categories, supersets of a cut losing as much dropped;
        and whether every one is a pair."""
        merged: dict[frozenset[int], float] = {}
        for cat in cats:
            part = self.category_cuts(cat, ln_id)
            # as ``if f > merged.get(c, 0.0): merged[c] = f`` for each entry in turn (a key keeps
            # its first place), with the entries new to ``merged`` added by one update in their order
            before = {c: merged[c] for c in part.keys() & merged.keys()}
            merged.update(part)
            for cset, fraction in before.items():
                if fraction >= part[cset]:
                    merged[cset] = fraction
        if all(self.block_pairs_only[b] for cat in cats for b in self.model.blocks_of[(cat, ln_id)]):
            return merged, True  # no single events and no cut set larger than a pair: no pair holds another
        # a superset of a cut losing at least as much is not minimal; most cut sets are pairs and
        # few are single events, so the singles are looked up by event and pairs only for triples
        single = {k: f for c, f in merged.items() if len(c) == 1 for k in c}
        subsets = self._proper_subsets
        out: dict[frozenset[int], float] = {}
        for cset, fraction in merged.items():
            size = len(cset)
            if size > 1:
                floor = fraction - 1e-12
                if single and any(single.get(k, 0.0) >= floor for k in cset):
                    continue
                if size > 2:
                    proper = subsets.get(cset)
                    if proper is None:
                        proper = subsets[cset] = tuple(frozenset(s) for r in range(2, size)
                                                       for s in combinations(cset, r))
                    if any(merged.get(s, 0.0) >= floor for s in proper):
                        continue
            out[cset] = fraction
        return out, False

    def service(self, service: str, ln_id: str) -> list[ServiceAvailability]:
        """The service's rows for the local network: one per access type of its users (the cut
        sets are the same; the switchovers of their SBC and P-CSCF differ)."""
        cats = self.model.categories(service, ln_id)
        if not cats:
            return []
        cuts, pairs = self.merged_cuts(service, ln_id, cats)
        events, probability = self.events, self._row_probability
        keys = list(cuts)
        minutes_of = [probability[c] * f * MINUTES_PER_YEAR for c, f in cuts.items()]
        exact = len(cuts) <= EXACT_LIMIT and all(f >= 1 - 1e-12 for f in cuts.values())
        outage = _union_probability(keys, self.q) * MINUTES_PER_YEAR if exact else math.fsum(minutes_of)
        border = _border(minutes_of, KEEP_CUTS)
        ranked = sorted((self.cut_set(c, cuts[c]) for c, m in zip(keys, minutes_of, strict=True) if m >= border),
                        key=lambda cs: (-cs.minutes, len(cs.events), cs.events))[:KEEP_CUTS]
        in_cuts: dict[int, float] = defaultdict(float)  # event → minutes of the cut sets holding it, in their order
        if pairs:
            for (a, b), m in zip(keys, minutes_of, strict=True):
                in_cuts[a] += m
                in_cuts[b] += m
        else:
            for c, m in zip(keys, minutes_of, strict=True):
                for k in c:
                    in_cuts[k] += m
        # the importance's candidates: the events that rank among the first by their cut sets alone,
        # and those with switchovers (adding them can only lift those): the ten first of all are among them
        in_top = _largest(list(in_cuts.items()), KEEP_IMPORTANCE, itemgetter(1))
        outages = [Contributor(" + ".join(cs.events), "outage", cs.minutes) for cs in ranked]
        ln = self.topology.local_networks[ln_id]
        target = self.topology.network.availability_targets.get(service)  # type: ignore[call-overload]
        per_year = self.per_year
        rows = []
        for access, users in access_users(ln):
            waits = self.switchover_waits(service, ln_id, access)
            switch = {k: per_year[k] * m for k, m in waits.items()}
            switchover = math.fsum(switch.values())
            # only switchovers among the largest can be among the first contributors
            contributors = outages + [Contributor(events[k].id, "switchover", m)
                                      for k, m in _largest(list(switch.items()), KEEP_CUTS, itemgetter(1))]
            contributors.sort(key=lambda c: (-c.minutes, c.kind, c.label))
            downtime = outage + switchover
            involved = dict(in_top)
            for k, m in switch.items():
                involved[k] = in_cuts.get(k, 0.0) + m
            most = _largest(list(involved.items()), KEEP_IMPORTANCE, itemgetter(1))
            importance = fussell_vesely({events[k].id: m for k, m in most}, downtime, KEEP_IMPORTANCE)
            rows.append(ServiceAvailability(
                service, ln_id, access, users, target, 1 - downtime / MINUTES_PER_YEAR, outage, switchover,
                "exact" if exact else "rare-event", len(cuts), tuple(ranked),
                tuple(contributors[:KEEP_CUTS]), tuple(importance)))
        return rows


def access_users(ln: LocalNetwork) -> list[tuple[str, int]]:
    """(access type, users) of a local network: a ``both`` network's ``ps_subscribers`` (default
    half) on PS, the rest on fixed access."""
    users = int(ln.subscribers)
    if ln.access != "both":
        return [(ln.access, users)]
    ps = users // 2 if ln.ps_subscribers is None else int(ln.ps_subscribers)
    return [("fixed", users - ps), ("ps", ps)]


def _redundant(combo: list[int], k: int, down: dict[int, frozenset[int]]) -> bool:
    """Whether adding event ``k`` to ``combo`` makes one of the earlier picks add nothing (all
    its elements are down through the others)."""
    if len(combo) == 1:
        return down[combo[0]] <= down[k]
    chosen = [*combo, k]
    return any(down[c] <= frozenset().union(*(down[o] for o in chosen if o != c)) for c in combo)


def _largest(entries: list[T], n: int, value: Callable[[T], float]) -> list[T]:
    """The entries whose value is among the ``n`` largest (ties at the border all kept, so that
    the caller's full ordering decides between them exactly as a sort of everything would)."""
    if len(entries) <= n:
        return entries
    border = _border(map(value, entries), n)
    return [e for e in entries if value(e) >= border]


def _border(values: Iterable[float], n: int) -> float:
    """The ``n``-th largest of ``values`` (−∞ when there are fewer): keeping every value at
    least this keeps the ``n`` largest and the ties with the last of them."""
    # sorted() rather than heapq.nlargest (the same n values: its documented equivalent): one sort
    # in C of a few hundred values is cheaper than nlargest's loop in Python over each of them
    ordered = sorted(values, reverse=True)
    return ordered[n - 1] if len(ordered) >= n else -math.inf


def _union_probability(cuts: list[frozenset[int]], q: list[float]) -> float:
    """P(at least one cut set is in effect), by inclusion–exclusion (independent events of
    unavailability ``q``)."""
    total = 0.0
    for r in range(1, len(cuts) + 1):
        sign = 1.0 if r % 2 else -1.0
        for chosen in combinations(cuts, r):
            union = frozenset().union(*chosen)
            total += sign * math.prod(q[k] for k in union)
    return total


def availability_report(topology: Topology, engine: Engine) -> AvailabilityReport:
    """Every service of every local network, with cut sets, contributors and importance."""
    return report_of(AvailabilityModel(topology, engine))


def report_of(run: AvailabilityModel) -> AvailabilityReport:
    topology = run.topology
    by_service: dict[str, list[ServiceAvailability]] = {service: [] for service in SERVICES}
    for ln_id in topology.local_networks:  # one local network at a time: its merges are shared by its services
        for service in SERVICES:
            by_service[service].extend(run.service(service, ln_id))
        run.release(ln_id)
    rows = [r for service in SERVICES for r in by_service[service]]
    gain: dict[str, float] = defaultdict(float)
    fv_total = sum(r.user_minutes for r in rows)
    for r in rows:
        for imp in r.importance:
            gain[imp.event] += imp.gain_minutes * r.users
    fix_first = tuple(sorted(
        (Importance(ev, g / fv_total if fv_total else 0.0, g) for ev, g in gain.items() if g > 0),
        key=lambda i: (-i.gain_minutes, i.event))[:KEEP_IMPORTANCE])
    defaults = _defaults_used(topology)
    return AvailabilityReport(topology.network.name, run.order, len(run.events), defaults, tuple(rows), fix_first)


def _defaults_used(topology: Topology) -> tuple[str, ...]:
    from imsdr.availability.inputs import element_reliability, risk_events

    kinds = sorted({topology.elements[e].type.value for e in topology.elements
                    if element_reliability(topology, e)[2] == "default"})
    risks = [k for k in ("site", "power", "route", "region") if risk_events(topology, k)[2] == "default"]
    split = ["ps_subscribers"] if any(ln.access == "both" and ln.ps_subscribers is None
                                      for ln in topology.local_networks.values()) else []
    return tuple(kinds + [f"risk:{k}" for k in risks] + split)
