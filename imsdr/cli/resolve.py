"""`imsdr resolve` (offline RFC 3263 over the DNS plan) and `imsdr verify` (live DNS vs the plan).

One module past 600 lines: both commands share their options (servers, keys, drain,
exceptions, formats) and their table and JSON shapes, which would otherwise be declared twice.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from imsdr.cli.common import (
    Format,
    FormatOpt,
    ImsdrCommand,
    InventoryArg,
    handle_errors,
    load,
    stdout,
    styled,
    text_is_plain_table,
    write_stdout,
)

if TYPE_CHECKING:
    from imsdr.resolve.rfc3263 import Resolution


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
    app.command("exporter", cls=ImsdrCommand)(exporter)


EnumExceptionsOpt = Annotated[Path | None, typer.Option(
    "--enum-exceptions", metavar="FILE", dir_okay=False, show_default=False,
    help="ENUM exceptions provisioning file the zones were rendered with (see docs/dns.md).")]


def _plan(inventory: Any, enum_exceptions: Path | None = None) -> tuple[Any, Any]:
    """(topology, DNS plan) of an inventory file, computed in memory (nothing written)."""
    from imsdr.dns.plan import build_dns_plan
    from imsdr.model.topology import Topology

    inv, source_map = load(inventory)
    exceptions = None
    if enum_exceptions is not None:
        from imsdr.dns.enum_exceptions import load_enum_exceptions

        exceptions = load_enum_exceptions(enum_exceptions, inv.enum_blocks)
    topology = Topology(inv, source_map, exceptions)
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
    enum_exceptions: EnumExceptionsOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Resolve NAME offline as a client at --from would (RFC 3263/2782, ENUM), from the plan.

    Exit 0 when it resolves to at least one address, 1 when it does not, 2 on invalid input.

    Examples: `imsdr resolve inventory.yaml ims.example.net --from 10.1.0.10`; `imsdr resolve inventory.yaml
    +861012345678`"""
    from imsdr.resolve.offline import resolve_in
    from imsdr.resolve.planview import ElementIndex, PlanSource

    topology, plan = _plan(inventory, enum_exceptions)
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

class VerifyFormat(StrEnum):
    table = "table"
    text = "text"
    json = "json"
    prometheus = "prometheus"


VerifyFormatOpt = Annotated[VerifyFormat, typer.Option(
    "--format", "-f", help="Output format (text: the table as plain lines; prometheus: metrics in the "
    "text exposition format, for node_exporter's textfile collector).", callback=text_is_plain_table)]


@handle_errors
def verify(
    inventory: InventoryArg,
    server: Annotated[list[str] | None, typer.Option(
        "--server", metavar="[ID=]HOST[:PORT]", help="DNS server HOST[:PORT] ([v6]:PORT), labelled with element "
        "ID when given; repeat for several. Default: every DNS server of the inventory (with --drain: every "
        "one not drained).",
        show_default=False)] = None,
    sources: Annotated[list[str] | None, typer.Option(
        "--from", metavar="IP", help="Only ask from this source address (repeat; each picks its view). "
                       "Default: every view, each from an address inside it or signed with its key.")] = None,
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
    drain: Annotated[list[str] | None, typer.Option(
        "--drain", metavar="ID",
        help="Check the drained state of this element or site (repeatable): every answer the drain "
             "changes, in every view, on every live DNS server.")] = None,
    failback: Annotated[bool, typer.Option(
        "--failback", help="With --drain: check that the answers the drain changes are the normal ones "
                           "again (after the failback).")] = False,
    keys: Annotated[Path | None, typer.Option(
        "--keys", metavar="FILE", dir_okay=False,
        help="The views' TSIG keys file; each view is asked signed with its key, which selects the view "
             "from any host (without it, a view is asked from the first address of its match list when "
             "that address is configured here, else reported as not checked).")] = None,
    kamailio: Annotated[list[str] | None, typer.Option(
        "--kamailio", metavar="ELEMENT=ADDRESS",
        help="Also compare the live dispatcher state of this SBC or P-CSCF (kamcmd -s ADDRESS "
             "dispatcher.list; ADDRESS unix:/path or tcp:HOST:PORT) with the plan's sets (repeat). "
             "Without --server, only Kamailio is checked.")] = None,
    enum_exceptions: EnumExceptionsOpt = None,
    fmt: VerifyFormatOpt = VerifyFormat.table,
) -> None:
    """Query live DNS servers on every view and compare with the plan: drift per name and view,
    SOA serials that differ across a zone's servers; with --kamailio, dispatcher state too.

    With --drain, check a drained state instead: every changed answer on every view of every server.
    Exit 0 when every answer matches the plan, 1 on drift, 2 on invalid input or an unreachable server.

    Examples: `imsdr verify inventory.yaml --server 10.0.0.53 --keys tsig.keys`; `imsdr verify inventory.yaml
    --server 127.0.0.1:5353 --from 10.1.0.10 --format json`"""
    from imsdr.errors import ImsdrError

    if drain:
        if fmt is VerifyFormat.prometheus:
            raise ImsdrError("--format prometheus: not with --drain (a drain is checked once, not monitored)")
        if server and len(server) > 1:
            raise ImsdrError("--drain: give at most one --server (default: every server not drained)")
        _verify_drain(inventory, tuple(drain), server[0] if server else None, keys, timeout, retries, workers,
                      Format.json if fmt is VerifyFormat.json else Format.table, failback)
        return
    options = LiveOptions(names=names, timeout=timeout, retries=retries, workers=workers, enum_sample=enum_sample,
                          deadline=deadline, keys=keys, enum_exceptions=enum_exceptions)
    try:
        outcome = live_check(inventory, server, sources, kamailio, options)
    except VerifyNoVerdict as exc:
        if fmt is VerifyFormat.prometheus:
            from imsdr.resolve.metrics import exposition

            write_stdout(exposition(None, success=False))
        raise ImsdrError(str(exc)) from None
    for check in outcome.dispatchers:  # an unreachable Kamailio is no verdict, never drift
        if check.error is not None:
            raise ImsdrError(f"--kamailio {check.source}: {check.error}; nothing was compared")
    if fmt is VerifyFormat.prometheus:
        write_stdout(outcome.metrics())
    elif fmt is VerifyFormat.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("verify", outcome.to_dict(), str(inventory))))
    else:
        _print_outcome(outcome)
    if not outcome.ok:
        raise typer.Exit(1)


