"""Scenario "ENUM/DNS unavailable → PSTN breakout": on-net calls loading the MGCF/IM-MGW trunks.

With no ENUM answer the S-CSCF/BGCF treats every E.164 number as off-net and breaks it out to the
PSTN (TS 24.229 §5.4.3.2 and §5.8); a call to an on-net number then comes back in over the trunks,
so it holds two circuits (one out, one in). Offered traffic = normal PSTN traffic + 2 × on-net
share × busy-hour voice traffic; Erlang B at the grade of service gives the circuits needed and
the blocking on the circuits that exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.erlang import circuits_needed, erlang_b

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass(frozen=True, slots=True)
class Breakout:
    pstn_erlangs: float  # normal busy-hour PSTN traffic of the trunk pools
    onnet_erlangs: float  # busy-hour traffic to on-net numbers (each call holds two circuits)
    offered_erlangs: float
    circuits: int  # trunk circuits that exist
    circuits_needed: int | None  # None: beyond what Erlang B sizes here (over 1,000,000)
    grade_of_service: float
    blocking: float  # Erlang B blocking on the existing circuits
    trunk_elements: tuple[str, ...]

    @property
    def carried(self) -> bool:
        return self.circuits_needed is not None and self.circuits >= self.circuits_needed


def enum_outage_breakout(topology: Topology) -> Breakout | None:
    """The breakout load of an ENUM/DNS outage, or None when there are no ENUM/DNS, no trunks or no
    stated on-net share."""
    share = topology.network.capacity_model.onnet_share
    if share is None or not topology.by_type.get("enum_dns"):
        return None
    trunk_type = "imgw" if topology.by_type.get("imgw") else "mgcf"
    trunks = [el for el in topology.by_type.get(trunk_type, []) if el.capacity.circuits]
    if not trunks:
        return None
    model = topology.network.capacity_model
    gos = model.grade_of_service
    pstn = 0.0
    for group in topology.groups.values():
        if group.kind != "pool" or not any(m in {t.id for t in trunks} for m in group.members):
            continue
        pstn += float(group.spec.busy_hour_erlangs or 0.0)  # type: ignore[union-attr]
        gos = group.spec.grade_of_service or gos  # type: ignore[union-attr]
    onnet = share * sum(ln.busy_hour_erlangs for ln in topology.local_networks.values())
    offered = pstn + 2 * onnet
    circuits = sum(int(el.capacity.circuits or 0) for el in trunks)
    try:
        needed: int | None = circuits_needed(offered, gos)
    except ValueError:  # more than MAX_CIRCUITS: no trunk group is that large anyway
        needed = None
    return Breakout(
        pstn_erlangs=pstn,
        onnet_erlangs=onnet,
        offered_erlangs=offered,
        circuits=circuits,
        circuits_needed=needed,
        grade_of_service=gos,
        blocking=erlang_b(offered, circuits),
        trunk_elements=tuple(el.id for el in trunks),
    )
