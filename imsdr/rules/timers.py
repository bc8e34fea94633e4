"""Failure detection timers: Diameter watchdog, registration refresh, SIP OPTIONS (domain.md §2, §4.2)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import Element, Probing
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import TYPE_NAMES, join

TW_MIN, TW_MAX = 6, 10
REFRESH_MIN, REFRESH_MAX = 600, 3600
DIAMETER_TYPES = ("cscf", "as", "hss", "slf", "dra")
# Fixed, known next hops where the sender should probe actively (domain.md §2).
ACTIVE_PROBERS = {"sbc": "P-CSCF", "mgcf": "I-CSCF/BGCF", "as": "I-CSCF/S-CSCF"}
# SIP OPTIONS probing relationships: (from type, from role, to type, to role), "" = any.
PROBES: tuple[tuple[str, str, str, str], ...] = (
    ("sbc", "", "pcscf", ""),
    ("pcscf", "", "cscf", "icscf"),
    ("cscf", "icscf", "cscf", "scscf"),
    ("cscf", "scscf", "as", ""),
    ("cscf", "scscf", "cscf", "icscf"),
    ("as", "", "cscf", "icscf"),
    ("as", "", "cscf", "scscf"),
    ("mgcf", "", "cscf", "icscf"),
    ("mgcf", "", "cscf", "bgcf"),
)


def _range_findings(rule: Rule, ctx: RuleContext, name: str, low: int, high: int,
                    types: tuple[str, ...] | None, describe: str, why: str, hint: str,
                    network: tuple[int, str, str] | None = None) -> Iterator[Finding]:
    """``network``: (value, field it comes from, how) when the network's figure is derived."""
    value, field, how = network or (getattr(ctx.topology.network.timers, name), name, "")
    if not low <= value <= high:
        yield rule.finding(
            f"network.timers: {describe} is {value} s{how}, outside {low}-{high} s: {why}",
            subjects=(),
            location=ctx.locate_path("network", "timers", field),
            hint=hint,
        )
    for el in ctx.topology.inventory.elements:
        override = getattr(el.timers, name)
        if override is None or low <= override <= high:
            continue
        if types is not None and el.type.value not in types:
            continue
        yield rule.finding(
            f"{el.id}: {describe} is {override} s, outside {low}-{high} s: {why}",
            subjects=(el.id,),
            location=ctx.locate(el.id, "timers", name),
            hint=hint,
        )


