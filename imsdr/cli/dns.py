"""`imsdr render dns`: BIND zone files, one named.conf per DNS server and Kamailio dispatcher lists."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from imsdr.cli import common

if TYPE_CHECKING:
    from rich.table import Table

    from imsdr.dns.render import RenderReport, WrittenFile


def register(render_app: typer.Typer) -> None:
    render_app.command("dns", cls=common.ImsdrCommand)(render_dns)


@common.handle_errors
def render_dns(
    inventory: common.InventoryArg,
    out: common.OutDirOpt,
    serial: Annotated[int | None, typer.Option(
        "--serial", metavar="SERIAL", min=1, max=4294967295,
        help="SOA serial for every zone (default: keep it when a zone is unchanged, else "
             "max(today's YYYYMMDD00, previous + 1)).")] = None,
    keys: Annotated[Path | None, typer.Option(
        "--keys", metavar="FILE", dir_okay=False,
        help="TSIG keys file (outside --out) to complete: a key per view is generated when missing; the "
             "file keeps its owner, group and mode (new: 0640, the directory's group) and may hold only "
             "key statements; the rendered files only name the keys.")] = None,
    drain: Annotated[list[str] | None, typer.Option(
        "--drain", metavar="ID",
        help="Render the drained state: leave this element (or every element of this site) out of "
             "every answer and dispatcher list; DRAIN.md lists the record changes and reload "
             "commands. Repeatable.")] = None,
    enum_exceptions: Annotated[Path | None, typer.Option(
        "--enum-exceptions", metavar="FILE", dir_okay=False,
        help="ENUM exceptions provisioning file (CSV: number,kind,target,params; see docs/dns.md) "
             "rendered into the block zones.")] = None,
    fmt: common.FormatOpt = common.Format.table,
    force: common.ForceOpt = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help="Table: list every file written, not a summary per kind (json always lists every "
                      "file, and so does README.md in OUT).")] = False,
) -> None:
    """Write BIND zones (access and core home domains, ENUM), one named.conf per DNS server and
    Kamailio dispatcher lists. Exit 2 (nothing written) when the DNS lint refuses the plan.

    The table lists every file of a small network; a large one (thousands of per-view zone files)
    gets a count per kind of file (--all lists every file).

    Examples: `imsdr render dns inventory.yaml --out dns --keys /etc/bind/imsdr-keys.conf`; `imsdr render dns
    inventory.yaml --out dns-drained --drain site-a`"""
    import sys

    from imsdr.dns.render import render_dns as render
    from imsdr.model.topology import Topology

    target = common.output_target(out, force, inventory)
    inv, source = common.load(inventory)
    exceptions = None
    if enum_exceptions is not None:
        from imsdr.dns.enum_exceptions import load_enum_exceptions

        exceptions = load_enum_exceptions(enum_exceptions, inv.enum_blocks)
    with common.stage(f"rendering DNS into {out}"):
        report = render(Topology(inv, source, exceptions), target, inventory.name, serial=serial, keys=keys,
                        drain=tuple(drain or ()))
    for note in report.notes:
        sys.stderr.write(f"note: {note}\n")
    if report.keys_added:
        sys.stderr.write(f"{keys}: {len(report.keys_added)} TSIG key(s) generated: {', '.join(report.keys_added)}\n")
    if fmt is common.Format.json:
        from imsdr.output.jsonout import dumps, envelope

        common.write_stdout(dumps(envelope("render-dns", {
            "out": str(out),
            "views": report.views,
            "files": [f.to_dict() for f in report.files],
            "notes": report.notes,
            "drain": report.drain.to_dict() if report.drain else None,
            "failback": report.failback.to_dict() if report.failback else None,
        }, str(inventory))))
        return
    common.stdout().print(_files_table(report, out, show_all))
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
        for r in changes.live_reloads():
            common.write_stdout(f"{r.element}: {r.command}\n")
        down = sorted({r.element for r in changes.reloads if r.down} | set(changes.demoted))
        if down:
            sys.stderr.write(f"skipped (drained, down): {', '.join(down)}\n")
        if report.drain is not None and changes.promoted:
            sys.stderr.write(f"promoted to primary (every primary is drained): {', '.join(changes.promoted)}; "
                             f"{', '.join(changes.demoted)} comes back as its secondary first (see DRAIN.md)\n")


def _files_table(report: RenderReport, out: Path, show_all: bool) -> Table:
    """Every file written (small networks, or ``show_all``), else one row per kind of file: a
    national plan writes ten thousand per-view zone files, which nobody reads in a terminal and
    which cost Rich seconds to lay out."""
    from rich.table import Table

    from imsdr.output import SUMMARY_ABOVE

    files = report.files
    if show_all or len(files) <= SUMMARY_ABOVE:
        table = Table(title=f"imsdr render dns -> {out}", caption=f"{len(report.views)} views")
        for column, justify in (("file", "left"), ("kind", "left"), ("view", "left"),
                                ("records", "right"), ("serial", "right")):
            table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for f in files:
            table.add_row(f.path, f.kind, f.view or ("shared" if f.kind == "zone" else ""),
                          str(f.records) if f.kind != "readme" else "",
                          str(f.serial) if f.serial is not None else "")
        return table
    groups: dict[tuple[str, str], list[WrittenFile]] = {}
    for f in files:
        where = ("per view" if f.view else "shared") if f.kind == "zone" else f.view or ""
        groups.setdefault((f.kind, where), []).append(f)
    table = Table(title=f"imsdr render dns -> {out} (summary)",
                  caption=f"{len(files):,} files, {len(report.views)} views; --all lists every file "
                          "(so does README.md in the output directory)")
    for column, justify in (("kind", "left"), ("view", "left"), ("files", "right"), ("records", "right"),
                            ("serials", "right")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for (kind, where), group in groups.items():
        serials = sorted({f.serial for f in group if f.serial is not None})
        shown = "" if not serials else str(serials[0]) if len(serials) == 1 else f"{serials[0]}..{serials[-1]}"
        table.add_row(kind, where, f"{len(group):,}",
                      f"{sum(f.records for f in group):,}" if kind in ("zone", "resolver", "dispatcher") else "",
                      shown)
    return table
