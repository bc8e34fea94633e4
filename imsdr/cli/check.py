"""`imsdr check`, `imsdr rules` and `imsdr graph`."""

from __future__ import annotations

import datetime as dt
import re
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from imsdr.cli.common import (
    ImsdrCommand,
    InventoryArg,
    default_jobs,
    handle_errors,
    load,
    plain_output,
    stdout,
    text_is_plain_table,
    write_stdout,
)

if TYPE_CHECKING:
    from imsdr.model.topology import Topology
    from imsdr.rules.engine import CheckReport


class CheckFormat(str, Enum):  # noqa: UP042 - same pattern as common.Format
    table = "table"
    text = "text"
    json = "json"
    sarif = "sarif"
    markdown = "markdown"
    github = "github"
    gitlab = "gitlab"  # a GitLab Code Quality report


class RulesFormat(str, Enum):  # noqa: UP042
    table = "table"
    text = "text"
    json = "json"
    markdown = "markdown"


class GraphFormat(str, Enum):  # noqa: UP042
    mermaid = "mermaid"
    dot = "dot"
    json = "json"


class FailOn(str, Enum):  # noqa: UP042
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def _parse_date(value: str | None) -> str | None:
    if value is not None:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not a date (expected YYYY-MM-DD)") from None
    return value


