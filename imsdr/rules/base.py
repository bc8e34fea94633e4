"""What a rule is, and what it gets to look at."""

from __future__ import annotations

import datetime as dt
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from imsdr.diagnostics import Finding, Location, Problem, Severity

if TYPE_CHECKING:
    from imsdr.analysis import Analysis
    from imsdr.model.topology import Topology

T = TypeVar("T")


@dataclass
class RuleContext:
    """Everything a rule may read. ``analysis`` is the run's computed model (the capacity report
    every CAP rule reads; the caller passes the one it shares with other analyses); ``cache``
    lets rule families share cheaper structures within one check run."""

    topology: Topology
    today: dt.date = field(default_factory=dt.date.today)
    cache: dict[str, Any] = field(default_factory=dict)
    #: what the DNS plan of this inventory cannot publish (``imsdr.dns.lint.plan_problems``),
    #: handed in by the caller: the DNS layer sits above the rules and is never imported by them
    dns_problems: Callable[[], Sequence[Problem]] | None = None
    analysis: Analysis = None  # type: ignore[assignment]  # None: a fresh Analysis of ``topology``

    def __post_init__(self) -> None:
        if self.analysis is None:
            from imsdr.analysis import Analysis

            self.analysis = Analysis(self.topology)

    def locate(self, ident: str, *fields: str | int) -> Location | None:
        """file:line of the object with id ``ident`` (or of one of its fields; a missing
        field falls back to the nearest enclosing mapping that was written)."""
        source = self.topology.source
        return source.locate_id(ident, *fields) if source else None

    def locate_path(self, *path: str | int) -> Location | None:
        """file:line of any inventory path, e.g. ``("network", "timers", "diameter_watchdog")``."""
        source = self.topology.source
        return source.locate(*path) if source else None

    def cached(self, key: str, build: Callable[[], T]) -> T:
        """Compute ``build()`` once per check run and share it between rules."""
        if key not in self.cache:
            self.cache[key] = build()
        return self.cache[key]  # type: ignore[no-any-return]


CheckFn = Callable[["Rule", RuleContext], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A self-describing check. ``doc`` explains why (from docs/domain.md) and gives a passing
    and a failing example; ``check`` yields findings. ``production_only`` rules are skipped
    for ``deployment: lab`` (a one-site lab has no geo-redundancy by design)."""

    id: str
    severity: Severity
    summary: str
    doc: str
    check: CheckFn
    production_only: bool = False

    def finding(
        self,
        message: str,
        *,
        subjects: Iterable[str] = (),
        location: Location | None = None,
        hint: str = "",
    ) -> Finding:
        return Finding(self.id, self.severity, message, tuple(subjects), location, hint)


def make_doc(why: str, fails: str, passes: str) -> str:
    """A rule's documentation in the common shape: the reason, then a failing and a passing
    inventory excerpt (YAML). Rendered verbatim by ``imsdr rules ID`` and docs/rules.md."""
    return (
        textwrap.dedent(why).strip()
        + "\n\nFails:\n\n```yaml\n" + textwrap.dedent(fails).strip("\n") + "\n```\n"
        + "\nPasses:\n\n```yaml\n" + textwrap.dedent(passes).strip("\n") + "\n```\n"
    )
