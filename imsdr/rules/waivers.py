"""Waiver hygiene: expired waivers and waivers that match nothing.

These rules run after every other rule (the engine applies the waivers in between and leaves
how often each waiver matched in ``ctx.cache[WAIVER_HITS]``); their own findings are never waived.
"""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc

WAIVER_HITS = "engine.waiver_hits"


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
    for i, waiver in enumerate(ctx.topology.inventory.waivers):
        if waiver.expires >= ctx.today and not hits.get(i):
            yield rule.finding(
                f"the waiver of {waiver.rule}{_scope(waiver.scope)} matches no finding: the problem is gone "
                "(or the rule is off), so the waiver can be removed",
                subjects=(waiver.rule, *waiver.scope),
                location=ctx.locate_path("waivers", i),
                hint="remove the waiver so that a future regression is reported",
            )


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
