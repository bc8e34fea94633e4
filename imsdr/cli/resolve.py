"""`imsdr resolve` (offline RFC 3263 over the DNS plan) and `imsdr verify` (live DNS vs the plan)."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from imsdr.cli.common import (
    Format,
    FormatOpt,
    ImsdrCommand,
    InventoryArg,
    handle_errors,
    load,
    stderr,
    stdout,
    styled,
    write_stdout,
)

if TYPE_CHECKING:
    from imsdr.resolve.rfc3263 import Resolution
    from imsdr.resolve.verify import VerifyReport


class QueryType(StrEnum):
    auto = "auto"
    NAPTR = "NAPTR"
    SRV = "SRV"
    A = "A"
    AAAA = "AAAA"


class TransportOpt(StrEnum):
    udp = "udp"
    tcp = "tcp"
    tls = "tls"


def register(app: typer.Typer) -> None:
    app.command("resolve", cls=ImsdrCommand)(resolve)
    app.command("verify", cls=ImsdrCommand)(verify)


def _plan(inventory: Any) -> tuple[Any, Any]:
    """(topology, DNS plan) of an inventory file, computed in memory (nothing written)."""
    from imsdr.dns.plan import build_dns_plan
    from imsdr.model.topology import Topology

    inv, source_map = load(inventory)
    topology = Topology(inv, source_map)
    plan = build_dns_plan(topology, lazy=True)  # a view's overrides are computed when first asked
    return topology, plan


def _warn_issues(plan: Any) -> None:
    """Plan problems found so far: the base, and the views the questions reached (lazy plan)."""
    for issue in getattr(plan, "issues", []):
        sys.stderr.write(f"warning: the DNS plan has a problem `render dns` would refuse: {issue.message}\n")


@handle_errors
def resolve(
    inventory: InventoryArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Domain, SIP URI (sip:/sips:), SRV name (_sip._udp.X) or "
                                             "E.164 number (+86...).", show_default=False)],
    source: Annotated[str | None, typer.Option(
        "--from", metavar="IP", help="Client source address: picks the view (default: a client only 'any' matches).",
    )] = None,
    rdtype: Annotated[QueryType, typer.Option(
        "--type", "-t", help="What to look up first.")] = QueryType.auto,
    transport: Annotated[TransportOpt | None, typer.Option(
        "--transport", help="Transport the client supports (default: udp, tcp and tls).")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Resolve NAME offline as a client at --from would (RFC 3263/2782, ENUM), from the plan.

    Exit 0 when it resolves to at least one address, 1 when it does not, 2 on invalid input.

    Examples: `imsdr resolve inventory.yaml ims.example.net --from 10.1.0.10`; `imsdr resolve inventory.yaml
    +861012345678`"""
    from imsdr.resolve.offline import resolve_in
    from imsdr.resolve.planview import ElementIndex, PlanSource

    topology, plan = _plan(inventory)
    res = resolve_in(PlanSource(plan), name, client=source, rdtype=rdtype.value,
                     transport=transport.value if transport else None,
                     enum_suffix=topology.network.enum_suffix, index=ElementIndex(topology))
    _warn_issues(plan)
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("resolve", res.to_dict(), str(inventory))))
    else:
        _print_resolution(res)
    if not res.resolved:
        if fmt is Format.table:
            sys.stderr.write(f"not resolved: {res.reason}\n")
        raise typer.Exit(1)


def _pct(p: Any) -> str:
    return f"{float(p) * 100:.1f}%"


def _wide() -> Any:
    """stdout console; at least 140 columns when not a terminal, so piped tables stay readable."""
    console = stdout()
    if not console.is_terminal and console.width < 140:
        console.width = 140
    return console


