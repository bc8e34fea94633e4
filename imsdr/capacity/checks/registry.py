"""The explicit capacity-check registry: every check of the capacity report, in evaluation order.

Adding a check means adding its unit here (and its field to ``CapacityReport``); nothing registers
itself on import. The order is the order the checks run in: a check may read the rows of one
listed before it (``element_headroom`` reads the takeovers).
"""

from __future__ import annotations

from imsdr.capacity.checks import elements, groups, headroom, sites, subscribers, takeovers, traffic, trunks
from imsdr.capacity.checks.base import CapacityCheck

CHECKS: tuple[CapacityCheck, ...] = (
    *groups.CHECKS,  # pools, pairs
    *subscribers.CHECKS,  # hss, cscf
    *trunks.CHECKS,
    *takeovers.CHECKS,
    *sites.CHECKS_SITES,
    *elements.CHECKS,
    *sites.CHECKS_RISKS,
    *headroom.CHECKS_CELLS,
    *traffic.CHECKS,  # storms, dimensions, missing, unchecked
    *headroom.CHECKS_ELEMENTS,  # last: reads the takeovers
)


def check_ids() -> tuple[str, ...]:
    """The report fields the checks fill, in evaluation order; ids are unique."""
    ids = tuple(check.id for check in CHECKS)
    if len(set(ids)) != len(ids):
        raise RuntimeError("duplicate capacity check id")  # a programming error, caught by tests
    return ids
