"""`imsdr import bind|kamailio|table`: a draft inventory from the network that exists."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from imsdr.cli.common import ImsdrCommand, handle_errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from imsdr.importers.draft import Draft
    from imsdr.importers.errors import ImportProblems

import_app = typer.Typer(
    help="Draft an inventory from existing BIND, Kamailio and spreadsheet data; what they cannot tell "
         "is written as 'FILL IN: ...' placeholders that `imsdr validate` lists.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Draft inventory to write (replaced atomically; "
                                                          "only a draft imsdr import wrote is replaced).",
                                      dir_okay=False)]
IntoOpt = Annotated[Path | None, typer.Option("--into", help="An earlier draft to merge this source into.",
                                              dir_okay=False, exists=True)]


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")


def _finish(build: Callable[[ImportProblems, Draft | None], Draft], out: Path, into: Path | None) -> None:
    """Run ``build`` (given the earlier draft, if any), merge, complete and write the draft."""
    import sys

    from imsdr.importers.draft import complete, merge
    from imsdr.importers.errors import ImportProblems
    from imsdr.importers.write import (
        EXCEPTIONS_MARKER,
        exceptions_path,
        exceptions_text,
        read_draft,
        render_draft,
        summary,
        write_draft,
    )

    problems = ImportProblems()
    draft = read_draft(into) if into else None
    found = build(problems, draft)
    problems.raise_if_any("import refused")
    if draft is None:
        draft = found
    else:
        for conflict in merge(draft, found):
            problems.add(str(into), 1, 1, str(conflict))
        problems.raise_if_any("import refused")
    complete(draft)
    text, remaining = render_draft(draft)
    exceptions = exceptions_path(out) if draft.enum_exceptions else None
    if exceptions is not None:
        write_draft(exceptions, exceptions_text(draft), EXCEPTIONS_MARKER)
    write_draft(out, text)
    for line in summary(draft, remaining):
        sys.stderr.write(f"{line}\n")
    if exceptions is not None:
        sys.stderr.write(f"wrote {exceptions} ({len(set(draft.enum_exceptions))} ENUM exceptions: give it to "
                         "render dns --enum-exceptions)\n")
    sys.stderr.write(f"wrote {out}\n")


@import_app.command("bind", cls=ImsdrCommand)
@handle_errors
def import_bind(
    named_confs: Annotated[list[Path], typer.Argument(
        help="named.conf of each name server (includes are followed inside its directory); with several, "
             "their zone types tell how the servers synchronise.",
        dir_okay=False, exists=True, show_default=False, metavar="NAMED_CONF")],
    out: OutOpt,
    zones_dir: Annotated[Path | None, typer.Option("--zones-dir", help="Directory zone file names are relative "
                                                   "to (default: options { directory }, else the config's).",
                                                   file_okay=False, exists=True)] = None,
    enum_suffix: Annotated[str, typer.Option("--enum-suffix", metavar="SUFFIX",
                                             help="ENUM tree suffix.")] = "e164.arpa",
    into: IntoOpt = None,
) -> None:
    """Views, ACLs, zones and zone files: home domains, elements, pools and pairs, local networks and
    sites, SBC DR order, ENUM blocks, TTLs.

    Examples: `imsdr import bind /etc/bind/named.conf --out draft.yaml`; `imsdr import bind named.conf
    --zones-dir /var/lib/bind --into draft.yaml --out draft.yaml`"""
    from imsdr.dns.names import name_problems
    from imsdr.errors import ImsdrError
    from imsdr.importers.bind import import_bind as run

    suffix = enum_suffix.removesuffix(".").lower()
    why = name_problems(suffix) if suffix and "*" not in suffix else ["not a DNS name"]
    if why:
        raise ImsdrError(f"--enum-suffix {enum_suffix!r}: {why[0]}")
    _finish(lambda problems, _into: run(named_confs, problems, zones_dir, suffix), out, into)


@import_app.command("kamailio", cls=ImsdrCommand)
@handle_errors
def import_kamailio(
    lists: Annotated[list[Path], typer.Argument(help="dispatcher.list files.", metavar="LIST...",
                                                dir_okay=False, exists=True, show_default=False)],
    out: OutOpt,
    hop: Annotated[str | None, typer.Option("--hop", help="sbc-pcscf or pcscf-icscf (default: from the "
                                            "list's imsdr header, else from the --into draft's types of the "
                                            "destinations).", metavar="HOP")] = None,
    sets: Annotated[list[str] | None, typer.Option("--set", help="SETID=ELEMENT: the element that uses a set "
                                                   "(default: from imsdr's set comments, else the --into draft's "
                                                   "element the list's file or directory name names).",
                                                   metavar="N=ID")] = None,
    into: IntoOpt = None,
) -> None:
    """SBC -> P-CSCF and P-CSCF -> I-CSCF lists: preference order, ports, probing. Destinations without
    duid= are matched to the --into draft's elements by address or FQDN.

    Examples: `imsdr import kamailio dispatcher.list --into draft.yaml --out draft.yaml`"""
    from imsdr.errors import ImsdrError
    from imsdr.importers.draft import Draft, merge
    from imsdr.importers.kamailio import HOPS, import_dispatcher, set_owner

    if hop is not None and hop not in HOPS:
        raise ImsdrError(f"--hop {hop!r}: expected one of {', '.join(HOPS)}")
    owners: dict[int, str] = {}
    for item in sets or []:
        try:
            number, ident = set_owner(item)
        except ValueError as exc:
            raise ImsdrError(f"--set {item!r}: {exc}") from None
        if owners.setdefault(number, ident) != ident:
            raise ImsdrError(f"--set {item!r}: set {number} is already given to {owners[number]!r}")

    def build(problems: ImportProblems, earlier: Draft | None) -> Draft:
        draft = Draft()
        for path in lists:
            for conflict in merge(draft, import_dispatcher(path, problems, hop, owners, earlier)):
                problems.add(str(path), 1, 1, str(conflict))
        return draft

    _finish(build, out, into)


@import_app.command("table", cls=ImsdrCommand)
@handle_errors
def import_table(
    table: Annotated[Path, typer.Argument(help="Element list: .csv (UTF-8) or .xlsx (first sheet).",
                                          dir_okay=False, exists=True, show_default=False)],
    out: OutOpt,
    into: IntoOpt = None,
) -> None:
    """The planner's element list, one row per element (columns: docs/import.md).

    Examples: `imsdr import table elements.csv --out draft.yaml`; `imsdr import table elements.xlsx --into
    draft.yaml --out draft.yaml`"""
    from imsdr.importers.table import import_table as run

    _finish(lambda problems, _into: run(table, problems), out, into)
