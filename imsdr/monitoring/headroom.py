"""Headroom guards: the load at which the plan's worst single failure would overload a survivor.

The capacity report computes, at the planned load, the utilisation a group's survivors reach
after its worst single failure (a pool losing K members, a 1+1 pair losing a side, a DR SBC or
next P-CSCF taking a failed element's users, an HSS absorbing an S-CSCF failover). Those
utilisations are linear in the load the members carry, so with the members' current load ``C``
and their planned load ``P`` the utilisation the same failure would cause now is

    projected = C × (U_after / P)

and the guard fires when ``projected > max_utilisation``, i.e. when ``C > P × limit / U_after``
(the *threshold*). One guard per capacity check that has a failure to guard against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.analysis import Analysis


@dataclass(frozen=True, slots=True)
class HeadroomGuard:
    """One live guard on a capacity check."""

    check: str  # KIND:ID of the capacity check ("pool:cscf-pool", "hss:hss-pair", "takeover:sbc-a")
    kind: str  # pool | pair | hss | takeover
    rule: str  # the CAP rule that judges the same check at plan time
    element_type: str
    unit: str  # the unit of imsdr_element_load the members are summed in
    members: tuple[str, ...]  # the elements whose current load is summed
    planned_load: float  # P: the members' load in the plan
    utilisation_after: float  # U_after: the survivors' utilisation after the worst failure, at P
    limit: float  # max_utilisation
    worst: str  # what fails, in words ("losing cscf-a-1, cscf-b-1")
    survivor: str  # who would be overloaded

    @property
    def factor(self) -> float:
        """U_after / P: the projected utilisation per unit of current load."""
        return self.utilisation_after / self.planned_load

    @property
    def threshold(self) -> float:
        """The members' summed current load at which the guard fires (P × limit / U_after)."""
        return self.planned_load * self.limit / self.utilisation_after


def headroom_guards(analysis: Analysis) -> list[HeadroomGuard]:
    """Every guard of the run's capacity report, in the report's order (pools, pairs, HSS, takeovers)."""
    report = analysis.capacity
    limit = float(report.max_utilisation)
    guards: list[HeadroomGuard] = []
    for group in (*report.pools, *report.pairs):
        if not group.utilisation_after or group.load <= 0:
            continue
        worst = f"losing {', '.join(group.worst_loss)}" if group.worst_loss else f"the worst loss in {group.id}"
        guards.append(HeadroomGuard(
            f"{group.kind}:{group.id}", group.kind, "CAP-001" if group.kind == "pool" else "CAP-002",
            group.element_type, group.unit, tuple(group.members), float(group.load),
            float(group.utilisation_after), limit, worst, group.survivor or f"the survivors of {group.id}"))
    for hss in report.hss:
        if not hss.ratio or hss.subscribers <= 0:
            continue
        guards.append(HeadroomGuard(
            f"hss:{hss.id}", "hss", "CAP-003", "hss", "subscribers", tuple(hss.members), float(hss.subscribers),
            float(hss.ratio), limit, f"an S-CSCF failover ({hss.largest_scscf or 'the largest S-CSCF'})",
            " and ".join(hss.members)))
    normal = dict(zip(analysis.engine.ids, analysis.engine.normal, strict=True))
    for takeover in report.takeovers:
        takers = [(tid, util) for tid, _after, _cap, util in takeover.takers if util]
        if not takers or takeover.load <= 0:
            continue
        survivor, utilisation = max(takers, key=lambda t: (t[1], t[0]))
        members = (takeover.failed, *sorted(tid for tid, _ in takers))
        planned = float(takeover.load) + sum(float(normal.get(tid, 0.0)) for tid, _ in takers)
        guards.append(HeadroomGuard(
            f"takeover:{takeover.failed}", "takeover", "CAP-005", takeover.element_type, "users", members,
            planned, float(utilisation), limit, f"losing {takeover.failed}", survivor))
    return guards

