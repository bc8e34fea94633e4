"""The explicit rule registry: every family module, in catalogue order.

Adding a rule family means adding its module here; nothing registers itself on import.
"""

from __future__ import annotations

import difflib
from functools import cache

from imsdr.rules import (
    availability_rules,
    capacity_rules,
    cscf,
    deployment,
    dns_rules,
    enum_dns,
    geo,
    hss,
    inventory_rules,
    mgcf,
    pairing,
    restoration,
    sbc,
    timers,
    waivers,
)
from imsdr.rules.base import Rule

FAMILIES: tuple[list[Rule], ...] = (
    inventory_rules.RULES,  # INV-001: invalid input, reported by `check` in the machine formats
    deployment.RULES,
    geo.RULES,
    pairing.RULES,
    enum_dns.RULES,
    sbc.RULES,
    cscf.RULES,
    hss.RULES,
    mgcf.RULES,
    timers.RULES,
    restoration.RULES,  # TS 23.380 restoration, PS access, Diameter, emergency, H.248
    dns_rules.RULES,
    capacity_rules.RULES,  # CAP-…: written with the capacity engine (imsdr.capacity)
    availability_rules.RULES,  # AVAIL-…: the availability model (imsdr.availability)
    waivers.RULES,  # last: they look at what the waivers matched
)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, in catalogue order; ids are unique."""
    rules = tuple(rule for family in FAMILIES for rule in family)
    seen: set[str] = set()
    for rule in rules:
        if rule.id in seen:
            raise RuntimeError(f"duplicate rule id {rule.id}")  # a programming error, caught by tests
        seen.add(rule.id)
    return rules


@cache
def rules_by_id() -> dict[str, Rule]:
    return {rule.id: rule for rule in all_rules()}


def get_rule(rule_id: str) -> Rule | None:
    return rules_by_id().get(rule_id.upper())


def suggest(rule_id: str) -> str | None:
    close = difflib.get_close_matches(rule_id.upper(), list(rules_by_id()), n=1)
    return close[0] if close else None
