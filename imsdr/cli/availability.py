"""`imsdr availability`: availability per service and local network, with its cross-check."""

from __future__ import annotations

from typing import Annotated

import typer

from imsdr.analysis import cyclic_gc_paused
from imsdr.cli.capacity import FormatOpt, ReportFormat, _analysis
from imsdr.cli.common import ImsdrCommand, InventoryArg, handle_errors, stdout, write_stdout


def register(app: typer.Typer) -> None:
    app.command("availability", cls=ImsdrCommand)(availability)


@handle_errors
def availability(
    inventory: InventoryArg,
    fmt: FormatOpt = ReportFormat.table,
    simulate: Annotated[int, typer.Option(
        "--simulate", metavar="N", min=0, max=1_000_000, show_default=False,
        help="Also simulate N years of failures and repairs and compare (Monte Carlo, 95 % interval).")] = 0,
    seed: Annotated[int, typer.Option("--seed", metavar="N", min=0, help="Random seed of --simulate.")] = 1,
) -> None:
    """Availability, downtime and user-minutes lost per year of every service and local network.

    From MTBF/MTTR per element, shared-risk events and the plan's switchover times: minimal cut
    sets up to availability.max_cut_order, outage and switchover loss, Fussell–Vesely importance
    and what to fix first (docs/availability.md). Exit 1 when a service is below its
    network.availability_targets value (AVAIL-001) or a simulation interval misses the analytic figure.

    Examples: `imsdr availability inventory.yaml`; `imsdr availability inventory.yaml --simulate 1000 --format json`"""
    analysis = _analysis(inventory)
    report = analysis.availability
    estimate = None
    if simulate:
        from imsdr.availability.montecarlo import simulate as run_simulation

        estimate = run_simulation(analysis.availability_model, report, simulate, seed)
    with cyclic_gc_paused():
        if fmt is ReportFormat.json:
            from imsdr.output.availability import availability_to_dict
            from imsdr.output.jsonout import dump, envelope

            # in pieces: the national report is ~18 MB of JSON
            dump(envelope("availability", availability_to_dict(report, estimate), str(inventory)), write_stdout)
        elif fmt is ReportFormat.markdown:
            from imsdr.output.availability import availability_markdown

            write_stdout(availability_markdown(report, estimate))
        else:
            from imsdr.output.availability import availability_tables

            availability_tables(stdout(), report, estimate)
    if any(r.below_target for r in report.services) or (estimate and not all(e.contains for e in estimate.rows)):
        raise typer.Exit(1)
