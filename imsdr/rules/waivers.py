"""Waiver hygiene: expired waivers and waivers that match nothing.

These rules run after every other rule (the engine applies the waivers in between and leaves
how often each waiver matched in ``ctx.cache[WAIVER_HITS]``); their own findings are never waived.
"""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc

WAIVER_HITS = "engine.waiver_hits"
WAIVER_REPORTED = "engine.reported_subjects"  # rule id → subjects of each finding still reported
WAIVER_RULES_ON = "engine.rules_on"  # ids of the rules that ran


def _scope(scope: list[str]) -> str:
    return f" for {', '.join(scope)}" if scope else ""


def check_expired(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for i, waiver in enumerate(ctx.topology.inventory.waivers):
        if waiver.expires < ctx.today:
            yield rule.finding(
                f"the waiver of {waiver.rule}{_scope(waiver.scope)} expired on {waiver.expires.isoformat()} "
                f"(reason was: {waiver.reason}); it no longer suppresses matching findings",
                subjects=(waiver.rule, *waiver.scope),
                location=ctx.locate_path("waivers", i, "expires"),
                hint="fix the finding, or renew the waiver with a new expiry date after review",
            )


def check_unused(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    hits: dict[int, int] | None = ctx.cache.get(WAIVER_HITS)
    if hits is None:
        return
    reported: dict[str, list[tuple[str, ...]]] = ctx.cache.get(WAIVER_REPORTED, {})
    rules_on: set[str] = ctx.cache.get(WAIVER_RULES_ON, set())
    for i, waiver in enumerate(ctx.topology.inventory.waivers):
        if waiver.expires >= ctx.today and not hits.get(i):
            message, hint = _why_unused(waiver.rule, waiver.scope, reported.get(waiver.rule, []),
                                        waiver.rule in rules_on)
            yield rule.finding(message, subjects=(waiver.rule, *waiver.scope),
                               location=ctx.locate_path("waivers", i), hint=hint)


def _why_unused(rule_id: str, scope: list[str], still: list[tuple[str, ...]], ran: bool) -> tuple[str, str]:
    """What is true of a waiver that matched nothing, and what to do (message, hint)."""
    head = f"the waiver of {rule_id}{_scope(scope)} matches no finding"
    if not ran:
        return (f"{head}: {rule_id} did not run (it is off, or applies to production networks only)",
                f"remove the waiver, or turn {rule_id} back on if the accepted risk still needs recording")
    if still:
        named = sorted({s for subjects in still for s in subjects})
        shown = ", ".join(named[:6]) + (", ..." if len(named) > 6 else "")
        count = f"{len(still)} finding{'s' if len(still) != 1 else ''}"
        return (f"{head}, but {rule_id} still reports {count}: its scope names none of their subjects ({shown})",
                "a waiver matches a finding when its scope names one of the finding's subjects: put the id the "
                "finding names in scope, or remove the waiver")
    return (f"{head}: {rule_id} reports nothing now, so the waiver can be removed",
            "remove the waiver so that a future regression is reported")


RULES: list[Rule] = [
    Rule(
        "WAIVER-001", Severity.WARNING,
        "A waiver has expired",
        make_doc(
            """
            Waivers record an accepted risk until a date. After `expires` the waiver no longer
            suppresses the findings it matched (they are reported again) and is itself
            reported, so the decision is reviewed. A waiver is valid up to and including its
            expiry date.
            """,
            """
            waivers:
              - {rule: HSS-002, scope: [hss-pool], reason: daily backup accepted, expires: 2020-01-31}
            """,
            """
            waivers:
              - {rule: HSS-002, scope: [hss-pool], reason: daily backup accepted, expires: 2099-01-31}
            """,
        ),
        check_expired,
    ),
    Rule(
        "WAIVER-002", Severity.INFO,
        "A waiver matches no finding",
        make_doc(
            """
            A waiver that suppresses nothing is stale: the design changed or the rule is off.
            Removing it makes sure a future regression is reported.
            """,
            """
            waivers:
              - {rule: GEO-001, scope: [hss-pair], reason: temporary, expires: 2099-01-31}  # no finding
            """,
            """
            waivers: []
            """,
        ),
        check_unused,
    ),
]
