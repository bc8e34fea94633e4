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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from imsdr.capacity.load import ERLANGS, LoadModel, is_scscf
from imsdr.scenarios.timing import switchover

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

NO_LOSS = "no loss"
DEGRADED = "degraded"
OUTAGE = "outage"
_RANK = {NO_LOSS: 0, DEGRADED: 1, OUTAGE: 2}


def worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


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
    receivers: dict[str, dict[str, float]] = field(default_factory=dict)  # failed element → taker → amount
    switchover_s: int = 0
    worst_switchover_from: str | None = None

    @property
    def users(self) -> float:
        return sum(self.unserved_users.values())

    @property
    def erlangs(self) -> float:
        return sum(self.unserved_erlangs.values())


class Engine:
    """The compiled model of one topology. Build it once; call :meth:`evaluate` per scenario."""

    def __init__(self, topology: Topology, model: LoadModel | None = None) -> None:
        self.topology = topology
        self.model = model or LoadModel(topology)
        m = self.model
        self.max_util = float(m.cm.max_utilisation)
        self.ids: list[str] = list(topology.elements)
        self.index = {e: i for i, e in enumerate(self.ids)}
        ix = self.index
        self.cap: list[float] = [float(m.capacity[e]) if m.capacity.get(e) else math.inf for e in self.ids]
        self.normal: list[float] = [float(m.normal_load.get(e, 0)) for e in self.ids]
        self.pcscf_tiers: dict[int, tuple[tuple[int, ...], ...]] = {
            ix[s]: tuple(tuple(ix[p] for p in tier) for tier in tiers) for s, tiers in m.pcscf_tiers.items()
        }
        flows = m.flows
        self.flow_ids = [f.id for f in flows]
        self.f_service = [f.service for f in flows]
        self.f_erlangs = [f.unit == ERLANGS for f in flows]
        self.f_amount = [float(f.amount) for f in flows]
        self.f_upu = [float(f.users_per_unit) for f in flows]
        self.f_weights = [tuple((ln, float(w)) for ln, w in f.ln_weights) for f in flows]
        self.f_tiers = [tuple(tuple(ix[x] for x in tier) for tier in f.tiers) for f in flows]
        self.f_stage2 = [f.stage2 for f in flows]
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
        self.switchover_s = [switchover(topology, topology.elements[e]).seconds for e in self.ids]
        self.groups_of_idx: list[list[str]] = [
            [g.id for g in topology.groups_of.get(e, [])] for e in self.ids
        ]
        self.type_of: list[str] = [topology.elements[e].type.value for e in self.ids]
        self.scscf_idx = {ix[e] for e, el in topology.elements.items() if is_scscf(el)}
        self.ln_subs = {ln.id: float(ln.subscribers) for ln in topology.local_networks.values()}
        self.ln_erl = {ln.id: float(ln.busy_hour_erlangs) for ln in topology.local_networks.values()}

    # --- flows ------------------------------------------------------------------------------------------

    def _spread(self, members: tuple[int, ...], amount: float) -> list[tuple[int, float]]:
        if len(members) == 1:
            return [(members[0], amount)]
        caps = [self.cap[x] for x in members]
        if all(c != math.inf for c in caps):
            total = sum(caps)
            return [(x, amount * c / total) for x, c in zip(members, caps, strict=True)]
        share = amount / len(members)
        return [(x, share) for x in members]

    def _assign(self, i: int, failed: frozenset[int] | set[int]) -> tuple[list[tuple[int, float]], float]:
        amount = self.f_amount[i]
        first = None
        for tier in self.f_tiers[i]:
            alive = tuple(x for x in tier if x not in failed)
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
                alive = tuple(y for y in tier if y not in failed)
                if alive:
                    second = alive
                    break
            if second is None:
                unserved += amt
            else:
                result.extend(self._spread(second, amt))
        return result, unserved

    # --- scenarios -----------------------------------------------------------------------------------------

    def site_elements(self, site_ids: Iterable[str]) -> set[int]:
        out: set[int] = set()
        for s in site_ids:
            out.update(self.by_site.get(s, ()))
        return out

    def evaluate(self, failed_ids: Iterable[str] | set[int], *, detail: bool = False) -> Outcome:
        failed = {self.index[x] for x in failed_ids} if not isinstance(failed_ids, set) else failed_ids
        failed = {x if isinstance(x, int) else self.index[x] for x in failed}
        outcome = Outcome(tuple(sorted(self.ids[x] for x in failed)))
        affected: set[int] = set()
        for x in failed:
            affected.update(self.flows_of[x])
        delta: dict[int, float] = defaultdict(float)
        new_assign: dict[int, list[tuple[int, float]]] = {}
        lost_users: dict[str, dict[str, float]] = defaultdict(
            lambda: defaultdict(float)
        )  # service → ln → users
        lost_erl: dict[str, float] = defaultdict(float)
        verdict = NO_LOSS
        for i in sorted(affected):
            parts, unserved = self._assign(i, failed)
            old_parts, old_unserved = self.normal_assign[i]
            new_assign[i] = parts
            for x, amt in old_parts:
                delta[x] -= amt
            for x, amt in parts:
                delta[x] += amt
            extra = unserved - old_unserved
            if extra > 1e-9:
                verdict = OUTAGE
                service = self.f_service[i]
                outcome.service_unserved[service] = outcome.service_unserved.get(service, 0.0) + extra
                origin = self.f_origin[i]
                if origin >= 0 and origin in failed:
                    name = self.ids[origin]
                    outcome.no_takeover[name] = outcome.no_takeover.get(name, 0.0) + extra
                if self.f_erlangs[i]:
                    for ln, w in self.f_weights[i]:
                        lost_erl[ln] += extra * w
                else:
                    users = extra * self.f_upu[i]
                    per_ln = lost_users[service]
                    for ln, w in self.f_weights[i]:
                        per_ln[ln] += users * w
            if detail:
                self._receivers(old_parts, parts, failed, outcome)
        # overload of the survivors whose load changed
        for x, d in delta.items():
            if abs(d) < 1e-9 and x not in failed:
                continue
            load = self.normal[x] + d
            if load < 1e-6:
                load = 0.0
            outcome.loads[self.ids[x]] = load
            cap = self.cap[x]
            if cap == math.inf or x in failed or d <= 1e-9:
                continue
            if load > cap * self.max_util + 1e-9:
                verdict = worse(verdict, DEGRADED)
            if load > cap + 1e-9:
                verdict = OUTAGE
                self._attribute_overflow(x, load, cap, failed, new_assign, lost_users, lost_erl, outcome)
        for per_ln in lost_users.values():
            for ln, users in per_ln.items():
                if users > outcome.unserved_users.get(ln, 0.0):
                    outcome.unserved_users[ln] = users
        for ln, users in outcome.unserved_users.items():
            subs = self.ln_subs.get(ln, 0.0)
            if subs:
                lost_erl[ln] = max(lost_erl.get(ln, 0.0), self.ln_erl.get(ln, 0.0) * min(1.0, users / subs))
        outcome.unserved_erlangs = {ln: v for ln, v in lost_erl.items() if v > 1e-9}
        outcome.unserved_users = {
            ln: min(v, self.ln_subs.get(ln, v)) for ln, v in outcome.unserved_users.items() if v > 1e-9
        }
        outcome.verdict = verdict
        best, who = 0, None
        for x in failed:
            if self.normal[x] > 0 and self.ids[x] not in outcome.no_takeover and self.switchover_s[x] > best:
                best, who = self.switchover_s[x], self.ids[x]
        outcome.switchover_s, outcome.worst_switchover_from = best, who
        return outcome

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
        failed: set[int],
        new_assign: dict[int, list[tuple[int, float]]],
        lost_users: dict[str, dict[str, float]],
        lost_erl: dict[str, float],
        outcome: Outcome,
    ) -> None:
        ratio = (load - cap) / load
        service = self.type_of[x]
        if service == "cscf" and x in self.scscf_idx:
            service = "scscf"
        outcome.service_unserved[service] = outcome.service_unserved.get(service, 0.0) + (load - cap)
        for i in self.flows_of[x]:
            parts = new_assign[i] if i in new_assign else self.normal_assign[i][0]
            on_x = sum(a for y, a in parts if y == x)
            if not on_x:
                continue
            over = on_x * ratio
            if self.f_erlangs[i]:
                for ln, w in self.f_weights[i]:
                    lost_erl[ln] += over * w
            else:
                per_ln = lost_users[service]
                for ln, w in self.f_weights[i]:
                    per_ln[ln] += over * self.f_upu[i] * w

    def utilisation(self, element_id: str, load: float) -> float | None:
        cap = self.cap[self.index[element_id]]
        return None if cap == math.inf else load / cap
