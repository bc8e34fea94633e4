"""`imsdr capacity`, `imsdr simulate` and `imsdr scenarios`."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from imsdr.analysis import cyclic_gc_paused
from imsdr.cli.common import (
    ImsdrCommand,
    InventoryArg,
    handle_errors,
    load,
    stderr,
    stdout,
    text_is_plain_table,
    write_stdout,
)

if TYPE_CHECKING:
    from imsdr.analysis import Analysis


class ReportFormat(StrEnum):
    table = "table"
    text = "text"
    json = "json"
    markdown = "markdown"


FormatOpt = Annotated[ReportFormat, typer.Option("--format", "-f", callback=text_is_plain_table,
                                                 help="Output format (text: the tables as plain lines).")]


def register(app: typer.Typer) -> None:
    app.command("capacity", cls=ImsdrCommand)(capacity)
    app.command("simulate", cls=ImsdrCommand)(simulate)
    app.command("scenarios", cls=ImsdrCommand)(scenarios)


def _analysis(path: Any) -> Analysis:
    """Load the inventory: this command's analysis of it (computed on demand, dropped at exit)."""
    from imsdr.analysis import Analysis
    from imsdr.model.topology import Topology

    inventory, source = load(path)
    return Analysis(Topology(inventory, source))


# --- capacity --------------------------------------------------------------------------------------------


ShowAllOpt = Annotated[bool, typer.Option(
    "--all", help="Table: list every check with its formula, not a summary (json/markdown always list all).")]


@handle_errors
def capacity(inventory: InventoryArg, fmt: FormatOpt = ReportFormat.table, show_all: ShowAllOpt = False) -> None:
    """Size pools, pairs, HSS, trunks, DR takeovers, site/region/feed/route loss, storms, sessions and qps.

    Every check reads the one load model (pool verdicts are the simulated loss of their members);
    the registration storm of each site and region loss, sessions against busy-hour Erlangs and DNS
    queries against the query model are checked too (docs/capacity.md). The table lists every
    check of a small network; a large one gets a summary and the checks that are not ok (--all
    lists every check). Exit 1 when any check falls short.

    Examples: `imsdr capacity inventory.yaml`; `imsdr capacity inventory.yaml --format markdown >
    capacity.md`"""
    from imsdr.capacity import capacity_to_dict

    report = _analysis(inventory).capacity
    with cyclic_gc_paused():  # the output is ~100,000 new objects nationally, none garbage
        if fmt is ReportFormat.json:
            from imsdr.output.jsonout import dumps, envelope

            write_stdout(dumps(envelope("capacity", capacity_to_dict(report), str(inventory))))
        elif fmt is ReportFormat.markdown:
            from imsdr.output.capacity_md import capacity_markdown, headroom_picture

            write_stdout(capacity_markdown(report, picture=headroom_picture(report)))
        else:
            from imsdr.output.tables import capacity_tables

            capacity_tables(stdout(), report, show_all)
    if report.verdict != "ok":
        raise typer.Exit(1)


# --- simulate --------------------------------------------------------------------------------------------


@handle_errors
def simulate(
    inventory: InventoryArg,
    fail: Annotated[
        list[str] | None,
        typer.Option(
            "--fail",
            metavar="ID",
            help="Site, element, service region, power feed or transmission route id to fail "
            "(repeatable; 'region:ID', 'power:ID', 'route:ID' when a name is ambiguous).",
            show_default=False,
        ),
    ] = None,
    radius: Annotated[
        str | None,
        typer.Option(
            "--radius", metavar="LAT,LON,KM", show_default=False,
            help="Also fail every site within KM kilometres of LAT,LON (a disaster area).",
        ),
    ] = None,
    fmt: FormatOpt = ReportFormat.table,
) -> None:
    """Fail sites, elements, regions, power feeds, transmission routes or a disaster radius.

    Reports what takes over, capacity after failover, the registration storm, switchover time and
    its parts, unserved users per local network, impact and failback.

    Exit 1 when the verdict is degraded or outage (traffic at risk or lost).

    Examples: `imsdr simulate inventory.yaml --fail site-a`; `imsdr simulate inventory.yaml --fail sbc-1
    --fail hss-a-1`"""
    from imsdr.errors import ImsdrError
    from imsdr.model.risk import Radius
    from imsdr.scenarios.simulate import simulate as run
    from imsdr.scenarios.simulate import simulation_to_dict

    try:
        area = Radius.parse(radius) if radius is not None else None
    except ValueError as exc:
        raise ImsdrError(str(exc)) from None
    analysis = _analysis(inventory)
    report = run(analysis.topology, list(fail or []), analysis.float_engine, radius=area)
    with cyclic_gc_paused():  # the output is ~100,000 new objects nationally, none garbage
        if fmt is ReportFormat.json:
            from imsdr.output.jsonout import dumps, envelope

            write_stdout(dumps(envelope("simulate", simulation_to_dict(report), str(inventory))))
        elif fmt is ReportFormat.markdown:
            from imsdr.output.capacity_md import simulation_markdown

            write_stdout(simulation_markdown(report, level=1))
        else:
            from imsdr.output.tables import simulation_tables

            simulation_tables(stdout(), report)
    if report.verdict != "no loss":
        raise typer.Exit(1)


# --- scenarios -------------------------------------------------------------------------------------------


@handle_errors
def scenarios(
    inventory: InventoryArg,
    depth: Annotated[
        int,
        typer.Option("--depth", metavar="1|2", min=1, max=2,
                     help="1: every site and element; 2: also every pair of sites."),
    ] = 1,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Table: list every scenario and the worst case of every pool and pair, not a summary "
            "(always all in json/markdown).",
        ),
    ] = False,
    fmt: FormatOpt = ReportFormat.table,
) -> None:
    """Run every site, region, power feed, transmission route and element failure (--depth 2: site pairs).

    Per scenario the verdict, worst switchover and unserved users; then the worst scenario of each
    kind and the worst case per pool, pair and type. A large network's table lists the scenarios
    with loss, the worst case per type and a summary of its pools and pairs (--all lists every
    one). Exit 1 when a depth-1 scenario loses traffic (a region loss in a lab excepted).

    Examples: `imsdr scenarios inventory.yaml`; `imsdr scenarios inventory.yaml --depth 2 --format json`"""
    from imsdr.scenarios.run import run_scenarios, scenarios_to_dict

    report = _run_with_progress(_analysis(inventory), depth, run_scenarios)
    with cyclic_gc_paused():  # the output is ~100,000 new objects nationally, none garbage
        if fmt is ReportFormat.json:
            from imsdr.output.jsonout import dumps, envelope

            write_stdout(dumps(envelope("scenarios", scenarios_to_dict(report), str(inventory))))
        elif fmt is ReportFormat.markdown:
            from imsdr.output.capacity_md import scenarios_markdown

            write_stdout(scenarios_markdown(report))
        else:
            from imsdr.output.tables import scenario_tables

            scenario_tables(stdout(), report, show_all)
    if report.depth1_loses_traffic:
        raise typer.Exit(1)


def _run_with_progress(analysis: Analysis, depth: int, run: Any) -> Any:
    """Show a progress bar on stderr (only on a terminal, and only for big sweeps)."""
    import itertools

    topology = analysis.topology

    n_sites = len(topology.sites)
    total = (
        n_sites
        + len(topology.elements)
        + (len(list(itertools.combinations(range(n_sites), 2))) if depth == 2 else 0)
    )
    console = stderr()
    if total < 2000 or not console.is_terminal:
        return run(topology, depth, engine=analysis.float_engine)
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

        return run(topology, depth, progress=tick, engine=analysis.float_engine)
