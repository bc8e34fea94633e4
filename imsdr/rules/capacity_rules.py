"""CAP rules: capacity shortfalls found by the capacity report.

Every CAP rule reads the report of the run's analysis (``ctx.analysis.capacity``): computed once,
the same one ``capacity`` and ``plan`` show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from imsdr.capacity.report import CapacityReport


def shared_report(ctx: RuleContext) -> CapacityReport:
    """The capacity report of this run's analysis (computed on first use, shared by every CAP rule)."""
    return ctx.analysis.capacity


def _pools(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).pools:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.id, "members"),
                hint="add members or capacity: " + "; ".join(check.formula),
            )


def _pairs(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).pairs:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.id, "members"),
                hint="each side of a 1+1 pair must carry 100% of the load alone: " + "; ".join(check.formula),
            )


def _hss(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).hss:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.members[0], "capacity"),
                hint=" ".join(check.formula),
            )


def _trunks(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).trunks:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *(m.id for m in check.normal)),
                location=ctx.locate(check.id, "busy_hour_erlangs"),
                hint="; ".join(check.formula),
            )


def _takeovers(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).takeovers:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.failed, *(t[0] for t in check.takers)),
                location=ctx.locate(check.failed, "capacity"),
                hint="; ".join(check.formula),
            )


def _sites(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).sites:
        if check.verdict == "fail":
            yield rule.finding(
                f"{check.element_type}: {check.message}",
                subjects=(check.site,),
                location=ctx.locate(check.site),
                hint=check.formula,
            )


def _overloaded(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for issue in shared_report(ctx).elements:
        if issue.kind == "overloaded":
            yield rule.finding(issue.message, subjects=(issue.id,), location=ctx.locate(issue.id, "capacity"))


def _no_capacity(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for issue in shared_report(ctx).elements:
        if issue.kind == "no_capacity":
            yield rule.finding(
                issue.message,
                subjects=(issue.id,),
                location=ctx.locate(issue.id),
                hint="set capacity (registered_users, subscribers or circuits) for its type",
            )


RULES: list[Rule] = [
    Rule(
        "CAP-001",
        Severity.ERROR,
        "N+K pool cannot carry its load after losing K members",
        "A pool of N members each carrying share s survives K losses only if each keeps s·K/(N−K) spare "
        "(A/(N−1) for N+1, domain.md §4.5); unequal members must survive the loss of the K largest.\n"
        "Passes: 3 S-CSCFs of 2,000k for 3,300k (1,100k each, 550k spare needed, 900k headroom).\n"
        "Fails: 2 S-CSCFs of 2,000k for 3,300k (after one loss 3,300k on 2,000k).",
        _pools,
    ),
    Rule(
        "CAP-002",
        Severity.ERROR,
        "1+1 pair side cannot carry 100% of the pair's load",
        "Active-active regions and 1+1 pairs must each carry all the traffic alone (domain.md §5).\n"
        "Passes: HSS pair 5,000k/5,000k for 3,240k. Fails: P-CSCF pair 1,000k/1,000k for 1,500k.",
        _pairs,
    ),
    Rule(
        "CAP-003",
        Severity.ERROR,
        "HSS too small for restoration data plus an S-CSCF failover",
        "Required = subscribers × (1 + restoration overhead) + users of the largest S-CSCF × (failover "
        "cost − 1); domain.md §4.6's example 1,000k/500k needs 148% of 1,000k.\n"
        "Passes: 3,000k subscribers, largest S-CSCF 2,000k, HSS 5,000k (96.8%). Fails: HSS 4,000k (121%).",
        _hss,
    ),
    Rule(
        "CAP-004",
        Severity.ERROR,
        "Trunk circuits short for the busy hour (Erlang B)",
        "MGCF/IM-MGW trunk groups must carry the busy-hour Erlangs at the grade of service, normally and "
        "after losing a site (ITU-T E.520, 1%).\n"
        "Passes: 1,800 E on 2 × 2,000 circuits (1,829 needed after a site loss). Fails: 2 × 1,000.",
        _trunks,
    ),
    Rule(
        "CAP-005",
        Severity.ERROR,
        "DR SBC or next P-CSCF cannot absorb a failed element's users",
        "The DR SBC of the ring/hub, or the next P-CSCF in the SBC's list, takes every user of the failed "
        "one on top of its own.\n"
        "Passes: sbc-hill 400k moving to sbc-harbour (600k of 1,000k). Fails: sbc-harbour of 800k.",
        _takeovers,
    ),
    Rule(
        "CAP-006",
        Severity.ERROR,
        "Losing one site leaves an element type short of capacity",
        "For each single site lost, the survivors of each element type must carry the load (domain.md §1: "
        "losing one site must not take service down).\n"
        "Passes: every type spread over sites with spare. Fails: every HSS at one site.",
        _sites,
    ),
    Rule(
        "CAP-007",
        Severity.ERROR,
        "Element overloaded in normal operation",
        "An element's normal load must stay within capacity × max_utilisation.\n"
        "Passes: SBC of 2,000k serving 1,200k. Fails: SBC of 1,000k serving 1,200k.",
        _overloaded,
    ),
    Rule(
        "CAP-008",
        Severity.WARNING,
        "Element carries load but has no capacity to size it",
        "Without a capacity in the unit of its type (registered_users, subscribers, circuits) the element "
        "cannot be sized.\nPasses: capacity: {registered_users: 2000000}. "
        "Fails: no capacity on a loaded SBC.",
        _no_capacity,
    ),
]
