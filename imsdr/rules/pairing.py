"""Backup pairing: every core element belongs to a consistent pair or pool (domain.md §1, §4)."""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc
from imsdr.rules.common import TYPE_NAMES, join

# HSS/SLF have their own, more specific rule (HSS-001).
CORE_TYPES = ("enum_dns", "pcscf", "cscf", "mgcf", "imgw")


def check_spof(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    groups_of = ctx.topology.groups_of
    for el in ctx.topology.inventory.elements:
        if el.type.value in CORE_TYPES and not groups_of.get(el.id):
            yield rule.finding(
                f"{TYPE_NAMES[el.type.value]} {el.id} (site {el.site}) is in no pair or pool: "
                "it is a single point of failure",
                subjects=(el.id, el.site),
                location=ctx.locate(el.id),
                hint=f"add {el.id} to a pair or pool under redundancy: with a member of the same type "
                     "at another site",
            )


def check_as_pool(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    groups_of = ctx.topology.groups_of
    for el in ctx.topology.by_type.get("as", []):
        if not groups_of.get(el.id):
            yield rule.finding(
                f"application server {el.id} is in no pool: its services stop when it fails",
                subjects=(el.id, el.site),
                location=ctx.locate(el.id),
                hint=f"add {el.id} to an AS pool with a member at another site",
            )


def check_pool_size(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for group in ctx.topology.groups.values():
        if group.kind == "pool" and len(group.members) < 2:
            yield rule.finding(
                f"pool {group.id} has {len(group.members)} member: a pool needs at least 2 to "
                "survive the loss of one",
                subjects=(group.id, *group.members),
                location=ctx.locate(group.id, "members"),
                hint=f"add a member of the same type at another site to {group.id}",
            )


def check_mixed_types(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    elements = ctx.topology.elements
    for group in ctx.topology.groups.values():
        members = [elements[m] for m in group.members if m in elements]
        types: dict[str, list[str]] = {}
        for el in members:
            types.setdefault(el.type.value, []).append(el.id)
        kind = "pair" if group.kind == "pair" else "pool"
        if len(types) > 1:
            first_type = members[0].type.value
            odd = [el for el in members if el.type.value != first_type]
            desc = "; ".join(f"{t}: {join(ids)}" for t, ids in types.items())
            yield rule.finding(
                f"{kind} {group.id} mixes element types ({desc}): a member can only take over "
                "from an element of its own type",
                subjects=(group.id, *group.members),
                location=ctx.locate(group.id, "members", group.members.index(odd[0].id)),
                hint=f"split {group.id} into one group per element type",
            )
            continue
        role = getattr(group.spec, "role", None)
        if role is not None:
            missing = [el.id for el in members if role not in el.roles]
            if missing:
                yield rule.finding(
                    f"pool {group.id} serves role {role.value} but {join(missing)} lack(s) that role",
                    subjects=(group.id, *missing),
                    location=ctx.locate(group.id, "members", group.members.index(missing[0])),
                    hint=f"add role {role.value} to {join(missing)} or remove them from {group.id}",
                )


def check_conflicting_claims(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    for el in ctx.topology.inventory.elements:
        groups = ctx.topology.groups_of.get(el.id, [])
        if len(groups) < 2:
            continue
        pairs = [g for g in groups if g.kind == "pair"]
        pools = [g for g in groups if g.kind == "pool"]
        reason = ""
        if len(pairs) > 1:
            reason = (f"it is in {len(pairs)} pairs ({join([g.id for g in pairs])}): "
                      "it cannot be the mate of each")
        elif pairs and pools:
            reason = (f"it is in pair {pairs[0].id} and pool {pools[0].id}: which peers take over when it "
                      "fails is ambiguous")
        elif len(pools) > 1:
            by_role: dict[str, list[str]] = {}
            for pool in pools:
                role = getattr(pool.spec, "role", None)
                by_role.setdefault(role.value if role is not None else "", []).append(pool.id)
            if "" in by_role:
                reason = (f"it is in pools {join([g.id for g in pools])}, and "
                          f"{by_role[''][0]} claims it for every role")
            else:
                dup = next(((r, ids) for r, ids in by_role.items() if len(ids) > 1), None)
                if dup is not None:
                    reason = f"it is in pools {join(dup[1])} for the same role {dup[0]}"
        if reason:
            last = groups[-1]
            yield rule.finding(
                f"{el.id} is claimed as backup in conflicting ways: {reason}",
                subjects=(el.id, *(g.id for g in groups)),
                location=ctx.locate(last.id, "members", last.members.index(el.id)),
                hint=f"keep {el.id} in one pair or one pool per role",
            )


RULES: list[Rule] = [
    Rule(
        "PAIR-001", Severity.ERROR,
        "A core element (ENUM/DNS, P-CSCF, CSCF, MGCF, IM-MGW) is in no pair or pool",
        make_doc(
            """
            Core elements are few, large and centralised, so losing one element must not take
            service down (domain.md §1): each must be in a 1+1 pair or an N+K pool with
            members of its type. An element in no group is a single point of failure.
            HSS/SLF are checked by HSS-001.
            """,
            """
            elements:
              - {id: pcscf-c-1, type: pcscf, site: site-c, ...}
            redundancy:
              pairs: []          # pcscf-c-1 is in no pair or pool
            """,
            """
            redundancy:
              pairs:
                - {id: pcscf-pair-2, members: [pcscf-c-1, pcscf-b-2]}
            """,
        ),
        check_spof, production_only=True,
    ),
    Rule(
        "PAIR-002", Severity.ERROR,
        "A pool has fewer than two members",
        make_doc(
            """
            A pool of one cannot survive the loss of its only member: it is a single point of
            failure dressed up as redundancy (domain.md §1, §4.5).
            """,
            """
            pools:
              - {id: as-pool, members: [as-a-1]}
            """,
            """
            pools:
              - {id: as-pool, members: [as-a-1, as-c-1]}
            """,
        ),
        check_pool_size, production_only=True,
    ),
    Rule(
        "PAIR-003", Severity.ERROR,
        "A pair or pool mixes element types (or CSCF roles)",
        make_doc(
            """
            A backup element takes over from a failed element of its own type (domain.md §1);
            a pool serving a CSCF role needs that role on every member.
            """,
            """
            pairs:
              - {id: hss-pair, members: [hss-a-1, slf-c-1]}   # an HSS and an SLF
            """,
            """
            pairs:
              - {id: hss-pair, members: [hss-a-1, hss-b-1]}
            """,
        ),
        check_mixed_types,
    ),
    Rule(
        "PAIR-004", Severity.ERROR,
        "One element is claimed as backup in conflicting ways",
        make_doc(
            """
            An element in two pairs, in a pair and a pool, or in two pools for the same role
            makes the takeover ambiguous: each group assumes it has the element's spare
            capacity to itself (domain.md §4.5).
            """,
            """
            pairs:
              - {id: pcscf-pair-1, members: [pcscf-a-1, pcscf-b-1]}
              - {id: pcscf-pair-2, members: [pcscf-c-1, pcscf-b-1]}   # pcscf-b-1 twice
            """,
            """
            pairs:
              - {id: pcscf-pair-1, members: [pcscf-a-1, pcscf-b-1]}
              - {id: pcscf-pair-2, members: [pcscf-c-1, pcscf-b-2]}
            """,
        ),
        check_conflicting_claims,
    ),
    Rule(
        "PAIR-005", Severity.WARNING,
        "An application server is in no pool",
        make_doc(
            """
            Application servers are deployed as pools (domain.md §1); an AS outside any pool
            stops its services (e.g. MMTel supplementary services) when it fails.
            """,
            """
            elements:
              - {id: as-a-1, type: as, ...}
            redundancy: {pools: []}
            """,
            """
            pools:
              - {id: as-pool, members: [as-a-1, as-c-1]}
            """,
        ),
        check_as_pool, production_only=True,
    ),
]
