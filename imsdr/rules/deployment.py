"""Regions and deployment shape (domain.md §5)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import TYPE_NAMES, join

REGION_CORE_TYPES = ("enum_dns", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw", "as")


def check_regions(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    regions = sorted({s.region for s in ctx.topology.sites.values()})
    if len(regions) < 2:
        yield rule.finding(
            f"production deployment with {len(regions)} service region ({join(regions)}): "
            "production runs two active-active regions, each able to carry 100% of the traffic",
            subjects=tuple(regions),
            location=ctx.locate_path("network", "deployment"),
            hint="home the sites on two service regions, or set network.deployment: lab for a lab",
        )


def check_region_coverage(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    regions = sorted({s.region for s in topo.sites.values()})
    if len(regions) < 2:
        return
    for type_ in REGION_CORE_TYPES:
        els = topo.by_type.get(type_, [])
        if not els:
            continue
        present = {topo.sites[el.site].region for el in els if el.site in topo.sites}
        missing = [r for r in regions if r not in present]
        if missing:
            yield rule.finding(
                f"every {TYPE_NAMES[type_]} ({join([el.id for el in els])}) is in region(s) "
                f"{join(sorted(present))}; "
                f"region(s) {join(missing)} cannot carry the traffic alone when the other region fails",
                subjects=(*(el.id for el in els), *missing),
                location=ctx.locate(els[-1].id, "site"),
                hint=f"place a {TYPE_NAMES[type_]} at a site of region {missing[0]}",
            )


RULES: list[Rule] = [
    Rule(
        "DEP-001", Severity.ERROR,
        "A production deployment has fewer than two service regions",
        make_doc(
            """
            Production runs two service regions, active-active, each carrying 100% of the
            traffic alone; only a lab deployment has a single region (domain.md §5).
            """,
            """
            network: {deployment: production, ...}
            sites:
              - {id: site-a, region: north, ...}
              - {id: site-b, region: north, ...}
            """,
            """
            sites:
              - {id: site-a, region: north, ...}
              - {id: site-b, region: south, ...}
            """,
        ),
        check_regions, production_only=True,
    ),
    Rule(
        "DEP-002", Severity.ERROR,
        "A core element type is missing from a service region",
        make_doc(
            """
            Each active-active region must be able to carry 100% of the traffic alone
            (domain.md §5), so every core function (ENUM/DNS, P-CSCF, CSCF, HSS, SLF, MGCF,
            IM-MGW, AS) needs at least one element in every region: without it, losing the other
            region loses every user (`imsdr simulate --fail region:ID` shows it; CAP-009 sizes it).
            """,
            """
            sites:
              - {id: site-a, region: north, ...}
              - {id: site-b, region: south, ...}
              - {id: site-c, region: north, ...}
            elements:
              - {id: slf-a-1, type: slf, site: site-a, ...}
              - {id: slf-c-1, type: slf, site: site-c, ...}   # no SLF in region south
            """,
            """
            elements:
              - {id: slf-a-1, type: slf, site: site-a, ...}
              - {id: slf-b-1, type: slf, site: site-b, ...}
            """,
        ),
        check_region_coverage, production_only=True,
    ),
]
