"""Adapter: the in-memory DNS plan (:mod:`imsdr.dns.plan`) as a :class:`RecordSource`.

Also the element index that tells which element and site a target name or address belongs to.
Nothing here writes files: the plan is computed from the inventory exactly as ``render dns``
computes it, so ``resolve`` answers what the rendered zones and views would answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from imsdr.resolve.views import ViewSpec

if TYPE_CHECKING:
    from imsdr.dns.plan import DnsPlan
    from imsdr.model.topology import Topology


def to_dns_rrset(rrset: Any, qname: dns.name.Name | None = None) -> dns.rrset.RRset:
    """A plan RRset (``name``, ``rdtype``, ``ttl``, ``rdatas`` with ``to_text()``) as a dnspython RRset."""
    name = qname or dns.name.from_text(rrset.name.rstrip(".") + ".")
    rdtype = dns.rdatatype.from_text(rrset.rdtype)
    out = dns.rrset.RRset(name, dns.rdataclass.IN, rdtype)
    for rd in rrset.rdatas:
        out.add(dns.rdata.from_text(dns.rdataclass.IN, rdtype, rd.to_text(), origin=dns.name.root,
                                    relativize=False),
                rrset.ttl)
    return out


class PlanSource:
    """The DNS plan seen through views, answering like the rendered BIND configuration."""

    def __init__(self, plan: DnsPlan) -> None:
        self.plan = plan
        self._views = [ViewSpec(v.name, tuple(v.match_clients) or ("any",)) for v in plan.views]
        self._cached = lru_cache(maxsize=65536)(self._lookup)

    def views(self) -> Sequence[ViewSpec]:
        return self._views

    def _lookup(self, view: str, qname: dns.name.Name,
                rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        found = self.plan.lookup_rrset(view, qname.to_text(omit_final_dot=True).lower(),
                                       dns.rdatatype.to_text(rdtype))
        if found is None or not found.rdatas:
            return None
        return to_dns_rrset(found, qname)

    def rrset(self, view: str, qname: dns.name.Name,
              rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        return self._cached(view, qname, rdtype)


@dataclass(frozen=True, slots=True)
class Owner:
    element: str
    site: str


class ElementIndex:
    """Which element (and site) a DNS name or an address is."""

    def __init__(self, topology: Topology) -> None:
        self.by_name: dict[str, Owner] = {}
        self.by_address: dict[str, list[Owner]] = {}
        import ipaddress

        for el in topology.elements.values():
            owner = Owner(el.id, el.site)
            self.by_name[topology.fqdn(el).rstrip(".").lower()] = owner
            for address in el.addresses:
                key = ipaddress.ip_address(address).compressed
                self.by_address.setdefault(key, []).append(owner)

    def describe(self, target: str, addresses: Sequence[str]) -> tuple[str | None, str | None]:
        """(element, site) of a target; several owners (a shared name) are joined with ', '."""
        owner = self.by_name.get(target.rstrip(".").lower())
        if owner is not None:
            return owner.element, owner.site
        import ipaddress

        owners: list[Owner] = []
        for address in addresses:
            try:
                key = ipaddress.ip_address(address).compressed
            except ValueError:
                continue
            for o in self.by_address.get(key, []):
                if o not in owners:
                    owners.append(o)
        if not owners:
            return None, None
        sites: list[str] = []
        for o in owners:
            if o.site not in sites:
                sites.append(o.site)
        return ", ".join(o.element for o in owners), ", ".join(sites)
