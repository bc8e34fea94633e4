"""IMS restoration (TS 23.380), PS access, Diameter detection, emergency data and H.248 control.

Where the seed study (2010) and the later standards differ, imsdr models the standard and keeps
the study's variant as an option (docs/restoration.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.capacity.timing import diameter_detection
from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import Feature
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import join

PS_EXPIRY_MIN, PS_EXPIRY_MAX = 3600, 600000
DIAMETER_CLIENT_TYPES = ("cscf", "as")


def _ps_networks(ctx: RuleContext) -> list[str]:
    return [ln.id for ln in ctx.topology.inventory.local_networks if ln.access in ("ps", "both")]


def check_ps_without_restoration(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    ps = _ps_networks(ctx)
    if not ps or ctx.topology.network.restoration.pcscf_restoration != "none":
        return
    expiry = ctx.topology.network.timers.ps_registration_expiry
    yield rule.finding(
        f"PS local network(s) {join(ps)} have no P-CSCF restoration: after an SBC/P-CSCF failure VoLTE "
        f"UEs keep the dead P-CSCF until their registration expires (up to {expiry} s), and terminating "
        "calls to them fail all that time",
        subjects=tuple(ps),
        location=ctx.locate_path("network", "restoration", "pcscf_restoration"),
        hint="set network.restoration.pcscf_restoration: hss (TS 23.380 §5.4: the HSS has the MME/SGSN "
             "re-establish the IMS PDN connection with a new P-CSCF list) or pcrf (§5.5), once the HSS, "
             "MME and P-GW support it; do not shorten the registration expiry instead",
    )


def check_ps_gateway(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for ln in ctx.topology.inventory.local_networks:
        if ln.access in ("ps", "both") and ln.packet_gateway is None:
            yield rule.finding(
                f"PS local network {ln.id} names no P-GW/SMF: the P-CSCF list its UEs receive (PCO) "
                "cannot be rendered or checked against the SBC DR order",
                subjects=(ln.id,),
                location=ctx.locate(ln.id, "access"),
                hint=f"add packet_gateway: {{id: <P-GW id>, kind: pgw|smf}} to local network {ln.id}",
            )


def check_ps_expiry(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if not _ps_networks(ctx):
        return
    expiry = ctx.topology.network.timers.ps_registration_expiry
    if PS_EXPIRY_MIN <= expiry <= PS_EXPIRY_MAX:
        return
    why = ("a short expiry makes every VoLTE UE re-register often (radio, battery and core load) and "
           "is the wrong fix for failover, which P-CSCF restoration solves" if expiry < PS_EXPIRY_MIN
           else "a longer expiry than TS 24.229's 600000 s default keeps UEs on a dead P-CSCF even longer "
                "where restoration fails")
    yield rule.finding(
        f"network.timers: the PS registration expiry is {expiry} s, outside {PS_EXPIRY_MIN}-{PS_EXPIRY_MAX} s: "
        f"{why}",
        location=ctx.locate_path("network", "timers", "ps_registration_expiry"),
        hint=f"set ps_registration_expiry between {PS_EXPIRY_MIN} and {PS_EXPIRY_MAX} s (600000 s is the "
             "TS 24.229 default) and rely on P-CSCF restoration for failover",
    )


def check_diameter_detection(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    target = topo.network.timers.diameter_detection_target
    reported: set[int] = set()
    for el in [*topo.by_type.get("hss", []), *topo.by_type.get("slf", [])]:
        part = diameter_detection(topo, el)
        if part.seconds <= target or part.seconds in reported:
            continue
        reported.add(part.seconds)
        tw_floor = 6
        yield rule.finding(
            f"a failed Diameter link to {el.id} is detected in {part.seconds} s ({part.how}), over the "
            f"{target} s target",
            subjects=(el.id,),
            location=ctx.locate_path("network", "timers", "diameter_detection_target"),
            hint=(f"the watchdog alone cannot do better than 2 × {tw_floor} s = {2 * tw_floor} s (RFC 3539 "
                  "§3.4.1 floor of Tw); declare transport detection on the Diameter links "
                  "(network.timers.diameter_transport.bfd, e.g. 3 × 300 ms, or sctp_heartbeat) or raise "
                  f"diameter_detection_target to {part.seconds} s"),
        )


def check_periodic_restore_time(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    elements = ctx.topology.elements
    for group in ctx.topology.groups.values():
        if group.spec.sync != "periodic" or group.spec.restore_time is not None:
            continue
        if not any(m in elements and elements[m].type.value in ("hss", "slf") for m in group.members):
            continue
        yield rule.finding(
            f"{group.kind} {group.id} backs up periodically but states no restore_time: the switchover "
            "cannot include loading the latest copy, so simulate under-reports it",
            subjects=(group.id,),
            location=ctx.locate(group.id, "backup_interval"),
            hint=f"add restore_time (seconds to load the latest copy on the backup) to {group.id}",
        )


def check_dr_emergency(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    for ln_id, dr in sorted(topo.dr_sbc.items()):
        ln = topo.local_networks[ln_id]
        missing = []
        if ln.emergency is None:
            missing.append("emergency data (PANI, phone-context, PSAP route)")
        if not dr.has(Feature.VIRTUAL_SBC):
            missing.append("virtual SBC support")
        if not missing:
            continue
        yield rule.finding(
            f"DR SBC {dr.id} backs up local network {ln_id} but lacks {' and '.join(missing)}: emergency "
            f"calls from {ln_id} during a failover carry the wrong location and reach the wrong PSAP",
            subjects=(ln_id, dr.id),
            location=ctx.locate(ln_id),
            hint=f"add emergency: {{pani: ..., phone_context: ..., psap_route: ...}} to local network {ln_id} "
                 f"and configure {dr.id}'s virtual SBC for {ln_id} with them (TS 23.167 §6.2, TS 24.229 "
                 "§5.2.10)",
        )


def check_imgw_control(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    if not topo.by_type.get("mgcf"):
        return
    for gw in topo.by_type.get("imgw", []):
        controllers = [topo.elements[m] for m in gw.controlled_by if m in topo.elements]
        if not controllers:
            problem = "names no controlling MGCF (controlled_by)"
        elif len(controllers) == 1:
            problem = f"is controlled by {controllers[0].id} only: no backup MGCF to re-home to"
        elif len({c.site for c in controllers}) == 1:
            problem = f"is controlled only by MGCFs at site {controllers[0].site}: losing it orphans the IM-MGW"
        else:
            continue
        yield rule.finding(
            f"IM-MGW {gw.id} {problem}",
            subjects=(gw.id, *(c.id for c in controllers)),
            location=ctx.locate(gw.id, "controlled_by"),
            hint=f"list a primary and a backup MGCF at another site in {gw.id}'s controlled_by; the IM-MGW "
                 "re-registers with the backup (H.248 ServiceChange, ITU-T H.248.1 §11.5) when the "
                 "inactivity timer (H.248.14) expires",
        )


def common_mode_sync(ctx: RuleContext) -> bool:
    """Whether the ENUM/DNS sets can fail together by design: two or more sets written by the
    provisioning system at once (``sync: provisioning``, also what an unset sync renders as), so
    one bad push reaches every set."""
    sets = ctx.topology.by_type.get("enum_dns", [])
    sync = ctx.topology.inventory.redundancy.enum_dns.sync
    return len(sets) >= 2 and sync in (None, "provisioning")


def check_breakout(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if common_mode_sync(ctx):
        return  # MGCF-004 reports it as a warning
    yield from _breakout(rule, ctx)


def check_breakout_common_mode(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    if common_mode_sync(ctx):
        yield from _breakout(rule, ctx, " (sync: provisioning pushes to every ENUM/DNS set at once, so one bad "
                                        "push or provisioning fault takes them all down)")


def _breakout(rule: Rule, ctx: RuleContext, why: str = "") -> Iterator[Finding]:
    from imsdr.restoration.breakout import enum_outage_breakout

    result = enum_outage_breakout(ctx.topology)
    if result is None or result.carried:
        return
    needed = f"{result.circuits_needed:,}" if result.circuits_needed is not None else "over 1,000,000"
    more = f"{result.circuits_needed - result.circuits:,}" if result.circuits_needed is not None else "that many"
    yield rule.finding(
        f"if ENUM/DNS is unavailable, on-net calls break out to the PSTN: {result.offered_erlangs:,.0f} Erl "
        f"offered to {result.circuits:,} trunk circuits needs {needed} at "
        f"{result.grade_of_service:.0%} blocking; {result.blocking:.0%} of call attempts would be blocked{why}",
        subjects=tuple(result.trunk_elements),
        location=ctx.locate_path("network", "capacity_model", "onnet_share"),
        hint="keep ENUM/DNS answering (caches with long negative-free TTLs, a third ENUM/DNS set) or let "
             "the BGCF route E.164 numbers of the operator's own ranges to the I-CSCF without ENUM; adding "
             f"{more} circuits is rarely practical",
    )


RULES: list[Rule] = [
    Rule(
        "RESTO-001", Severity.ERROR,
        "PS access without P-CSCF restoration",
        make_doc(
            """
            VoLTE UEs propose long registration expiries (TS 24.229 §5.1.1.2: 600000 s) and do
            not watch their P-CSCF. Without P-CSCF restoration (TS 23.380 §5.4 HSS-based, §5.5
            PCRF/PCF-based) a UE whose P-CSCF or SBC failed stays unreachable for terminating
            calls until it next registers: days. Shortening the refresh is the wrong fix
            (domain.md §8.1).
            """,
            """
            network:
              restoration: {pcscf_restoration: none}
            local_networks:
              - {id: metro-volte, access: ps, ...}
            """,
            """
            network:
              restoration: {pcscf_restoration: hss}
            """,
        ),
        check_ps_without_restoration, production_only=True,
    ),
    Rule(
        "RESTO-002", Severity.WARNING,
        "A PS local network names no P-GW/SMF",
        make_doc(
            """
            The P-GW (EPC) or SMF (5GC) hands the UE its P-CSCF list in the PCO at PDN connection
            set-up (TS 24.229 §B.2.2.1, TS 23.380 §5.4). imsdr renders that list per gateway in the
            DR order of the SBC views, so each PS local network names its gateway (domain.md §8.1).
            """,
            """
            local_networks:
              - {id: metro-volte, access: ps, ...}
            """,
            """
            local_networks:
              - {id: metro-volte, access: ps, packet_gateway: {id: pgw-metro, kind: pgw}, ...}
            """,
        ),
        check_ps_gateway,
    ),
    Rule(
        "RESTO-003", Severity.WARNING,
        "A periodic HSS/SLF backup states no restore time",
        make_doc(
            """
            An N+1 HSS/SLF with non-real-time backup serves only after loading its latest copy;
            the switchover is detection + restore time, and changes since the copy (the RPO,
            `backup_interval`) are missing until replayed from provisioning (domain.md §4.6).
            """,
            """
            redundancy:
              pools:
                - {id: hss-pool, members: [...], sync: periodic, backup_interval: 86400}
            """,
            """
            redundancy:
              pools:
                - {id: hss-pool, members: [...], sync: periodic, backup_interval: 86400, restore_time: 1800}
            """,
        ),
        check_periodic_restore_time,
    ),
    Rule(
        "TIMER-006", Severity.WARNING,
        "PS registration expiry outside 3600-600000 s",
        make_doc(
            """
            TIMER-002's 600-3600 s refresh is a fixed-access recommendation. PS (VoLTE) UEs use
            long expiries (TS 24.229 §5.1.1.2 default 600000 s); failover for them comes from
            P-CSCF restoration (TS 23.380), not from a shorter expiry, which would load the
            radio, the UE battery and the core. Checked when a local network has PS access
            (domain.md §8.1).
            """,
            """
            network:
              timers: {ps_registration_expiry: 1800}
            """,
            """
            network:
              timers: {ps_registration_expiry: 600000}
              restoration: {pcscf_restoration: hss}
            """,
        ),
        check_ps_expiry,
    ),
    Rule(
        "TIMER-007", Severity.WARNING,
        "Diameter failure detection slower than the target",
        make_doc(
            """
            A Diameter client notices a dead HSS/SLF after 2 × Tw (RFC 3539 §3.4.1: DWR after Tw
            of silence, failover after a further Tw). With Tw's 6 s floor the watchdog alone
            cannot meet a target below 12 s; transport detection (BFD, RFC 5880; SCTP heartbeats,
            RFC 9260 §8.3) declared on the links can. Checked against
            `network.timers.diameter_detection_target` (domain.md §8.3).
            """,
            """
            network:
              timers: {diameter_watchdog: 8, diameter_detection_target: 10}
            """,
            """
            network:
              timers:
                diameter_watchdog: 8
                diameter_detection_target: 10
                diameter_transport: {bfd: {interval_ms: 300, multiplier: 3}}
            """,
        ),
        check_diameter_detection,
    ),
    Rule(
        "EMERG-001", Severity.ERROR,
        "A DR SBC lacks the emergency data of a local network it backs up",
        make_doc(
            """
            During a failover the DR SBC serves the local network as a virtual SBC and must emit
            that network's P-Access-Network-Info and phone-context, so the E-CSCF routes emergency
            calls to the right PSAP (TS 23.167 §6.2, TS 24.229 §5.2.10). Each backed-up local
            network states them (`emergency`), and its DR SBC supports virtual SBCs (domain.md §4.2).
            """,
            """
            local_networks:
              - {id: capital, ...}          # no emergency data; backed up by sbc-coast
            """,
            """
            local_networks:
              - id: capital
                emergency: {pani: "IEEE-802.3; dsl-location=capital", phone_context: "+86-10", psap_route: "+8610110"}
            """,
        ),
        check_dr_emergency, production_only=True,
    ),
    Rule(
        "MGCF-002", Severity.WARNING,
        "An IM-MGW has no backup MGCF at another site",
        make_doc(
            """
            An IM-MGW is controlled over H.248 by one MGCF at a time; when that MGCF fails the
            IM-MGW detects it by the H.248.14 inactivity timer and re-registers with the next MGCF
            in its list (H.248.1 §11.5 ServiceChange). Without a backup MGCF at another site its
            trunks go idle with the MGCF (domain.md §4.7).
            """,
            """
            elements:
              - {id: imgw-a-1, type: imgw, controlled_by: [mgcf-a-1], ...}
            """,
            """
            elements:
              - {id: imgw-a-1, type: imgw, controlled_by: [mgcf-a-1, mgcf-b-1], ...}
            """,
        ),
        check_imgw_control,
    ),
    Rule(
        "MGCF-003", Severity.INFO,
        "An ENUM/DNS outage would break on-net calls out over more trunks than exist",
        make_doc(
            """
            When no ENUM/DNS answers, the S-CSCF/BGCF cannot tell on-net E.164 numbers from
            off-net ones and breaks them out to the PSTN (TS 24.229 §5.4.3.2, §5.8); each on-net
            call then holds an outgoing and an incoming trunk circuit. The busy-hour on-net share
            (`capacity_model.onnet_share`) plus the normal PSTN traffic is offered to the MGCF
            trunks and sized with Erlang B at the grade of service. An outage of every ENUM/DNS
            set is a double failure, so this is information for the runbook, not a design error
            (domain.md §4.1, §4.7).
            """,
            """
            network:
              capacity_model: {onnet_share: 0.5}     # 60000 Erl on-net, 4000 circuits
            """,
            """
            network:
              capacity_model: {onnet_share: 0.01}
            """,
        ),
        check_breakout,
    ),
    Rule(
        "MGCF-004", Severity.WARNING,
        "An ENUM/DNS outage the sync mode makes plausible would break on-net calls out over more trunks than exist",
        make_doc(
            """
            MGCF-003's breakout, where the ENUM/DNS sets share one writer: with `sync: provisioning`
            (or unset, rendered as provisioning) the provisioning system pushes every change to all
            sets at once, so a bad push, a corrupt export or a provisioning outage is a common-mode
            failure of every set, not a double failure. Then the trunks' shortfall is a design risk
            (domain.md §4.1, §4.7).
            """,
            """
            redundancy:
              enum_dns: {sync: provisioning}
            network:
              capacity_model: {onnet_share: 0.5}     # 60000 Erl on-net, 4000 circuits
            """,
            """
            redundancy:
              enum_dns: {sync: master-slave}         # MGCF-003 (info) instead
            """,
        ),
        check_breakout_common_mode,
    ),
]
