"""SBC access and cross-local-network DR (domain.md §4.2)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import Feature
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import join


def check_no_sbc(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for ln_id in ctx.topology.local_networks:
        if not ctx.topology.sbcs_of_ln.get(ln_id):
            yield rule.finding(
                f"local network {ln_id} has no SBC: no element lists it under 'serves', so its users "
                "have nowhere to register",
                subjects=(ln_id,),
                location=ctx.locate(ln_id),
                hint=f"add {ln_id} to the 'serves' list of the SBC(s) of that local network",
            )


def _layout(ctx: RuleContext) -> str:
    dr = ctx.topology.inventory.redundancy.sbc_dr
    return "none" if dr is None else dr.layout


def check_single_sbc_no_dr(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if _layout(ctx) != "none":
        return  # ring and hub problems are SBC-003 / SBC-004
    for ln_id in ctx.topology.local_networks:
        sbcs = ctx.topology.sbcs_of_ln.get(ln_id, [])
        if len(sbcs) == 1:
            yield rule.finding(
                f"local network {ln_id} has a single SBC ({sbcs[0].id}) and no cross-local-network DR: "
                f"when {sbcs[0].id} fails its users cannot register",
                subjects=(ln_id, sbcs[0].id),
                location=ctx.locate(ln_id),
                hint="add a second SBC for the local network, or set redundancy.sbc_dr (ring or hub) so "
                     "that public DNS gives its users a DR SBC of another local network",
            )


def check_ring(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    dr = ctx.topology.inventory.redundancy.sbc_dr
    if dr is None or dr.layout != "ring":
        return
    topo = ctx.topology
    order = dr.order
    seen: dict[str, int] = {}
    for i, ln_id in enumerate(order):
        if ln_id in seen:
            yield rule.finding(
                f"the SBC DR ring lists local network {ln_id} twice "
                f"(positions {seen[ln_id] + 1} and {i + 1}); "
                "a ring lists each local network once and closes itself (the last backs up the first)",
                subjects=(ln_id,),
                location=ctx.locate_path("redundancy", "sbc_dr", "order", i),
                hint=f"remove the second {ln_id} from redundancy.sbc_dr.order",
            )
        seen.setdefault(ln_id, i)
    n = len(order)
    for i, ln_id in enumerate(order):
        if not topo.sbcs_of_ln.get(ln_id) and n > 1:
            nxt = order[(i + 1) % n]
            yield rule.finding(
                f"the SBC DR ring is broken at {ln_id}: it has no SBC, so {nxt} (next in the ring) gets no "
                "DR SBC",
                subjects=(ln_id, nxt),
                location=ctx.locate_path("redundancy", "sbc_dr", "order", i),
                hint=f"give {ln_id} an SBC or take it out of the ring",
            )
    in_ring = set(order)
    for ln_id in topo.local_networks:
        sbcs = topo.sbcs_of_ln.get(ln_id, [])
        if ln_id not in in_ring and len(sbcs) == 1:
            yield rule.finding(
                f"the SBC DR ring skips local network {ln_id}: its single SBC {sbcs[0].id} has no DR SBC "
                "and does not back up anyone",
                subjects=(ln_id, sbcs[0].id),
                location=ctx.locate_path("redundancy", "sbc_dr", "order"),
                hint=f"insert {ln_id} into redundancy.sbc_dr.order, next to a local network at another site",
            )


def check_hub(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    dr = ctx.topology.inventory.redundancy.sbc_dr
    if dr is None or dr.layout != "hub" or dr.hub not in ctx.topology.elements:
        return
    hub = ctx.topology.elements[dr.hub]
    if not hub.serves:
        yield rule.finding(
            f"hub SBC {hub.id} serves no local network of its own",
            subjects=(hub.id,),
            location=ctx.locate(hub.id),
            hint="a hub is the SBC of one local network (e.g. the capital's) that also backs up the others",
        )
    for ln_id in hub.serves:
        sbcs = ctx.topology.sbcs_of_ln.get(ln_id, [])
        if len(sbcs) == 1:
            yield rule.finding(
                f"the hub {hub.id} backs up every other local network but not its own {ln_id}, whose "
                f"only SBC is the hub itself: when {hub.id} fails, {ln_id} has no DR SBC",
                subjects=(hub.id, ln_id),
                location=ctx.locate_path("redundancy", "sbc_dr", "hub"),
                hint=f"add a second SBC for {ln_id} (ideally at another site)",
            )


def check_virtual_sbc(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    backed: dict[str, list[str]] = {}
    sbcs = {}
    for ln_id, sbc in ctx.topology.dr_sbc.items():
        backed.setdefault(sbc.id, []).append(ln_id)
        sbcs[sbc.id] = sbc
    for sbc_id, lns in backed.items():
        if not sbcs[sbc_id].has(Feature.VIRTUAL_SBC):
            yield rule.finding(
                f"{sbc_id} is the DR SBC of {join(lns)} but lacks virtual SBC support: it cannot present "
                "each local network's own P-Access-Network-Info and phone-context, which charging and "
                "emergency calls need",
                subjects=(sbc_id, *lns),
                location=ctx.locate(sbc_id, "features"),
                hint=f"add virtual_sbc to the features of {sbc_id} (and configure one virtual SBC per "
                     "local network it backs up)",
            )


def check_dr_same_site(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    for ln_id, dr_sbc in topo.dr_sbc.items():
        local = topo.sbcs_of_ln.get(ln_id, [])
        if local and all(sbc.site == dr_sbc.site for sbc in local):
            yield rule.finding(
                f"the DR SBC of {ln_id} ({dr_sbc.id}) is at site {dr_sbc.site}, the same site as its "
                f"primary SBC(s) {join([s.id for s in local])}: a site failure takes both",
                subjects=(ln_id, dr_sbc.id, *(s.id for s in local), dr_sbc.site),
                location=ctx.locate(dr_sbc.id, "site"),
                hint="reorder the ring (or choose another hub) so that each local network is backed up "
                     "by an SBC at another site",
            )


def check_pcscf_sites(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    all_pcscfs = topo.by_type.get("pcscf", [])
    all_sites = sorted({p.site for p in all_pcscfs})
    for sbc in topo.by_type.get("sbc", []):
        if sbc.pcscfs:
            sites = sorted({topo.elements[p].site for p in sbc.pcscfs if p in topo.elements})
            where: tuple[str, ...] = ("pcscfs",)
            listed = f"its P-CSCF list ({join(sbc.pcscfs)})"
        else:
            sites = all_sites
            where = ()
            listed = "the P-CSCFs it may use (no list: all)"
        if len(sites) == 1:
            yield rule.finding(
                f"{sbc.id}: {listed} has P-CSCFs only at site {sites[0]}: when {sites[0]} fails the SBC "
                "has no P-CSCF to send to",
                subjects=(sbc.id, *(sbc.pcscfs or [p.id for p in all_pcscfs]), sites[0]),
                location=ctx.locate(sbc.id, *where),
                hint=f"add a P-CSCF at another site to the pcscfs list of {sbc.id}",
            )


RULES: list[Rule] = [
    Rule(
        "SBC-001", Severity.ERROR,
        "A local network has no SBC",
        make_doc(
            """
            A local network's users reach the SBC(s) of that local network, found through public
            DNS (domain.md §1, §4.2). A local network no SBC `serves` cannot register at all.
            """,
            """
            local_networks:
              - {id: lake, ...}
            elements:
              - {id: sbc-lake, type: sbc, serves: [], ...}
            """,
            """
            elements:
              - {id: sbc-lake, type: sbc, serves: [lake], ...}
            """,
        ),
        check_no_sbc,
    ),
    Rule(
        "SBC-002", Severity.ERROR,
        "A local network has a single SBC and no cross-local-network DR",
        make_doc(
            """
            When a local network has one SBC, public DNS must give its users a DR SBC of another
            local network second, in a ring or hub layout (domain.md §4.2). Without
            `redundancy.sbc_dr` the users of that local network cannot register when the SBC fails.
            """,
            """
            elements:
              - {id: sbc-hill, type: sbc, serves: [hill], ...}   # the only SBC of hill
            redundancy: {}                                      # no sbc_dr
            """,
            """
            redundancy:
              sbc_dr: {layout: ring, order: [capital, harbour, hill, river, lake, coast]}
            """,
        ),
        check_single_sbc_no_dr, production_only=True,
    ),
    Rule(
        "SBC-003", Severity.ERROR,
        "The SBC DR ring is not closed or skips a local network",
        make_doc(
            """
            In a ring each local network is backed up by the previous one and the first by the
            last (domain.md §4.2). A local network with a single SBC missing from `order`, a local
            network without SBC inside the ring, or one listed twice leaves users without a DR SBC.
            """,
            """
            redundancy:
              sbc_dr: {layout: ring, order: [capital, harbour, river, lake, coast]}   # hill skipped
            """,
            """
            redundancy:
              sbc_dr: {layout: ring, order: [capital, harbour, hill, river, lake, coast]}
            """,
        ),
        check_ring,
    ),
    Rule(
        "SBC-004", Severity.ERROR,
        "The SBC DR hub does not cover every local network",
        make_doc(
            """
            In a hub layout one designated SBC (e.g. the capital's) backs up every other local
            network (domain.md §4.2). The hub cannot back up itself: its own local network needs a
            second SBC, or it is left without DR.
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, serves: [capital], ...}   # the only capital SBC
            redundancy:
              sbc_dr: {layout: hub, hub: sbc-capital}
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, serves: [capital], ...}
              - {id: sbc-capital-2, type: sbc, site: site-b, serves: [capital], ...}
            redundancy:
              sbc_dr: {layout: hub, hub: sbc-capital}
            """,
        ),
        check_hub,
    ),
    Rule(
        "SBC-005", Severity.ERROR,
        "A DR SBC lacks virtual SBC support",
        make_doc(
            """
            Cross-local-network DR needs virtual SBC support on the backup SBC: per virtual SBC
            its own P-Access-Network-Info and phone-context, for charging and emergency calls
            (domain.md §4.2).
            """,
            """
            elements:
              - {id: sbc-coast, type: sbc, serves: [coast], features: []}   # backs up capital
            """,
            """
            elements:
              - {id: sbc-coast, type: sbc, serves: [coast], features: [virtual_sbc]}
            """,
        ),
        check_virtual_sbc,
    ),
    Rule(
        "SBC-006", Severity.ERROR,
        "A DR SBC sits in the same site as the primary SBC it backs up",
        make_doc(
            """
            A DR SBC must survive the failure that takes the primary down; in the same site it
            fails with it (domain.md §1).
            """,
            """
            elements:
              - {id: sbc-capital, site: site-a, serves: [capital], ...}
              - {id: sbc-coast, site: site-a, serves: [coast], ...}   # backs up capital
            redundancy:
              sbc_dr: {layout: ring, order: [capital, harbour, hill, river, lake, coast]}
            """,
            """
            elements:
              - {id: sbc-coast, site: site-c, serves: [coast], ...}
            """,
        ),
        check_dr_same_site,
    ),
    Rule(
        "SBC-007", Severity.ERROR,
        "An SBC's P-CSCF list has no P-CSCF at another site",
        make_doc(
            """
            The SBC picks the next P-CSCF from its list when one does not answer (domain.md §4.2
            P-CSCF). If every P-CSCF it may use is at one site, losing that site leaves the SBC
            with nothing to send to. Without a `pcscfs` list the SBC may use every P-CSCF.
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, pcscfs: [pcscf-b-1, pcscf-b-2], ...}   # both at site-b
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, pcscfs: [pcscf-a-1, pcscf-b-1], ...}
            """,
        ),
        check_pcscf_sites, production_only=True,
    ),
]
