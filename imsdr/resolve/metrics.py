"""Prometheus text exposition (format 0.0.4) of a live check: ``verify --format prometheus`` and
``imsdr exporter`` print the same lines.

The metric contract (the rendered rules in ``monitoring/dns.rules.yml`` and
``monitoring/dispatcher.rules.yml`` read exactly these names and labels; docs/monitoring.md):

* ``imsdr_dns_answers_checked{server, view}``: questions asked of that view on that server;
* ``imsdr_dns_drift{server, view}``: answers differing from the plan (0 when it matches);
* ``imsdr_dns_soa_serial{server, view, zone}``: the SOA serial the server answers; a zone without
  an SOA answer is absent;
* ``imsdr_dns_view_checked{view}``: 1 when the view could be asked from here, 0 when not (no
  source address inside it on this host and no key);
* ``imsdr_dns_server_up{server}``: 1 when the server answered the exporter's probe, 0 when not
  (the other servers are still checked);
* ``imsdr_dispatcher_destination_up{source, setid, destination, element, state}``: 1 when the
  Kamailio ``source`` holds the planned destination active, 0 otherwise (absent from the live
  list, inactive, trying or disabled); ``state`` is Kamailio's flag text (``AP``, ``IP``, ...);
* ``imsdr_dispatcher_scrape_ok{source}``: 1 when the Kamailio answered its RPC;
* ``imsdr_verify_success``: 1 when every server answered (0: the run gave no verdict).

The CLI appends the plan's expectation series (imsdr.monitoring.expected) to these lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.resolve.dispatcher_live import DispatcherCheck
    from imsdr.resolve.live import LiveRun

HELP = {
    "imsdr_dns_answers_checked": "Questions imsdr asked of this view on this server, with the plan's answer.",
    "imsdr_dns_drift": "Answers of this view on this server that differ from the plan.",
    "imsdr_dns_soa_serial": "SOA serial this server answers for the zone in this view.",
    "imsdr_dns_server_up": "1 when the DNS server answered the exporter's probe.",
    "imsdr_dns_view_checked": "1 when the view could be asked from the exporter's host (source inside it or key).",
    "imsdr_dispatcher_destination_up": "1 when the Kamailio holds the planned destination active.",
    "imsdr_dispatcher_scrape_ok": "1 when the Kamailio answered dispatcher.list.",
    "imsdr_verify_success": "1 when every server answered and a verdict was given.",
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def sample(name: str, labels: dict[str, str], value: float | int) -> str:
    inner = ",".join(f'{key}="{_escape(text)}"' for key, text in labels.items())
    number = str(int(value)) if float(value).is_integer() else repr(float(value))
    return f"{name}{{{inner}}} {number}" if inner else f"{name} {number}"


def _family(name: str, samples: Iterable[str]) -> list[str]:
    return [f"# HELP {name} {HELP[name]}", f"# TYPE {name} gauge", *samples]


def exposition(run: LiveRun | None, dispatchers: Iterable[DispatcherCheck] = (), success: bool = True) -> str:
    """The metrics of one live DNS run and the dispatcher checks, as Prometheus text."""
    lines: list[str] = []
    if run is not None:
        lines += _family("imsdr_dns_answers_checked", (
            sample("imsdr_dns_answers_checked", {"server": r.server, "view": r.view}, r.checked)
            for r in run.results))
        lines += _family("imsdr_dns_drift", (
            sample("imsdr_dns_drift", {"server": r.server, "view": r.view}, len(r.drift)) for r in run.results))
        lines += _family("imsdr_dns_soa_serial", (
            sample("imsdr_dns_soa_serial", {"server": r.server, "view": r.view, "zone": zone}, serial)
            for r in run.results for zone, serial in sorted(r.serials.items()) if serial is not None))
        servers = {r.server: 1 for r in run.results} | {server: 0 for server in run.servers_down}
        lines += _family("imsdr_dns_server_up", (
            sample("imsdr_dns_server_up", {"server": server}, up) for server, up in servers.items()))
        views = {r.view: 1 for r in run.results} | {u.view: 0 for u in run.unchecked}
        lines += _family("imsdr_dns_view_checked", (
            sample("imsdr_dns_view_checked", {"view": view}, flag) for view, flag in views.items()))
    checks = list(dispatchers)
    if checks:
        lines += _family("imsdr_dispatcher_scrape_ok", (
            sample("imsdr_dispatcher_scrape_ok", {"source": c.source}, int(c.error is None)) for c in checks))
        lines += _family("imsdr_dispatcher_destination_up", (
            sample("imsdr_dispatcher_destination_up",
                    {"source": c.source, "setid": str(d.setid), "destination": d.uri, "element": d.element,
                     "state": d.state}, int(d.up))
            for c in checks for d in c.destinations))
    lines += _family("imsdr_verify_success", [sample("imsdr_verify_success", {}, int(success))])
    return "\n".join(lines) + "\n"
