"""What a rule is, and what it gets to look at."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from imsdr.diagnostics import Finding, Location, Severity

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


@dataclass
class RuleContext:
    """Everything a rule may read. ``cache`` lets rule families share expensive work
    (e.g. one capacity report for every CAP rule) within one check run."""

    topology: Topology
    today: dt.date = field(default_factory=dt.date.today)
    cache: dict[str, Any] = field(default_factory=dict)

    def locate(self, ident: str, *fields: str | int) -> Location | None:
        source = self.topology.source
        return source.locate_id(ident, *fields) if source else None


CheckFn = Callable[["Rule", RuleContext], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A self-describing check. ``doc`` explains why (from DOMAIN.md) and gives a passing
    and a failing example; ``check`` yields findings."""

    id: str
    severity: Severity
    summary: str
    doc: str
    check: CheckFn

    def finding(
        self,
        message: str,
        *,
        subjects: Iterable[str] = (),
        location: Location | None = None,
        hint: str = "",
    ) -> Finding:
        return Finding(self.id, self.severity, message, tuple(subjects), location, hint)
