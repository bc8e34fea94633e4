"""Run the rule catalogue over a topology: settings, waivers, verdict.

``run_checks(topology)`` is the one entry point (``imsdr check``, ``imsdr plan`` and the
runbooks call it); ``report_to_dict`` is its stable JSON shape (documented in docs/rules.md).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from imsdr.diagnostics import Finding, Location, Problem, Severity
from imsdr.errors import InventoryError
from imsdr.rules.base import Rule, RuleContext
from imsdr.rules.waivers import WAIVER_HITS

if TYPE_CHECKING:
    from imsdr.inventory.schema import Waiver
    from imsdr.model.topology import Topology

FailOn = Literal["error", "warning", "info", "never"]
REPORT_FORMAT = "imsdr.check/1"
RuleStatus = Literal["on", "off", "not-applicable"]


@dataclass(frozen=True, slots=True)
class RuleState:
    """How one rule ran: its effective severity (after the inventory's ``rules:`` map)."""

    rule: Rule
    severity: Severity
    status: RuleStatus

    @property
    def relevelled(self) -> bool:
        return self.severity is not self.rule.severity


@dataclass(frozen=True, slots=True)
class WaivedFinding:
    """A finding suppressed by a waiver (still reported, with the waiver's reason and expiry)."""

    finding: Finding
    waiver_index: int
    reason: str
    expires: dt.date
    waiver_location: Location | None


@dataclass
class CheckReport:
    file: str | None
    today: dt.date
    deployment: str
    findings: list[Finding] = field(default_factory=list)
    waived: list[WaivedFinding] = field(default_factory=list)
    rules: list[RuleState] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        out["waived"] = len(self.waived)
        return out

    def failing(self, fail_on: FailOn = "error") -> list[Finding]:
        """Unwaived findings at or above ``fail_on``."""
        if fail_on == "never":
            return []
        floor = Severity(fail_on).rank
        return [f for f in self.findings if f.severity.rank >= floor]

    def passed(self, fail_on: FailOn = "error") -> bool:
        return not self.failing(fail_on)

    def exit_code(self, fail_on: FailOn = "error") -> int:
        return 0 if self.passed(fail_on) else 1

    def rule_state(self, rule_id: str) -> RuleState | None:
        return next((s for s in self.rules if s.rule.id == rule_id), None)


def finding_sort_key(f: Finding) -> tuple[int, str, int, int, str]:
    loc = f.location
    return (-f.severity.rank, f.rule_id, loc.line if loc else 0, loc.column if loc else 0, f.message)


def rule_states(topology: Topology, rules: Sequence[Rule] | None = None) -> list[RuleState]:
    """Effective severity and status of each rule; unknown rule ids in the inventory's ``rules:``
    map or in waivers raise InventoryError (exit 2) with their file:line."""
    from imsdr.inventory.schema import RuleSetting
    from imsdr.rules.registry import all_rules, suggest

    catalogue = list(rules) if rules is not None else list(all_rules())
    known = {rule.id for rule in catalogue}
    inv = topology.inventory
    source = topology.source
    problems: list[Problem] = []

    def unknown(rule_id: str, path: tuple[str | int, ...], what: str) -> None:
        close = suggest(rule_id) if rules is None else None
        hint = f"; did you mean {close}?" if close and close in known else ""
        location = source.locate(*path) if source else None
        dotted = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
        problems.append(Problem(location, dotted,
                                f"unknown rule id {rule_id!r} in {what}{hint} (`imsdr rules` lists them)"))

    for rule_id in inv.rules:
        if rule_id not in known:
            unknown(rule_id, ("rules", rule_id), "the rules: settings")
    for i, waiver in enumerate(inv.waivers):
        if waiver.rule not in known:
            unknown(waiver.rule, ("waivers", i, "rule"), "a waiver")
    if problems:
        file = source.file if source else "inventory"
        raise InventoryError(f"{file}: unknown rule id", problems)

    lab = inv.network.deployment == "lab"
    states = []
    for rule in catalogue:
        setting = inv.rules.get(rule.id)
        if setting is RuleSetting.OFF:
            states.append(RuleState(rule, rule.severity, "off"))
        elif rule.production_only and lab:
            states.append(RuleState(rule, rule.severity, "not-applicable"))
        else:
            severity = Severity(setting.value) if setting is not None else rule.severity
            states.append(RuleState(rule, severity, "on"))
    return states


def _waiver_for(finding: Finding, waivers: list[Waiver], today: dt.date) -> int | None:
    subjects = set(finding.subjects)
    for i, waiver in enumerate(waivers):
        if waiver.rule != finding.rule_id or waiver.expires < today:
            continue
        if not waiver.scope or subjects.intersection(waiver.scope):
            return i
    return None


def _run(state: RuleState, ctx: RuleContext) -> Iterable[Finding]:
    for finding in state.rule.check(state.rule, ctx):
        if state.relevelled:
            finding = dataclasses.replace(finding, severity=state.severity)
        yield finding


def run_checks(topology: Topology, today: dt.date | None = None,
               rules: Sequence[Rule] | None = None) -> CheckReport:
    """Run every applicable rule, apply the inventory's rule settings and waivers.

    ``today`` decides which waivers have expired (default: the current date); ``rules``
    replaces the registry (tests)."""
    today = today or dt.date.today()
    states = rule_states(topology, rules)
    ctx = RuleContext(topology=topology, today=today)
    inv = topology.inventory
    source = topology.source
    report = CheckReport(file=source.file if source else None, today=today,
                         deployment=inv.network.deployment, rules=states)
    hits: dict[int, int] = {}
    post = [s for s in states if s.rule.id.startswith("WAIVER-")]
    for state in states:
        if state.status != "on" or state in post:
            continue
        for finding in _run(state, ctx):
            index = _waiver_for(finding, inv.waivers, today)
            if index is None:
                report.findings.append(finding)
                continue
            hits[index] = hits.get(index, 0) + 1
            waiver = inv.waivers[index]
            report.waived.append(WaivedFinding(
                dataclasses.replace(finding, waived_by=waiver.reason), index, waiver.reason, waiver.expires,
                source.locate("waivers", index) if source else None))
    ctx.cache[WAIVER_HITS] = hits
    for state in post:
        if state.status == "on":
            report.findings.extend(_run(state, ctx))
    report.findings.sort(key=finding_sort_key)
    report.waived.sort(key=lambda w: finding_sort_key(w.finding))
    return report


# --- JSON -------------------------------------------------------------------------------------

def location_to_dict(location: Location | None) -> dict[str, Any] | None:
    if location is None:
        return None
    return {"file": location.file, "line": location.line, "column": location.column}


def finding_to_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule_id,
        "severity": f.severity.value,
        "message": f.message,
        "subjects": list(f.subjects),
        "location": location_to_dict(f.location),
        "hint": f.hint,
    }


def report_to_dict(report: CheckReport, fail_on: FailOn = "error") -> dict[str, Any]:
    """The stable JSON shape of a check report (keys documented in docs/rules.md)."""
    return {
        "format": REPORT_FORMAT,
        "file": report.file,
        "today": report.today.isoformat(),
        "deployment": report.deployment,
        "fail_on": fail_on,
        "passed": report.passed(fail_on),
        "counts": report.counts(),
        "findings": [finding_to_dict(f) for f in report.findings],
        "waived": [
            {**finding_to_dict(w.finding),
             "waiver": {"reason": w.reason, "expires": w.expires.isoformat(),
                        "location": location_to_dict(w.waiver_location)}}
            for w in report.waived
        ],
        "rules": [
            {"id": s.rule.id, "severity": s.severity.value, "default_severity": s.rule.severity.value,
             "status": s.status}
            for s in report.rules
        ],
    }
