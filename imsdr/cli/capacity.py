"""`imsdr capacity`, `imsdr simulate` and `imsdr scenarios`."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from imsdr.cli.common import InventoryArg, handle_errors, load, stderr, stdout, styled, write_stdout

if TYPE_CHECKING:
    from rich.table import Table


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


FormatOpt = Annotated[ReportFormat, typer.Option("--format", "-f", help="Output format.")]


def register(app: typer.Typer) -> None:
    app.command("capacity")(capacity)
    app.command("simulate")(simulate)
    app.command("scenarios")(scenarios)


def _topology(path: Any) -> Any:
    from imsdr.model.topology import Topology

    inventory, source = load(path)
    return Topology(inventory, source)


def _table(title: str, *columns: str, caption: str | None = None) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left", show_lines=False)
    for i, col in enumerate(columns):
        # the subject stays on one line; formulas and prose wrap
        table.add_column(col, overflow="fold", no_wrap=i == 0)
    return table


def _v(verdict: str) -> Any:
    colour = {
        "ok": "green",
        "no loss": "green",
        "fail": "bold red",
        "outage": "bold red",
        "degraded": "yellow",
        "unknown": "yellow",
    }.get(verdict, "")
    return styled(verdict, colour)


# --- capacity --------------------------------------------------------------------------------------------


@handle_errors
def capacity(inventory: InventoryArg, fmt: FormatOpt = ReportFormat.table) -> None:
    """Size N+K pools, 1+1 pairs, the HSS, CSCF load, trunks (Erlang B), DR takeovers and site loss.

    Exit 1 when any check falls short.
    """
    from imsdr.capacity import capacity_report, capacity_to_dict

    report = capacity_report(_topology(inventory))
    if fmt is ReportFormat.json:
        from imsdr.output.jsonout import dumps

        write_stdout(dumps(capacity_to_dict(report)))
    elif fmt is ReportFormat.markdown:
        from imsdr.output.capacity_md import capacity_markdown

        write_stdout(capacity_markdown(report))
    else:
        _capacity_tables(report)
    if report.verdict != "ok":
        raise typer.Exit(1)


def _capacity_tables(report: Any) -> None:
    from imsdr.capacity.formulas import fmt, pct

    out = stdout()
    n = len(report.failures())
    if report.pools:
        t = _table("N+K pools", "pool", "type", "N, K", "load", "formula", "verdict")
        for p in report.pools:
            t.add_row(
                p.id,
                p.element_type,
                f"N={len(p.members)}, K={p.spare}",
                fmt(p.load),
                "\n".join(p.formula),
                _v(p.verdict),
            )
        out.print(t)
    if report.pairs:
        t = _table("1+1 pairs", "pair", "type", "members", "formula", "verdict")
        for p in report.pairs:
            t.add_row(p.id, p.element_type, ", ".join(p.members), "\n".join(p.formula), _v(p.verdict))
        out.print(t)
    if report.hss:
        t = _table("HSS sizing with dynamic restoration data", "HSS", "formula", "verdict")
        for h in report.hss:
            t.add_row(h.id, "\n".join(h.formula), _v(h.verdict))
        out.print(t)
    if report.cscf:
        t = _table("S-CSCF load with restoration data", "pool", "formula")
        for c in report.cscf:
            t.add_row(c.id, "\n".join(c.formula))
        out.print(t)
    if report.trunks:
        t = _table("Trunks (Erlang B)", "group", "type", "formula", "verdict")
        for tr in report.trunks:
            t.add_row(tr.id, tr.element_type, "\n".join(tr.formula), _v(tr.verdict))
        out.print(t)
    if report.takeovers:
        t = _table("DR SBC and P-CSCF takeovers", "failed", "type", "load", "taken over by", "verdict")
        for tk in report.takeovers:
            t.add_row(tk.failed, tk.element_type, fmt(tk.load), "\n".join(tk.formula), _v(tk.verdict))
        out.print(t)
    if report.sites:
        t = _table("Site survivability (one site lost)", "site", "type", "formula", "verdict")
        for s in report.sites:
            t.add_row(s.site, s.element_type, s.formula, _v(s.verdict))
        out.print(t)
    for e in report.elements:
        out.print(f"{e.kind}: {e.message}")
    out.print(
        f"{report.network}: {fmt(report.subscribers)} subscribers, {fmt(report.busy_hour_erlangs)} "
        f"busy-hour Erlangs, utilisation limit {pct(report.max_utilisation)} → capacity "
        f"{_v(report.verdict)} ({n} shortfall{'s' if n != 1 else ''})"
    )


# --- simulate --------------------------------------------------------------------------------------------


@handle_errors
def simulate(
    inventory: InventoryArg,
    fail: Annotated[
        list[str], typer.Option("--fail", help="Site or element id to fail (repeatable).", show_default=False)
    ],
    fmt: FormatOpt = ReportFormat.table,
) -> None:
    """Fail sites and/or elements: what takes over, capacity after failover, switchover time and its
    parts, unserved users per local network, impact and failback.

    Exit 1 when the verdict is degraded or outage (traffic at risk or lost).
    """
    from imsdr.scenarios.simulate import simulate as run
    from imsdr.scenarios.simulate import simulation_to_dict

    report = run(_topology(inventory), list(fail))
    if fmt is ReportFormat.json:
        from imsdr.output.jsonout import dumps

        write_stdout(dumps(simulation_to_dict(report)))
    elif fmt is ReportFormat.markdown:
        from imsdr.output.capacity_md import simulation_markdown

        write_stdout(simulation_markdown(report, level=1))
    else:
        _simulation_tables(report)
    if report.verdict != "no loss":
        raise typer.Exit(1)


def _simulation_tables(report: Any) -> None:
    from imsdr.capacity.formulas import fmt, pct

    out = stdout()
    t = _table(
        f"Failure of {', '.join(report.requested)}", "failed", "type", "load", "taken over by", "switchover"
    )
    for f in report.failed:
        sw = "never: nothing takes over" if f.switchover is None else f.switchover.formula()
        t.add_row(f.id, f.element_type, f"{fmt(f.load)} {f.unit}", f.takeover_how, sw)
    out.print(t)
    if report.survivors:
        t = _table("Surviving members", "group", "survivors")
        for gid, members in report.survivors:
            t.add_row(gid, ", ".join(members) or styled("none", "bold red"))
        out.print(t)
    if report.loads:
        t = _table(
            "Load after failover", "element", "type", "before", "after", "capacity", "utilisation", "status"
        )
        for r in report.loads:
            t.add_row(
                r.id,
                r.element_type,
                fmt(r.load_before),
                fmt(r.load_after),
                "–" if r.capacity is None else fmt(r.capacity),
                "–" if r.utilisation is None else pct(r.utilisation),
                _v("ok") if r.status == "ok" else styled(r.status, "bold red"),
            )
        out.print(t)
    if report.local_networks:
        t = _table(
            "Unserved per local network", "local network", "subscribers", "unserved users", "unserved Erlangs"
        )
        for ln in report.local_networks:
            t.add_row(ln.id, fmt(ln.subscribers), fmt(round(ln.unserved_users)), fmt(ln.unserved_erlangs))
        out.print(t)
    t = _table("Impact and failback", "element", "impact", "failback")
    for f in report.failed:
        t.add_row(f.id, "\n".join(f"• {x}" for x in f.impact), "\n".join(f"• {x}" for x in f.failback))
    out.print(t)
    who = f" ({report.switchover_from})" if report.switchover_from else ""
    out.print(
        f"verdict {_v(report.verdict)}; worst switchover {fmt(report.switchover_s)} s{who}; unserved "
        f"{fmt(round(report.unserved_users))} users, {fmt(report.unserved_erlangs)} Erlangs"
    )


# --- scenarios -------------------------------------------------------------------------------------------


@handle_errors
def scenarios(
    inventory: InventoryArg,
    depth: Annotated[
        int,
        typer.Option("--depth", min=1, max=2, help="1: every site and element; 2: also every pair of sites."),
    ] = 1,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Table: list every scenario, not only those with loss (always all in json/markdown).",
        ),
    ] = False,
    fmt: FormatOpt = ReportFormat.table,
) -> None:
    """Run every single-site and single-element failure (and with --depth 2 every site pair): verdict,
    worst switchover and unserved users per scenario, then the worst case per pool, pair and type.

    Exit 1 when a depth-1 scenario loses traffic.
    """
    from imsdr.scenarios.run import run_scenarios, scenarios_to_dict

    topology = _topology(inventory)
    report = _run_with_progress(topology, depth, run_scenarios)
    if fmt is ReportFormat.json:
        from imsdr.output.jsonout import dumps

        write_stdout(dumps(scenarios_to_dict(report)))
    elif fmt is ReportFormat.markdown:
        from imsdr.output.capacity_md import scenarios_markdown

        write_stdout(scenarios_markdown(report))
    else:
        _scenario_tables(report, show_all)
    if report.depth1_loses_traffic:
        raise typer.Exit(1)


def _run_with_progress(topology: Any, depth: int, run: Any) -> Any:
    """Show a progress bar on stderr (only on a terminal, and only for big sweeps)."""
    import itertools

    n_sites = len(topology.sites)
    total = (
        n_sites
        + len(topology.elements)
        + (len(list(itertools.combinations(range(n_sites), 2))) if depth == 2 else 0)
    )
    console = stderr()
    if total < 2000 or not console.is_terminal:
        return run(topology, depth)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("scenarios"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("scenarios", total=total)

        def tick(done: int, _total: int) -> None:
            progress.update(task, completed=done)

        return run(topology, depth, progress=tick)


def _scenario_tables(report: Any, show_all: bool) -> None:
    from imsdr.capacity.formulas import fmt, pct

    out = stdout()
    rows = (
        report.rows
        if show_all or len(report.rows) <= 60
        else [r for r in report.rows if r.verdict != "no loss"]
    )
    hidden = len(report.rows) - len(rows)
    caption = f"{hidden} scenarios without loss not shown (--all lists them)" if hidden else None
    t = _table(
        f"Failure scenarios (depth {report.depth})",
        "scenario",
        "verdict",
        "switchover",
        "unserved",
        "busiest survivor",
        caption=caption,
    )
    for r in rows:
        busiest = "–" if r.busiest is None else f"{r.busiest} {pct(r.busiest_utilisation or 0)}"
        lost = f"{fmt(round(r.unserved_users))} users, {fmt(r.unserved_erlangs)} E"
        t.add_row(r.id, _v(r.verdict), f"{fmt(r.switchover_s)} s", lost, busiest)
    out.print(t)
    t = _table(
        "Worst case per pool, pair and element type",
        "subject",
        "peak utilisation",
        "caused by",
        "most unserved",
    )
    for w in report.worst:
        peak = "–" if w.utilisation is None else f"{pct(w.utilisation)} {w.element}"
        lost = f"{fmt(w.unserved)} in {w.unserved_scenario}" if w.unserved else "0"
        t.add_row(f"{w.subject} ({w.kind})", peak, w.scenario or "–", lost)
    out.print(t)
    counts = ", ".join(f"{n} {v}" for v, n in report.counts)
    verdict = (
        "a depth-1 scenario loses traffic"
        if report.depth1_loses_traffic
        else "no depth-1 scenario loses traffic"
    )
    out.print(f"{len(report.rows)} scenarios: {counts}; {verdict}")
