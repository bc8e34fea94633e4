"""I/S/E-CSCF/BGCF: pools, restoration data, entry points (domain.md §4.4)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import CscfRole, Feature
from imsdr.model.topology import Group
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import elements_with_role, fmt_duration, join


def _scscf_pools(ctx: RuleContext) -> list[Group]:
    def build() -> list[Group]:
        out = []
        elements = ctx.topology.elements
        for group in ctx.topology.groups.values():
            role = getattr(group.spec, "role", None)
            if role is CscfRole.SCSCF or (
                role is None and group.members
                and all(m in elements and elements[m].has_role(CscfRole.SCSCF) for m in group.members)
            ):
                out.append(group)
        return out

    return ctx.cached("cscf.scscf_pools", build)


def check_restoration(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    from imsdr.capacity.timing import refresh_interval

    refresh = refresh_interval(ctx.topology).seconds
    elements = ctx.topology.elements
    for group in _scscf_pools(ctx):
        for member in group.members:
            el = elements.get(member)
            if el is None or el.has(Feature.RESTORATION_DATA):
                continue
            yield rule.finding(
                f"S-CSCF {el.id} (pool {group.id}) has no dynamic restoration data: when it fails, "
                "terminating calls to its registered users fail until they re-register — up to the "
                f"registration refresh period, {fmt_duration(refresh)} — and there is no failback",
                subjects=(el.id, group.id),
                location=ctx.locate(el.id, "features"),
                hint=f"add restoration_data to the features of {el.id} (the S-CSCF stores restoration "
                     "info in the HSS at registration; costs about +4-10% CSCF and +4-8% HSS load)",
            )


def check_icscf_sites(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    icscfs = elements_with_role(ctx, "icscf")
    if len(ctx.topology.sites) < 2 or not icscfs:
        return
    sites = sorted({el.site for el in icscfs})
    if len(sites) == 1:
        yield rule.finding(
            f"every I-CSCF entry point ({join([el.id for el in icscfs])}) is at site {sites[0]}: losing "
            f"{sites[0]} makes the home domain unreachable for registrations and terminating calls",
            subjects=(*(el.id for el in icscfs), sites[0]),
            location=ctx.locate(icscfs[-1].id, "site"),
            hint="put an I-CSCF (or a combined CSCF with the icscf role) at another site and publish it "
                 "in the home domain's DNS records",
        )


def check_no_entry(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    cscfs = ctx.topology.by_type.get("cscf", [])
    if not cscfs and not ctx.topology.by_type.get("pcscf"):
        return
    for role, what in (("icscf", "I-CSCF (home-domain entry point)"), ("scscf", "S-CSCF (registrar)")):
        if not elements_with_role(ctx, role):
            yield rule.finding(
                f"no element has the {role} role: the network has no {what}",
                subjects=tuple(el.id for el in cscfs),
                location=ctx.locate(cscfs[0].id, "roles") if cscfs else ctx.locate_path("elements"),
                hint=f"add the {role} role to the CSCF elements that perform it",
            )


def check_selection(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for group in _scscf_pools(ctx):
        selection = getattr(group.spec, "selection", None)
        if group.kind == "pool" and selection in ("fixed", "static", "weighted"):
            yield rule.finding(
                f"S-CSCF pool {group.id} uses selection '{selection}': users stay bound to one S-CSCF "
                "and the I-CSCF cannot move them to a surviving member by itself",
                subjects=(group.id,),
                location=ctx.locate(group.id, "selection"),
                hint="use selection: capabilities (HSS-returned capabilities) or dns (a common S-CSCF "
                     "name resolved by DNS)",
            )


RULES: list[Rule] = [
    Rule(
        "CSCF-001", Severity.WARNING,
        "An S-CSCF pool member has no dynamic restoration data",
        make_doc(
            """
            Without dynamic restoration data, users registered on a failed S-CSCF move only when
            they re-register (up to the registration refresh period); terminating calls to them
            fail meanwhile, and there is no failback (domain.md §4.4). With restoration data
            (SAR Restoration-Info, TS 29.228 / TS 23.380) a backup S-CSCF serves them at once.
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [icscf, scscf], features: [], ...}
            redundancy:
              pools:
                - {id: cscf-pool, members: [cscf-a-1, cscf-b-1, cscf-c-1], role: scscf}
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [icscf, scscf], features: [restoration_data], ...}
            """,
        ),
        check_restoration,
    ),
    Rule(
        "CSCF-002", Severity.ERROR,
        "All I-CSCF entry points are in one site",
        make_doc(
            """
            The P-CSCF (or originating S-CSCF) finds the home network's I-CSCF by DNS
            (domain.md §4.4). If every I-CSCF sits in one site, losing it makes the home domain
            unreachable.
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [icscf, scscf], site: site-a, ...}
              - {id: cscf-b-1, type: cscf, roles: [scscf], site: site-b, ...}
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [icscf, scscf], site: site-a, ...}
              - {id: cscf-b-1, type: cscf, roles: [icscf, scscf], site: site-b, ...}
            """,
        ),
        check_icscf_sites, production_only=True,
    ),
    Rule(
        "CSCF-003", Severity.WARNING,
        "An S-CSCF pool binds users to fixed S-CSCFs",
        make_doc(
            """
            The I-CSCF should select the S-CSCF by the capabilities the HSS returns, or by a
            common S-CSCF name resolved by DNS; a fixed S-CSCF per user is not recommended
            (domain.md §4.4).
            """,
            """
            pools:
              - {id: cscf-pool, members: [cscf-a-1, cscf-b-1], role: scscf, selection: fixed}
            """,
            """
            pools:
              - {id: cscf-pool, members: [cscf-a-1, cscf-b-1], role: scscf, selection: capabilities}
            """,
        ),
        check_selection,
    ),
    Rule(
        "CSCF-004", Severity.ERROR,
        "No element has the I-CSCF or S-CSCF role",
        make_doc(
            """
            An IMS core needs an I-CSCF entry point and an S-CSCF registrar (domain.md §1);
            combined CSCFs must list the roles they perform.
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [ecscf, bgcf], ...}
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, roles: [icscf, scscf, ecscf, bgcf], ...}
            """,
        ),
        check_no_entry,
    ),
]
