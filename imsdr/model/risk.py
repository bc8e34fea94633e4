"""Shared risks: what fails together.

A site fails with everything it depends on: its service region, each of its power feeds and each
of its transmission routes are *shared risks* — losing one loses every site that lists it. A
disaster radius (a point and a distance) loses every site with coordinates inside the circle.
``simulate --fail`` and ``scenarios`` turn each into the set of sites it takes down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

EARTH_RADIUS_KM = 6371.0088  # IUGG mean Earth radius
#: kind → the Site attribute listing the risks of that kind (a list, or one id for regions)
RISK_KINDS: dict[str, str] = {"region": "region", "power": "power", "route": "transmission"}
KIND_LABELS = {"region": "service region", "power": "power feed", "route": "transmission route"}


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance between two points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


@dataclass(frozen=True)
class SharedRisk:
    """One region, power feed or transmission route and the sites that fail with it."""

    kind: str  # region | power | route
    id: str
    sites: tuple[str, ...]  # inventory order

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.id}"


def shared_risks(topology: Topology, kinds: tuple[str, ...] = ("region", "power", "route")) -> list[SharedRisk]:
    """Every region, power feed and transmission route of the inventory (sorted by kind, then id)."""
    out: list[SharedRisk] = []
    for kind in kinds:
        attr = RISK_KINDS[kind]
        sites_of: dict[str, list[str]] = {}
        for site in topology.sites.values():
            value = getattr(site, attr)
            for risk in [value] if isinstance(value, str) else value:
                sites_of.setdefault(risk, []).append(site.id)
        out.extend(SharedRisk(kind, risk, tuple(sites)) for risk, sites in sorted(sites_of.items()))
    return out


@dataclass(frozen=True)
class Radius:
    """A disaster area: every site within ``km`` of (``lat``, ``lon``)."""

    lat: float
    lon: float
    km: float

    @classmethod
    def parse(cls, text: str) -> Radius:
        """``LAT,LON,KM`` (degrees, degrees, kilometres); ValueError with the reason otherwise."""
        parts = text.split(",")
        if len(parts) != 3:
            raise ValueError(f"--radius {text!r}: expected LAT,LON,KM (e.g. 39.9,116.4,50)")
        try:
            lat, lon, km = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"--radius {text!r}: LAT, LON and KM must be numbers") from None
        if not (-90 <= lat <= 90 and -180 <= lon <= 180) or not 0 <= km <= 20100 or math.isnan(km):
            raise ValueError(f"--radius {text!r}: latitude -90..90, longitude -180..180, 0..20100 km")
        return cls(lat, lon, km)

    @property
    def label(self) -> str:
        return f"radius:{self.lat:g},{self.lon:g},{self.km:g}"

    def sites(self, topology: Topology) -> tuple[list[str], list[str]]:
        """(sites inside the circle, sites without coordinates that cannot be placed)."""
        inside: list[str] = []
        unknown: list[str] = []
        for site in topology.sites.values():
            if site.lat is None or site.lon is None:
                unknown.append(site.id)
            elif haversine_km(self.lat, self.lon, site.lat, site.lon) <= self.km:
                inside.append(site.id)
        return inside, unknown
