"""Elements: every sized element in normal operation, overloaded or without a capacity for its type."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from imsdr.capacity.checks.base import SIZED_TYPES, CapacityCheck, rounded
from imsdr.capacity.formulas import exact, fmt, pct
from imsdr.capacity.load import ERLANGS, LoadModel, is_scscf

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass(frozen=True)
class ElementIssue:
    id: str
    element_type: str
    kind: str  # overloaded | no_capacity
    load: float
    capacity: float | None
    message: str


def _element_issues(topology: Topology, model: LoadModel) -> list[ElementIssue]:
    out: list[ElementIssue] = []
    u = exact(model.cm.max_utilisation)
    for el in topology.elements.values():
        t = el.type.value
        load = model.normal_load.get(el.id, Fraction(0))
        cap = model.capacity.get(el.id)
        if t not in SIZED_TYPES or (t == "cscf" and not is_scscf(el)) or load <= 0:
            continue
        if cap is None:
            out.append(
                ElementIssue(
                    el.id,
                    t,
                    "no_capacity",
                    rounded(load, 3) or 0.0,
                    None,
                    f"{el.id}: carries {fmt(load)} {model.unit.get(el.id, 'users')} but has no "
                    "capacity for its type; it cannot be sized",
                )
            )
        elif load > cap * (1 if model.unit.get(el.id) == ERLANGS else u):
            out.append(
                ElementIssue(
                    el.id,
                    t,
                    "overloaded",
                    rounded(load, 3) or 0.0,
                    rounded(cap, 3),
                    f"{el.id}: carries {fmt(load)} {model.unit.get(el.id, 'users')} in normal "
                    f"operation, {pct(load / cap)} of its capacity {fmt(cap)}",
                )
            )
    return sorted(out, key=lambda e: e.id)


CHECKS = [
    CapacityCheck(
        "elements",
        "no sized element is overloaded in normal operation, and every loaded one has a capacity",
        lambda inputs: _element_issues(inputs.topology, inputs.model),
    ),
]
