"""HSS/SLF: 1+1 geo pair with real-time replication, or N+1 with its data-loss window (domain.md §4.6);
several HSSs of one realm need an SLF, a DRA or subscriber ranges to be found (docs/diameter.md)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.inventory.schema import Feature
from imsdr.model.topology import Group
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import fmt_duration

DB_TYPES = ("hss", "slf")


def _db_groups(ctx: RuleContext) -> list[Group]:
    def build() -> list[Group]:
        elements = ctx.topology.elements
        return [g for g in ctx.topology.groups.values()
                if any(m in elements and elements[m].type.value in DB_TYPES for m in g.members)]

    return ctx.cached("hss.groups", build)


def check_no_backup(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for type_ in DB_TYPES:
        for el in ctx.topology.by_type.get(type_, []):
            if not ctx.topology.groups_of.get(el.id):
                yield rule.finding(
                    f"{type_.upper()} {el.id} has no geo-redundant pair and no N+1 backup: when it fails, "
                    "subscriber data is unreachable (registrations and calls needing Cx/Sh fail)",
                    subjects=(el.id, el.site),
                    location=ctx.locate(el.id),
                    hint=f"pair {el.id} 1+1 with a {type_} at another site (real-time replication), or add "
                         "it to an N+1 pool",
                )


def check_periodic(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for group in _db_groups(ctx):
        spec = group.spec
        if spec.sync == "periodic":
            window = fmt_duration(spec.backup_interval) if spec.backup_interval else "unknown"
            yield rule.finding(
                f"{group.kind} {group.id} backs up subscriber data periodically: on failover the backup "
                f"restores from the latest copy, so up to {window} of changes (new subscribers, service "
                "changes) are lost",
                subjects=(group.id, *group.members),
                location=ctx.locate(group.id, "backup_interval"),
                hint="use real-time replication (sync: realtime) or shorten backup_interval to a data-loss "
                     "window the operator accepts, and waive this finding with that decision",
            )


def check_no_sync(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for group in _db_groups(ctx):
        if group.spec.sync == "none":
            yield rule.finding(
                f"{group.kind} {group.id} does not replicate subscriber data (sync: none): a backup without "
                "the data cannot take over",
                subjects=(group.id, *group.members),
                location=ctx.locate(group.id, "sync"),
                hint="use sync: realtime (1+1 geo pair) or periodic with a stated backup_interval (N+1)",
            )


def check_passthrough(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    hss = ctx.topology.by_type.get("hss", [])
    if hss and not any(el.has(Feature.PASSTHROUGH) for el in hss):
        yield rule.finding(
            "no HSS declares passthrough (service continuity): while the HSS is unreachable the "
            "S-CSCF cannot keep basic calls going on cached data",
            subjects=tuple(el.id for el in hss),
            location=ctx.locate(hss[0].id, "features"),
            hint="if the S-CSCF/HSS support it, enable passthrough and add it to the HSS features",
        )


def _hss_holders(ctx: RuleContext) -> dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]:
    """(province, realm) → the HSS redundancy units there that name no subscriber range: (group id
    or element id, members). Such a unit holds "everyone of its realm that no range names"."""
    topo = ctx.topology
    out: dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]] = {}
    seen: set[str] = set()
    for el in topo.by_type.get("hss", []):
        if el.id in seen:
            continue
        group = next(iter(topo.groups_of.get(el.id, [])), None)
        members = tuple(group.members) if group is not None else (el.id,)
        seen.update(members)
        if group is not None and getattr(group.spec, "user_ranges", None):
            continue
        key = (topo.scope(el), topo.home_domain(el))
        out.setdefault(key, []).append((group.id if group is not None else el.id, members))
    return out


def check_unroutable_holders(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    topo = ctx.topology
    locators = {t: {topo.scope(e) for e in topo.by_type.get(t, [])} for t in ("slf", "dra")}
    for (scope, realm), units in sorted(_hss_holders(ctx).items()):
        if len(units) < 2 or scope in locators["slf"] or scope in locators["dra"]:
            continue
        names = ", ".join(unit for unit, _members in units)
        where = f"province {scope}" if scope else "the network"
        yield rule.finding(
            f"{where} has {len(units)} HSS pairs/elements for realm {realm} ({names}) but no SLF, no DRA "
            "and no user_ranges: a Cx/Sh client cannot know which HSS holds a subscriber, so requests "
            "for users the chosen HSS does not hold fail (DIAMETER_ERROR_USER_UNKNOWN, TS 29.229 §6.2.2)",
            subjects=tuple(m for _unit, members in units for m in members),
            location=ctx.locate(units[0][0] if topo.groups.get(units[0][0]) else units[0][1][0]),
            hint="give each HSS pair its user_ranges (IMPI prefixes: clients route by User-Name), or add an "
                 "SLF pair (Dx redirect) or a DRA pair in the province; docs/diameter.md",
        )


RULES: list[Rule] = [
    Rule(
        "HSS-001", Severity.ERROR,
        "An HSS or SLF has no geo pair and no N+1 backup",
        make_doc(
            """
            The subscriber database is either a 1+1 geo-redundant pair with real-time
            replication, or N+1 with non-real-time backup (domain.md §4.6). An HSS/SLF in no
            pair or pool is a single point of failure for every registration and call.
            """,
            """
            elements:
              - {id: slf-a-1, type: slf, site: site-a, ...}
            redundancy:
              pairs: []
            """,
            """
            redundancy:
              pairs:
                - {id: slf-pair, members: [slf-a-1, slf-c-1], sync: realtime}
            """,
        ),
        check_no_backup, production_only=True,
    ),
    Rule(
        "HSS-002", Severity.WARNING,
        "HSS/SLF backup is periodic: data since the last copy is lost on failover",
        make_doc(
            """
            With N+1 non-real-time backup the backup restores from the latest copy; data since
            the last copy is at risk (domain.md §4.6). The finding states the data-loss window
            (`backup_interval`) so the operator can accept it explicitly (waiver) or change it.
            """,
            """
            pools:
              - {id: hss-pool, members: [hss-a-1, hss-b-1, hss-c-1], sync: periodic, backup_interval: 86400}
            """,
            """
            pairs:
              - {id: hss-pair, members: [hss-a-1, hss-b-1], sync: realtime}
            """,
        ),
        check_periodic,
    ),
    Rule(
        "HSS-003", Severity.ERROR,
        "An HSS/SLF pair or pool does not replicate its data",
        make_doc(
            """
            A backup subscriber database without the data cannot take over (domain.md §4.6).
            """,
            """
            pairs:
              - {id: hss-pair, members: [hss-a-1, hss-b-1], sync: none}
            """,
            """
            pairs:
              - {id: hss-pair, members: [hss-a-1, hss-b-1], sync: realtime}
            """,
        ),
        check_no_sync,
    ),
    Rule(
        "HSS-004", Severity.INFO,
        "No HSS declares passthrough (service continuity)",
        make_doc(
            """
            With passthrough, the S-CSCF keeps basic calls going on cached data while the HSS
            is unreachable; some services (e.g. one-number) need their own (domain.md §4.6).
            """,
            """
            elements:
              - {id: hss-a-1, type: hss, features: [], ...}
            """,
            """
            elements:
              - {id: hss-a-1, type: hss, features: [passthrough], ...}
            """,
        ),
        check_passthrough, production_only=True,
    ),
    Rule(
        "HSS-005", Severity.ERROR,
        "Several HSS pairs, but nothing tells the clients which one holds a subscriber",
        make_doc(
            """
            With more than one HSS (pair) serving a realm, a Cx/Sh client must find the one
            holding the user: through an SLF (Dx/Dh redirect, TS 29.228 §6.6, TS 29.328), a
            DRA that routes by subscriber range, or routes by User-Name prefix in the client
            (`user_ranges` per pair; docs/diameter.md). In a province with neither SLF nor DRA,
            two HSS pairs (or pools, or lone HSSs) of one realm that name no `user_ranges` both
            claim every user: a request reaches one of them at random and fails with
            DIAMETER_ERROR_USER_UNKNOWN (5001, TS 29.229 §6.2.2) for the other's users
            (domain.md §4.6).
            """,
            """
            elements:  # no slf, no dra in the province
              - {id: hss-a-1, type: hss, ...}
              - {id: hss-c-1, type: hss, ...}
            redundancy:
              pairs:
                - {id: hss-pair, members: [hss-a-1, hss-b-1]}
                - {id: hss-pair-2, members: [hss-c-1, hss-d-1]}
            """,
            """
            redundancy:
              pairs:
                - {id: hss-pair, members: [hss-a-1, hss-b-1], user_ranges: ["8610"]}
                - {id: hss-pair-2, members: [hss-c-1, hss-d-1], user_ranges: ["8622"]}
            """,
        ),
        check_unroutable_holders,
    ),
]
