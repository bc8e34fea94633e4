"""MGCF/IM-MGW: PSTN interworking load-shared across sites (domain.md §4.7)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import TYPE_NAMES, join


def check_one_site(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if len(ctx.topology.sites) < 2:
        return
    for type_ in ("mgcf", "imgw"):
        name = TYPE_NAMES[type_]
        els = ctx.topology.by_type.get(type_, [])
        sites = sorted({el.site for el in els})
        if len(sites) == 1:
            yield rule.finding(
                f"every {name} ({join([el.id for el in els])}) is at site {sites[0]}: losing {sites[0]} cuts "
                "all PSTN/CS interworking",
                subjects=(*(el.id for el in els), sites[0]),
                location=ctx.locate(els[-1].id, "site"),
                hint=f"load-share {name}s across at least two sites, with trunks dimensioned so the "
                     "surviving site carries the busy hour",
            )


RULES: list[Rule] = [
    Rule(
        "MGCF-001", Severity.ERROR,
        "All MGCFs (or all IM-MGWs) are in one site",
        make_doc(
            """
            MGCF/IM-MGW load-share across at least two sites, with trunk groups dimensioned so
            that the surviving site carries the busy-hour traffic (domain.md §4.7).
            """,
            """
            elements:
              - {id: mgcf-a-1, type: mgcf, site: site-a, ...}
              - {id: mgcf-b-1, type: mgcf, site: site-a, ...}
            """,
            """
            elements:
              - {id: mgcf-a-1, type: mgcf, site: site-a, ...}
              - {id: mgcf-b-1, type: mgcf, site: site-b, ...}
            """,
        ),
        check_one_site, production_only=True,
    ),
]
