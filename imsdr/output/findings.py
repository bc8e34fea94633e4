"""Check-report formatters: JSON, SARIF 2.1.0, Markdown, GitHub workflow annotations, and the
rule catalogue (Markdown / JSON). Pure functions from a report to text; the rich table for
people lives in the CLI."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from imsdr import __version__
from imsdr.diagnostics import Finding, Location, Severity
from imsdr.output.jsonout import dumps, envelope
from imsdr.output.markdown import markdown_code, markdown_text

if TYPE_CHECKING:
    from imsdr.rules.base import Rule
    from imsdr.rules.engine import CheckReport, FailOn

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SEVERITY_TITLES = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Info"}


REPORTS_FORMAT = "imsdr.checks/1"


def to_json(reports: Sequence[CheckReport], fail_on: FailOn = "error") -> str:
    """One report as ``imsdr.check/1``; several (``check A B``) as ``imsdr.checks/1`` with a list."""
    from imsdr.rules.engine import report_to_dict

    if len(reports) == 1:
        return dumps(envelope("check", report_to_dict(reports[0], fail_on), reports[0].file))
    return dumps(envelope("checks", {"format": REPORTS_FORMAT, "passed": all(r.passed(fail_on) for r in reports),
                                     "reports": [report_to_dict(r, fail_on) for r in reports]},
                          [r.file for r in reports]))


# --- SARIF --------------------------------------------------------------------------------------

SRCROOT = "%SRCROOT%"


def _artifact(file: str) -> dict[str, str]:
    """A SARIF artifactLocation: relative to the working directory (the checkout, in CI) under
    ``%SRCROOT%``, as code scanning expects; a file outside it keeps an absolute ``file:`` URI."""
    path = PurePath(file)
    if path.is_absolute():
        path = PurePath(os.path.relpath(path))
        if path.parts[:1] == ("..",):
            return {"uri": PurePath(file).as_uri()}
    return {"uri": urllib.parse.quote(path.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _first_paragraph(doc: str) -> str:
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


def _sarif_rule(rule: Rule, level: Severity, enabled: bool, docs_url: str | None) -> dict[str, Any]:
    """A reporting descriptor with the rule's whole documentation as help (its section of
    docs/rules.md, as ``imsdr rules ID`` prints it). ``helpUri`` and links to the cited domain.md
    sections only when ``docs_url`` says where imsdr's docs/ are published: SARIF wants an absolute
    URI, and imsdr knows no published address of its own."""
    page = rule_markdown(rule, heading_level=1).rstrip("\n")
    offline = (f"\n\n`imsdr rules {rule.id}` prints this text; `imsdr rules --domain` prints the domain "
               "reference it cites.")
    markdown = page
    help_uri = {}
    if docs_url:
        from imsdr.reference import link_citations

        base = docs_url.rstrip("/")
        help_uri = {"helpUri": f"{base}/rules.md#{rule.id.lower()}"}
        markdown = link_citations(page, f"{base}/domain.md")
    return {
        **help_uri,
        "id": rule.id,
        "name": rule.id.replace("-", ""),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _first_paragraph(rule.doc)},
        "help": {"text": page + offline, "markdown": markdown + offline},
        "defaultConfiguration": {"level": SARIF_LEVEL[level], "enabled": enabled},
        "properties": {"tags": ["dr-design", rule.id.split("-")[0].lower()]},
    }


def _sarif_result(f: Finding, index: dict[str, int], file: str | None = None) -> dict[str, Any]:
    text = f.message + (f" Fix: {f.hint}" if f.hint else "")
    result: dict[str, Any] = {
        "ruleId": f.rule_id,
        "level": SARIF_LEVEL[f.severity],
        "message": {"text": text},
        "properties": {"subjects": list(f.subjects), "hint": f.hint},
    }
    if f.rule_id in index:
        result["ruleIndex"] = index[f.rule_id]
    if f.location is not None:
        result["locations"] = [{
            "physicalLocation": {
                "artifactLocation": _artifact(f.location.file),
                "region": {"startLine": f.location.line, "startColumn": f.location.column},
            }
        }]
    elif file:  # e.g. an inventory that cannot be read at all: the result still names the file
        result["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(file)}}]
    return result


def to_sarif(reports: Sequence[CheckReport], docs_url: str | None = None) -> str:
    """SARIF 2.1.0: one run per inventory; every catalogue rule as a reporting descriptor (level =
    effective severity, enabled = not switched off, its documentation as help, helpUri into
    ``docs_url``/rules.md when given);
    waived findings carry an accepted suppression; an invalid inventory's problems are INV-001."""
    return dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0",
                  "runs": [_sarif_run(r, docs_url) for r in reports]})


