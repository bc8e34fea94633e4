"""`imsdr apply`: deliver a plan directory to the servers of a targets file, canary first,
verified, rolled back on failure (docs/apply.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from imsdr.cli.common import Format, FormatOpt, ImsdrCommand, handle_errors, write_stdout


def register(app: typer.Typer) -> None:
    app.command("apply", cls=ImsdrCommand)(apply)


@handle_errors
def apply(
    plan_dir: Annotated[Path | None, typer.Argument(
        metavar="[PLAN_DIR]", show_default=False, file_okay=False,
        help="The directory `imsdr plan --out` wrote (not needed with --rollback; optional with --status).")] = None,
    targets: Annotated[Path, typer.Option("--targets", metavar="FILE", dir_okay=False,
                                          help="Deployment targets file (docs/apply.md).")] = Path("targets.yaml"),
    state: Annotated[Path, typer.Option("--state", metavar="DIR", file_okay=False,
                                        help="State directory: what each target runs, its files, the journal.")]
    = Path(".imsdr-state"),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print every step in order with its expected "
                                          "output; run nothing.")] = False,
    canary: Annotated[list[str] | None, typer.Option("--canary", metavar="ID", help="The canary DNS server "
                                                     "and/or SBC (repeatable; default: the first in order).")]
    = None,
    status: Annotated[bool, typer.Option("--status", help="Show deployed versus planned per target.")] = False,
    rollback: Annotated[bool, typer.Option("--rollback", help="Return every target to the state it had "
                                           "before the last apply, verified.")] = False,
    converge_timeout: Annotated[float, typer.Option("--converge-timeout", metavar="SECONDS", min=1, max=3600,
                                                    help="How long the secondaries may take to serve the "
                                                    "new serials.")] = 60.0,
    drain: Annotated[list[str] | None, typer.Option(
        "--drain", metavar="ID", help="Render PLAN_DIR in the drained state of this element or site (as "
        "`imsdr plan --drain`, needs --inventory), apply it, then wait the runbook's drain period "
        "(repeatable).")] = None,
    failback: Annotated[bool, typer.Option("--failback", help="Render PLAN_DIR in the normal state (needs "
                                           "--inventory) and apply it: the failback of a drain.")] = False,
    inventory: Annotated[Path | None, typer.Option("--inventory", metavar="FILE", dir_okay=False,
                                                   help="Inventory YAML file for --drain and --failback.")]
    = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Apply a plan to live servers: pre-flight, canary, waves, verify; roll back on failure.

    Exit 0 when applied (or nothing to do), 1 when a pre-flight check failed or the apply was
    rolled back, 2 on invalid input or when another apply holds the lock.

    Examples: `imsdr apply plan --targets targets.yaml --state state --dry-run`; `imsdr apply
    --status --targets targets.yaml --state state`
    """
    from imsdr.apply.executor import Applier
    from imsdr.apply.targets import load_targets
    from imsdr.errors import ImsdrError

    if sum((status, rollback, dry_run)) > 1:
        raise ImsdrError("--status, --rollback and --dry-run are used one at a time")
    if plan_dir is None and not (status or rollback):
        raise ImsdrError("PLAN_DIR is needed (or --status, --rollback)")
    applier = Applier(load_targets(targets), state, converge_timeout)
    if status:
        rows = applier.status(plan_dir)
        _print_status(rows, fmt, plan_dir)
        if plan_dir is not None and any(r["differs"] for r in rows):
            raise typer.Exit(1)
        return
    if drain or failback:
        if inventory is None or plan_dir is None or rollback or (drain and failback):
            raise ImsdrError("--drain ID (or --failback) needs PLAN_DIR and --inventory, and goes without "
                             "--rollback; --drain and --failback are used one at a time")
        _render(inventory, plan_dir, tuple(drain or ()))
    result = applier.rollback() if rollback else applier.apply(plan_dir, tuple(canary or ()), dry_run)  # type: ignore[arg-type]
    if drain and result.outcome == "applied" and applier.journal is not None:
        result = _drain_period(applier, inventory, tuple(drain), result)  # type: ignore[arg-type]
    _print_result(result, fmt)
    raise typer.Exit(result.exit_code)


