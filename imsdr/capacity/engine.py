"""Fast failure evaluation: the load model is compiled once; each scenario touches only the flows
that can reach a failed element and the elements whose load changes.

Verdicts:
* ``outage``   — some traffic has nothing left to take over (or survivors are over 100% of their
  capacity, so part of it is refused);
* ``degraded`` — everything is taken over, but a survivor runs above ``max_utilisation``;
* ``no loss``  — everything is taken over within the limits.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from imsdr.capacity.load import ERLANGS, LoadModel, is_scscf, srv_split
from imsdr.capacity.timing import AccessTypes, switchover
from imsdr.inventory.schema import Feature

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

_RESTORATION = Feature.RESTORATION_DATA
NO_LOSS = "no loss"
DEGRADED = "degraded"
OUTAGE = "outage"
VERDICT_RANK = {NO_LOSS: 0, DEGRADED: 1, OUTAGE: 2}


def worse(a: str, b: str) -> str:
    return a if VERDICT_RANK[a] >= VERDICT_RANK[b] else b


@dataclass
class Outcome:
    """What one failure scenario does (raw numbers; reports are built on top)."""

    failed: tuple[str, ...]
    verdict: str = NO_LOSS
    loads: dict[str, float] = field(default_factory=dict)  # elements whose load changed → new load
    unserved_users: dict[str, float] = field(default_factory=dict)  # local network → users
    unserved_erlangs: dict[str, float] = field(default_factory=dict)  # local network → Erlangs
    service_unserved: dict[str, float] = field(default_factory=dict)  # service → users or Erlangs
    no_takeover: dict[str, float] = field(default_factory=dict)  # failed element → load nothing takes over
    overflow: dict[str, float] = field(default_factory=dict)  # survivor → load above its capacity
    receivers: dict[str, dict[str, float]] = field(default_factory=dict)  # failed element → taker → amount
    switchover_s: int = 0
    worst_switchover_from: str | None = None
    #: flow index → its (element index, amount) parts now, for every flow the failure touches
    #: (the others go where they normally do): the registration storm reads them
    assignments: dict[int, list[tuple[int, float]]] = field(default_factory=dict)

    @property
    def users(self) -> float:
        return sum(self.unserved_users.values())

    @property
    def erlangs(self) -> float:
        return sum(self.unserved_erlangs.values())


Result = tuple[list[tuple[int, float]], float]  # (element index, amount) parts, unserved amount


@dataclass
class _SiteState:
    failed: set[int]
    results: dict[int, Result]
    delta: dict[int, float]
    lossy: list[int]


class Engine:
    """The compiled model of one topology. Build it once; call :meth:`evaluate` per scenario."""

    def __init__(
        self, topology: Topology, model: LoadModel | None = None, exact_numbers: bool = True
    ) -> None:
        self.topology = topology
        self.model = model or LoadModel(topology, exact_numbers=exact_numbers)
        m = self.model
        self.max_util = float(m.cm.max_utilisation)
        #: per element, the highest acceptable load/capacity: max_utilisation, except for trunks
        #: whose Erlang capacity already holds the grade of service (Erlang B) as its headroom
        self.limit: list[float] = [1.0 if m.unit.get(e) == ERLANGS else self.max_util for e in topology.elements]
        self.ids: list[str] = list(topology.elements)
        self.index = {e: i for i, e in enumerate(self.ids)}
        ix = self.index
        self.cap: list[float] = [float(m.capacity[e]) if m.capacity.get(e) else math.inf for e in self.ids]
        #: a survivor's capacity after a failure (trunks at the failure grade of service)
        self.cap_after: list[float] = [
            float(m.capacity_failure[e]) if m.capacity_failure.get(e) else math.inf for e in self.ids
        ]
        self.normal: list[float] = [float(m.normal_load.get(e, 0)) for e in self.ids]
        self.pcscf_tiers: dict[int, tuple[tuple[int, ...], ...]] = {
            ix[s]: tuple(tuple(ix[p] for p in tier) for tier in tiers) for s, tiers in m.pcscf_tiers.items()
        }
        flows = m.flows
        self.f_service = [f.service for f in flows]
        self.f_erlangs = [f.unit == ERLANGS for f in flows]
        self.f_amount = [float(f.amount) for f in flows]
        self.f_upu = [float(f.users_per_unit) for f in flows]
        # local-network weights are shared objects (one per kind): compile each once
        self.weight_sets: list[tuple[tuple[str, float], ...]] = []
        seen: dict[int, int] = {}
        self.f_wkey: list[int] = []
        for f in flows:
            key = seen.get(id(f.ln_weights))
            if key is None:
                key = seen[id(f.ln_weights)] = len(self.weight_sets)
                self.weight_sets.append(tuple((ln, float(w)) for ln, w in f.ln_weights))
            self.f_wkey.append(key)
        self._site_cache: dict[str, _SiteState] = {}
        #: members → ((member, capacity) pairs, total capacity), None when one has no capacity
        self._splits: dict[tuple[int, ...], tuple[list[tuple[int, float]], float] | None] = {}
        #: (surviving records, their SRV weights) → (record, RFC 2782 first-try probability)
        self._srv_shares: dict[tuple[tuple[int, ...], tuple[int, ...]], list[tuple[int, float]]] = {}
        self.f_tiers = [tuple(tuple(ix[x] for x in tier) for tier in f.tiers) for f in flows]
        self.f_stage2 = [f.stage2 for f in flows]
        self.f_srv = [f.srv for f in flows]
        self.f_origin = [self.f_tiers[i][0][0] if self.f_tiers[i] else -1 for i in range(len(flows))]
        self.flows_of: list[list[int]] = [[] for _ in self.ids]
        for i in range(len(flows)):
            touched: set[int] = set()
            for tier in self.f_tiers[i]:
                for x in tier:
                    touched.add(x)
                    if self.f_stage2[i]:
                        for ptier in self.pcscf_tiers.get(x, ()):
                            touched.update(ptier)
            for x in touched:
                self.flows_of[x].append(i)
        self.normal_assign: list[tuple[list[tuple[int, float]], float]] = [
            self._assign(i, frozenset()) for i in range(len(flows))
        ]
        self.by_site: dict[str, list[int]] = defaultdict(list)
        for e, el in topology.elements.items():
            self.by_site[el.site].append(ix[e])
        #: the access types through each SBC/P-CSCF, for every switchover asked of this engine's topology
        self.access = access = AccessTypes(topology)
        #: each element's switchover (``switchover(topology, el, self.access)``), worked out once: every
        #: simulation of a failure reads it again
        self.switchovers = [switchover(topology, topology.elements[e], access) for e in self.ids]
        self.switchover_s = [s.seconds for s in self.switchovers]
        self.group_pos: dict[str, int] = {gid: i for i, gid in enumerate(topology.groups)}
        self.groups_of_idx: list[list[str]] = [
            [g.id for g in topology.groups_of.get(e, [])] for e in self.ids
        ]
        self.type_of: list[str] = [topology.elements[e].type.value for e in self.ids]
        self.scscf_idx = {ix[e] for e, el in topology.elements.items() if is_scscf(el)}
        self.passthrough: tuple[str, ...] = tuple(
            sorted(
                e for e, el in topology.elements.items() if any(f.value == "passthrough" for f in el.features)
            )
        )
        self.hss_of_scscf = self._hss_serving()
        #: S-CSCF index → users per unit of its load (its load counts restoration work on top)
        self.users_per_load: dict[int, float] = {
            x: 1 / float(m.scscf_factor) if topology.elements[self.ids[x]].has(_RESTORATION) else 1.0
            for x in self.scscf_idx
        }
        #: HSS cost of one S-CSCF user moved by a failover, above a normal user (failover cost − 1)
        self.surge_per_user = float(m.cm.failover_cost_per_moved_user) - 1
        self.ln_subs = {ln.id: float(ln.subscribers) for ln in topology.local_networks.values()}
        self.ln_erl = {ln.id: float(ln.busy_hour_erlangs) for ln in topology.local_networks.values()}

    # --- flows ------------------------------------------------------------------------------------------

    def _spread(self, members: tuple[int, ...], amount: float) -> list[tuple[int, float]]:
        if len(members) == 1:
            return [(members[0], amount)]
        split = self._splits.get(members)
        if split is None:  # capacities are fixed: each member set's split is worked out once
            caps = [self.cap[x] for x in members]
            split = self._splits[members] = (
                (list(zip(members, caps, strict=True)), sum(caps)) if all(c != math.inf for c in caps) else None
            )
        if split is not None:
            pairs, total = split
            return [(x, amount * c / total) for x, c in pairs]
        share = amount / len(members)
        return [(x, share) for x in members]

    def _assign(self, i: int, failed: frozenset[int] | set[int]) -> tuple[list[tuple[int, float]], float]:
        amount = self.f_amount[i]
        srv = self.f_srv[i]
        if srv is not None:  # DNS-selected: RFC 2782 first-try split of the surviving records
            for tier, weights in zip(self.f_tiers[i], srv, strict=True):
                if failed.isdisjoint(tier):
                    key = (tier, weights)
                else:
                    alive = [(x, w) for x, w in zip(tier, weights, strict=True) if x not in failed]
                    key = (tuple(x for x, _w in alive), tuple(w for _x, w in alive))
                if not key[0]:
                    continue
                shares = self._srv_shares.get(key)
                if shares is None:  # each set of surviving records is split once
                    split = srv_split(key[1])
                    shares = self._srv_shares[key] = [(x, float(p)) for x, p in zip(key[0], split, strict=True)]
                return [(x, amount * p) for x, p in shares], 0.0
            return [], amount
        first = None
        for tier in self.f_tiers[i]:
            alive = tier if failed.isdisjoint(tier) else tuple(x for x in tier if x not in failed)
            if alive:
                first = alive
                break
        if first is None:
            return [], amount
        out = self._spread(first, amount)
        if not self.f_stage2[i]:
            return out, 0.0
        unserved = 0.0
        result = list(out)
        for x, amt in out:
            tiers = self.pcscf_tiers.get(x)
            if tiers is None:
                continue
            second = None
            for tier in tiers:
                alive = tier if failed.isdisjoint(tier) else tuple(y for y in tier if y not in failed)
                if alive:
                    second = alive
                    break
            if second is None:
                unserved += amt
            else:
                result.extend(self._spread(second, amt))
        return result, unserved

    def assign(self, i: int, failed: frozenset[int] | set[int]) -> Result:
        """Where flow ``i`` goes when the elements ``failed`` (indices) are down: its (element
        index, amount) parts and the amount nothing carries (the availability model reads it)."""
        return self._assign(i, failed)

    # --- scenarios -----------------------------------------------------------------------------------------

    def site_elements(self, site_ids: Iterable[str]) -> set[int]:
        out: set[int] = set()
        for s in site_ids:
            out.update(self.by_site.get(s, ()))
        return out

    def affected_flows(self, failed: Iterable[int]) -> set[int]:
        out: set[int] = set()
        for x in failed:
            out.update(self.flows_of[x])
        return out

    def site_state(self, site: str) -> _SiteState:
        """What losing ``site`` does to each flow, computed once and reused by every site pair."""
        state = self._site_cache.get(site)
        if state is None:
            failed = set(self.by_site.get(site, ()))
            results = {i: self._assign(i, failed) for i in sorted(self.affected_flows(failed))}
            delta, lossy = self._delta(results)
            state = _SiteState(failed, results, delta, lossy)
            self._site_cache[site] = state
        return state

    def _delta(self, results: dict[int, Result]) -> tuple[dict[int, float], list[int]]:
        delta: dict[int, float] = defaultdict(float)
        lossy: list[int] = []
        normal_assign = self.normal_assign
        for i, (parts, unserved) in results.items():
            old_parts, old_unserved = normal_assign[i]
            for x, amt in old_parts:
                delta[x] -= amt
            for x, amt in parts:
                delta[x] += amt
            if unserved - old_unserved > 1e-9:
                lossy.append(i)
        return delta, lossy

    def evaluate_sites(self, sites: Iterable[str], *, detail: bool = False) -> Outcome:
        """Lose whole sites. Flows touching one lost site only reuse that site's cached result and
        its load deltas; only flows touching several lost sites are evaluated afresh."""
        states = [self.site_state(s) for s in dict.fromkeys(sites)]
        if len(states) == 1:
            st = states[0]
            return self._finish(st.failed, st.results, dict(st.delta), st.lossy, detail)
        failed: set[int] = set().union(*(st.failed for st in states))
        results: dict[int, Result] = {}
        delta: dict[int, float] = defaultdict(float)
        count: dict[int, int] = defaultdict(int)
        for st in states:
            for x, d in st.delta.items():
                delta[x] += d
            for i in st.results:
                count[i] += 1
            results.update(st.results)
        shared = [i for i, c in count.items() if c > 1]
        normal_assign = self.normal_assign
        for i in shared:
            old_parts = normal_assign[i][0]
            for st in states:
                if i in st.results:
                    for x, amt in st.results[i][0]:
                        delta[x] -= amt
                    for x, amt in old_parts:
                        delta[x] += amt
            fresh = self._assign(i, failed)
            results[i] = fresh
            for x, amt in fresh[0]:
                delta[x] += amt
            for x, amt in old_parts:
                delta[x] -= amt
        shared_set = set(shared)
        lossy = [i for st in states for i in st.lossy if i not in shared_set]
        lossy.extend(i for i in shared if results[i][1] - normal_assign[i][1] > 1e-9)
        return self._finish(failed, results, delta, lossy, detail)

    def evaluate(self, failed_ids: Iterable[str] | Iterable[int], *, detail: bool = False) -> Outcome:
        """Evaluate one scenario: ``failed_ids`` are element ids or indices."""
        failed = {x if isinstance(x, int) else self.index[x] for x in failed_ids}
        results = self._results(failed)
        delta, lossy = self._delta(results)
        return self._finish(failed, results, delta, lossy, detail)

    def _results(self, failed: set[int] | frozenset[int]) -> dict[int, Result]:
        """Flow index → where it goes with ``failed`` down, for every flow that reaches one."""
        # one element: its flows are already listed once each, in ascending order
        affected = self.flows_of[next(iter(failed))] if len(failed) == 1 else sorted(self.affected_flows(failed))
        return {i: self._assign(i, failed) for i in affected}

    def refused(self, failed: frozenset[int]) -> tuple[dict[int, Result], dict[int, float]]:
        """What :meth:`evaluate` finds for the availability model, and nothing else: every reached
        flow's assignment, and survivor index → the share of its load refused above its capacity
        (``Outcome.overflow`` over ``Outcome.loads``, the same numbers)."""
        results = self._results(failed)
        delta = self._delta(results)[0]
        self._hss_surge(failed, delta)
        ratios: dict[int, float] = {}
        cap_after, normal = self.cap_after, self.normal
        for x, d in delta.items():  # the survivors _finish finds above capacity (in any order: a lookup)
            if d > 1e-9 and cap_after[x] != math.inf and x not in failed:
                load, cap = normal[x] + d, cap_after[x]
                if load >= 1e-6 and load > cap + 1e-9:
                    ratios[x] = (load - cap) / load
        return results, ratios

    def _new_loads(self, failed: set[int] | frozenset[int],
                   delta: dict[int, float]) -> Iterator[tuple[int, float, float]]:
        """(index, load change, new load) of each element whose load changed, in inventory order
        (ties among survivors never follow set order)."""
        normal = self.normal
        for x in sorted(delta):
            d = delta[x]
            if -1e-9 < d < 1e-9 and (x not in failed or normal[x] == 0):
                continue
            load = normal[x] + d
            yield x, d, (0.0 if load < 1e-6 else load)

    def _finish(
        self,
        failed: set[int],
        results: dict[int, Result],
        delta: dict[int, float],
        lossy: list[int],
        detail: bool,
    ) -> Outcome:
        outcome = Outcome(tuple(sorted(self.ids[x] for x in failed)))
        lost_users: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))  # service → wkey
        lost_erl: dict[int, float] = defaultdict(float)  # wkey → Erlangs
        verdict = NO_LOSS
        normal_assign = self.normal_assign
        for i in sorted(lossy):
            extra = results[i][1] - normal_assign[i][1]
            verdict = OUTAGE
            service = self.f_service[i]
            outcome.service_unserved[service] = outcome.service_unserved.get(service, 0.0) + extra
            origin = self.f_origin[i]
            if origin >= 0 and origin in failed:
                name = self.ids[origin]
                outcome.no_takeover[name] = outcome.no_takeover.get(name, 0.0) + extra
            else:  # lost at the second stage: charge the failed P-CSCFs that carried it
                carried = [(x, amt) for x, amt in normal_assign[i][0] if x in failed and x != origin]
                total = sum(amt for _x, amt in carried)
                for x, amt in carried:
                    name = self.ids[x]
                    outcome.no_takeover[name] = outcome.no_takeover.get(name, 0.0) + extra * amt / total
            if self.f_erlangs[i]:
                lost_erl[self.f_wkey[i]] += extra
            else:
                lost_users[service][self.f_wkey[i]] += extra * self.f_upu[i]
        if detail:
            for i in sorted(results):
                self._receivers(normal_assign[i][0], results[i][0], failed, outcome)
        new_assign = outcome.assignments = {i: r[0] for i, r in results.items()}
        self._hss_surge(failed, delta)
        # overload of the survivors whose load changed
        loads = outcome.loads
        ids, cap_after, limit = self.ids, self.cap_after, self.limit
        for x, d, load in self._new_loads(failed, delta):
            loads[ids[x]] = load
            cap = cap_after[x]
            if d <= 1e-9 or cap == math.inf or x in failed:
                continue
            if load > cap * limit[x] + 1e-9:
                verdict = worse(verdict, DEGRADED)
            if load > cap + 1e-9:
                verdict = OUTAGE
                self._attribute_overflow(x, load, cap, new_assign, lost_users, lost_erl, outcome)
        if lost_users or lost_erl:
            self._per_local_network(outcome, lost_users, lost_erl)
        outcome.verdict = verdict
        # the slowest switchover; ties go to the element listed first in the inventory, never to
        # set order (it follows insertion order and string hashes, so it changed with PYTHONHASHSEED)
        best, who = 0, -1
        for x in failed:
            s = self.switchover_s[x]
            if s < best or s == 0 or self.normal[x] <= 0 or ids[x] in outcome.no_takeover:
                continue
            if s > best or x < who:
                best, who = s, x
        outcome.switchover_s = best
        outcome.worst_switchover_from = ids[who] if who >= 0 else None
        return outcome

    def moved_scscf_users(self, failed: Iterable[int]) -> float:
        """Registered users on the failed S-CSCFs: each re-registers on a survivor (failover)."""
        return sum(self.normal[x] * self.users_per_load[x] for x in failed if x in self.users_per_load)

    def _hss_surge(self, failed: set[int], delta: dict[int, float]) -> None:
        """The HSS failover surge: users of failed S-CSCFs cost (failover cost − 1) more each at the
        HSSs that serve those users' local networks, shared by the surviving ones in proportion to
        the load they carry after the failure (the HSS sizing check's term, applied to the real
        move)."""
        if self.surge_per_user <= 0:
            return
        normal, per_user, users_per_load = self.normal, self.surge_per_user, self.users_per_load
        surge: dict[int, float] = {}
        # the S-CSCFs of one province share their HSSs: their loads after the failure (``delta``
        # is not changed in this loop) and total are read once per set of HSSs
        loaded_of: dict[tuple[int, ...], tuple[list[tuple[int, float]], float]] = {}
        for x in failed:
            upl = users_per_load.get(x)
            if upl is None:
                continue  # not an S-CSCF: no users of its own move
            users = normal[x] * upl
            if users <= 0:
                continue
            hss = self.hss_of_scscf.get(x, ())
            known = loaded_of.get(hss)
            if known is None:
                after = [(h, normal[h] + delta.get(h, 0.0)) for h in hss if h not in failed]
                loaded = [(h, load) for h, load in after if load > 0]
                known = loaded_of[hss] = (loaded, sum(load for _h, load in loaded))
            loaded, total = known
            for h, load in loaded:
                surge[h] = surge.get(h, 0.0) + users * per_user * load / total
        for h, extra in surge.items():
            delta[h] = delta.get(h, 0.0) + extra

    def _hss_serving(self) -> dict[int, tuple[int, ...]]:
        """S-CSCF index → the HSSs (in inventory order) that serve its users' local networks."""
        lns_of: dict[int, set[str]] = defaultdict(set)
        hss_of_ln: dict[str, set[int]] = defaultdict(set)
        for i, service in enumerate(self.f_service):
            lns = {ln for ln, _w in self.weight_sets[self.f_wkey[i]]}
            members = {x for tier in self.f_tiers[i] for x in tier}
            if service == "scscf":
                for x in members:
                    lns_of[x].update(lns)
            elif service == "hss":
                for ln in lns:
                    hss_of_ln[ln].update(members)
        return {x: tuple(sorted({h for ln in lns for h in hss_of_ln.get(ln, ())})) for x, lns in lns_of.items()}

    def _per_local_network(
        self, outcome: Outcome, lost_users: dict[str, dict[int, float]], lost_erl: dict[int, float]
    ) -> None:
        """Spread unserved amounts over local networks; a user counts once (the worst service)."""
        users_ln: dict[str, float] = {}
        for per_key in lost_users.values():
            per_ln: dict[str, float] = defaultdict(float)
            for key, amount in per_key.items():
                for ln, w in self.weight_sets[key]:
                    per_ln[ln] += amount * w
            for ln, v in per_ln.items():
                if v > users_ln.get(ln, 0.0):
                    users_ln[ln] = v
        erl_ln: dict[str, float] = defaultdict(float)
        for key, amount in lost_erl.items():
            for ln, w in self.weight_sets[key]:
                erl_ln[ln] += amount * w
        for ln, users in users_ln.items():
            subs = self.ln_subs.get(ln, 0.0)
            if subs:
                erl_ln[ln] = max(erl_ln.get(ln, 0.0), self.ln_erl.get(ln, 0.0) * min(1.0, users / subs))
        outcome.unserved_users = {
            ln: min(v, self.ln_subs.get(ln, v)) for ln, v in sorted(users_ln.items()) if v > 1e-9
        }
        outcome.unserved_erlangs = {ln: v for ln, v in sorted(erl_ln.items()) if v > 1e-9}

    def _receivers(
        self,
        old_parts: list[tuple[int, float]],
        parts: list[tuple[int, float]],
        failed: set[int],
        outcome: Outcome,
    ) -> None:
        """Credit the load a flow moved onto survivors to the failed elements of the same type it left."""
        before: dict[int, float] = defaultdict(float)
        after: dict[int, float] = defaultdict(float)
        for x, amt in old_parts:
            before[x] += amt
        for x, amt in parts:
            after[x] += amt
        lost: dict[str, dict[int, float]] = defaultdict(dict)
        for x, amt in before.items():
            if x in failed and amt > 0:
                lost[self.type_of[x]][x] = amt
        for y, amt in after.items():
            gain = amt - before.get(y, 0.0)
            losers = lost.get(self.type_of[y])
            if gain <= 1e-9 or not losers:
                continue
            total = sum(losers.values())
            for x, lamt in losers.items():
                got = outcome.receivers.setdefault(self.ids[x], {})
                got[self.ids[y]] = got.get(self.ids[y], 0.0) + gain * lamt / total

    def _attribute_overflow(
        self,
        x: int,
        load: float,
        cap: float,
        new_assign: dict[int, list[tuple[int, float]]],
        lost_users: dict[str, dict[int, float]],
        lost_erl: dict[int, float],
        outcome: Outcome,
    ) -> None:
        """Traffic above 100% of a survivor's capacity is refused, in proportion to each flow on it."""
        ratio = (load - cap) / load
        service = self.type_of[x]
        if service == "cscf" and x in self.scscf_idx:
            service = "scscf"
        outcome.service_unserved[service] = outcome.service_unserved.get(service, 0.0) + (load - cap)
        outcome.overflow[self.ids[x]] = load - cap
        for i in self.flows_of[x]:
            parts = new_assign[i] if i in new_assign else self.normal_assign[i][0]
            on_x = sum(a for y, a in parts if y == x)
            if not on_x:
                continue
            over = on_x * ratio
            if self.f_erlangs[i]:
                lost_erl[self.f_wkey[i]] += over
            else:
                lost_users[service][self.f_wkey[i]] += over * self.f_upu[i]