def _sarif_run(report: CheckReport, docs_url: str | None) -> dict[str, Any]:
    rules = [_sarif_rule(s.rule, s.severity, s.status == "on", docs_url) for s in report.rules]
    index = {s.rule.id: i for i, s in enumerate(report.rules)}
    results = [_sarif_result(f, index, report.file) for f in report.findings]
    for w in report.waived:
        result = _sarif_result(w.finding, index, report.file)
        result["suppressions"] = [{
            "kind": "inSource",
            "status": "accepted",
            "justification": f"{w.reason} (waiver expires {w.expires.isoformat()})",
        }]
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "imsdr", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if report.file:
        run["artifacts"] = [{"location": _artifact(report.file)}]
    return run


# --- plain lines (pipes, CI logs, --format text) -------------------------------------------------

def finding_line(file: str, f: Finding, waived: str = "") -> str:
    """``FILE:LINE:COL: SEVERITY RULE message`` on one line (the compiler convention editors and
    CI log viewers link), the fix after `` — fix: ``; a waived finding says so and why."""
    from imsdr.diagnostics import one_line

    where = str(f.location) if f.location else one_line(file)
    text = f"{where}: {'waived' if waived else f.severity.value} {f.rule_id} {one_line(f.message)}"
    if f.hint and not waived:
        text += f" — fix: {one_line(f.hint)}"
    if waived:
        text += f" — waived: {one_line(waived)}"
    return text


# --- Markdown -----------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return markdown_text(text)


def _where(location: Location | None) -> str:
    return markdown_code(f"{location.file}:{location.line}") if location else "-"


def to_markdown(report: CheckReport, fail_on: FailOn = "error", heading_level: int = 2) -> str:
    """A Markdown section for the runbook: verdict, findings by severity, waived findings."""
    h = "#" * heading_level
    counts = report.counts()
    verdict = "passed" if report.passed(fail_on) else "failed"
    lines = [
        f"{h} DR design check" + (f": {markdown_code(report.file)}" if report.file else ""),
        "",
        f"**Verdict: {verdict}** (fail on {fail_on}) — {counts['error']} error(s), {counts['warning']} "
        f"warning(s), {counts['info']} info, {counts['waived']} waived; waivers evaluated on "
        f"{report.today.isoformat()}.",
        "",
    ]
    if not report.findings and not report.waived:
        lines += ["No findings.", ""]
    for severity in Severity:
        found = [f for f in report.findings if f.severity is severity]
        if not found:
            continue
        lines += [f"{h}# {SEVERITY_TITLES[severity]} ({len(found)})", "",
                  "| Rule | Location | Finding | Fix |", "| --- | --- | --- | --- |"]
        lines += [f"| {f.rule_id} | {_where(f.location)} | {_cell(f.message)} | {_cell(f.hint)} |"
                  for f in found]
        lines.append("")
    if report.waived:
        lines += [f"{h}# Waived ({len(report.waived)})", "",
                  "| Rule | Location | Finding | Waiver reason | Expires |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {w.finding.rule_id} | {_where(w.finding.location)} | {_cell(w.finding.message)} | "
                  f"{_cell(w.reason)} | {w.expires.isoformat()} |" for w in report.waived]
        lines.append("")
    return "\n".join(lines)


# --- GitHub workflow commands ---------------------------------------------------------------------

def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


_GH_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _gh_line(command: str, f: Finding, title: str, message: str) -> str:
    props = []
    if f.location is not None:
        props += [f"file={_gh_prop(f.location.file)}", f"line={f.location.line}", f"col={f.location.column}"]
    props.append(f"title={_gh_prop(title)}")
    return f"::{command} {','.join(props)}::{_gh_data(message)}"


def to_github(report: CheckReport, fail_on: FailOn = "error") -> str:
    """GitHub Actions annotations (``::error file=…,line=…::…``); waived findings as notices."""
    lines = []
    for f in report.findings:
        message = f.message + (f" Fix: {f.hint}" if f.hint else "")
        lines.append(_gh_line(_GH_COMMAND[f.severity], f, f"{f.rule_id} {f.severity.value}", message))
    for w in report.waived:
        message = f"{w.finding.message} (waived until {w.expires.isoformat()}: {w.reason})"
        lines.append(_gh_line("notice", w.finding, f"{w.finding.rule_id} waived", message))
    counts = report.counts()
    verdict = "passed" if report.passed(fail_on) else "failed"
    lines.append(f"imsdr check {verdict}: {counts['error']} error(s), {counts['warning']} warning(s), "
                 f"{counts['info']} info, {counts['waived']} waived")
    return "\n".join(lines) + "\n"


# --- GitLab Code Quality ---------------------------------------------------------------------------

# GitLab's five levels; a DR error is "critical" (the merge request widget lists it first), an
# info finding stays "info" (shown, never counted as a degradation of note)
_GITLAB_SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def _gitlab_path(file: str) -> str:
    """The file relative to the job's checkout (the working directory), as GitLab links it."""
    path = PurePath(file)
    if path.is_absolute():
        relative = PurePath(os.path.relpath(path))
        if relative.parts[:1] != ("..",):
            path = relative
    return path.as_posix()


def _gitlab_issue(report_file: str, f: Finding, severity: str, description: str) -> dict[str, Any]:
    import hashlib

    path = _gitlab_path(f.location.file if f.location else report_file)
    # the fingerprint names the finding, not its line: moving a block of the inventory does not
    # make GitLab report an old finding as new and the same one as fixed
    key = "\0".join((path, f.rule_id, *(f.subjects or (f.message,))))
    return {
        "type": "issue",
        "check_name": f.rule_id,
        "description": description,
        "categories": ["Bug Risk"],
        "fingerprint": hashlib.sha256(key.encode("utf-8")).hexdigest(),
        "severity": severity,
        "location": {"path": path, "lines": {"begin": f.location.line if f.location else 1}},
    }


def to_gitlab(reports: Sequence[CheckReport]) -> str:
    """A GitLab Code Quality report (``artifacts:reports:codequality``): a JSON array with one
    issue per unwaived finding (waived ones are not degradations); invalid input appears as its
    INV-001 findings."""
    issues = []
    for report in reports:
        for f in report.findings:
            description = f"{f.rule_id}: {f.message}" + (f" Fix: {f.hint}" if f.hint else "")
            issues.append(_gitlab_issue(report.file, f, _GITLAB_SEVERITY[f.severity], description))
    issues.sort(key=lambda issue: (issue["location"]["path"], issue["location"]["lines"]["begin"],
                                   issue["check_name"], issue["fingerprint"]))
    return dumps(issues)


# --- rule catalogue ---------------------------------------------------------------------------------

def rule_to_dict(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "severity": rule.severity.value, "summary": rule.summary,
            "production_only": rule.production_only, "doc": rule.doc}


def rules_json(rules: Iterable[Rule]) -> str:
    return dumps(envelope("rules", {"rules": [rule_to_dict(r) for r in rules]}))


def rule_markdown(rule: Rule, heading_level: int = 3) -> str:
    applies = "production deployments only" if rule.production_only else "all deployments"
    return "\n".join([
        f"{'#' * heading_level} {rule.id}",
        "",
        f"**{rule.summary}.** Default severity: **{rule.severity.value}**. Applies to: {applies}.",
        "",
        rule.doc.strip(),
        "",
    ])


