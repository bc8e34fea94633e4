"""CAP rules: capacity shortfalls found by the capacity report.

Every CAP rule reads the report of the run's analysis (``ctx.analysis.capacity``): computed once,
the same one ``capacity`` and ``plan`` show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext
from imsdr.rules.capacity_fixes import (
    dimension_fix,
    hss_fix,
    pair_fix,
    pool_fix,
    site_fix,
    storm_fix,
    takeover_fix,
    trunk_fix,
)

if TYPE_CHECKING:
    from imsdr.capacity.report import CapacityReport


def shared_report(ctx: RuleContext) -> CapacityReport:
    """The capacity report of this run's analysis (computed on first use, shared by every CAP rule)."""
    return ctx.analysis.capacity


def _pools(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.pools:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.id, "members"),
                hint=pool_fix(check, limit),
            )


def _pairs(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.pairs:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.id, "members"),
                hint=pair_fix(check, limit),
            )


def _hss(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.hss:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.members),
                location=ctx.locate(check.members[0], "capacity"),
                hint=hss_fix(check, limit),
            )


def _trunks(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).trunks:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *(m.id for m in check.normal)),
                location=ctx.locate(check.id, "busy_hour_erlangs"),
                hint=trunk_fix(check),
            )


def _takeovers(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.takeovers:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.failed, *(t[0] for t in check.takers)),
                location=ctx.locate(check.failed, "capacity"),
                hint=takeover_fix(check, limit),
            )


def _sites(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.sites:
        if check.verdict == "fail":
            yield rule.finding(
                f"{check.element_type}: {check.message}",
                subjects=(check.site,),
                location=ctx.locate(check.site),
                hint=site_fix(check, limit),
            )


def _risks(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    path = {"region": "region", "power": "power", "route": "transmission"}
    for check in shared_report(ctx).risks:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id, *check.sites),
                location=ctx.locate(check.sites[-1], path[check.kind]),
                hint=f"`imsdr simulate --fail {check.kind}:{check.id}` shows what is lost; place "
                "the missing functions (and capacity) in sites that do not depend on it",
            )


def _storms(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for check in shared_report(ctx).storms:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.scenario.split(":", 1)[1], *check.overloaded),
                location=ctx.locate(check.overloaded[0], "capacity"),
                hint=storm_fix(check),
            )


