"""Run the rule catalogue over a topology: settings, waivers, verdict.

``run_checks(topology)`` is the one entry point (``imsdr check``, ``imsdr plan`` and the
runbooks call it); ``report_to_dict`` is its stable JSON shape (documented in docs/rules.md).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from imsdr.diagnostics import Finding, Location, Problem, Severity
from imsdr.errors import ImsdrError, InventoryError
from imsdr.rules.base import Rule, RuleContext
from imsdr.rules.waivers import WAIVER_HITS, WAIVER_REPORTED, WAIVER_RULES_ON

if TYPE_CHECKING:
    from imsdr.analysis import Analysis
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


@dataclass(frozen=True)
class RuleSettings:
    """Rule settings from a config file (``--rules-config``): they override the inventory's."""

    file: str
    settings: dict[str, str]  # rule id → off / error / warning / info
    locations: dict[str, Location | None]


_SETTING_VALUES = ("off", "error", "warning", "info")


def load_rule_settings(path: str | os.PathLike[str]) -> RuleSettings:
    """Read a YAML file ``rules: {RULE-ID: off|error|warning|info}``; every problem with its
    file:line (ImsdrError, exit 2). Rule ids are checked against the catalogue when used."""
    from imsdr.inventory.loader import load_yaml_file

    doc = load_yaml_file(path)
    problems: list[Problem] = []
    data = doc.data
    for key in data:
        if key != "rules":
            problems.append(Problem(doc.locate_key((key,)), str(key),
                                    f"unknown key {key!r}; a rules config holds only 'rules:'"))
    rules = data.get("rules")
    settings: dict[str, str] = {}
    locations: dict[str, Location | None] = {}
    if not isinstance(rules, dict):
        problems.append(Problem(doc.locate(("rules",)), "rules",
                                "expected a mapping 'rules: {RULE-ID: off|error|warning|info}'"))
        rules = {}
    for rule_id, value in rules.items():
        where = doc.locate(("rules", rule_id))
        if not isinstance(rule_id, str) or not re.fullmatch(r"[A-Z]{2,6}-[0-9]{3}", rule_id):
            problems.append(Problem(where, f"rules.{rule_id}",
                                    f"invalid rule id {rule_id!r} (expected e.g. GEO-001)"))
            continue
        if value is False:
            problems.append(Problem(where, f"rules.{rule_id}",
                                    "got the boolean false; write off to switch the rule off"))
            continue
        if value not in _SETTING_VALUES:
            problems.append(Problem(where, f"rules.{rule_id}",
                                    f"got {value!r}, expected one of {', '.join(_SETTING_VALUES)}"))
            continue
        settings[rule_id] = value
        locations[rule_id] = where
    if problems:
        problems.sort(key=lambda p: (p.location.line, p.location.column) if p.location else (0, 0))
        raise ImsdrError(f"{doc.file}: invalid rules config", problems)
    return RuleSettings(doc.file, settings, locations)


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


def rule_id_problems(inv: Any, source: Any, rules: Sequence[Rule] | None = None,
                     settings: RuleSettings | None = None) -> list[Problem]:
    """Rule ids in the inventory's ``rules:`` map, its waivers and ``settings`` that no rule has.

    ``validate`` and every command that checks call this one function, so an inventory that
    validates is never refused by ``check`` or ``plan`` for its rule ids (nor the other way round).
    """
    if not inv.rules and not inv.waivers and (settings is None or not settings.settings):
        return []  # no rule id to look up: `validate` need not import every rule family
    from imsdr.rules.registry import all_rules, suggest

    known = {rule.id for rule in (rules if rules is not None else all_rules())}
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
    if settings is not None:
        for rule_id in settings.settings:
            if rule_id not in known:
                close = suggest(rule_id) if rules is None else None
                hint = f"; did you mean {close}?" if close and close in known else ""
                problems.append(Problem(settings.locations.get(rule_id), f"rules.{rule_id}",
                                        f"unknown rule id {rule_id!r} in {settings.file}{hint}"))
    return problems


def rule_states(topology: Topology, rules: Sequence[Rule] | None = None,
                settings: RuleSettings | None = None) -> list[RuleState]:
    """Effective severity and status of each rule; unknown rule ids in the inventory's ``rules:``
    map, in waivers or in a rules config raise InventoryError (exit 2) with their file:line.
    Settings from ``settings`` (a rules config file) override the inventory's."""
    from imsdr.inventory.schema import RuleSetting
    from imsdr.rules.registry import all_rules

    catalogue = list(rules) if rules is not None else list(all_rules())
    inv = topology.inventory
    source = topology.source
    problems = rule_id_problems(inv, source, catalogue if rules is not None else None, settings)
    if problems:
        file = source.file if source else "inventory"
        raise InventoryError(f"{file}: unknown rule id", problems)

    lab = inv.network.deployment == "lab"
    merged: dict[str, RuleSetting] = dict(inv.rules)
    if settings is not None:
        merged.update({k: RuleSetting(v) for k, v in settings.settings.items()})
    states = []
    for rule in catalogue:
        setting = merged.get(rule.id)
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
               rules: Sequence[Rule] | None = None, settings: RuleSettings | None = None,
               analysis: Analysis | None = None,
               dns_problems: Callable[[], Sequence[Problem]] | None = None) -> CheckReport:
    """Run every applicable rule, apply the inventory's rule settings and waivers.

    ``today`` decides which waivers have expired (default: the current date); ``rules``
    replaces the registry (tests); ``settings`` (``load_rule_settings``) override the
    inventory's ``rules:`` map; ``analysis`` is the run's analysis of ``topology`` when the caller
    shares it with other stages (default: a fresh one); ``dns_problems`` gives what the DNS plan
    cannot publish (``imsdr.dns.lint.plan_problems``; DNS-005 reports it)."""
    today = today or dt.date.today()
    states = rule_states(topology, rules, settings)
    ctx = RuleContext(topology=topology, today=today, analysis=analysis,  # type: ignore[arg-type]
                      dns_problems=dns_problems)
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
    reported: dict[str, list[tuple[str, ...]]] = {}
    for finding in report.findings:
        reported.setdefault(finding.rule_id, []).append(finding.subjects)
    ctx.cache[WAIVER_REPORTED] = reported
    ctx.cache[WAIVER_RULES_ON] = {s.rule.id for s in states if s.status == "on"}
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


def invalid_report(file: str, error: ImsdrError, today: dt.date) -> CheckReport:
    """The report of an inventory that does not load or validate: each problem as an INV-001
    finding (deployment ``invalid``), so that every output format shows it."""
    from imsdr.rules.inventory_rules import INVALID_INPUT, problem_finding
    from imsdr.rules.registry import get_rule

    rule = get_rule(INVALID_INPUT)
    assert rule is not None
    problems = error.problems or [Problem(None, "", error.message)]
    findings = sorted((problem_finding(p) for p in problems), key=finding_sort_key)
    return CheckReport(file=file, today=today, deployment="invalid", findings=findings,
                       rules=[RuleState(rule, rule.severity, "on")])


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
