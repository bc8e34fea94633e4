"""Subscribers: every HSS/SLF unit holds its subscribers, their restoration data and the failover
of the largest S-CSCF it serves; the S-CSCF load each unit carries with the registrations that
restoration adds (docs/domain.md §4.6)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import FAIL, OK, UNKNOWN, CapacityCheck, rounded
from imsdr.capacity.formulas import exact, fmt, hss_required, pct
from imsdr.capacity.load import LoadModel, is_scscf

if TYPE_CHECKING:
    from imsdr.model.topology import Group, Topology


@dataclass(frozen=True)
class HssCheck:
    id: str
    members: tuple[str, ...]
    subscribers: float
    restoration: bool
    overhead: float
    largest_scscf: str | None
    largest_scscf_users: float
    failover_cost: float
    required: float
    capacity: float | None
    ratio: float | None  # required / capacity
    verdict: str
    formula: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class CscfLoad:
    id: str
    members: tuple[str, ...]
    subscribers: float
    restoration: bool
    registration_share: float
    restoration_cost: float
    factor: float
    load: float
    formula: tuple[str, ...]


class _LargestScscf:
    """The S-CSCF (serving any of a set of local networks) whose failure moves most users: its
    capacity (else its unit's users), at most the users it could possibly hold.

    Each S-CSCF unit's best member is found once and the units are indexed by the local networks
    they serve, so a query reads only the units serving its local networks (in unit order, the
    first largest winning, as a scan over every unit would)."""

    def __init__(self, model: LoadModel) -> None:
        subscribers = exact(model.subscribers)
        self.units: list[tuple[str, Fraction]] = []
        self.by_ln: dict[str, list[int]] = defaultdict(list)
        for _group, members, users, weights in model.unit_users.get("scscf", []):
            best: tuple[str | None, Fraction] = (None, Fraction(0))
            for m in members:
                cap = model.capacity.get(m)
                held = min(cap if cap else users, subscribers)
                if best[0] is None or held > best[1]:
                    best = (m, held)
            if best[0] is None:
                continue
            k = len(self.units)
            self.units.append((best[0], best[1]))
            for ln, _w in weights:
                self.by_ln[ln].append(k)

    def __call__(self, lns: set[str]) -> tuple[str | None, Fraction]:
        if lns:
            ks: Iterable[int] = sorted({k for ln in lns for k in self.by_ln.get(ln, ())})
        else:
            ks = range(len(self.units))
        best: tuple[str | None, Fraction] = (None, Fraction(0))
        for k in ks:
            m, held = self.units[k]
            if best[0] is None or held > best[1]:
                best = (m, held)
        return best


def _hss_checks(topology: Topology, model: LoadModel) -> list[HssCheck]:
    cm = model.cm
    out: list[HssCheck] = []
    restoration = model.restoration
    overhead = exact(cm.hss_restoration_overhead)
    cost = exact(cm.failover_cost_per_moved_user)
    largest_scscf = _LargestScscf(model)
    for group, ms, subs, weights in model.unit_users.get("hss", []):
        if group is not None and group.kind == "pool":
            cap = _pool_surviving(model, group, ms)
        else:
            cap = model.unit_capacity(group, ms)
        largest, moved = largest_scscf({ln for ln, _w in weights})
        required = hss_required(subs, overhead, moved, cost, restoration)
        ident = group.id if group is not None else ms[0]
        oh = f"(1 + {pct(overhead)})" if restoration else "(no restoration data: + 0%)"
        lines = [
            f"required = subscribers × {oh} + users of largest S-CSCF × (failover cost − 1)",
            f"= {fmt(subs)} × {fmt(1 + (overhead if restoration else 0), 4)} + {fmt(moved)}"
            f" × ({fmt(cost, 4)} − 1) = {fmt(required)}",
        ]
        if cap:
            ratio = required / cap
            lines.append(
                f"= {pct(ratio)} of the HSS capacity {fmt(cap)}"
                + (f" (limit {pct(exact(cm.max_utilisation))})" if cm.max_utilisation != 1 else "")
            )
            ok = required <= cap * exact(cm.max_utilisation)
            verdict = OK if ok else FAIL
            msg = (
                f"HSS {ident}: needs {fmt(required)} subscriber-equivalents ({pct(ratio)} of its capacity "
                f"{fmt(cap)}) to hold restoration data and absorb the failover of {largest or 'an S-CSCF'}"
            )
        else:
            ratio = None
            verdict = UNKNOWN
            lines.append("HSS capacity (subscribers) missing: cannot be compared")
            msg = f"HSS {ident}: capacity missing"
        out.append(
            HssCheck(
                id=ident,
                members=tuple(ms),
                subscribers=rounded(subs, 3) or 0.0,
                restoration=restoration,
                overhead=float(overhead),
                largest_scscf=largest,
                largest_scscf_users=rounded(moved, 3) or 0.0,
                failover_cost=float(cost),
                required=rounded(required, 3) or 0.0,
                capacity=rounded(cap, 3),
                ratio=rounded(ratio),
                verdict=verdict,
                formula=tuple(lines),
                message=msg,
            )
        )
    return out


def _pool_surviving(model: LoadModel, group: Group, members: list[str]) -> Fraction | None:
    caps = [model.capacity.get(m) for m in members]
    if not all(caps):
        return None
    ordered = sorted(caps, reverse=True)  # type: ignore[type-var]
    return sum(ordered[group.spare :], Fraction(0))  # type: ignore[arg-type]


def _cscf_loads(topology: Topology, model: LoadModel) -> list[CscfLoad]:
    members = [e.id for e in topology.by_type["cscf"] if is_scscf(e)]
    cm = model.cm
    out: list[CscfLoad] = []
    share = exact(cm.registration_share)
    cost = exact(cm.restoration_registration_cost)
    for group, ms in model.units_of(members):
        load = sum((model.normal_load.get(m, Fraction(0)) for m in ms), Fraction(0))
        restoration = any(topology.elements[m].has(_restoration()) for m in ms)
        factor = model.scscf_factor if restoration else Fraction(1)
        users = load / factor
        ident = group.id if group is not None else ms[0]
        if restoration:
            lines = (
                f"restoration factor = 1 + registration share × (cost − 1) = 1 + {pct(share)} × "
                f"({fmt(cost, 4)} − 1) = {fmt(factor, 4)} (+{pct(factor - 1)})",
                f"S-CSCF load = {fmt(users)} users × {fmt(factor, 4)} = {fmt(load)}",
            )
        else:
            lines = (f"no restoration data: S-CSCF load = {fmt(users)} users",)
        out.append(
            CscfLoad(
                id=ident,
                members=tuple(ms),
                subscribers=rounded(users, 3) or 0.0,
                restoration=restoration,
                registration_share=float(share),
                restoration_cost=float(cost),
                factor=float(factor),
                load=rounded(load, 3) or 0.0,
                formula=lines,
            )
        )
    return out


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA


CHECKS = [
    CapacityCheck(
        "hss",
        "every HSS/SLF holds its subscribers with their restoration data and absorbs the failover "
        "of the largest S-CSCF it serves",
        lambda inputs: _hss_checks(inputs.topology, inputs.model),
    ),
    CapacityCheck(
        "cscf",
        "the S-CSCF load of each unit: its users times the registrations restoration adds",
        lambda inputs: _cscf_loads(inputs.topology, inputs.model),
    ),
]
