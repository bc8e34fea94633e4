"""`imsdr enum-update`: apply an ENUM exceptions file to a running primary (RFC 2136, TSIG)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli.common import Format, FormatOpt, ImsdrCommand, InventoryArg, handle_errors, load, write_stdout


def register(app: typer.Typer) -> None:
    app.command("enum-update", cls=ImsdrCommand)(enum_update)


@handle_errors
def enum_update(
    inventory: InventoryArg,
    enum_exceptions: Annotated[Path, typer.Option(
        "--enum-exceptions", metavar="FILE", dir_okay=False, show_default=False,
        help="ENUM exceptions provisioning file (CSV: number,kind,target,params; see docs/dns.md).")],
    server: Annotated[str, typer.Option("--server", metavar="HOST[:PORT]", show_default=False,
                                        help="The primary to update, HOST[:PORT] ([v6]:PORT).")],
    keys: Annotated[Path, typer.Option("--keys", metavar="FILE", dir_okay=False, show_default=False,
                                       help="TSIG keys file holding the view's key (render dns --keys).")],
    view: Annotated[str | None, typer.Option(
        "--view", metavar="VIEW", help="Core view whose key signs the updates (default: the first core view).",
        show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Compare only: print what would change, "
                                                            "send nothing.")] = False,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", min=0.1, max=120,
                                           help="Seconds to wait for one transfer or update.")] = 10.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Make the primary's ENUM block zones hold exactly the planned exceptions: transfer each zone
    with the view's TSIG key, send the differences as signed dynamic updates (the primaries need
    network.dns.enum_updates). Exit 0 when done (or nothing to do), 2 on invalid input or refusal.

    Examples: `imsdr enum-update inventory.yaml --enum-exceptions exceptions.csv --server 192.0.2.53 --keys
    /etc/bind/imsdr-tsig.keys`; `imsdr enum-update inventory.yaml --enum-exceptions exceptions.csv --server
    192.0.2.53 --keys /etc/bind/imsdr-tsig.keys --dry-run`"""
    from imsdr.dns.enum_exceptions import load_enum_exceptions
    from imsdr.dns.enum_update import enum_zone_view, read_tsig_secret, sync_enum_zones
    from imsdr.dns.plan import build_dns_plan
    from imsdr.errors import ImsdrError
    from imsdr.model.topology import Topology
    from imsdr.resolve.verify import parse_server

    inv, source = load(inventory)
    exceptions = load_enum_exceptions(enum_exceptions, inv.enum_blocks)
    if not inv.network.dns.enum_updates:
        raise ImsdrError("network.dns.enum_updates is false: the rendered primaries refuse dynamic updates; "
                         "set it, render and load, or render the exceptions into the zones "
                         "(render dns --enum-exceptions)")
    try:
        address, port = parse_server(server)
    except ValueError as exc:
        raise ImsdrError(f"--server {server!r}: {exc}") from None
    plan = build_dns_plan(Topology(inv, source, exceptions), lazy=True)
    view_name = enum_zone_view(plan, view)
    key_name = plan.view(view_name).key_name
    algorithm, secret = read_tsig_secret(keys, key_name)
    changes = sync_enum_zones(plan, address, port, key_name, algorithm, secret, dry_run=dry_run, timeout=timeout)
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("enum-update", {
            "server": f"{address}:{port}", "view": view_name, "key": key_name, "dry_run": dry_run,
            "exceptions": len(exceptions), "zones": [c.to_dict() for c in changes]}, str(inventory))))
    else:
        lines = [f"{c.zone}: {len(c.replaced)} name(s) set, {len(c.deleted)} removed"
                 + ("" if dry_run else f", {c.messages} update message(s)")
                 for c in changes if c.replaced or c.deleted]
        write_stdout("\n".join(lines) + "\n" if lines else "")
        total = sum(len(c.replaced) + len(c.deleted) for c in changes)
        sys.stderr.write(f"{address}:{port}: {total} ENUM name(s) {'to change' if dry_run else 'changed'} "
                         f"in {len(changes)} zone(s), signed with {key_name}\n")
