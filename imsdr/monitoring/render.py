"""Prometheus rule files from the plan (the live-state families are in imsdr.monitoring.live_rules).

``headroom.rules.yml`` holds, per capacity check with a failure to guard against, one recording
rule (``imsdr:failure_projected_utilisation``: the utilisation the plan's worst single failure
would cause at the current load) and one alert (``ImsdrFailureHeadroomLost``) that fires when it
exceeds ``max_utilisation``. The current load comes from the metric contract
``imsdr_element_load{element="ID", unit="UNIT"}`` (docs/monitoring.md): the operator's recording
rules map their platforms' counters onto it.

The files are plain Prometheus 2.x rule files (``promtool check rules`` reads them), written in
a fixed key order so the same plan gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from imsdr.monitoring.headroom import HeadroomGuard, headroom_guards
from imsdr.monitoring.ruletext import SEVERITY
from imsdr.monitoring.ruletext import number as _number
from imsdr.monitoring.ruletext import quoted as _quoted
from imsdr.monitoring.ruletext import regex_alternation as _regex_alternation

if TYPE_CHECKING:
    from imsdr.analysis import Analysis
    from imsdr.dns.plan import DnsPlan

LOAD_METRIC = "imsdr_element_load"
PROJECTED = "imsdr:failure_projected_utilisation"
HEADROOM_ALERT = "ImsdrFailureHeadroomLost"
HEADROOM_FOR = "10m"  # a load peak of a few minutes is not a design change
HEADROOM_FILE = "headroom.rules.yml"
# the capacity appendix's sections, by the kind of check (anchors as GitHub renders the headings)
CAPACITY_ANCHOR = {"pool": "nk-pools", "pair": "11-pairs", "hss": "hss-sizing-with-dynamic-restoration-data",
                   "takeover": "dr-takeovers-sbc-and-p-cscf"}
def headroom_rules(analysis: Analysis, runbook_base: str, severities: dict[str, str]) -> tuple[str, int]:
    """The text of headroom.rules.yml and the number of alerts in it."""
    guards = headroom_guards(analysis)
    lines = ["# imsdr: headroom guards from the capacity plan (one recording rule and one alert per check).",
             f"# Input: {LOAD_METRIC}{{element, unit}} - see docs/monitoring.md for the metric contract.",
             "groups:"]
    if not guards:
        lines += ["  - name: imsdr-headroom", "    rules: []"]
        return "\n".join(lines) + "\n", 0
    lines += ["  - name: imsdr-headroom", "    rules:"]
    from imsdr.runbook.split import provinces_of

    topology = analysis.topology
    province_of = provinces_of(topology)  # split runbooks: the capacity appendix is one page per province
    for guard in guards:
        first = topology.elements.get(guard.members[0]) if guard.members else None
        province = province_of.get(first.site) if first is not None else None
        page = f"capacity-{province}.md" if province else "capacity.md"
        lines += _guard_rules(guard, runbook_base, severities.get(guard.rule, "error"), page)
    return "\n".join(lines) + "\n", len(guards)


def _guard_rules(guard: HeadroomGuard, runbook_base: str, severity: str, page_name: str = "capacity.md") -> list[str]:
    selector = f'{LOAD_METRIC}{{unit={_quoted(guard.unit)}, element=~{_quoted(_regex_alternation(guard.members))}}}'
    labels = {"check": guard.check, "kind": guard.kind, "element_type": guard.element_type}
    label_text = ", ".join(f"{key}: {_quoted(value)}" for key, value in labels.items())
    page = f"{runbook_base}{page_name}#{CAPACITY_ANCHOR[guard.kind]}"
    summary = (f"if {guard.worst} happened now, {guard.survivor} would be at {{{{ $value | humanizePercentage }}}} "
               f"(limit {guard.limit:.0%})")
    description = (f"{guard.check.split(':', 1)[1]}: {guard.unit} on {', '.join(guard.members)} exceed "
                   f"{guard.threshold:,.0f}, the load at which the plan's worst single failure "
                   f"({guard.worst}) overloads {guard.survivor}; planned {guard.planned_load:,.0f} gives "
                   f"{guard.utilisation_after:.1%} after that failure. Rule {guard.rule} judges the same check.")
    return [
        f"      - record: {PROJECTED}",
        f"        expr: sum({selector}) * {_number(guard.factor)}",
        f"        labels: {{{label_text}}}",
        f"      - alert: {HEADROOM_ALERT}",
        f"        expr: {PROJECTED}{{check={_quoted(guard.check)}}} > {_number(guard.limit)}",
        f"        for: {HEADROOM_FOR}",
        f"        labels: {{severity: {_quoted(severity)}, rule: {_quoted(guard.rule)}, {label_text}}}",
        "        annotations:",
        f"          summary: {_quoted(summary)}",
        f"          description: {_quoted(description)}",
        f"          runbook_url: {_quoted(page)}",
    ]


def monitoring_files(analysis: Analysis, runbook_base: str = "../runbooks/",
                     dns_plan: DnsPlan | None = None) -> dict[str, str]:
    """name → text of every file of the monitoring/ tree. ``dns_plan``: the run's DNS plan, when
    it has one (the probes read its views); else one lazy plan is built for both probe files."""
    from imsdr.rules.registry import all_rules

    severities: dict[str, Any] = {rule.id: SEVERITY[rule.severity.value] for rule in all_rules()}
    text, _count = headroom_rules(analysis, runbook_base, severities)
    files = {HEADROOM_FILE: text}
    from imsdr.monitoring.live_rules import (
        DIAMETER_FILE,
        DNS_FILE,
        SIP_FILE,
        diameter_rules,
        dns_rules,
        sip_rules,
    )

    def severity(rule: str) -> str:
        return str(severities.get(rule, "error"))

    topology = analysis.topology
    for name, build in ((DNS_FILE, dns_rules), (SIP_FILE, sip_rules), (DIAMETER_FILE, diameter_rules)):
        files[name] = build(topology, runbook_base, severity)[0]
    from imsdr.monitoring.probes import BLACKBOX_FILE, PROMETHEUS_FILE, blackbox_config, prometheus_config

    if dns_plan is None:
        from imsdr.dns.plan import build_dns_plan

        dns_plan = build_dns_plan(topology, lazy=True)  # views and match lists only
    files[PROMETHEUS_FILE] = prometheus_config(topology, sorted(files), dns_plan)
    files[BLACKBOX_FILE] = blackbox_config(topology, dns_plan)
    return files


def runbook_base(url: str) -> str:
    """``url`` ending in "/" (each alert appends page and anchor); control characters refused."""
    from imsdr.errors import ImsdrError

    if not url or not url.isprintable() or any(ch in url for ch in "\"' "):
        raise ImsdrError(f"--runbook-url {url!r}: give a URL or path without spaces, quotes or control characters")
    return url if url.endswith("/") else url + "/"


def write_monitoring(out: Any, files: dict[str, str]) -> None:
    """Replace ``out`` (a directory or OutputTarget) atomically with ``files``."""
    from imsdr.output.atomic import atomic_directory, safe_join, write_text

    with atomic_directory(out) as staging:
        for name, text in sorted(files.items()):
            write_text(safe_join(staging, name), text)