def _render(inventory: Path, plan_dir: Path, drain: tuple[str, ...]) -> None:
    """PLAN_DIR rendered as `imsdr plan INVENTORY --out PLAN_DIR [--drain ID]` renders it."""
    from imsdr.cli.common import default_jobs, output_target, progress
    from imsdr.plan import write_plan

    with progress(f"planning {inventory} into {plan_dir}") as stages:
        write_plan(inventory, output_target(plan_dir, False, inventory, None), fail_on="never", drain=drain,
                   stages=stages, jobs=default_jobs())


def _drain_period(applier: Any, inventory: Path, drain: tuple[str, ...], result: Any) -> Any:
    """The runbook's drain-period steps of the drained elements, run after the drained state is
    applied; one that does not reach its expected output makes the apply's result a failure."""
    from imsdr.apply.steps import ApplyFailed, drain_period_action, run_actions
    from imsdr.plan import load_topology
    from imsdr.runbook.actions import drain_period_steps

    topo = load_topology(inventory)
    actions = [drain_period_action(applier.targets, element_id, step)
               for element_id, step in drain_period_steps(topo, drain, inventory.name)]
    try:
        run_actions(actions, applier.journal)
    except ApplyFailed as failed:
        result.outcome, result.failure = "drain-incomplete", failed.entry
    result.steps += [a.step for a in actions]
    return result


def _print_status(rows: list[dict[str, Any]], fmt: Format, plan_dir: Path | None) -> None:
    from imsdr.output.jsonout import dumps, envelope

    if fmt == Format.json:
        write_stdout(dumps(envelope("apply-status", {"plan": str(plan_dir) if plan_dir else None,
                                                     "targets": rows})))
        return
    lines = [f"{'target':<16} {'kind':<9} {'deployed':<13} {'planned':<13} {'applied at':<26} state"]
    for r in rows:
        if r["deployed"] is None:
            what = "never applied"
        elif r["differs"] is None:
            what = f"{r['files']} file(s)"
        elif r["differs"]:
            what = f"differs: {len(r['differs'])} file(s) to apply"
        else:
            what = "as planned"
        lines.append(f"{r['id']:<16} {r['kind']:<9} {r['deployed'] or '-':<13} {r['planned'] or '-':<13} "
                     f"{r['applied_at'] or '-':<26} {what}")
    write_stdout("\n".join(lines) + "\n")


def _print_result(result: Any, fmt: Format) -> None:
    from imsdr.output.jsonout import dumps, envelope
    from imsdr.runbook.steps import step_text

    if fmt == Format.json:
        write_stdout(dumps(envelope("apply", {
            "outcome": result.outcome, "apply_id": result.apply_id, "journal": result.journal,
            "targets": result.targets, "failure": result.failure, "recovered": result.recovered,
            "rollback_failures": result.rollback_failures,
            "steps": [s.to_dict() for s in result.steps] if result.outcome == "dry-run" else []})))
        return
    out: list[str] = []
    if result.recovered:
        out.append(f"recovered from an interrupted apply: {', '.join(result.recovered)} back on their "
                   "previous files, verified")
    if result.outcome == "nothing":
        out.append("nothing to do: every target already runs the plan")
    elif result.outcome == "dry-run":
        for number, step in enumerate(result.steps, 1):
            out += step_text(number, step)
    elif result.outcome == "applied":
        out.append(f"applied and verified ({len(result.steps)} steps); journal {result.journal}")
    else:
        failure = result.failure or {}
        what = {"preflight-failed": "pre-flight failed, no server touched",
                "drain-incomplete": "applied the drained state, but the drain period did not end as the "
                                    "runbook expects (fail back with --failback, or wait longer)",
                "rollback-failed": "--rollback failed; the state records are unchanged (see the journal)"}.get(
            result.outcome, "failed; every target of this apply rolled back to its previous files and verified")
        if result.rollback_failures:
            what = "failed, and the rollback failed too: " + "; ".join(
                f"{f['target']}: {f['step']}" for f in result.rollback_failures)
        sys.stderr.write(f"apply {what}\n  at {failure.get('phase')} / {failure.get('target')}: "
                         f"{failure.get('step')}\n  {failure.get('output', '')[:500]}\n  journal {result.journal}\n")
    if out:
        write_stdout("\n".join(out) + "\n")
