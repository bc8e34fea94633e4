"""Switchover time of one failed element, broken into its parts.

* detection — SIP OPTIONS: interval × failure threshold + one response timeout (the element's own
  timer overrides, else the network's). Diameter (HSS/SLF): **2 × Tw** — RFC 3539 §3.4.1: with no
  traffic for Tw the client sends a DWR; when no DWA arrives within a further Tw the connection is
  declared failed and traffic fails over (jitter of ±2 s ignored). ENUM/DNS: one query timeout
  (``options_timeout``) before the resolver asks the other set.
* DNS TTL — clients that re-resolve see the change only after the TTL: the A/AAAA TTL for UEs
  re-resolving the SBC name; the SRV TTL where the group is published in DNS (``dns_name``) or
  selected by DNS.
* re-registration — registered users move only at their next refresh, up to
  ``registration_refresh``: SBC and P-CSCF always (terminating calls fail until then); S-CSCF only
  where no dynamic restoration data exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.load import is_scscf

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology


PART_LABEL = {"detection": "detection", "dns_ttl": "DNS TTL", "re_registration": "re-registration"}


@dataclass(frozen=True, slots=True)
class Part:
    name: str  # detection | dns_ttl | re_registration
    seconds: int
    how: str


@dataclass(frozen=True, slots=True)
class Switchover:
    parts: tuple[Part, ...]

    @property
    def seconds(self) -> int:
        return sum(p.seconds for p in self.parts)

    def formula(self) -> str:
        if not self.parts:
            return "0 s"
        body = " + ".join(f"{p.seconds} s {PART_LABEL.get(p.name, p.name)}" for p in self.parts)
        return f"{body} = {self.seconds} s"


def _timer(topology: Topology, el: Element, name: str) -> int:
    value = getattr(el.timers, name)
    return int(value if value is not None else getattr(topology.network.timers, name))


def _dns_published(topology: Topology, el: Element) -> bool:
    for group in topology.groups_of.get(el.id, []):
        if group.spec.dns_name or (group.kind == "pool" and group.spec.selection == "dns"):  # type: ignore[union-attr]
            return True
    return False


def switchover(topology: Topology, el: Element) -> Switchover:
    """The estimated switchover time when ``el`` fails and something takes over."""
    t = el.type.value
    ttl = topology.network.ttl
    parts: list[Part] = []
    if t in ("hss", "slf"):
        tw = _timer(topology, el, "diameter_watchdog")
        parts.append(Part("detection", 2 * tw, f"Diameter watchdog: 2 × Tw = 2 × {tw} s (RFC 3539 DWR/DWA)"))
    elif t == "enum_dns":
        timeout = _timer(topology, el, "options_timeout")
        parts.append(
            Part(
                "detection",
                timeout,
                f"one DNS query timeout ({timeout} s) before the resolver asks the other set",
            )
        )
    else:
        interval = _timer(topology, el, "options_interval")
        threshold = _timer(topology, el, "options_failure_threshold")
        timeout = _timer(topology, el, "options_timeout")
        parts.append(
            Part(
                "detection",
                interval * threshold + timeout,
                f"SIP OPTIONS: {interval} s × {threshold} + {timeout} s timeout",
            )
        )
    if t == "sbc":
        parts.append(Part("dns_ttl", int(ttl.a), f"A/AAAA TTL {ttl.a} s for UEs re-resolving the SBC name"))
    elif _dns_published(topology, el):
        parts.append(Part("dns_ttl", int(ttl.srv), f"SRV TTL {ttl.srv} s for clients re-resolving the group"))
    refresh = _timer(topology, el, "registration_refresh")
    if t in ("sbc", "pcscf"):
        parts.append(
            Part(
                "re_registration",
                refresh,
                f"registered users re-register at their next refresh (up to {refresh} s)",
            )
        )
    elif is_scscf(el) and not el.has(_restoration()):
        parts.append(
            Part(
                "re_registration",
                refresh,
                f"no restoration data: users re-register within the refresh period ({refresh} s)",
            )
        )
    return Switchover(tuple(parts))


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA
