"""The capacity report: every sizing check of docs/domain.md §4.5-§4.7 with its numbers laid out for audit.

The checks themselves are the units of :mod:`imsdr.capacity.checks` (one module per family,
listed in its registry); this module assembles their rows into the one :class:`CapacityReport`
and writes it as JSON data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from imsdr.capacity.checks.base import FAIL, LAB, OK, CheckInputs, ElementLosses, rounded
from imsdr.capacity.checks.elements import ElementIssue
from imsdr.capacity.checks.groups import GroupCheck
from imsdr.capacity.checks.headroom import ElementHeadroom, HeadroomCell
from imsdr.capacity.checks.registry import CHECKS
from imsdr.capacity.checks.sites import RiskCheck, SiteCheck
from imsdr.capacity.checks.subscribers import CscfLoad, HssCheck
from imsdr.capacity.checks.takeovers import Takeover
from imsdr.capacity.checks.traffic import StormCheck
from imsdr.capacity.checks.trunks import TrunkCheck, TrunkMember
from imsdr.capacity.dimensions import DimensionCheck
from imsdr.capacity.formulas import exact

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.capacity.storm import Storm
    from imsdr.model.topology import Topology

__all__ = [  # the report's row types, read by the rules and the writers from here
    "CapacityReport", "CscfLoad", "DimensionCheck", "ElementHeadroom", "ElementIssue", "GroupCheck",
    "HeadroomCell", "HssCheck", "RiskCheck", "SiteCheck", "StormCheck", "Takeover", "TrunkCheck",
    "TrunkMember", "capacity_report", "capacity_to_dict",
]


@dataclass(frozen=True)
class CapacityReport:
    network: str
    subscribers: int
    busy_hour_erlangs: float
    max_utilisation: float
    pools: tuple[GroupCheck, ...]
    pairs: tuple[GroupCheck, ...]
    hss: tuple[HssCheck, ...]
    cscf: tuple[CscfLoad, ...]
    trunks: tuple[TrunkCheck, ...]
    takeovers: tuple[Takeover, ...]
    sites: tuple[SiteCheck, ...]
    elements: tuple[ElementIssue, ...]
    risks: tuple[RiskCheck, ...] = ()
    storms: tuple[StormCheck, ...] = ()
    dimensions: tuple[DimensionCheck, ...] = ()
    missing: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # element, type, missing fields
    unchecked: tuple[tuple[str, str, str], ...] = ()  # element, type, capacity field never checked
    headroom: tuple[HeadroomCell, ...] = ()
    element_headroom: tuple[ElementHeadroom, ...] = ()
    verdict: str = field(default=OK)

    def failures(self) -> list[Any]:
        out: list[Any] = []
        for section in (self.pools, self.pairs, self.hss, self.trunks, self.takeovers, self.sites, self.risks,
                        self.storms, self.dimensions):
            out.extend(c for c in section if c.verdict == FAIL)
        out.extend(e for e in self.elements if e.kind == "overloaded")
        return out


def capacity_report(topology: Topology, engine: Engine | None = None,
                    storms: dict[str, Storm] | None = None) -> CapacityReport:
    """Size every pool, pair, HSS, trunk group, DR SBC and site of ``topology``.

    ``engine`` is the exact-number failure Engine of ``topology``; a run that also simulates or
    checks passes the one its :class:`imsdr.analysis.Analysis` holds, so that everything reads
    the same model. ``storms``, when given, gets the registration storm of every site and region
    loss by scenario label (``site:<id>``, ``region:<id>``): what ``registration_storm`` gives for
    that loss with this engine, for a caller that shows it again. Nothing is kept between calls."""
    if engine is None:
        from imsdr.capacity.engine import Engine

        engine = Engine(topology)
    return _capacity_report(topology, engine, storms)


def _capacity_report(topology: Topology, eng: Engine, storms: dict[str, Storm] | None = None) -> CapacityReport:
    from imsdr.model.risk import shared_risks

    model = eng.model
    u = exact(model.cm.max_utilisation)
    # every site, region, power feed and transmission route lost, evaluated once for all checks;
    # most power feeds and routes fail exactly one site: the same sites give the same outcome
    by_sites: dict[tuple[str, ...], Outcome] = {}

    def lose(sites: Iterable[str]) -> Outcome:
        key = tuple(dict.fromkeys(sites))  # in evaluation order: it is the order loads are summed in
        if key not in by_sites:
            by_sites[key] = eng.evaluate_sites(key)
        return by_sites[key]

    losses: dict[str, Outcome] = {f"site:{site}": lose([site]) for site in sorted(topology.sites)}
    losses.update((risk.label, lose(risk.sites)) for risk in shared_risks(topology))
    inputs = CheckInputs(topology, eng, losses, ElementLosses(eng), storms=storms)
    for check in CHECKS:
        inputs.results[check.id] = tuple(check.run(inputs))
    if topology.network.deployment == "lab":
        # a lab has one site and no DR by design: losses are shown, not counted as shortfalls
        for check in CHECKS:
            if check.lab_shown:
                inputs.results[check.id] = tuple(_lab(row) for row in inputs.results[check.id])
    report = CapacityReport(
        network=topology.network.name,
        subscribers=model.subscribers,
        busy_hour_erlangs=rounded(model.erlangs_total, 3) or 0.0,
        max_utilisation=float(u),
        **inputs.results,  # type: ignore[arg-type]
    )
    verdict = FAIL if report.failures() else OK
    return CapacityReport(**{**report.__dict__, "verdict": verdict})


def _lab(check: Any) -> Any:
    import dataclasses

    return dataclasses.replace(check, verdict=LAB) if check.verdict == FAIL else check


# --- JSON ------------------------------------------------------------------------------------------------


def capacity_to_dict(report: CapacityReport) -> dict[str, Any]:
    """The report as plain JSON data (keys documented in docs/capacity.md)."""
    import dataclasses

    names: dict[type, tuple[str, ...] | None] = {}  # field names per class, looked up once
    plain = {str, int, float, bool, type(None)}  # written as they are (no call per value)

    def conv(obj: Any) -> Any:
        cls = type(obj)
        if cls in plain:
            return obj
        if cls not in names:
            names[cls] = (
                tuple(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(cls) else None
            )
        fields = names[cls]
        if fields is not None:
            out = {}
            for name in fields:
                value = getattr(obj, name)
                out[name] = value if type(value) in plain else conv(value)
            return out
        if isinstance(obj, (list, tuple)):
            return [x if type(x) in plain else conv(x) for x in obj]
        return obj

    data = conv(report)
    for row in data["takeovers"]:
        row["takers"] = [
            {"id": t[0], "load_after": t[1], "capacity": t[2], "utilisation": t[3]} for t in row["takers"]
        ]
    data["failures"] = len(report.failures())
    return data
