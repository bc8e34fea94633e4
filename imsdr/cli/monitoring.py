"""`imsdr render monitoring`: Prometheus rules derived from the plan."""

from __future__ import annotations

from typing import Annotated

import typer

from imsdr.cli import common

RunbookUrlOpt = Annotated[str, typer.Option(
    "--runbook-url", metavar="URL",
    help="Where the runbook pages are published; each alert's runbook_url is URL + page + anchor "
         "(default: the plan tree's runbooks/ beside monitoring/).")]


def register(render_app: typer.Typer) -> None:
    render_app.command("monitoring", cls=common.ImsdrCommand)(monitoring)


@common.handle_errors
def monitoring(inventory: common.InventoryArg, out: common.OutDirOpt, fmt: common.FormatOpt = common.Format.table,
               force: common.ForceOpt = False, runbook_url: RunbookUrlOpt = "../runbooks/") -> None:
    """Render Prometheus alerting and recording rules that watch what the DR design assumes into OUT.

    Examples: `imsdr render monitoring inventory.yaml --out monitoring --runbook-url https://wiki/runbooks/`."""
    from imsdr.analysis import Analysis
    from imsdr.model.topology import Topology
    from imsdr.monitoring.render import monitoring_files, runbook_base, write_monitoring

    target = common.output_target(out, force, inventory)
    inv, source = common.load(inventory)
    files = monitoring_files(Analysis(Topology(inv, source)), runbook_base(runbook_url))
    write_monitoring(target, files)
    alerts = {name: text.count("\n      - alert: ") for name, text in files.items()}
    if fmt is common.Format.json:
        from imsdr.output.jsonout import dumps, envelope

        common.write_stdout(dumps(envelope("render-monitoring", {"out": str(out), "files": sorted(files),
                                                           "alerts": alerts}, str(inventory))))
        return
    from rich.table import Table

    table = Table(title=f"monitoring for {inv.network.name}", caption=f"written to {out}/")
    table.add_column("file")
    table.add_column("alerts", justify="right")
    for name in sorted(files):
        table.add_row(name, str(alerts[name]))
    common.stdout().print(table)