CheckFormatOpt = Annotated[CheckFormat, typer.Option(
    "--format", "-f", callback=text_is_plain_table,
    help="Output format (text: one FILE:LINE:COL: SEVERITY RULE message line per finding).")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 when an unwaived finding at or above this level exists ('never': always 0).")]
RulesConfigOpt = Annotated[Path | None, typer.Option(
    "--rules-config", dir_okay=False, show_default=False,
    help="YAML file 'rules: {RULE-ID: off|error|warning|info}' overriding the inventory's rules: settings.")]
TodayOpt = Annotated[str | None, typer.Option(
    "--today", callback=_parse_date, metavar="YYYY-MM-DD", show_default=False,
    help="Evaluate waiver expiry as of this date (default: today).")]


def register(app: typer.Typer) -> None:
    app.command("check", cls=ImsdrCommand)(check)
    app.command("rules", cls=ImsdrCommand)(rules)
    app.command("graph", cls=ImsdrCommand)(graph)


_DOCS_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


def _docs_url(value: str | None) -> str | None:
    if value is not None and not _DOCS_URL.fullmatch(value):
        raise typer.BadParameter(f"{value!r} is not an absolute http(s) URL without query or fragment "
                                 "(e.g. https://docs.example.net/imsdr)")
    return value


def installed_docs_url() -> str | None:
    """The ``Documentation`` project URL of the installed imsdr, if whoever built it declared one
    (``[project.urls]`` in pyproject.toml); imsdr itself names none."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        declared = metadata("imsdr").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in declared:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation" and _DOCS_URL.fullmatch(url.strip()):
            return url.strip()
    return None


DocsUrlOpt = Annotated[str | None, typer.Option(
    "--docs-url", metavar="URL", envvar="IMSDR_DOCS_URL", show_default=False, callback=_docs_url,
    help="Where imsdr's docs/ are published (default: the installed package's Documentation URL, if it "
    "declares one): SARIF rules get helpUri URL/rules.md#RULE-ID and links into URL/domain.md.")]
InventoriesArg = Annotated[list[Path], typer.Argument(
    help="Inventory YAML files (each checked on its own).", show_default=False, dir_okay=False,
    metavar="INVENTORY...")]


CheckJobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, metavar="N", show_default=False,
    help="Processes: 2 builds and lints the DNS plan (DNS-005) in a second process while the other rules "
         "run (default: 2 where this process may use two CPUs, else 1). The report is the same either way.")]


@handle_errors
def check(inventories: InventoriesArg, fmt: CheckFormatOpt = CheckFormat.table,
          fail_on: FailOnOpt = FailOn.error, today: TodayOpt = None,
          rules_config: RulesConfigOpt = None, docs_url: DocsUrlOpt = None, jobs: CheckJobsOpt = None) -> None:
    """Check the DR design against the rule catalogue; exit 1 on findings at --fail-on, 2 on invalid input.

    Examples: `imsdr check inventory.yaml`; `imsdr check inventory.yaml --fail-on warning --format sarif >
    imsdr.sarif`"""
    from imsdr.checking import check_topology
    from imsdr.cli.common import print_error
    from imsdr.errors import InventoryError
    from imsdr.model.topology import Topology
    from imsdr.output import findings as out
    from imsdr.rules.engine import invalid_report, load_rule_settings

    settings = load_rule_settings(rules_config) if rules_config is not None else None
    jobs = jobs or default_jobs()
    level = fail_on.value
    day = dt.date.fromisoformat(today) if today else dt.date.today()
    reports = []
    invalid = False
    for inventory in inventories:
        try:
            inv, source = load(inventory)
        except InventoryError as exc:  # every format still reports it: INV-001 findings, exit 2
            print_error(exc)
            invalid = True
            reports.append(invalid_report(str(inventory), exc, day))
            continue
        topology = Topology(inv, source)
        reports.append(check_topology(topology, today=day, settings=settings, jobs=jobs))
    if fmt is CheckFormat.json:
        write_stdout(out.to_json(reports, level))  # type: ignore[arg-type]
    elif fmt is CheckFormat.sarif:
        write_stdout(out.to_sarif(reports, docs_url or installed_docs_url()))
    elif fmt is CheckFormat.markdown:
        write_stdout("\n".join(out.to_markdown(r, level, heading_level=1) for r in reports))  # type: ignore[arg-type]
    elif fmt is CheckFormat.github:
        write_stdout("".join(out.to_github(r, level) for r in reports))  # type: ignore[arg-type]
    elif fmt is CheckFormat.gitlab:
        write_stdout(out.to_gitlab(reports))
    else:
        for report in reports:
            if report.deployment != "invalid":  # its problems are on stderr already
                _print_table(report, level)
    raise typer.Exit(2 if invalid else max(r.exit_code(level) for r in reports))  # type: ignore[arg-type]


def _print_table(report: CheckReport, fail_on: str) -> None:
    if plain_output():  # (before rich is imported: plain lines need none of it)
        _print_lines(report, fail_on)
        return
    from rich.table import Table
    from rich.text import Text

    from imsdr.diagnostics import Severity

    console = stdout()
    styles = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
    titles = {Severity.ERROR: "ERRORS", Severity.WARNING: "WARNINGS", Severity.INFO: "INFO"}

    def cell(message: str, extra: str) -> Text:
        text = Text(message)
        if extra:
            text.append("\n" + extra, style="dim")
        return text

    def new_table(title: str, style: str) -> Table:
        table = Table(title=title, title_style=style, title_justify="left", show_lines=True, expand=False)
        table.add_column("rule", no_wrap=True)
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("finding")
        return table

    for severity in Severity:
        found = [f for f in report.findings if f.severity is severity]
        if not found:
            continue
        table = new_table(f"{titles[severity]} ({len(found)})", styles[severity])
        for f in found:
            table.add_row(f.rule_id, str(f.location.line) if f.location else "-",
                          cell(f.message, f"fix: {f.hint}" if f.hint else ""))
        console.print(table)
    if report.waived:
        table = new_table(f"WAIVED ({len(report.waived)})", "dim")
        for w in report.waived:
            loc = w.finding.location
            table.add_row(w.finding.rule_id, str(loc.line) if loc else "-",
                          cell(w.finding.message, f"waived: {w.reason} (expires {w.expires.isoformat()})"))
        console.print(table)
    counts = report.counts()
    passed = report.passed(fail_on)  # type: ignore[arg-type]
    verdict = Text("passed", style="green") if passed else Text("failed", style="bold red")
    ran = sum(1 for s in report.rules if s.status == "on")
    summary = Text(f"{report.file}: ")
    summary.append(verdict)
    summary.append(f" (fail on {fail_on}): {counts['error']} error(s), {counts['warning']} warning(s), "
                   f"{counts['info']} info, {counts['waived']} waived; {ran} rules run")
    console.print(summary, soft_wrap=True)  # one line a pipeline can grep, at any width


def _print_lines(report: CheckReport, fail_on: str) -> None:
    """The findings for a pipe or a CI log: one ``FILE:LINE:COL: SEVERITY RULE message`` line each
    (the fix after `` — fix: ``), waived ones marked, then the summary line."""
    from imsdr.diagnostics import Severity
    from imsdr.output.findings import finding_line

    lines = [finding_line(report.file, f) for severity in Severity for f in report.findings
             if f.severity is severity]
    lines += [finding_line(report.file, w.finding, waived=f"{w.reason} (expires {w.expires.isoformat()})")
              for w in report.waived]
    write_stdout("".join(f"{line}\n" for line in lines) + _summary_line(report, fail_on) + "\n")


def _summary_line(report: CheckReport, fail_on: str) -> str:
    counts = report.counts()
    verdict = "passed" if report.passed(fail_on) else "failed"  # type: ignore[arg-type]
    ran = sum(1 for s in report.rules if s.status == "on")
    return (f"{report.file}: {verdict} (fail on {fail_on}): {counts['error']} error(s), {counts['warning']} "
            f"warning(s), {counts['info']} info, {counts['waived']} waived; {ran} rules run")


RuleIdArg = Annotated[str | None, typer.Argument(
    metavar="RULE-ID",     help="A rule id (e.g. GEO-001) to explain.", show_default=False)]
RulesFormatOpt = Annotated[RulesFormat, typer.Option("--format", "-f", callback=text_is_plain_table,
                                                   help="Output format (text: the table as plain lines).")]


DomainOpt = Annotated[bool, typer.Option(
    "--domain", help="Print the domain reference the rules cite as 'domain.md §N' (Markdown).")]


@handle_errors
def rules(rule_id: RuleIdArg = None, fmt: RulesFormatOpt = RulesFormat.table, domain: DomainOpt = False) -> None:
    """List the rule catalogue, or explain one rule (its reason and a failing and a passing example).

    Examples: `imsdr rules`; `imsdr rules GEO-001`"""
    from imsdr.errors import ImsdrError
    from imsdr.output import findings as out
    from imsdr.rules.registry import all_rules, get_rule, suggest

    if domain:
        from imsdr.reference import domain_reference

        write_stdout(domain_reference())
        return
    if rule_id is not None:
        rule = get_rule(rule_id)
        if rule is None:
            close = suggest(rule_id)
            hint = f"; did you mean {close}?" if close else ""
            raise ImsdrError(f"unknown rule id {rule_id!r}{hint} (`imsdr rules` lists them)")
        if fmt is RulesFormat.json:
            from imsdr.output.jsonout import dumps, envelope

            write_stdout(dumps(envelope("rule", out.rule_to_dict(rule))))
        else:
            write_stdout(out.rule_markdown(rule, heading_level=1 if fmt is RulesFormat.table else 3))
        return
    catalogue = all_rules()
    if fmt is RulesFormat.json:
        write_stdout(out.rules_json(catalogue))
    elif fmt is RulesFormat.markdown:
        write_stdout(out.rules_markdown(catalogue))
    else:
        from rich.table import Table

        table = Table(title=f"{len(catalogue)} DR design rules", title_justify="left")
        table.add_column("rule", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("summary")
        table.add_column("applies")
        for r in catalogue:
            table.add_row(r.id, r.severity.value, r.summary, "production" if r.production_only else "all")
        stdout().print(table)


GraphFormatOpt = Annotated[GraphFormat, typer.Option("--format", "-f", help="Diagram format.")]
SiteOpt = Annotated[str | None, typer.Option(
    "--site", metavar="SITE", show_default=False,
    help="Only this site's elements, their pair/pool peers and the local networks and DR SBCs they touch.")]

GraphFailOpt = Annotated[list[str] | None, typer.Option(
    "--fail", metavar="ID", show_default=False,
    help="Draw the failed state instead (Mermaid): what fails (a site, element, region, power feed or "
         "route, as `simulate --fail`) in red and what takes over, as the site pages draw a site's "
         "failure. Repeatable.")]


@handle_errors
def graph(inventory: InventoryArg, fmt: GraphFormatOpt = GraphFormat.mermaid, site: SiteOpt = None,
          fail: GraphFailOpt = None) -> None:
    """Export the topology (sites as groups, elements, redundancy and DR links) as Mermaid, DOT or JSON.

    Examples: `imsdr graph inventory.yaml > topology.mmd`; `imsdr graph inventory.yaml --site site-a --format
    dot`; `imsdr graph inventory.yaml --fail site-b`"""
    import difflib

    from imsdr.errors import ImsdrError
    from imsdr.model.topology import Topology
    from imsdr.output.topology import to_dot, to_json, to_mermaid

    inv, source = load(inventory)
    topo = Topology(inv, source)
    if fail:
        if site is not None or fmt is not GraphFormat.mermaid:
            raise ImsdrError("--fail draws the whole failed state in Mermaid: it takes neither --site nor "
                             "--format dot/json")
        write_stdout(_failed_state(topo, fail))
        return
    if site is not None and site not in topo.sites:
        close = difflib.get_close_matches(site, list(topo.sites), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (sites: {', '.join(topo.sites)})"
        raise ImsdrError(f"{inventory}: unknown site {site!r}{hint}")
    if fmt is GraphFormat.json:
        write_stdout(to_json(topo, site, str(inventory)))
        return
    if fmt is GraphFormat.dot:
        write_stdout(to_dot(topo, site))
        return
    import sys

    from imsdr.output.mermaid_check import mermaid_limit_problems

    text = to_mermaid(topo, site)
    write_stdout(text)
    for problem in mermaid_limit_problems(text):
        sys.stderr.write(f"warning: the diagram has {problem}: GitHub and most viewers will not draw it; "
                         "draw one site (--site ID) or use --format dot\n")


def _failed_state(topo: Topology, fail: list[str]) -> str:
    """Simulate ``fail`` and draw it as the site pages do (imsdr.output.topology.failed_state_mermaid)."""
    from imsdr.output.topology import failed_state_mermaid, lost_local_networks
    from imsdr.scenarios.simulate import simulate

    report = simulate(topo, list(fail))
    failed = [f.id for f in report.failed]
    takeovers = {f.id: list(f.takeover) for f in report.failed}
    sbcs = [f.id for f in report.failed if f.element_type == "sbc"]
    return failed_state_mermaid(topo, failed, takeovers, lost_local_networks(topo, sbcs))
