"""`imsdr plan`: validate → check → capacity → scenarios → DNS + runbooks + plan.json, atomically."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from imsdr.cli.common import (
    TEMPLATE_MAX_OUTPUT_MIB,
    TEMPLATE_TIMEOUT_S,
    ForceOpt,
    ImsdrCommand,
    InventoryArg,
    TemplateMaxOutputOpt,
    TemplateTimeoutOpt,
    default_jobs,
    handle_errors,
    output_target,
    progress,
    stdout,
    styled,
    template_limits,
    text_is_plain_table,
    write_stdout,
)


class FailOn(str, Enum):  # noqa: UP042 - same pattern as common.Format
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


OutOpt = Annotated[Path, typer.Option(
    "--out", "-o", file_okay=False, show_default=False,
    help="Output directory: dns/, runbooks/ and plan.json (replaced atomically).")]
CheckOpt = Annotated[bool, typer.Option(
    "--check", help="Render to a temporary directory, print a unified diff against OUT and exit 1 if "
    "anything differs; OUT is not touched.")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 when a finding at or above this level is open.")]
TemplatesOpt = Annotated[Path | None, typer.Option(
    "--templates", "-t", file_okay=False, show_default=False,
    help="Directory of *.md.j2 templates overriding the built-in runbook templates (sandboxed).")]


class PlanFormat(str, Enum):  # noqa: UP042 - same pattern as common.Format
    table = "table"
    text = "text"
    markdown = "markdown"
    json = "json"


PlanFormatOpt = Annotated[PlanFormat, typer.Option(
    "--format", "-f", callback=text_is_plain_table,
    help="Output format (markdown: the --check summary, ready for a pull request; text: plain lines).")]
DiffOpt = Annotated[bool, typer.Option(
    "--diff", help="With --check: also print the raw unified diff of every file (after the summary).")]
DrainOpt = Annotated[list[str] | None, typer.Option(
    "--drain", metavar="ID", show_default=False,
    help="Render dns/ in the drained state of this element or site (see `imsdr render dns --drain`). "
         "Repeatable.")]


EnumExceptionsOpt = Annotated[Path | None, typer.Option(
    "--enum-exceptions", metavar="FILE", dir_okay=False, show_default=False,
    help="ENUM exceptions provisioning file (CSV: number,kind,target,params; see docs/dns.md): "
         "ported and routed numbers get their own NAPTR, every other number its block's wildcard.")]


JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, metavar="N", show_default=False,
    help="Processes: 2 writes each part of the tree in a second process as soon as what it reads is "
         "computed (availability and diameter/ after loading, dns/ and monitoring/ after the check) while "
         "the analyses go on (default: 2 where this process may use two CPUs, else 1). The files are the "
         "same either way.")]


def register(app: typer.Typer) -> None:
    app.command("plan", cls=ImsdrCommand)(plan)


@handle_errors
def plan(inventory: InventoryArg, out: OutOpt, check: CheckOpt = False, fail_on: FailOnOpt = FailOn.error,
         templates: TemplatesOpt = None, fmt: PlanFormatOpt = PlanFormat.table, force: ForceOpt = False,
         template_timeout: TemplateTimeoutOpt = TEMPLATE_TIMEOUT_S,
         template_max_output: TemplateMaxOutputOpt = TEMPLATE_MAX_OUTPUT_MIB, diff_: DiffOpt = False,
         drain: DrainOpt = None, enum_exceptions: EnumExceptionsOpt = None, jobs: JobsOpt = None) -> None:
    """The main job: every analysis and every rendered file for an inventory, in one directory.

    Examples: `imsdr plan inventory.yaml --out plan`; `imsdr plan inventory.yaml --out plan --check --format
    markdown` (in CI)"""
    from imsdr.plan import check_plan, write_plan

    limits = template_limits(template_timeout, template_max_output)
    jobs = jobs or default_jobs()

    if check:
        with progress(f"planning {inventory} and comparing with {out}") as stages:
            summary, diff = check_plan(inventory, out, fail_on=fail_on.value, templates_dir=templates,
                                       limits=limits, drain=tuple(drain or ()), stages=stages,
                                       enum_exceptions=enum_exceptions, jobs=jobs)
        review = diff.review
        assert review is not None
        if fmt is PlanFormat.json:
            from imsdr.output.jsonout import dumps, envelope

            payload = {"up_to_date": diff.clean, "added": diff.added, "removed": diff.removed,
                       "changed": diff.changed, "review": review.to_dict(), "diff": diff.diff}
            write_stdout(dumps(envelope("plan-check", payload, str(inventory))))
        else:
            if fmt is PlanFormat.markdown:
                from imsdr.output.plan_review import review_markdown

                write_stdout(review_markdown(review, str(out)))
            elif review.changes:
                _print_review(review)
            if diff_:
                write_stdout(diff.diff)
            if diff.clean:
                sys.stderr.write(f"{out}: up to date\n")
            else:
                sys.stderr.write(f"{out}: out of date: {len(diff.changed)} changed, {len(diff.added)} new, "
                                 f"{len(diff.removed)} removed (run without --check to update)\n")
        if not diff.clean:
            raise typer.Exit(1)
        if not summary["passed"]:
            raise typer.Exit(1)
        return

    target = output_target(out, force, inventory, templates)
    with progress(f"planning {inventory} into {out}") as stages:
        summary = write_plan(inventory, target, fail_on=fail_on.value, templates_dir=templates,
                             limits=limits, drain=tuple(drain or ()), stages=stages,
                             enum_exceptions=enum_exceptions, jobs=jobs)
    if fmt is PlanFormat.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("plan", summary, str(inventory))))
    else:
        print_summary(summary, out)
    if not summary["passed"]:
        raise typer.Exit(1)


def _print_review(review: Any) -> None:
    from rich.table import Table

    counts = review.counts()
    title = "; ".join(f"{part}: +{c['add']} -{c['remove']} ~{c['change']}" for part, c in sorted(counts.items()))
    table = Table(title=f"imsdr plan --check: {title}", title_justify="left")
    for column in ("", "part", "where", "what", "old", "new"):
        table.add_column(column, overflow="fold")
    sign = {"add": "+", "remove": "-", "change": "~"}
    for c in review.changes:
        table.add_row(sign[c.action], c.part, c.where, c.what, c.old, c.new)
    stdout().print(table)


def print_summary(summary: dict[str, Any], out: Path) -> None:
    from rich.table import Table

    table = Table(title=f"imsdr plan: {summary['network']}",
                  caption=f"written to {out}/ (plan.json has the details)")
    table.add_column("stage")
    table.add_column("verdict")
    table.add_column("details")
    check = summary["check"]
    counts = check.get("counts") or {}
    table.add_row("check", _verdict(check.get("passed")),
                  f"{counts.get('error', 0)} errors, {counts.get('warning', 0)} warnings, "
                  f"{counts.get('info', 0)} info, {counts.get('waived', 0)} waived")
    for key in ("capacity", "scenarios"):
        part = summary.get(key)
        if part:
            table.add_row(key, _verdict(part.get("passed")), str(part.get("details", "")))
    dns = summary.get("dns") or {}
    dns_files = [f for f in summary["files"] if f["path"].startswith("dns/")]
    detail = f" ({dns['details']})" if dns else ""
    table.add_row("dns", "written", f"{len(dns_files)} files in {out}/dns{detail}")
    table.add_row("runbooks", "written",
                  f"{len(summary['runbooks'])} pages in {out}/runbooks (start at README.md)")
    stdout().print(table)
    for line in check.get("failing", [])[:10]:
        sys.stderr.write(f"failing: {line}\n")


def _verdict(passed: Any) -> Any:
    if passed is None:
        return "—"
    return styled("pass", "green") if passed else styled("fail", "red")
