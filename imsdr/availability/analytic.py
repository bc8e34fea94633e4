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
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from imsdr.availability.figures import Contributor, CutSet, Importance
from imsdr.availability.importance import fussell_vesely
from imsdr.availability.inputs import MINUTES_PER_YEAR, BasicEvent, basic_events
from imsdr.availability.services import REACHED_BY_REGISTRATION, SERVICES, ServiceModel

if TYPE_CHECKING:
    from imsdr.availability.services import Block
    from imsdr.capacity.engine import Engine
    from imsdr.model.topology import Topology

EXACT_LIMIT = 12  # inclusion–exclusion over at most this many cut sets (2^12 terms)
KEEP_CUTS = 20  # cut sets listed per service (all are counted)
KEEP_IMPORTANCE = 10


@dataclass(frozen=True, slots=True)
class ServiceAvailability:
    service: str
    local_network: str
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
        self.block_cuts: dict[int, dict[str, dict[frozenset[int], float]]] = {}
        self.block_moves: dict[tuple[int, bool], dict[int, dict[str, float]]] = {}
        self._seconds: dict[bool, dict[int, int]] = {}
        self._cut_sets: dict[tuple[frozenset[int], float], CutSet] = {}

    # --- per block ------------------------------------------------------------------------------

    def relevant(self, block: Block) -> tuple[list[int], dict[int, frozenset[int]]]:
        members = set(block.members)
        evs = sorted({k for x in block.members for k in self.events_of.get(x, ())})
        return evs, {k: frozenset(x for x in self.events[k].elements if x in members) for k in evs}

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
        order, loss_of = self.order, self.model.loss

        size = [len(down[k]) for k in evs]

        q = [self.events[k].unavailability for k in evs]
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
                if len(failed) + size[j] + room * (size[j + 1] if j + 1 < len(evs) else 0) < need:
                    return
                k = evs[j]
                pk = p * q[j]
                if pk < cutoff or down[k] <= failed:
                    continue  # too improbable to count (and so is every superset), or adds nothing
                now = failed | down[k]
                chosen = [*combo, k]
                if any(down[c] <= frozenset().union(*(down[o] for o in chosen if o != c)) for c in combo):
                    continue  # an earlier pick became redundant: never minimal
                if len(now) >= need:
                    loss = loss_of(block, now)
                    if loss:
                        cset = frozenset(chosen)
                        subsets = [frozenset(s) for r in range(1, len(chosen))
                                   for s in combinations(chosen, r)]
                        for ln, fraction in loss.items():
                            mine = found[ln]
                            if not any(s in mine for s in subsets):
                                mine[cset] = fraction
                if room:
                    visit(j + 1, chosen, now, pk)

        visit(0, [], frozenset(), 1.0)
        self.block_cuts[b] = dict(found)
        return self.block_cuts[b]

    def seconds(self, with_registration: bool) -> dict[int, int]:
        """Element index → its switchover seconds for a service (the re-registration and
        restoration parts only for services that reach registered users)."""
        known = self._seconds.get(with_registration)
        if known is None:
            from imsdr.capacity.timing import AccessTypes, switchover

            access = AccessTypes(self.topology)
            known = {}
            for x, ident in enumerate(self.engine.ids):
                parts = switchover(self.topology, self.topology.elements[ident], access).parts
                known[x] = sum(p.seconds for p in parts
                               if with_registration or p.name not in ("re_registration", "restoration"))
            self._seconds[with_registration] = known
        return known

    def moves(self, b: int, with_registration: bool) -> dict[int, dict[str, float]]:
        """Event index → LN → share-weighted switchover seconds, for block ``b``."""
        key = (b, with_registration)
        known = self.block_moves.get(key)
        if known is None:
            block = self.model.blocks[b]
            evs, down = self.relevant(block)
            secs = self.seconds(with_registration)
            known = {}
            for k in evs:
                moved = self.model.moved_seconds(block, down[k], secs)
                if moved:
                    known[k] = moved
            self.block_moves[key] = known
        return known

    # --- per service ---------------------------------------------------------------------------------

    def cut_set(self, events: frozenset[int], fraction: float) -> CutSet:
        """The CutSet of these event indices (made once per run: local networks share them)."""
        key = (events, fraction)
        known = self._cut_sets.get(key)
        if known is None:
            p = math.prod(self.events[k].unavailability for k in events)
            known = self._cut_sets[key] = CutSet(tuple(self.events[k].id for k in sorted(events)), p, fraction,
                                                 p * fraction * MINUTES_PER_YEAR)
        return known

    def switchover_waits(self, service: str, ln_id: str) -> dict[int, float]:
        """Event index → the minutes one occurrence costs the local network's users of ``service``
        in switchovers (share-weighted; the longest of the categories it touches)."""
        reg = service in REACHED_BY_REGISTRATION
        waits: dict[int, float] = {}
        for cat in self.model.categories(service, ln_id):
            per_cat: dict[int, float] = defaultdict(float)
            for b in self.model.blocks_of[(cat, ln_id)]:
                for k, moved in self.moves(b, reg).items():
                    if ln_id in moved:
                        per_cat[k] += moved[ln_id]
            for k, secs in per_cat.items():
                waits[k] = max(waits.get(k, 0.0), secs)
        return {k: secs / 60 for k, secs in waits.items() if secs > 0}

    def service(self, service: str, ln_id: str) -> ServiceAvailability | None:
        cats = self.model.categories(service, ln_id)
        if not cats:
            return None
        merged: dict[frozenset[int], float] = {}
        for cat in cats:
            per_cat: dict[frozenset[int], float] = defaultdict(float)
            for b in self.model.blocks_of[(cat, ln_id)]:
                for cset, fraction in self.cuts(b).get(ln_id, {}).items():
                    per_cat[cset] = min(1.0, per_cat[cset] + fraction)
            for cset, fraction in per_cat.items():
                if fraction > merged.get(cset, 0.0):
                    merged[cset] = fraction
        cuts = {c: f for c, f in merged.items() if len(c) == 1 or _minimal_in(c, f, merged)}
        events = self.events
        ranked = sorted((self.cut_set(c, f) for c, f in cuts.items()),
                        key=lambda cs: (-cs.minutes, len(cs.events), cs.events))
        exact = len(cuts) <= EXACT_LIMIT and all(f >= 1 - 1e-12 for f in cuts.values())
        if exact:
            outage = _union_probability([frozenset(c) for c in cuts], events) * MINUTES_PER_YEAR
        else:
            outage = sum(cs.minutes for cs in ranked)
        waits = self.switchover_waits(service, ln_id)
        switch = {k: events[k].per_year * m for k, m in waits.items()}
        switchover = sum(switch.values())
        contributors = [Contributor(" + ".join(cs.events), "outage", cs.minutes) for cs in ranked[:KEEP_CUTS]]
        contributors += [Contributor(events[k].id, "switchover", m) for k, m in switch.items()]
        contributors.sort(key=lambda c: (-c.minutes, c.kind, c.label))
        ln = self.topology.local_networks[ln_id]
        downtime = outage + switchover
        target = self.topology.network.availability_targets.get(service)  # type: ignore[call-overload]
        importance = fussell_vesely(ranked, {events[k].id: m for k, m in switch.items()}, downtime)
        return ServiceAvailability(
            service, ln_id, int(ln.subscribers), target, 1 - downtime / MINUTES_PER_YEAR, outage, switchover,
            "exact" if exact else "rare-event", len(ranked), tuple(ranked[:KEEP_CUTS]),
            tuple(contributors[:KEEP_CUTS]), tuple(importance[:KEEP_IMPORTANCE]))


