"""``imsdr verify`` over every view of every server: which view is asked how, and SOA serials.

A server picks the view of a query from its source address or its TSIG key, so asking from the
one address the host happens to use checks only the view that address lands in (often the
default view, which refuses everything: checking the plan's names there as if they were served
gave false drift). By default every view is checked, each reached one of three ways
(:func:`reach_views`):

* signed with the view's TSIG key when the keys file has it (``match-clients { key <view key>;
  ... }`` comes first in every rendered view: the key selects the view from any host);
* else from a source address inside the view: the first host of its match list, when that address
  is configured on this host (a lab on loopback, a prober inside the view);
* the default view (``match-clients { any; }``), which refuses every name, from the address the
  host uses to reach the server when no other view matches it: its answers are checked as REFUSED.

A view reached neither way is reported as not checked, with the reason; nothing is guessed.

Per (server, view) the run also asks the SOA of every zone the view serves and keeps its serial:
a zone whose serial differs across the servers that hold it is reported (a secondary that did not
transfer, a primary not reloaded). :class:`LiveRun` is what the CLI prints, as a table, JSON or
Prometheus metrics (:mod:`imsdr.resolve.metrics`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import dns.name
import dns.rdatatype

from imsdr.resolve.verify import (
    DEFAULT_DEADLINE_S,
    DEFAULT_SAMPLE,
    Drift,
    LiveQuerier,
    view_expectations,
)
from imsdr.resolve.verify import verify as ask_all
from imsdr.resolve.views import select_view


@dataclass(frozen=True, slots=True)
class Target:
    """One DNS server to check."""

    label: str  # element id, or the --server text
    address: str
    port: int
    area: str = ""  # its service area ('' holds every view)

    def holds(self, view: Any) -> bool:
        return not self.area or not view.area or view.area == self.area


@dataclass(frozen=True, slots=True)
class ViewReach:
    """How one view is asked: signed with ``key``, or from ``source``; neither: ``reason``."""

    view: str
    source: str | None = None
    key: str | None = None
    reason: str = ""
    default: bool = False  # the refusing default view

    @property
    def checked(self) -> bool:
        return self.source is not None or self.key is not None


@dataclass
class ViewResult:
    server: str
    view: str
    source: str | None
    key: str | None
    checked: int = 0
    drift: list[Drift] = field(default_factory=list)
    serials: dict[str, int | None] = field(default_factory=dict)  # zone -> live SOA serial (None: no SOA)
    tcp_fallbacks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"server": self.server, "view": self.view, "source": self.source, "key": self.key,
                "checked": self.checked, "drift_count": len(self.drift), "serials": self.serials}


@dataclass(frozen=True, slots=True)
class SerialSkew:
    """A zone of a view whose SOA serial is not the same on every server holding it."""

    view: str
    zone: str
    serials: dict[str, int | None]  # server -> serial

    def to_dict(self) -> dict[str, Any]:
        return {"view": self.view, "zone": self.zone, "serials": self.serials}

    @property
    def detail(self) -> str:
        return ", ".join(f"{server} {serial if serial is not None else 'no SOA'}"
                         for server, serial in self.serials.items())


@dataclass
class LiveRun:
    results: list[ViewResult] = field(default_factory=list)
    unchecked: list[ViewReach] = field(default_factory=list)
    enum_sample: int = DEFAULT_SAMPLE
    servers_down: list[str] = field(default_factory=list)  # the exporter's servers that did not answer

    @property
    def drift(self) -> list[Drift]:
        return [d for r in self.results for d in r.drift]

    @property
    def checked(self) -> int:
        return sum(r.checked for r in self.results)

    def serial_skews(self) -> list[SerialSkew]:
        by_zone: dict[tuple[str, str], dict[str, int | None]] = {}
        for r in self.results:
            for zone, serial in r.serials.items():
                by_zone.setdefault((r.view, zone), {})[r.server] = serial
        return [SerialSkew(view, zone, serials) for (view, zone), serials in by_zone.items()
                if len(set(serials.values())) > 1]

    @property
    def ok(self) -> bool:
        return not self.drift and not self.serial_skews()


def can_send_from(address: str) -> bool:
    """Whether this host can send from ``address`` (it is configured on an interface here)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.bind((address, 0))
    except OSError:
        return False
    return True


