"""Per-run structures shared by rule families (built once through ``RuleContext.cached``)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from imsdr.model.risk import haversine_km  # noqa: F401 - the geo rules' distance
from imsdr.model.topology import TYPE_LABELS

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Group
    from imsdr.rules.base import RuleContext

TYPE_NAMES = TYPE_LABELS  # the rules speak of element types as people write them


def group_members_by_site(ctx: RuleContext) -> dict[str, dict[str, list[str]]]:
    """group id → site id → member ids at that site (member order kept)."""

    def build() -> dict[str, dict[str, list[str]]]:
        elements = ctx.topology.elements
        out: dict[str, dict[str, list[str]]] = {}
        for group in ctx.topology.groups.values():
            by_site: dict[str, list[str]] = {}
            for member in group.members:
                el = elements.get(member)
                if el is not None:
                    by_site.setdefault(el.site, []).append(member)
            out[group.id] = by_site
        return out

    return ctx.cached("common.group_members_by_site", build)


def groups_sorted(ctx: RuleContext) -> list[Group]:
    return ctx.cached("common.groups", lambda: list(ctx.topology.groups.values()))


def elements_with_role(ctx: RuleContext, role: str) -> list[Element]:
    def build() -> dict[str, list[Element]]:
        out: dict[str, list[Element]] = defaultdict(list)
        for el in ctx.topology.by_type.get("cscf", []):
            for r in el.roles:
                out[r.value].append(el)
        return out

    return ctx.cached("common.by_role", build).get(role, [])


def multi_site(ctx: RuleContext) -> bool:
    """Whether the inventory has more than one site (site-loss rules make sense)."""
    return len(ctx.topology.sites) > 1


def effective_timer(ctx: RuleContext, el: Element, name: str) -> int:
    override = getattr(el.timers, name)
    return int(override if override is not None else getattr(ctx.topology.network.timers, name))


def fmt_duration(seconds: int) -> str:
    if seconds % 3600 == 0 and seconds >= 3600:
        return f"{seconds} s ({seconds // 3600} h)"
    if seconds % 60 == 0 and seconds >= 60:
        return f"{seconds} s ({seconds // 60} min)"
    return f"{seconds} s"


def join(ids: list[str] | tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
