"""Takeovers: each loaded SBC or P-CSCF lost alone, and the elements of its type that take its
users (its DR partners) against their capacity (docs/domain.md §4.2, §4.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import FAIL, OK, CapacityCheck, ElementLosses
from imsdr.capacity.formulas import fmt, pct

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class Takeover:
    """One SBC or P-CSCF lost: the elements that take its users, against their capacity."""

    failed: str
    element_type: str
    load: float
    takers: tuple[tuple[str, float, float | None, float | None], ...]  # id, load after, capacity, util
    unserved: float
    verdict: str
    formula: tuple[str, ...]
    message: str


def _takeovers(topology: Topology, eng: Engine, losses: ElementLosses) -> list[Takeover]:
    out: list[Takeover] = []
    for el_type in ("sbc", "pcscf"):
        for el in topology.by_type[el_type]:
            x = eng.index[el.id]
            load = eng.normal[x]
            if load <= 0:
                continue
            outcome = losses.lose((el.id,))  # with detail: a loaded SBC or P-CSCF
            takers_raw = outcome.receivers.get(el.id, {})
            takers = []
            for t in sorted(takers_raw):
                if topology.elements[t].type.value != el_type:
                    continue
                after = outcome.loads.get(t, eng.normal[eng.index[t]])
                cap = eng.cap_after[eng.index[t]]
                capv = None if cap == float("inf") else cap
                takers.append((t, round(after, 3), capv, None if capv is None else round(after / capv, 4)))
            unserved = outcome.no_takeover.get(el.id, 0.0) + sum(
                max(0.0, a - (c or float("inf"))) for _t, a, c, _u in takers
            )
            verdict = FAIL if outcome.verdict != "no loss" else OK
            if takers:
                lines = tuple(
                    f"{t}: {fmt(eng.normal[eng.index[t]])} + {fmt(a - eng.normal[eng.index[t]])} moved = "
                    f"{fmt(a)} vs capacity {fmt(c) if c else '?'}"
                    + (f" ({pct(ut)})" if ut is not None else "")
                    for t, a, c, ut in takers
                )
            else:
                lines = (f"nothing takes over {fmt(load)} users",)
            if not takers:
                msg = f"{el_type} {el.id}: nothing takes over its {fmt(load)} users when it fails"
            else:
                worst = max(takers, key=lambda r: r[3] or 0)
                msg = (
                    f"{el_type} {el.id} fails: {worst[0]} must carry {fmt(worst[1])} users "
                    f"({pct(worst[3] or 0)} of {fmt(worst[2] or 0)})"
                )
            out.append(
                Takeover(
                    failed=el.id,
                    element_type=el_type,
                    load=round(load, 3),
                    takers=tuple(takers),
                    unserved=round(unserved, 3),
                    verdict=verdict,
                    formula=lines,
                    message=msg,
                )
            )
    return out


CHECKS = [
    CapacityCheck(
        "takeovers",
        "the elements that take a lost SBC's or P-CSCF's users carry them within their capacity",
        lambda inputs: _takeovers(inputs.topology, inputs.eng, inputs.element_losses),
        lab_shown=True,
    ),
]