def check_watchdog(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    yield from _range_findings(
        rule, ctx, "diameter_watchdog", TW_MIN, TW_MAX, DIAMETER_TYPES, "the Diameter watchdog Tw",
        "RFC 3539 sets a floor of 6 s and the operator wants a failed Diameter link detected within 10 s",
        f"set diameter_watchdog between {TW_MIN} and {TW_MAX} s (8 s is a common choice)",
    )


def check_refresh(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    lns = ctx.topology.inventory.local_networks
    if lns and all(ln.access == "ps" for ln in lns):
        return  # a fixed-access recommendation; PS expiries are TIMER-006's
    yield from _range_findings(
        rule, ctx, "registration_refresh", REFRESH_MIN, REFRESH_MAX, None, "the registration refresh period",
        "shorter refreshes cost core capacity, longer ones slow failover (registered users move to a "
        "backup P-/S-CSCF only when they refresh)",
        f"set registration_refresh between {REFRESH_MIN} and {REFRESH_MAX} s",
        _derived_refresh(ctx),
    )


def _derived_refresh(ctx: RuleContext) -> tuple[int, str, str] | None:
    """The refresh interval TS 24.229 derives from ``registration_expiry`` (when that is what the
    inventory says), located at the expiry."""
    from imsdr.capacity.timing import refresh_interval

    refresh = refresh_interval(ctx.topology)
    if refresh.basis != "ts24229":
        return None
    return refresh.seconds, "registration_expiry", f" ({refresh.how})"


def check_active_probing(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for el in ctx.topology.inventory.elements:
        target = ACTIVE_PROBERS.get(el.type.value)
        if target is None or el.probing is Probing.ACTIVE:  # not set = active, the recommended default
            continue
        current = el.options_probing.value if el.options_probing else "not set"
        yield rule.finding(
            f"{TYPE_NAMES[el.type.value]} {el.id} does not probe its {target} next hops actively "
            f"(options_probing: {current}): a failed next hop is only noticed when real traffic fails",
            subjects=(el.id,),
            location=ctx.locate(el.id, "options_probing"),
            hint=f"set options_probing: active on {el.id}; the relationship to its {target}s is fixed and "
                 "known, so periodic SIP OPTIONS detect failures within interval x threshold",
        )


def _matches(el: Element, type_: str, role: str) -> bool:
    return el.type.value == type_ and (not role or any(r.value == role for r in el.roles))


def _active_probers(ctx: RuleContext) -> dict[tuple[str, str], list[Element]]:
    """(type, role) → elements of that type/role that probe actively; SBCs also indexed by the
    P-CSCF they list (``("sbc", "<pcscf id>")``) and ``("sbc", "")`` for SBCs without a list."""

    def build() -> dict[tuple[str, str], list[Element]]:
        out: dict[tuple[str, str], list[Element]] = {}
        for el in ctx.topology.inventory.elements:
            if el.options_probing is not Probing.ACTIVE:
                continue
            if el.type.value == "sbc":
                for pcscf in el.pcscfs or [""]:
                    out.setdefault(("sbc", pcscf), []).append(el)
                continue
            out.setdefault((el.type.value, ""), []).append(el)
            for role in el.roles:
                out.setdefault((el.type.value, role.value), []).append(el)
        return out

    return ctx.cached("timers.active_probers", build)


def check_probing_silent(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    silent = [el for el in ctx.topology.inventory.elements if not el.answers_options]
    if not silent:
        return
    active = _active_probers(ctx)
    for target in silent:
        probers: dict[str, None] = {}
        for src_type, src_role, dst_type, dst_role in PROBES:
            if not _matches(target, dst_type, dst_role):
                continue
            if src_type == "sbc":
                sources = active.get(("sbc", target.id), []) + active.get(("sbc", ""), [])
            else:
                sources = active.get((src_type, src_role), [])
            for src in sources:
                if src.id != target.id:
                    probers.setdefault(src.id)
        if probers:
            ids = list(probers)
            yield rule.finding(
                f"{target.id} does not answer SIP OPTIONS (answers_options: false) but {len(ids)} "
                f"element(s) probe it actively ({join(ids)}): they will mark it down and stop "
                "sending it traffic",
                subjects=(target.id, *ids),
                location=ctx.locate(target.id, "answers_options"),
                hint=f"set options_probing: passive on {join(ids)} for this next hop (detect failures "
                     "from failed requests and retry periodically), or enable OPTIONS answering on "
                     f"{target.id}",
            )


def check_mesh_active(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for el in ctx.topology.by_type.get("cscf", []):
        if el.options_probing is Probing.ACTIVE:
            yield rule.finding(
                f"CSCF {el.id} probes actively, but CSCF-to-CSCF relationships are a changing mesh "
                "(roaming P-CSCF to home I/S-CSCF, originating S-CSCF to terminating I-CSCF)",
                subjects=(el.id,),
                location=ctx.locate(el.id, "options_probing"),
                hint=f"use options_probing: passive on {el.id} (mark peers down from failed traffic)",
            )


RULES: list[Rule] = [
    Rule(
        "TIMER-001", Severity.ERROR,
        "Diameter watchdog Tw outside 6-10 s",
        make_doc(
            """
            The operator wants a failed Diameter link (I-CSCF, S-CSCF, AS to HSS/SLF) detected
            within 10 s; RFC 3539 sets Tw to 30 s by default with a floor of 6 s, so Tw must be
            configured between 6 and 10 s (domain.md §2). Checked on `network.timers` and on
            per-element overrides of Diameter elements. Detection itself takes 2 × Tw; TIMER-007
            checks it against the detection target.
            """,
            """
            network:
              timers: {diameter_watchdog: 15}
            """,
            """
            network:
              timers: {diameter_watchdog: 8}
            """,
        ),
        check_watchdog,
    ),
    Rule(
        "TIMER-002", Severity.WARNING,
        "Registration refresh outside 600-3600 s",
        make_doc(
            """
            Registration refresh is recommended between 600 and 3600 s for fixed access:
            shorter costs core capacity, longer slows failover — worst-case impact for
            registered users equals the refresh period (domain.md §4.2). It applies when some
            local network has fixed access; PS (VoLTE) expiries are checked by TIMER-006.
            """,
            """
            network:
              timers: {registration_refresh: 7200}
            """,
            """
            network:
              timers: {registration_refresh: 1800}
            """,
        ),
        check_refresh,
    ),
    Rule(
        "TIMER-003", Severity.WARNING,
        "Active SIP OPTIONS probing missing on a fixed relationship",
        make_doc(
            """
            Active ("spontaneous") OPTIONS probing is recommended where the relationship is
            fixed and known: SBC→P-CSCF, MGCF→I-CSCF, AS→I/S-CSCF (domain.md §2). Every SBC,
            MGCF and AS must have `options_probing: active`.
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, options_probing: passive, ...}
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, options_probing: active, ...}
            """,
        ),
        check_active_probing,
    ),
    Rule(
        "TIMER-004", Severity.ERROR,
        "Active OPTIONS probing towards an element that does not answer OPTIONS",
        make_doc(
            """
            Some elements do not answer SIP OPTIONS; their unavailability must be detected from
            failed requests instead (domain.md §2). Probing them actively marks them down and
            takes them out of service.
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, pcscfs: [pcscf-a-1], options_probing: active, ...}
              - {id: pcscf-a-1, type: pcscf, answers_options: false, ...}
            """,
            """
            elements:
              - {id: sbc-capital, type: sbc, pcscfs: [pcscf-a-1], options_probing: active, ...}
              - {id: pcscf-a-1, type: pcscf, answers_options: true, ...}
            """,
        ),
        check_probing_silent,
    ),
    Rule(
        "TIMER-005", Severity.INFO,
        "A CSCF probes actively where passive detection is recommended",
        make_doc(
            """
            Passive ("heuristic") detection is recommended where relationships are a changing
            mesh: CSCF↔CSCF (domain.md §2).
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, options_probing: active, ...}
            """,
            """
            elements:
              - {id: cscf-a-1, type: cscf, options_probing: passive, ...}
            """,
        ),
        check_mesh_active,
    ),
]