def _print_resolution(res: Resolution) -> None:
    from rich.table import Table

    console = _wide()
    who = f"from {res.source}" if res.source else "from any client"
    console.print(styled(res.query, "bold") + f" {who} → view " + styled(res.view or "-", "bold"), highlight=False)
    if res.enum_domain:
        console.print(f"  ENUM  {res.enum_domain} NAPTR {res.enum_naptr or '-'}", highlight=False)
        console.print(f"        → {res.uri or '-'}", highlight=False)
    if res.naptr:
        console.print(f"  NAPTR {res.naptr}", highlight=False)
    if res.srv_name:
        console.print(f"  SRV   {res.srv_name}", highlight=False)
    table = Table(caption="P(first): RFC 2782 chance of being tried first (see docs/resolve.md)")
    for column, justify in (("#", "right"), ("target", "left"), ("port/transport", "left"), ("prio", "right"),
                            ("weight", "right"), ("P(first)", "right"), ("addresses", "left"),
                            ("element", "left"), ("site", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for i, c in enumerate(res.candidates, 1):
        where = f"{_opt(c.port)}/{c.transport}" if c.transport else _opt(c.port)
        table.add_row(str(i), c.target, where, _opt(c.priority), _opt(c.weight), _pct(c.p_first),
                      "\n".join(c.addresses) or "(none)", c.element or "-", c.site or "-")
    if res.candidates:
        console.print(table)


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)


# --- verify ----------------------------------------------------------------------------------------------

@handle_errors
def verify(
    inventory: InventoryArg,
    server: Annotated[str, typer.Option("--server", metavar="HOST[:PORT]", help="DNS server HOST[:PORT] ([v6]:PORT).",
                                        show_default=False)],
    sources: Annotated[list[str] | None, typer.Option(
        "--from", metavar="IP", help="Source address to query from (repeat; each picks its view). Default: the "
                       "address the system uses to reach the server.")] = None,
    names: Annotated[list[str] | None, typer.Option(
        "--names", metavar="NAME",
        help="Only these names (repeat, or comma-separated); E.164 numbers allowed.")] = None,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds to wait for one answer.",
                                           min=0.05, max=60)] = 2.0,
    retries: Annotated[int, typer.Option(metavar="N", help="Extra tries after a timeout.", min=0, max=10)] = 2,
    workers: Annotated[int, typer.Option(metavar="N", help="Queries in flight at most.", min=1, max=256)] = 16,
    enum_sample: Annotated[int, typer.Option(metavar="N", help="Numbers queried per ENUM block (first, last, evenly "
                                                  "spaced).", min=1, max=100000)] = 16,
    deadline: Annotated[float, typer.Option(metavar="SECONDS",
        help="Seconds the whole run may take; then it stops with exit 2 (no verdict). It also stops when "
             "3 x --workers questions in a row (at least 20) time out.", min=1, max=86400)] = 600.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """Query a live DNS server from each source and compare with the plan: drift per name and view.

    Exit 0 when every answer matches the plan, 1 on drift, 2 on invalid input or an unreachable server.

    Examples: `imsdr verify inventory.yaml --server 10.0.0.53`; `imsdr verify inventory.yaml --server
    127.0.0.1:5353 --from 10.1.0.10 --format json`"""
    import dns.exception as dns_exception
    import dns.name as dns_name

    from imsdr.errors import ImsdrError
    from imsdr.resolve.enum import enum_domain, is_e164
    from imsdr.resolve.planview import PlanSource
    from imsdr.resolve.verify import (
        LiveQuerier,
        ServerUnreachable,
        VerifyIncomplete,
        VerifyReport,
        expectations,
        local_source_for,
        parse_server,
    )
    from imsdr.resolve.verify import verify as run

    try:
        address, port = parse_server(server)
    except ValueError as exc:
        raise ImsdrError(f"--server: {exc}") from None
    topology, plan = _plan(inventory)
    wanted: list[str] | None = None
    if names:
        wanted = []
        for item in names:
            for n in (part.strip() for part in item.split(",")):
                if not n:
                    continue
                name = enum_domain(n, plan.enum_suffix) if is_e164(n) else n
                try:
                    dns_name.from_text(name)
                except dns_exception.DNSException as exc:
                    raise ImsdrError(f"--names: {n!r} is not a DNS name: {exc}") from None
                wanted.append(name.rstrip("."))
    clients: list[str | None] = []
    for src in sources or []:
        import ipaddress

        try:
            clients.append(ipaddress.ip_address(src).compressed)
        except ValueError:
            raise ImsdrError(f"--from: {src!r} is not an IP address") from None
    explicit = bool(clients)
    if not clients:
        try:
            clients = [local_source_for(address, port)]
        except OSError as exc:
            raise ImsdrError(f"cannot reach {address} port {port}: {exc}") from None
    source = PlanSource(plan)
    try:
        questions, chosen = expectations(source, plan, clients, names=wanted, enum_sample=enum_sample)
    except ValueError as exc:
        raise ImsdrError(str(exc)) from None
    _warn_issues(plan)
    querier = LiveQuerier(address, port, timeout=timeout, retries=retries)
    probe_name = questions[0].qname if questions else None
    try:
        if probe_name is not None:
            for client in clients:
                querier.probe(client if explicit else None, probe_name)
    except ServerUnreachable as exc:
        raise ImsdrError(str(exc)) from None
    if not explicit:
        questions = [q.__class__(None, q.view, q.qname, q.rdtype, q.expected, q.note) for q in questions]
    report = VerifyReport(server=address, port=port, sources=chosen, enum_sample=enum_sample)
    try:
        report.drift, report.checked, report.tcp_fallbacks = _run_with_progress(
            run, questions, querier, workers, deadline)
    except VerifyIncomplete as exc:
        raise ImsdrError(str(exc)) from None
    if not explicit:
        for d in report.sources:
            d["system_default"] = True
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("verify", report.to_dict(), str(inventory))))
    else:
        _print_report(report)
    if not report.ok:
        raise typer.Exit(1)


def _run_with_progress(run: Any, questions: list[Any], querier: Any,
                       workers: int, deadline: float) -> tuple[list[Any], int, int]:
    show = len(questions) >= 200 and sys.stderr.isatty()
    if not show:
        return run(questions, querier, workers=workers, deadline=deadline)  # type: ignore[no-any-return]
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("verify"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=stderr(), transient=True) as progress:
        task = progress.add_task("verify", total=len(questions))
        return run(questions, querier, workers=workers, deadline=deadline,  # type: ignore[no-any-return]
                   progress=lambda n: progress.advance(task, n))


def _print_report(report: VerifyReport) -> None:
    from rich.table import Table

    console = _wide()
    views = ", ".join(f"{s['source']}{' (system default)' if s.get('system_default') else ''} → {s['view']}"
                      for s in report.sources)
    console.print(f"verify {report.server} port {report.port}: {report.checked} answers checked ({views})",
                  highlight=False)
    if report.ok:
        console.print(styled("no drift", "green") + ": the live DNS matches the plan")
        return
    table = Table(title=f"{len(report.drift)} difference(s) from the plan")
    for column in ("view", "name", "type", "kind", "detail"):
        table.add_column(column, overflow="fold")
    for d in report.drift:
        table.add_row(d.view, d.name, d.rdtype, d.kind, d.detail)
    console.print(table)