def first_host(match_clients: Sequence[str]) -> str | None:
    """The first host of the view's first IPv4 (else IPv6) match prefix."""
    nets = []
    for text in match_clients:
        try:
            nets.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            continue  # an ACL name or a key: not an address to send from
    for net in sorted(nets, key=lambda n: n.version):
        return str(net.network_address if net.num_addresses <= 2 else net.network_address + 1)
    return None


def reach_views(plan: Any, views: Sequence[Any], keys: dict[str, tuple[str, str]] | None,
                default_source: str | None) -> list[ViewReach]:
    """How each view of the plan is asked (see the module docstring), in ``named.conf`` order."""
    out: list[ViewReach] = []
    for view in plan.views:
        if view.kind == "default":
            chosen = select_view(views, default_source) if default_source else None
            if chosen is not None and chosen.name == view.name:
                out.append(ViewReach(view.name, source=default_source, default=True))
            else:
                out.append(ViewReach(view.name, default=True, reason=(
                    f"this host's address {default_source} is inside view {chosen.name}, so it cannot "
                    "ask the default view" if chosen is not None else "no address of this host reaches it")))
            continue
        if keys is not None and view.key_name in keys:
            out.append(ViewReach(view.name, key=view.key_name))
            continue
        source = first_host(view.match_clients)
        chosen = select_view(views, source) if source else None
        if source is not None and chosen is not None and chosen.name == view.name and can_send_from(source):
            out.append(ViewReach(view.name, source=source))
            continue
        where = f"its first match address {source} is not configured on this host" if source else \
            "its match list has no address"
        out.append(ViewReach(view.name, reason=f"{where}, and no keys file with key {view.key_name} "
                                              "was given (--keys)"))
    return out


def from_sources(views: Sequence[Any], sources: Sequence[str]) -> list[ViewReach]:
    """``--from``: each source picks the view BIND answers it from."""
    out = []
    for source in sources:
        view = select_view(views, source)
        if view is None:
            raise ValueError(f"no view of the plan matches source {source}")
        out.append(ViewReach(view.name, source=source, default=view.name == "default"))
    return out


def querier_for(target: Target, reach: ViewReach, keys: dict[str, tuple[str, str]] | None,
                timeout: float, retries: int) -> LiveQuerier:
    tsig = None
    if reach.key is not None and keys is not None:
        import dns.tsigkeyring

        algorithm, secret = keys[reach.key]
        tsig = (dns.tsigkeyring.from_text({reach.key: (algorithm, secret)}), reach.key, algorithm)
    return LiveQuerier(target.address, target.port, timeout=timeout, retries=retries, tsig=tsig)


def live_serials(plan: Any, view: str, querier: LiveQuerier, source: str | None) -> dict[str, int | None]:
    """zone -> the SOA serial the server answers for it in ``view`` (None: no SOA answered)."""
    out: dict[str, int | None] = {}
    planned = plan.view(view)
    for zone in sorted(plan.view_zones(planned)):
        answer = querier.ask(dns.name.from_text(zone + "."), dns.rdatatype.SOA, source)
        out[zone] = answer.rrset[0].serial if answer.rrset is not None and len(answer.rrset) else None
    return out


def run_live(record_source: Any, plan: Any, targets: Sequence[Target], reaches: Sequence[ViewReach], *,
             keys: dict[str, tuple[str, str]] | None = None, names: Sequence[str] | None = None,
             enum_sample: int = DEFAULT_SAMPLE, timeout: float = 2.0, retries: int = 2, workers: int = 16,
             deadline: float | None = DEFAULT_DEADLINE_S) -> LiveRun:
    """Ask every reachable view of every target; the drift, serials and the views not checked."""
    run = LiveRun(unchecked=[r for r in reaches if not r.checked], enum_sample=enum_sample)
    for target in targets:
        for reach in reaches:
            if not reach.checked or not target.holds(plan.view(reach.view)):
                continue
            querier = querier_for(target, reach, keys, timeout, retries)
            questions = view_expectations(record_source, plan, reach.view, reach.source, names=names,
                                          enum_sample=enum_sample)
            result = ViewResult(target.label, reach.view, reach.source, reach.key)
            result.drift, result.checked, result.tcp_fallbacks = ask_all(
                questions, querier, workers=workers, deadline=deadline)
            if not reach.default:  # the default view serves no zone: nothing to compare
                result.serials = live_serials(plan, reach.view, querier, reach.source)
            run.results.append(result)
    return run
