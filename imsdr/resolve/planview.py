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


@lru_cache(maxsize=65536)
def _name(text: str) -> dns.name.Name:
    return dns.name.from_text(text.rstrip(".") + ".") if text not in ("", ".") else dns.name.root


@lru_cache(maxsize=65536)
def _text(name: dns.name.Name) -> str:
    """A name as the plan keys it: lower case, no final dot (asked once per name, not per view)."""
    return name.to_text(omit_final_dot=True).lower()


@lru_cache(maxsize=256)
def _type_text(rdtype: dns.rdatatype.RdataType) -> str:
    return dns.rdatatype.to_text(rdtype)


@lru_cache(maxsize=1 << 16)  # the same record recurs in many rrsets (views); dnspython rdata are immutable
def _rdata(rd: Any, rdtype: dns.rdatatype.RdataType) -> dns.rdata.Rdata:
    """A plan rdata as a dnspython rdata, built from its fields (text parsing only as a fallback)."""
    from dns.rdtypes.ANY.CNAME import CNAME
    from dns.rdtypes.ANY.NS import NS
    from dns.rdtypes.ANY.SOA import SOA
    from dns.rdtypes.IN.A import A
    from dns.rdtypes.IN.AAAA import AAAA
    from dns.rdtypes.IN.NAPTR import NAPTR
    from dns.rdtypes.IN.SRV import SRV

    IN = dns.rdataclass.IN
    kind = dns.rdatatype.to_text(rdtype)
    if kind == "A":
        return A(IN, rdtype, rd.address)
    if kind == "AAAA":
        return AAAA(IN, rdtype, rd.address)
    if kind == "SRV":
        return SRV(IN, rdtype, rd.priority, rd.weight, rd.port, _name(rd.target))
    if kind == "NAPTR":
        return NAPTR(IN, rdtype, rd.order, rd.preference, rd.flags, rd.services, rd.regexp,
                     _name(rd.replacement))
    if kind in ("NS", "CNAME"):
        return (NS if kind == "NS" else CNAME)(IN, rdtype, _name(rd.target))
    if kind == "SOA":
        return SOA(IN, rdtype, _name(rd.mname), _name(rd.rname), rd.serial, rd.refresh, rd.retry,
                   rd.expire, rd.minimum)
    return dns.rdata.from_text(IN, rdtype, rd.to_text(), origin=dns.name.root, relativize=False)


def to_dns_rrset(rrset: Any, qname: dns.name.Name | None = None) -> dns.rrset.RRset:
    """A plan RRset (``name``, ``rdtype``, ``ttl``, ``rdatas``) as a dnspython RRset owned by ``qname``."""
    rdtype = dns.rdatatype.from_text(rrset.rdtype)
    return dns.rrset.from_rdata_list(qname or _name(rrset.name), rrset.ttl,
                                     [_rdata(rd, rdtype) for rd in rrset.rdatas])


class PlanSource:
    """The DNS plan seen through views, answering like the rendered BIND configuration."""

    def __init__(self, plan: DnsPlan) -> None:
        self.plan = plan
        self._views = [ViewSpec(v.name, tuple(v.match_clients) or ("any",)) for v in plan.views]
        self.refusing = frozenset(v.name for v in plan.views if v.side == "none")  # answer REFUSED
        self._cached = lru_cache(maxsize=65536)(self._lookup)
        self._converted: dict[Any, dns.rrset.RRset] = {}

    def views(self) -> Sequence[ViewSpec]:
        return self._views

    def _lookup(self, view: str, qname: dns.name.Name,
                rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        found = self.plan.lookup_rrset(view, _text(qname), _type_text(rdtype))
        if found is None or not found.rdatas:
            return None
        converted = self._converted.get(found)
        if converted is None:
            converted = self._converted[found] = to_dns_rrset(found)
        if converted.name == qname:
            return converted
        return dns.rrset.from_rdata_list(qname, converted.ttl, list(converted))  # ENUM: synthesised owner

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
        for el in topology.elements.values():
            owner = Owner(el.id, el.site)
            self.by_name[topology.fqdn(el).rstrip(".").lower()] = owner
            for address in el.addresses:
                # already normalised by the inventory schema (str(ip_address(...)) == compressed)
                self.by_address.setdefault(address, []).append(owner)

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
