"""The figures the availability model reports: cut sets, contributors, importance."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CutSet:
    events: tuple[str, ...]
    probability: float  # steady-state probability that every event is down at once
    fraction: float  # of the local network's users that lose the service meanwhile
    minutes: float  # outage minutes per year it contributes (probability × fraction × minutes/year)


@dataclass(frozen=True, slots=True)
class Contributor:
    label: str
    kind: str  # outage | switchover
    minutes: float


@dataclass(frozen=True, slots=True)
class Importance:
    event: str
    fussell_vesely: float  # share of the downtime in cut sets containing it or its switchovers
    gain_minutes: float  # downtime per year removed if it never failed
