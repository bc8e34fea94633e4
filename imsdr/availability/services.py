"""Services as chains of redundancy blocks, derived from the failure engine's flows.

A service of one local network is a series of *categories* (the engine's flow services: the
access flow with its P-CSCF stage, the S-CSCF pool, the HSS pair, ...). The flows of one category
that use the same candidate elements form one *block*; losing some of its members loses the part of
the local network's traffic that the engine finds unserved, or refused by survivors over their
capacity (k-of-n and load rules come from the engine, not from a second model). A block is down
for a local network as far as that part goes.

Emergency calls add an E-CSCF block (the CSCFs with the ``ecscf`` role of the local network's
core: any one serves) and, where the local network routes to a PSAP, the MGCF and IM-MGW pools.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine
    from imsdr.model.topology import Topology

#: service → the flow categories it needs, in call order (docs/availability.md "Services")
SERVICES: dict[str, tuple[str, ...]] = {
    "registration": ("sbc", "cscf", "scscf", "dra", "hss", "slf"),
    "originating": ("sbc", "scscf", "as", "enum_dns"),
    "terminating": ("cscf", "dra", "hss", "slf", "scscf", "as", "sbc"),
    "pstn_breakout": ("sbc", "scscf", "as", "enum_dns", "mgcf", "imgw"),
    "pstn_ingress": ("mgcf", "imgw", "cscf", "dra", "hss", "slf", "scscf", "as", "sbc"),
    "emergency": ("sbc", "ecscf", "mgcf", "imgw"),
}
#: every category some service needs
CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(c for cats in SERVICES.values() for c in cats))
SERVICE_LABELS = {
    "registration": "registration", "originating": "originating call", "terminating": "terminating call",
    "pstn_breakout": "PSTN breakout", "pstn_ingress": "PSTN ingress", "emergency": "emergency call",
}


def percent(value: float) -> str:
    """An availability for people: 99.99551 %."""
    return f"{value * 100:.5f} %"


def minutes(value: float) -> str:
    """Minutes a year for people: three decimals."""
    return f"{value:.3f}"


#: services whose users wait for re-registration (they cannot be reached until the UE registers
#: again); the others lose only detection (and restore) time in a switchover
REACHED_BY_REGISTRATION = frozenset({"terminating", "pstn_ingress"})
LOSS_EPS = 1e-9


@dataclass
class Block:
    """Flows of one category sharing candidate elements (or a synthetic any-one-of block)."""

    key: str
    category: str
    members: tuple[int, ...]  # engine element indices, ascending
    flows: tuple[int, ...]  # engine flow indices (empty: any surviving member serves every LN)
    lns: tuple[str, ...]
    #: LN → that LN's whole traffic of the category (the denominator of its lost fraction)
    denominators: dict[str, float] = field(default_factory=dict)
    memo: dict[frozenset[int], dict[str, float]] = field(default_factory=dict)
    #: failed members → what :meth:`ServiceModel._moved` found for them
    moved: dict[frozenset[int], list[tuple[int, list[tuple[str, int, float]], float]]] = field(default_factory=dict)


class ServiceModel:
    """The blocks of every category and which local networks use them (built once per run)."""

    def __init__(self, topology: Topology, engine: Engine) -> None:
        self.topology = topology
        self.engine = engine
        self.blocks: list[Block] = []
        self.blocks_of: dict[tuple[str, str], list[int]] = defaultdict(list)  # (category, LN) → blocks
        self._build_flow_blocks()
        self._build_emergency()

    def _build_flow_blocks(self) -> None:
        e = self.engine
        grouped: dict[tuple[str, tuple[int, ...]], list[int]] = {}
        for i, service in enumerate(e.f_service):
            members: set[int] = set()
            for tier in e.f_tiers[i]:
                members.update(tier)
                if e.f_stage2[i]:
                    for x in tier:
                        for ptier in e.pcscf_tiers.get(x, ()):
                            members.update(ptier)
            grouped.setdefault((service, tuple(sorted(members))), []).append(i)
        totals: dict[tuple[str, str], float] = defaultdict(float)
        for i, service in enumerate(e.f_service):
            for ln, w in e.weight_sets[e.f_wkey[i]]:
                totals[(service, ln)] += w * e.f_amount[i]
        for (service, members), flows in grouped.items():
            lns = sorted({ln for i in flows for ln, w in e.weight_sets[e.f_wkey[i]] if w > 0})
            block = Block(f"{service}:{len(self.blocks)}", service, members, tuple(flows), tuple(lns),
                          {ln: totals[(service, ln)] for ln in lns})
            self._add(block)

    def _build_emergency(self) -> None:
        top, ix = self.topology, self.engine.index
        ecscfs: dict[str, list[int]] = defaultdict(list)
        for el in top.with_role("ecscf"):
            ecscfs[top.scope(el)].append(ix[el.id])
        users: dict[tuple[int, ...], list[str]] = {}  # one block per set of E-CSCFs
        for ln in top.local_networks.values():
            scopes = {top.sites[s].province or "" for s in ln.home_sites if s in top.sites}
            members = tuple(sorted({x for sc in scopes for x in ecscfs.get(sc, [])}))
            if members:
                users.setdefault(members, []).append(ln.id)
        for members, lns in users.items():
            self._add(Block(f"ecscf:{len(self.blocks)}", "ecscf", members, (), tuple(lns), {ln: 1.0 for ln in lns}))

    def min_failures(self, block: Block) -> int:
        """A lower bound on how many members must fail before the block loses anything: every
        member of an any-one-of block; the smallest set of candidates of a flow without capacity
        limits; 1 when a member's capacity could refuse traffic first."""
        e = self.engine
        if not block.flows:
            return len(block.members)
        if any(e.cap_after[x] != math.inf for x in block.members):
            return 1
        best = len(block.members)
        for i in block.flows:
            first = {x for tier in e.f_tiers[i] for x in tier}
            best = min(best, len(first))
            if e.f_stage2[i]:
                for x in first:
                    second = {y for tier in e.pcscf_tiers.get(x, ()) for y in tier}
                    if second:
                        best = min(best, len(second))
        return max(1, best)

    def _add(self, block: Block) -> None:
        self.blocks.append(block)
        for ln in block.lns:
            self.blocks_of[(block.category, ln)].append(len(self.blocks) - 1)

    def emergency_lns(self) -> set[str]:
        return {ln for (cat, ln) in self.blocks_of if cat == "ecscf"}

    def categories(self, service: str, ln_id: str) -> list[str]:
        """The service's categories this local network has blocks for (emergency: only with an
        E-CSCF; PSTN legs of emergency only where the local network routes to a PSAP)."""
        cats = [c for c in SERVICES[service] if self.blocks_of.get((c, ln_id))]
        if service == "emergency":
            if "ecscf" not in cats:
                return []
            ln = self.topology.local_networks[ln_id]
            if ln.emergency is None:
                cats = [c for c in cats if c not in ("mgcf", "imgw")]
        return cats

    # --- what losing some members does -----------------------------------------------------------

    def loss(self, block: Block, failed: frozenset[int]) -> dict[str, float]:
        """LN → the fraction of its traffic of the block's category lost while ``failed`` (member
        indices) are down: unserved by the engine's takeover, or refused above a survivor's
        capacity. Memoised per block for the run."""
        known = block.memo.get(failed)
        if known is not None:
            return known
        if not failed:
            result: dict[str, float] = {}
        elif not block.flows:
            result = {ln: 1.0 for ln in block.lns} if set(block.members) <= failed else {}
        else:
            result = self._flow_loss(block, failed)
        block.memo[failed] = result
        return result

    def _flow_loss(self, block: Block, failed: frozenset[int]) -> dict[str, float]:
        e = self.engine
        results, refused_ratio = e.refused(failed)  # every flow of the block reaches a failed member
        lost: dict[str, float] = defaultdict(float)
        for i in block.flows:
            amount = e.f_amount[i]
            if amount <= 0:
                continue
            parts, unserved = results[i]
            extra = max(0.0, unserved - e.normal_assign[i][1])
            refused = sum(amt * refused_ratio[x] for x, amt in parts if x in refused_ratio)
            part = min(amount, extra + refused)
            if part <= LOSS_EPS:
                continue
            for ln, w in e.weight_sets[e.f_wkey[i]]:
                lost[ln] += w * part
        return {ln: min(1.0, v / block.denominators[ln]) for ln, v in sorted(lost.items())
                if block.denominators.get(ln) and v / block.denominators[ln] > LOSS_EPS}

    def moved_seconds(self, block: Block, failed: frozenset[int], seconds: dict[int, int]) -> dict[str, float]:
        """LN → share-weighted switchover seconds when ``failed`` go down and the rest is taken
        over: each flow's users on a failed element wait that element's switchover (``seconds``:
        element index → seconds for this service); an access flow's users wait the longer of
        their SBC's and their P-CSCF's; the part that is lost (an outage) waits nothing here."""
        e = self.engine
        out: dict[str, float] = defaultdict(float)
        if not block.flows:
            share = 1.0 / len(block.members)
            if not set(block.members) <= failed:
                total = sum(share * seconds.get(x, 0) for x in failed)
                if total > 0:
                    out[block.lns[0]] = total
            return dict(out)
        for i, on_failed, kept in self._moved(block, failed):
            per_type: dict[str, float] = defaultdict(float)
            for kind, x, amt in on_failed:
                per_type[kind] += amt * seconds.get(x, 0)
            wait = max(per_type.values()) * kept
            if wait <= 0:
                continue
            for ln, w in e.weight_sets[e.f_wkey[i]]:
                den = block.denominators.get(ln)
                if den:
                    out[ln] += w * wait / den
        return dict(out)

    def _moved(self, block: Block, failed: frozenset[int]) -> list[tuple[int, list[tuple[str, int, float]], float]]:
        """(flow, its normal (element type, index, amount) parts on ``failed``, the share of it
        taken over) of each flow of the block with users on ``failed``: the same for every
        service's switchover seconds, so worked out once per failure (memoised per block)."""
        known = block.moved.get(failed)
        if known is None:
            e = self.engine
            known = []
            for i in block.flows:
                amount = e.f_amount[i]
                if amount <= 0:
                    continue
                normal_parts, normal_unserved = e.normal_assign[i]
                on_failed = [(e.type_of[x], x, amt) for x, amt in normal_parts if x in failed]
                if on_failed:
                    extra = max(0.0, e.assign(i, failed)[1] - normal_unserved)
                    known.append((i, on_failed, max(0.0, 1 - extra / amount)))
            block.moved[failed] = known
        return known
