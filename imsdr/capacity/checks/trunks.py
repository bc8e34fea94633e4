"""Trunks: every MGCF/IM-MGW trunk group sized by Erlang B at its grade of service, normally and
after losing its worst site at the failure grade of service (docs/domain.md §4.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import FAIL, OK, CapacityCheck
from imsdr.capacity.erlang import blocking_text, circuits_needed, erlang_b
from imsdr.capacity.formulas import fmt, pct
from imsdr.capacity.load import LoadModel

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class TrunkMember:
    id: str
    circuits: int | None
    erlangs: float
    needed: int
    ok: bool
    blocking: float | None = None  # Erlang B of its Erlangs on its circuits
    occupancy: float | None = None  # carried Erlangs per circuit: A × (1 − B) / circuits


@dataclass(frozen=True)
class TrunkCheck:
    id: str
    element_type: str
    erlangs: float
    grade_of_service: float
    total_needed: int
    normal: tuple[TrunkMember, ...]
    worst_site: str | None
    after_site: tuple[TrunkMember, ...]
    verdict: str
    formula: tuple[str, ...]
    message: str


def _trunk_rows(
    topology: Topology, members: list[str], erlangs: float, gos: float
) -> tuple[TrunkMember, ...]:
    circuits = {m: topology.elements[m].capacity.circuits for m in members}
    weights: dict[str, float]
    if members and all(circuits.values()):
        total = sum(c or 0 for c in circuits.values())
        weights = {m: (circuits[m] or 0) / total for m in members}
    else:
        weights = {m: 1 / len(members) for m in members} if members else {}
    rows = []
    for m in members:
        a = round(erlangs * weights[m], 6)
        need = circuits_needed(a, gos)
        have = circuits[m]
        blocking = erlang_b(a, have) if have else None
        rows.append(TrunkMember(m, have, round(a, 3), need, have is not None and have >= need,
                                None if blocking is None else float(f"{blocking:.3g}"),
                                None if blocking is None else round(a * (1 - blocking) / have, 4)))  # type: ignore[operator]
    return tuple(rows)


def _trunk_use(r: TrunkMember) -> str:
    if r.blocking is None or r.occupancy is None:
        return ""
    return f" (blocking {blocking_text(r.blocking)}, occupancy {pct(r.occupancy)})"


def _trunk_checks(topology: Topology, model: LoadModel) -> list[TrunkCheck]:
    out: list[TrunkCheck] = []
    for group in topology.groups.values():
        if group.id not in model.trunk_erlangs:
            continue
        members = [m for m in group.members if m in topology.elements]
        el_type = topology.elements[members[0]].type.value
        erlangs = float(model.trunk_erlangs[group.id])
        gos = model.gos.get(members[0], model.cm.grade_of_service)
        gos_after = model.failure_gos(gos)
        normal = _trunk_rows(topology, members, erlangs, gos)
        sites = sorted({topology.elements[m].site for m in members})
        worst_site: str | None = None
        worst_rows: tuple[TrunkMember, ...] = ()
        worst_key: tuple[int, float] | None = None
        for site in sites:
            survivors = [m for m in members if topology.elements[m].site != site]
            rows = _trunk_rows(topology, survivors, erlangs, gos_after)
            short = sum(max(0, r.needed - (r.circuits or 0)) for r in rows) if rows else 10**9
            key = (short, max((r.erlangs / (r.circuits or 1) for r in rows), default=float("inf")))
            if worst_key is None or key > worst_key:
                worst_key, worst_site, worst_rows = key, site, rows
        ok = all(r.ok for r in normal) and (
            worst_site is None or (bool(worst_rows) and all(r.ok for r in worst_rows))
        )
        total_needed = circuits_needed(erlangs, gos)
        lines = [f"Erlang B at GoS {pct(gos, 2)}: {fmt(erlangs)} E on one group → {total_needed} circuits"]
        lines.append(
            "normal: "
            + "; ".join(
                f"{r.id} {fmt(r.erlangs)} E → {r.needed} needed / {r.circuits or '?'} configured{_trunk_use(r)}"
                for r in normal
            )
        )
        if worst_site is not None:
            if worst_rows:
                lines.append(
                    f"after losing {worst_site} (GoS {pct(gos_after, 2)}): "
                    + "; ".join(
                        f"{r.id} {fmt(r.erlangs)} E → {r.needed} needed / {r.circuits or '?'} configured"
                        f"{_trunk_use(r)}"
                        for r in worst_rows
                    )
                )
            else:
                lines.append(f"after losing {worst_site}: no member left")
        lines[-1] += " → ok" if ok else " → SHORT"
        bad = [r for r in (*normal, *worst_rows) if not r.ok]
        if worst_site is not None and not worst_rows:
            msg = f"trunk group {group.id}: every member is at {worst_site}; losing it drops {fmt(erlangs)} E"
        elif bad:
            r = bad[0]
            when = "in normal operation" if r in normal else f"after losing {worst_site}"
            at = gos if r in normal else gos_after
            msg = (
                f"trunk group {group.id}: {r.id} needs {r.needed} circuits for {fmt(r.erlangs)} E at GoS "
                f"{pct(at, 2)} {when} but has {r.circuits or 'none'}"
            )
        else:
            msg = f"trunk group {group.id}: ok"
        out.append(
            TrunkCheck(
                id=group.id,
                element_type=el_type,
                erlangs=erlangs,
                grade_of_service=gos,
                total_needed=total_needed,
                normal=normal,
                worst_site=worst_site,
                after_site=worst_rows,
                verdict=OK if ok else FAIL,
                formula=tuple(lines),
                message=msg,
            )
        )
    return out


CHECKS = [
    CapacityCheck(
        "trunks",
        "every trunk group has the circuits Erlang B asks for, normally and after losing its worst site",
        lambda inputs: _trunk_checks(inputs.topology, inputs.model),
    ),
]