JSON_KEYS_DOC = """\
## JSON output of `imsdr check --format json`

The keys are stable; new keys may be added, existing ones keep their meaning.

| Key | Meaning |
| --- | --- |
| `format` | always `imsdr.check/1` |
| `file` | the inventory file checked |
| `today` | the date waivers were evaluated on (ISO 8601; `--today`) |
| `deployment` | `production` or `lab` (lab skips production-only rules) |
| `fail_on` | the `--fail-on` level used for `passed` |
| `passed` | `true` when no unwaived finding is at or above `fail_on` (exit 0), else `false` (exit 1) |
| `counts` | `error`, `warning`, `info`: unwaived findings per severity; `waived`: waived findings |
| `findings[]` | unwaived findings, sorted by severity, rule, line |
| `findings[].rule` | rule id, e.g. `GEO-001` |
| `findings[].severity` | `error`, `warning` or `info` (after re-levelling in `rules:`) |
| `findings[].message` | what is wrong and why it matters |
| `findings[].subjects` | ids of every element, site, group or local network involved |
| `findings[].location` | `{file, line, column}` of the thing to fix, or `null` |
| `findings[].hint` | how to fix it |
| `waived[]` | findings suppressed by a waiver: the same keys plus `waiver` |
| `waived[].waiver` | `{reason, expires, location}` of the waiver that matched |
| `rules[]` | every rule: `id`, `severity` (effective), `default_severity`, `status` |
| `rules[].status` | `on`, `off` (switched off in `rules:`), `not-applicable` (production-only rule, lab) |

Other formats: `--format sarif` writes SARIF 2.1.0 (rules as reporting descriptors, waived findings
with an accepted `inSource` suppression); `--format github` writes workflow annotations
(`::error file=…,line=…,col=…,title=…::…`; info and waived findings as `::notice`);
`--format markdown` writes the section embedded in runbooks.
"""

SETTINGS_DOC = """\
## Switching rules off, re-levelling, waivers

```yaml
rules:
  GEO-004: off        # never run this rule
  DEP-002: info       # report at another severity (error, warning, info)
waivers:
  - rule: HSS-002
    scope: [hss-pool]           # ids of elements, sites, groups or local networks; empty: everything
    reason: daily backup accepted by the operator
    expires: 2027-06-30         # valid up to and including this date
```

The same `rules:` map can live in a separate file passed with `imsdr check --rules-config FILE`
(e.g. a stricter policy for CI); its settings override the inventory's. An unknown rule id in
`rules:`, in a rules config or in a waiver is an input error (exit 2, with its file:line). A
waiver matches a finding of its rule when its scope is empty or names at least one of the finding's
subjects. Waived findings are still reported, with the reason and expiry; an expired waiver no
longer suppresses anything and is reported itself (WAIVER-001). Rules marked "production
deployments only" do not run for `network.deployment: lab` (one site, one region by design).
"""


def rules_markdown(rules: Sequence[Rule]) -> str:
    """docs/rules.md: the whole catalogue, generated from the registry."""
    lines = [
        "# DR design rule catalogue",
        "",
        "<!-- Generated by `imsdr rules --format markdown > docs/rules.md`; do not edit by hand. -->",
        "",
        "`imsdr check INVENTORY` runs these rules. `imsdr rules` lists them and `imsdr rules ID` "
        "explains one. Severities: **error** (the design does not survive a failure it must survive), "
        "**warning** (it survives, with a cost or risk to state), **info** (worth knowing).",
        "",
        "| Rule | Severity | Summary |",
        "| --- | --- | --- |",
    ]
    lines += [f"| [{r.id}](#{r.id.lower()}) | {r.severity.value} | {_cell(r.summary)} |" for r in rules]
    lines += ["", SETTINGS_DOC, JSON_KEYS_DOC, "## Rules", "",
              "Each rule's reason cites the [domain reference](domain.md) as `domain.md §N`.", ""]
    for rule in rules:
        lines.append(rule_markdown(rule))
    from imsdr.reference import link_citations

    return link_citations("\n".join(lines).rstrip("\n") + "\n")
