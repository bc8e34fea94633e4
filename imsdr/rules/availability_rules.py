"""AVAIL rules: services below their availability target.

AVAIL-001 reads the availability report of the run's analysis (``ctx.analysis.availability``),
the one ``imsdr availability`` and the plan's availability runbook show. Without any
``network.availability_targets`` it computes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc


def _below_target(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    if not ctx.topology.network.availability_targets:
        return
    from imsdr.availability.services import SERVICE_LABELS, minutes, percent

    for row in ctx.analysis.availability.services:
        if not row.below_target:
            continue
        top = row.contributors[:3]
        named = "; ".join(f"{c.label if c.kind == 'outage' else 'switchover ' + c.label} {minutes(c.minutes)} min/yr"
                          for c in top)
        allowed = (100 - (row.target or 0)) / 100 * 525960
        yield rule.finding(
            f"{SERVICE_LABELS[row.service]} of {row.local_network} ({row.access} access) is "
            f"{percent(row.availability)} "
            f"({minutes(row.downtime_minutes)} min/yr), below its target {row.target:g} % "
            f"({minutes(allowed)} min/yr); largest contributors: {named}",
            subjects=(row.local_network, *(ev.split(":", 1)[1] for c in top for ev in c.label.split(" + "))),
            location=ctx.locate_path("network", "availability_targets", row.service),
            hint="fix the largest contributors first (imsdr availability: what to fix first), "
                 "or give field MTBF/MTTR under 'availability'",
        )


RULES: list[Rule] = [
    Rule(
        "AVAIL-001",
        Severity.ERROR,
        "A service is below its availability target",
        make_doc(
            """
            Regulators and SLAs ask for the availability of each service (domain.md §9): each
            service of each local network (registration, originating and terminating call, PSTN
            breakout and ingress, emergency call) must reach network.availability_targets, counting
            the outage while a minimal cut set is in effect plus the switchover time every failure
            costs the users it moves (docs/availability.md).
            """,
            """
            network:
              availability_targets: {terminating: 99.999}   # 5.3 min/yr; the SBC and P-CSCF
              timers: {registration_refresh: 1800}          # switchovers alone cost ~23 min/yr
            """,
            """
            network:
              availability_targets: {terminating: 99.99}    # 52.6 min/yr allowed
            """,
        ),
        _below_target,
    ),
]