def _minimal_in(c: frozenset[int], f: float, merged: dict[frozenset[int], float]) -> bool:
    """No proper subset of ``c`` is a cut set losing at least ``f``."""
    floor = f - 1e-12
    if len(c) == 2:
        a, b = c
        return merged.get(frozenset((a,)), 0.0) < floor and merged.get(frozenset((b,)), 0.0) < floor
    return not any(merged.get(frozenset(s), 0.0) >= floor for r in range(1, len(c)) for s in combinations(c, r))


def _union_probability(cuts: list[frozenset[int]], events: list[BasicEvent]) -> float:
    """P(at least one cut set is in effect), by inclusion–exclusion (independent events)."""
    total = 0.0
    for r in range(1, len(cuts) + 1):
        sign = 1.0 if r % 2 else -1.0
        for chosen in combinations(cuts, r):
            union = frozenset().union(*chosen)
            total += sign * math.prod(events[k].unavailability for k in union)
    return total


def availability_report(topology: Topology, engine: Engine) -> AvailabilityReport:
    """Every service of every local network, with cut sets, contributors and importance."""
    return report_of(AvailabilityModel(topology, engine))


def report_of(run: AvailabilityModel) -> AvailabilityReport:
    topology = run.topology
    rows: list[ServiceAvailability] = []
    for service in SERVICES:
        for ln_id in topology.local_networks:
            row = run.service(service, ln_id)
            if row is not None:
                rows.append(row)
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
    return tuple(kinds + [f"risk:{k}" for k in risks])
