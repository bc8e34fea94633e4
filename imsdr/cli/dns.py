"""`imsdr render dns`: BIND zone files, one named.conf per DNS server and Kamailio dispatcher lists."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli.common import (
    ForceOpt,
    Format,
    FormatOpt,
    ImsdrCommand,
    InventoryArg,
    handle_errors,
    load,
    output_target,
    stage,
    stdout,
    write_stdout,
)


def register(render_app: typer.Typer) -> None:
    render_app.command("dns", cls=ImsdrCommand)(render_dns)


@handle_errors
def render_dns(
    inventory: InventoryArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory (replaced atomically).",
                                      file_okay=False)],
    serial: Annotated[int | None, typer.Option(
        "--serial", metavar="SERIAL", min=1, max=4294967295,
        help="SOA serial for every zone (default: keep it when a zone is unchanged, else "
             "max(today's YYYYMMDD00, previous + 1)).")] = None,
    keys: Annotated[Path | None, typer.Option(
        "--keys", metavar="FILE", dir_okay=False,
        help="TSIG keys file (outside --out) to complete: a key per view is generated with tsig-keygen "
             "when missing (mode 0600); the rendered files only name the keys.")] = None,
    drain: Annotated[list[str] | None, typer.Option(
        "--drain", metavar="ID",
        help="Render the drained state: leave this element (or every element of this site) out of "
             "every answer and dispatcher list; DRAIN.md lists the record changes and reload "
             "commands. Repeatable.")] = None,
    fmt: FormatOpt = Format.table,
    force: ForceOpt = False,
) -> None:
    """Write BIND zones (access and core home domains, ENUM), one named.conf per DNS server and
    Kamailio dispatcher lists. Exit 2 (nothing written) when the DNS lint refuses the plan."""
    import sys

    from imsdr.dns.render import render_dns as render
    from imsdr.model.topology import Topology

    target = output_target(out, force, inventory)
    inv, source = load(inventory)
    with stage(f"rendering DNS into {out}"):
        report = render(Topology(inv, source), target, inventory.name, serial=serial, keys=keys,
                        drain=tuple(drain or ()))
    for note in report.notes:
        sys.stderr.write(f"note: {note}\n")
    if report.keys_added:
        sys.stderr.write(f"{keys}: {len(report.keys_added)} TSIG key(s) generated: {', '.join(report.keys_added)}\n")
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("render-dns", {
            "out": str(out),
            "views": report.views,
            "files": [f.to_dict() for f in report.files],
            "notes": report.notes,
            "drain": report.drain.to_dict() if report.drain else None,
            "failback": report.failback.to_dict() if report.failback else None,
        }, str(inventory))))
        return
    from rich.table import Table

    table = Table(title=f"imsdr render dns -> {out}", caption=f"{len(report.views)} views")
    for column, justify in (("file", "left"), ("kind", "left"), ("view", "left"),
                            ("records", "right"), ("serial", "right")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for f in report.files:
        table.add_row(f.path, f.kind, f.view or ("shared" if f.kind == "zone" else ""),
                      str(f.records) if f.kind != "readme" else "",
                      str(f.serial) if f.serial is not None else "")
    stdout().print(table)
    changes = report.drain or report.failback
    if changes is not None:
        if report.drain is not None:
            sys.stderr.write(
                f"drained {', '.join(changes.drained)}: {len(changes.records)} record changes, "
                f"{len(changes.dispatcher)} dispatcher set changes; reload with the commands in "
                f"{out / 'DRAIN.md'}\n")
        else:
            sys.stderr.write(f"failing back from the drained state of {', '.join(changes.drained)}: "
                             "reload with these commands\n")
        for r in changes.reloads:
            write_stdout(f"{r.element}: {r.command}\n")
