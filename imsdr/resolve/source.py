"""Where resolution reads records from: a view-aware, authoritative lookup.

The resolver needs only two things, kept as a small protocol so it can run against the DNS
plan computed from an inventory, against hand-made zones in tests, or against anything else:

* ``views()``: the views in ``named.conf`` order (name and ``match-clients``);
* ``rrset(view, qname, rdtype)``: the authoritative answer of that view for exactly that name
  and type (wildcards expanded as BIND does), or ``None``. CNAMEs are not followed here; the
  resolver asks for them itself.

:class:`ZoneSource` implements it over dnspython zones, with BIND's wildcard rule (RFC 4592: a
wildcard ``*.<closest encloser>`` answers a name that does not exist, when the closest existing
ancestor is ``<closest encloser>``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import dns.zone

from imsdr.resolve.views import ViewSpec

WILDCARD = dns.name.Name((b"*",))


class RecordSource(Protocol):
    def views(self) -> Sequence[ViewSpec]: ...

    def rrset(self, view: str, qname: dns.name.Name,
              rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        ...


class _IndexedZone:
    """A zone plus the set of names that exist in it (including empty non-terminals)."""

    def __init__(self, zone: dns.zone.Zone) -> None:
        self.zone = zone
        self.origin: dns.name.Name = zone.origin  # type: ignore[assignment]
        self.existing: set[dns.name.Name] = set()
        for relative in zone.nodes:
            name = relative.derelativize(self.origin)
            while name != self.origin and name not in self.existing:
                self.existing.add(name)
                name = name.parent()
        self.existing.add(self.origin)

    def find(self, qname: dns.name.Name, rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        if qname in self.existing:
            return self._rrset(qname, qname, rdtype)
        encloser = qname.parent()
        while encloser not in self.existing:
            if encloser == self.origin or len(encloser) <= 1:
                return None
            encloser = encloser.parent()
        # a delegation point (NS below the apex) cuts the wildcard search
        wildcard = WILDCARD.concatenate(encloser)
        if wildcard in self.existing:
            return self._rrset(wildcard, qname, rdtype)
        return None

    def _rrset(self, owner: dns.name.Name, qname: dns.name.Name,
               rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        rdataset = self.zone.get_rdataset(owner, rdtype)
        if rdataset is None:
            return None
        rrset = dns.rrset.RRset(qname, dns.rdataclass.IN, rdtype)
        rrset.update(rdataset)
        return rrset


class ZoneSource:
    """A :class:`RecordSource` over dnspython zones: ``{view name: [zones]}`` plus view specs."""

    def __init__(self, views: Sequence[ViewSpec], zones: Mapping[str, Iterable[dns.zone.Zone]]) -> None:
        self._views = list(views)
        self._zones: dict[str, list[_IndexedZone]] = {
            view: sorted((_IndexedZone(z) for z in view_zones), key=lambda iz: -len(iz.origin))
            for view, view_zones in zones.items()
        }

    def views(self) -> Sequence[ViewSpec]:
        return self._views

    def zone_for(self, view: str, qname: dns.name.Name) -> dns.zone.Zone | None:
        for indexed in self._zones.get(view, []):
            if qname.is_subdomain(indexed.origin):
                return indexed.zone
        return None

    def rrset(self, view: str, qname: dns.name.Name,
              rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        for indexed in self._zones.get(view, []):
            if qname.is_subdomain(indexed.origin):
                return indexed.find(qname, rdtype)
        return None

    @classmethod
    def from_text(cls, views: Sequence[ViewSpec], zone_texts: Mapping[str, Mapping[str, str]]) -> ZoneSource:
        """Build from master-file text: ``{view: {origin: text}}`` (used by tests and adapters)."""
        zones = {
            view: [dns.zone.from_text(text, origin=origin, relativize=False, check_origin=False)
                   for origin, text in texts.items()]
            for view, texts in zone_texts.items()
        }
        return cls(views, zones)