@handle_errors
def exporter(
    inventory: InventoryArg,
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT", help="Where to serve /metrics (port 0: any free port, printed "
        "on stderr).")] = "127.0.0.1:9533",
    interval: Annotated[float, typer.Option(
        metavar="SECONDS", help="Seconds between two checks; a scrape returns the last one.", min=1,
        max=86400)] = 60.0,
    server: Annotated[list[str] | None, typer.Option(
        "--server", metavar="[ID=]HOST[:PORT]", help="DNS server to check (repeat), as in verify. Default: every "
        "DNS server of the inventory.", show_default=False)] = None,
    sources: Annotated[list[str] | None, typer.Option(
        "--from", metavar="IP", help="Only ask from this source address (repeat), as in verify.")] = None,
    names: Annotated[list[str] | None, typer.Option(
        "--names", metavar="NAME", help="Only these names (repeat, or comma-separated).")] = None,
    keys: Annotated[Path | None, typer.Option(
        "--keys", metavar="FILE", dir_okay=False, help="The views' TSIG keys file (each view asked with its "
        "key).")] = None,
    kamailio: Annotated[list[str] | None, typer.Option(
        "--kamailio", metavar="ELEMENT=ADDRESS", help="Also publish the dispatcher state of this SBC or "
        "P-CSCF (repeat), as in verify.")] = None,
    no_dns: Annotated[bool, typer.Option("--no-dns", help="Publish only the dispatcher state.")] = False,
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds to wait for one answer.",
                                           min=0.05, max=60)] = 2.0,
    retries: Annotated[int, typer.Option(metavar="N", help="Extra tries after a timeout.", min=0, max=10)] = 1,
    workers: Annotated[int, typer.Option(metavar="N", help="Queries in flight at most.", min=1, max=256)] = 16,
    enum_sample: Annotated[int, typer.Option(metavar="N", help="Numbers queried per ENUM block.",
                                             min=1, max=100000)] = 4,
    enum_exceptions: EnumExceptionsOpt = None,
) -> None:
    """Serve the live check of `verify --format prometheus` on /metrics (loopback by default),
    refreshed every --interval seconds, for Prometheus to scrape; runs until interrupted.

    Examples: `imsdr exporter inventory.yaml --keys tsig.keys`; `imsdr exporter inventory.yaml --listen
    127.0.0.1:9533 --kamailio sbc-a=unix:/run/kamailio/kamailio_ctl --no-dns`"""
    from imsdr.errors import ImsdrError
    from imsdr.monitoring.exporter import serve
    from imsdr.resolve.metrics import exposition

    host, sep, port_text = listen.rpartition(":")
    if not sep or not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535 or not host:
        raise ImsdrError(f"--listen {listen!r}: give HOST:PORT")
    options = LiveOptions(names=names, timeout=timeout, retries=retries, workers=workers, enum_sample=enum_sample,
                          deadline=max(interval * 5, 60.0), keys=keys, enum_exceptions=enum_exceptions,
                          tolerate_down=True)
    if no_dns and not kamailio:
        raise ImsdrError("--no-dns: give --kamailio ELEMENT=ADDRESS (nothing else to publish)")
    live_check(inventory, None if no_dns else server, sources, kamailio, options, dns=not no_dns,
               ask=False)  # bad input: exit 2 now, before serving

    def collect() -> str:
        try:
            return live_check(inventory, None if no_dns else server, sources, kamailio, options,
                              dns=not no_dns).metrics()
        except (ImsdrError, VerifyNoVerdict) as exc:
            sys.stderr.write(f"imsdr exporter: no verdict: {exc}\n")
            return exposition(None, success=False)

    def ready(port: int) -> None:
        sys.stderr.write(f"imsdr exporter: serving http://{host}:{port}/metrics\n")
        sys.stderr.flush()

    try:
        serve(host.strip("[]"), int(port_text), collect, interval, ready)
    except OSError as exc:
        raise ImsdrError(f"--listen {listen}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        return


class VerifyNoVerdict(Exception):
    """A server unreachable, or the run stopped: no verdict."""


@dataclass
class LiveOptions:
    names: list[str] | None = None
    timeout: float = 2.0
    retries: int = 2
    workers: int = 16
    enum_sample: int = 16
    deadline: float = 600.0
    keys: Path | None = None
    enum_exceptions: Path | None = None
    tolerate_down: bool = False  # the exporter: a server down is a metric, the others still checked


@dataclass
class LiveOutcome:
    run: Any  # LiveRun, or None when only Kamailio was checked
    dispatchers: list[Any]
    targets: list[Any]
    topology: Any = None

    @property
    def ok(self) -> bool:
        return (self.run is None or self.run.ok) and not any(c.drift() for c in self.dispatchers)

    def metrics(self) -> str:
        from imsdr.monitoring.expected import plan_exposition
        from imsdr.resolve.metrics import exposition

        return exposition(self.run, self.dispatchers) + plan_exposition(self.topology)

    def to_dict(self) -> dict[str, Any]:
        run = self.run
        out: dict[str, Any] = {"ok": self.ok}
        if run is not None:
            first = self.targets[0]
            out |= {
                "server": first.address, "port": first.port,
                "servers": [{"server": t.label, "address": t.address, "port": t.port} for t in self.targets],
                "sources": [{"server": r.server, "source": r.source, "key": r.key, "view": r.view}
                            for r in run.results],
                "views": [r.to_dict() for r in run.results],
                "unchecked": [{"view": u.view, "reason": u.reason} for u in run.unchecked],
                "checked": run.checked, "drift_count": len(run.drift), "enum_sample": run.enum_sample,
                "tcp_fallbacks": sum(r.tcp_fallbacks for r in run.results),
                "drift": [{"server": r.server, **d.to_dict()} for r in run.results for d in r.drift],
                "serials_differ": [s.to_dict() for s in run.serial_skews()],
            }
        if self.dispatchers:
            out["kamailio"] = [c.to_dict() for c in self.dispatchers]
            out["dispatcher_drift"] = [d for c in self.dispatchers for d in c.drift()]
        return out


def _wanted_names(names: list[str] | None, enum_suffix: str) -> list[str] | None:
    import dns.exception as dns_exception
    import dns.name as dns_name

    from imsdr.errors import ImsdrError
    from imsdr.resolve.enum import enum_domain, is_e164

    if not names:
        return None
    wanted = []
    for item in names:
        for n in (part.strip() for part in item.split(",")):
            if not n:
                continue
            name = enum_domain(n, enum_suffix) if is_e164(n) else n
            try:
                dns_name.from_text(name)
            except dns_exception.DNSException as exc:
                raise ImsdrError(f"--names: {n!r} is not a DNS name: {exc}") from None
            wanted.append(name.rstrip("."))
    return wanted


def _targets(topology: Any, servers: list[str] | None) -> list[Any]:
    """The DNS servers to check: the --server values, else every server of the inventory."""
    from imsdr.errors import ImsdrError
    from imsdr.resolve.live import Target
    from imsdr.resolve.verify import parse_server

    if servers:
        out = []
        for text in servers:
            label, sep, where = text.partition("=")
            if not sep:
                label, where = text, text
            elif label not in topology.elements:
                raise ImsdrError(f"--server {text!r}: no element {label!r} in the inventory")
            try:
                address, port = parse_server(where)
            except ValueError as exc:
                raise ImsdrError(f"--server: {exc}") from None
            out.append(Target(label, address, port))
        return out
    from imsdr.dns.drain import platform_of
    from imsdr.dns.views import server_layout
    from imsdr.resolve.drain_verify import dig_port

    found = [Target(s.id, s.address, dig_port(platform_of(topology, topology.elements[s.id]).dig), s.area)
             for s in server_layout(topology).servers]
    if not found:
        raise ImsdrError("the inventory has no DNS server: give --server")
    return found


def live_check(inventory: Path, servers: list[str] | None, sources: list[str] | None,
               kamailio: list[str] | None, options: LiveOptions, dns: bool | None = None,
               ask: bool = True) -> LiveOutcome:
    """One live check (DNS on every view of every server, dispatcher state): what verify prints
    and what the exporter serves on every scrape."""
    import ipaddress

    from imsdr.errors import ImsdrError
    from imsdr.resolve.drain_verify import read_keys
    from imsdr.resolve.live import from_sources, reach_views, run_live
    from imsdr.resolve.planview import PlanSource
    from imsdr.resolve.verify import (
        LiveQuerier,
        ServerUnreachable,
        VerifyIncomplete,
        local_source_for,
    )

    topology, plan = _plan(inventory, options.enum_exceptions)
    dispatchers = _dispatcher_checks(topology, kamailio, ask)
    if dns is False or (dns is None and kamailio and not servers):  # verify: --kamailio alone checks Kamailio
        return LiveOutcome(None, dispatchers, [], topology)
    targets = _targets(topology, servers)
    wanted = _wanted_names(options.names, plan.enum_suffix)
    keyring = read_keys(options.keys) if options.keys is not None else None
    record_source = PlanSource(plan)
    try:
        if sources:
            clients = []
            for src in sources:
                try:
                    clients.append(ipaddress.ip_address(src).compressed)
                except ValueError:
                    raise ImsdrError(f"--from: {src!r} is not an IP address") from None
            reaches = from_sources(record_source.views(), clients)
        else:
            try:
                default_source = local_source_for(targets[0].address, targets[0].port)
            except OSError as exc:
                raise ImsdrError(f"cannot reach {targets[0].address} port {targets[0].port}: {exc}") from None
            reaches = reach_views(plan, record_source.views(), keyring, default_source)
    except ValueError as exc:
        raise ImsdrError(str(exc)) from None
    for reach in reaches:
        if not reach.checked:
            sys.stderr.write(f"warning: view {reach.view} not checked: {reach.reason}\n")
    if not ask:
        return LiveOutcome(None, dispatchers, targets, topology)
    probe = next((r for r in reaches if r.source is not None), None)
    down: list[str] = []
    try:
        for target in targets:
            if probe is None:
                continue
            try:  # unreachable is no verdict, never drift
                LiveQuerier(target.address, target.port, timeout=options.timeout, retries=options.retries).probe(
                    probe.source, _probe_name(plan))
            except ServerUnreachable as exc:
                if not options.tolerate_down or len(down) + 1 == len(targets):
                    raise
                sys.stderr.write(f"warning: {exc}\n")
                down.append(target.label)
        run = run_live(record_source, plan, [t for t in targets if t.label not in down], reaches, keys=keyring,
                       names=wanted, enum_sample=options.enum_sample, timeout=options.timeout,
                       retries=options.retries, workers=options.workers, deadline=options.deadline)
        run.servers_down = down
    except (ServerUnreachable, VerifyIncomplete) as exc:
        raise VerifyNoVerdict(str(exc)) from None
    _warn_issues(plan)
    return LiveOutcome(run, dispatchers, targets, topology)


def _probe_name(plan: Any) -> Any:
    import dns.name as dns_name

    return dns_name.from_text(plan.home_domains[0].rstrip(".") + ".")


def _dispatcher_checks(topology: Any, kamailio: list[str] | None, ask: bool = True) -> list[Any]:
    from imsdr.errors import ImsdrError
    from imsdr.resolve.dispatcher_live import DispatcherCheck, check_kamailio, parse_address, planned_sets

    out = []
    for text in kamailio or []:
        try:
            element, address = parse_address(text)
        except ValueError as exc:
            raise ImsdrError(f"--kamailio {exc}") from None
        if not ask:
            planned_sets(topology, element)
        out.append(check_kamailio(topology, element, address) if ask else DispatcherCheck(element, address))
    return out


def _print_outcome(outcome: LiveOutcome) -> None:
    from rich.table import Table

    console = _wide()
    run = outcome.run
    if run is not None:
        for target in outcome.targets:
            mine = [r for r in run.results if r.server == target.label]
            how = ", ".join(f"{r.view} ({'key ' + r.key if r.key else 'from ' + str(r.source)})" for r in mine)
            console.print(f"verify {target.label} ({target.address} port {target.port}): "
                          f"{sum(r.checked for r in mine)} answers checked: {how}", highlight=False)
        for u in run.unchecked:
            console.print(f"not checked: view {u.view}: {u.reason}", highlight=False)
        if run.drift:
            table = Table(title=f"{len(run.drift)} difference(s) from the plan")
            for column in ("server", "view", "name", "type", "kind", "detail"):
                table.add_column(column, overflow="fold")
            for r in run.results:
                for d in r.drift:
                    table.add_row(r.server, d.view, d.name, d.rdtype, d.kind, d.detail)
            console.print(table)
        for skew in run.serial_skews():
            console.print(f"SOA serial differs across servers: {skew.zone} in view {skew.view}: {skew.detail}",
                          highlight=False)
        if run.ok:
            console.print(styled("no drift", "green") + ": the live DNS matches the plan")
    for check in outcome.dispatchers:
        drift = check.drift()
        if not drift:
            console.print(f"kamailio {check.source}: every planned destination is active", highlight=False)
        for d in drift:
            console.print(f"kamailio {check.source}: {d['kind']}: {d['detail']}", highlight=False)


DRAIN_OK = "no drift: every server answers the drained state"
FAILBACK_OK = "no drift: every server answers the normal state"


def _verify_drain(inventory: Path, ids: tuple[str, ...], server: str | None, keys: Path | None,
                  timeout: float, retries: int, workers: int, fmt: Format, failback: bool = False) -> None:
    from imsdr.dns.drain import dns_server_elements, drained_state, first_address, platform_of
    from imsdr.dns.views import server_areas
    from imsdr.errors import ImsdrError
    from imsdr.plan import load_topology
    from imsdr.resolve.drain_verify import DrainServer, check_drained, dig_port, drain_questions, read_keys
    from imsdr.resolve.verify import parse_server

    topology = load_topology(inventory)
    state = drained_state(topology, ids)
    areas = server_areas(topology)  # a server is asked the views of its service area only
    if server is not None:
        try:
            address, port = parse_server(server)
        except ValueError as exc:
            raise ImsdrError(f"--server: {exc}") from None
        known = next((s.id for s in dns_server_elements(topology) if address in s.addresses), None)
        servers = [DrainServer(server, address, port, areas.get(known, "") if known else "")]
    else:
        # after the failback the drained servers are back and must answer normally too
        live = dns_server_elements(topology) if failback else state.live_servers()
        servers = [DrainServer(s.id, first_address(s), dig_port(platform_of(topology, s).dig), areas.get(s.id, ""))
                   for s in live]
    keyring = read_keys(keys) if keys is not None else None
    questions = drain_questions(state, servers, keyring, normal=failback)
    drift = check_drained(questions, keyring, timeout=timeout, retries=retries, workers=min(workers, 16))
    result = {"drained": list(state.drained), "expected": "normal" if failback else "drained",
              "servers": [s.label for s in servers],
              "checked": len(questions), "signed": sum(q.key is not None for q in questions),
              "drift_count": len(drift), "ok": not drift, "drift": [d.to_dict() for d in drift]}
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        write_stdout(dumps(envelope("verify-drain", result, str(inventory))))
    else:
        console = _wide()
        console.print(f"verify --drain {' '.join(state.drained)}{' --failback' if failback else ''}: "
                      f"{len(questions)} answers checked on "
                      f"{len(servers)} server(s) ({result['signed']} signed with their view's key)",
                      highlight=False)
        if not drift:
            console.print(FAILBACK_OK if failback else DRAIN_OK, highlight=False)
        else:
            from rich.table import Table

            table = Table(title=f"{len(drift)} difference(s) from the {'normal' if failback else 'drained'} state")
            for column in ("server/view", "name", "type", "kind", "detail"):
                table.add_column(column, overflow="fold")
            for d in drift:
                table.add_row(d.view, d.name, d.rdtype, d.kind, d.detail)
            console.print(table)
    if drift:
        raise typer.Exit(1)