def _unlimited(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    worst: dict[str, tuple[str, str]] = {}  # element → (first scenario, its storm formula)
    for check in shared_report(ctx).storms:
        for el_id in check.unlimited:
            worst.setdefault(el_id, (check.scenario, check.message))
    for el_id, (scenario, message) in sorted(worst.items()):
        yield rule.finding(
            f"{el_id}: the registration storm's peak exceeds its capacity ({scenario} lost) and it has no "
            f"registration rate limit: {message}",
            subjects=(el_id,),
            location=ctx.locate(el_id, "capacity"),
            hint=f"give {el_id} a registration_limit {{rate: R, retry_after: S}} (503 with Retry-After above R "
                 "registrations/s) so the surge is spread instead of overloading it and the core behind it",
        )


def _dimensions(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    report = shared_report(ctx)
    limit = report.max_utilisation
    for check in report.dimensions:
        if check.verdict == "fail":
            yield rule.finding(
                check.message,
                subjects=(check.id,),
                location=ctx.locate(check.id, "capacity", check.dimension),
                hint=dimension_fix(check, limit),
            )


def _missing(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for el_id, el_type, fields in shared_report(ctx).missing:
        wanted = " or ".join(fields)
        yield rule.finding(
            f"{el_id} ({el_type}) carries traffic but gives no capacity.{wanted}: that dimension "
            "cannot be checked",
            subjects=(el_id,),
            location=ctx.locate(el_id, "capacity"),
            hint=f"set capacity: {{{fields[0]}: ...}} (docs/capacity.md lists what each type needs)",
        )


def _unchecked(rule: Rule, ctx: RuleContext) -> Iterable[Finding]:
    for el_id, el_type, name in shared_report(ctx).unchecked:
        yield rule.finding(
            f"{el_id} ({el_type}) gives capacity.{name}, which no check of a {el_type} reads: "
            "it is neither sized nor used",
            subjects=(el_id,),
            location=ctx.locate(el_id, "capacity", name),
            hint="remove it, or give the capacity a check of this type reads (docs/capacity.md)",
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
    Rule(
        "CAP-009",
        Severity.ERROR,
        "Losing a service region, power feed or transmission route loses traffic",
        "Every site depending on a shared risk fails with it. Production runs two service regions, each "
        "carrying 100% alone (domain.md §5), so losing one region must lose no user and leave every "
        "survivor within max_utilisation; the same holds for a power feed or transmission route.\n"
        "Passes: SLF, AS and every core type in both regions. "
        "Fails: SLF and AS only in region north (losing north loses every user).",
        _risks,
    ),
    Rule(
        "CAP-010",
        Severity.ERROR,
        "The registration storm of a site or region loss overloads an element",
        "Users of a lost SBC/P-CSCF register again through the survivors: the immediate share of their "
        "local network's arrival profile in its first seconds, the rest over the refresh interval; 2 "
        "REGISTER transactions (IMS AKA) at each SIP hop and 4 Cx transactions (2 UAR, MAR, SAR) at the "
        "HSS per user, on top of the background (refreshes, LIR), against the REGISTER/s capacity (2 × "
        "registrations_per_second unless register_transactions_per_second is given) and "
        "transactions_per_second × max_utilisation, at the peak.\n"
        "Passes: 1,800,000 users, none at once, over 1,800 s → HSS 5,417 Diameter/s of 12,000. "
        "Fails: 30% of them within 60 s → 46,250 Diameter/s.",
        _storms,
    ),
    Rule(
        "CAP-014",
        Severity.WARNING,
        "A storm peak above an SBC's or P-CSCF's capacity without a registration rate limit",
        "An SBC or P-CSCF that takes more initial registrations than it can process degrades for every "
        "user (and passes the surge to the S-CSCF and HSS); a registration rate limit answering 503 with "
        "Retry-After above it (registration_limit) spreads the surge: the storm shows the time until "
        "everyone is registered again.\n"
        "Passes: registration_limit {rate: 1000, retry_after: 30} on an SBC whose storm peak is 6,467 "
        "registrations/s. Fails: the same SBC without a limit.",
        _unlimited,
    ),
    Rule(
        "CAP-011",
        Severity.ERROR,
        "Sessions or DNS queries short of the traffic an element carries",
        "Sessions (SBC, P-CSCF, CSCF, AS) must hold the busy-hour Erlangs of the users they carry, and "
        "ENUM/DNS servers the queries of the query model, normally and after each site or region loss, "
        "within max_utilisation.\n"
        "Passes: AS of 80,000 sessions for 60,000 E (75%). Fails: AS of 5,000 sessions for 60,000 E.",
        _dimensions,
    ),
    Rule(
        "CAP-012",
        Severity.WARNING,
        "A capacity dimension the element type needs is not given",
        "Each type is sized in every dimension it has: SBC/CSCF users, sessions and registrations/s; "
        "P-CSCF users and registrations/s; HSS/SLF subscribers and transactions/s; MGCF/IM-MGW "
        "circuits; AS sessions; ENUM/DNS queries/s.\n"
        "Passes: {registered_users: 2000000, sessions: 60000, registrations_per_second: 3000}. "
        "Fails: an S-CSCF with registered_users only.",
        _missing,
    ),
    Rule(
        "CAP-013",
        Severity.WARNING,
        "A capacity is given that no check of the element type reads",
        "A number in the inventory that nothing checks gives false comfort (e.g. sessions on an HSS, "
        "circuits on an SBC).\n"
        "Passes: capacity fields of the type only. Fails: an HSS with sessions: 10000.",
        _unchecked,
    ),
]
