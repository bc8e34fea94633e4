"""``imsdr verify``: compare a live DNS server's answers with the plan, per name and view.

Three parts, each usable alone:

* :func:`expectations` lists what to ask and what the plan says the answer is: for each client
  source address, the view BIND would answer it from, and every (name, type) that view serves
  (base zone content plus the view's overrides), plus a deterministic sample of each ENUM block;
* :class:`LiveQuerier` asks a server (dnspython; UDP, retried on timeout, TCP when the answer is
  truncated; bound to the source address so the server picks the view from it);
* :func:`compare` turns one expected and one live RRset into drift records: missing and extra
  records, changed SRV priority/weight/port, changed NAPTR order/preference/flags/regexp, TTLs.

:func:`verify` runs them with a bounded thread pool. The server being unreachable is not drift:
:class:`ServerUnreachable` is raised before any comparison (the CLI exits 2).

ENUM sampling: a number block of millions of numbers is not queried number by number. Per block
imsdr asks ``sample`` numbers: the first, the last and evenly spaced ones between them (all of them
when the block is smaller). A wildcard block is sampled the same way over the numbers it covers
(its ``length`` when given, else four digits after the prefix). The same inventory and sample size
always give the same numbers.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata
import dns.rdatatype
import dns.rrset

from imsdr.resolve.source import RecordSource
from imsdr.resolve.views import select_view

DEFAULT_SAMPLE = 16
WILDCARD_SAMPLE_DIGITS = 4


class ServerUnreachable(Exception):
    """The server did not answer at all: nothing can be compared."""


class VerifyIncomplete(Exception):
    """The run was stopped before every question was asked (deadline, or the server went silent):
    no verdict can be given."""


DEFAULT_DEADLINE_S = 600.0  # the whole run; a national plan asks ~10,000 questions


def silent_limit(workers: int) -> int:
    """Timeouts in a row after which the server is taken to have gone silent: three rounds of
    every worker waiting in vain, and never fewer than 20."""
    return max(3 * workers, 20)


@dataclass(frozen=True, slots=True)
class Expectation:
    """One question to ask from one source, with the plan's answer (None: the plan has no records)."""

    source: str | None
    view: str
    qname: dns.name.Name
    rdtype: dns.rdatatype.RdataType
    expected: dns.rrset.RRset | None
    note: str = ""
    unserved: bool = False  # the view serves no zone for qname: REFUSED is the planned answer
    planned_cname: bool = False  # the plan has a CNAME at qname: a CNAME answer to another type is planned


@dataclass(frozen=True, slots=True)
class Drift:
    """One difference between the plan and the live answer."""

    view: str
    source: str | None
    name: str
    rdtype: str
    kind: str  # missing | extra | changed | ttl | rcode | timeout
    detail: str
    expected: str | None = None
    live: str | None = None
    field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"view": self.view, "source": self.source, "name": self.name, "type": self.rdtype,
                "kind": self.kind, "field": self.field, "expected": self.expected, "live": self.live,
                "detail": self.detail}


@dataclass
class LiveAnswer:
    rcode: str  # NOERROR, NXDOMAIN, ..., or TIMEOUT / REFUSED-CONNECTION / NETWORK-ERROR / BAD-RESPONSE
    rrset: dns.rrset.RRset | None = None
    tcp: bool = False
    authoritative: bool = False
    error: str | None = None
    cname: dns.rrset.RRset | None = None  # a CNAME at qname served instead of the type asked


@dataclass
class VerifyReport:
    server: str
    port: int
    sources: list[dict[str, Any]] = field(default_factory=list)  # {"source", "view"}
    checked: int = 0
    drift: list[Drift] = field(default_factory=list)
    tcp_fallbacks: int = 0
    enum_sample: int = DEFAULT_SAMPLE

    @property
    def ok(self) -> bool:
        return not self.drift

    def by_name(self) -> dict[tuple[str, str], list[Drift]]:
        out: dict[tuple[str, str], list[Drift]] = {}
        for d in self.drift:
            out.setdefault((d.view, d.name), []).append(d)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "server": self.server, "port": self.port, "sources": self.sources, "checked": self.checked,
            "drift_count": len(self.drift), "ok": self.ok, "tcp_fallbacks": self.tcp_fallbacks,
            "enum_sample": self.enum_sample, "drift": [d.to_dict() for d in self.drift],
        }


# --- comparison ------------------------------------------------------------------------------------

def _key(rd: dns.rdata.Rdata) -> tuple[str, ...]:
    """What identifies a record inside its RRset (so a change shows as 'changed', not missing+extra)."""
    rdtype = rd.rdtype
    if rdtype == dns.rdatatype.SRV:
        return (rd.target.to_text().lower(),)  # type: ignore[attr-defined]
    if rdtype == dns.rdatatype.NAPTR:
        return (rd.service.decode().lower(), rd.replacement.to_text().lower())  # type: ignore[attr-defined]
    if rdtype == dns.rdatatype.SOA:
        return ("soa",)
    return (rd.to_text().lower(),)


def _text_key(rd: dns.rdata.Rdata) -> tuple[str, ...]:
    return (rd.to_text().lower(),)


_FIELDS = {
    dns.rdatatype.SRV: ("priority", "weight", "port"),
    dns.rdatatype.NAPTR: ("order", "preference", "flags", "regexp"),
    # SOA serial is not compared: operators bump it on every change
    dns.rdatatype.SOA: ("mname", "rname", "refresh", "retry", "expire", "minimum"),
}


def _field_text(rd: dns.rdata.Rdata, name: str) -> str:
    value = getattr(rd, name)
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, dns.name.Name):
        return value.to_text()
    return str(value)


def compare(exp: Expectation, live: LiveAnswer) -> list[Drift]:
    """Drift between the plan's RRset and the live answer for one (source, name, type)."""
    name = exp.qname.to_text(omit_final_dot=True)
    rdtype = dns.rdatatype.to_text(exp.rdtype)

    def drift(kind: str, detail: str, expected: str | None = None, live_text: str | None = None,
              field_: str | None = None) -> Drift:
        return Drift(exp.view, exp.source, name, rdtype, kind, detail, expected, live_text, field_)

    if live.rcode == "TIMEOUT":
        return [drift("timeout", "no answer after every retry")]
    if exp.unserved and exp.expected is None:
        # a zone the view does not serve (core data from an access view, the default view): the
        # planned answer is REFUSED, and any other answer — NXDOMAIN, no data, records, a CNAME — is
        # the server publishing where the plan publishes nothing
        if live.rcode == "REFUSED":
            return []
        served = _served_text(live)
        return [drift("rcode", f"the plan refuses this name here (the view serves no zone for it); the server "
                               f"answered {live.rcode}{served}", "REFUSED", live.rcode)]
    if live.rcode not in ("NOERROR", "NXDOMAIN"):
        why = f" ({live.error})" if live.error else ""
        return [drift("rcode", f"server answered {live.rcode}{why}", "NOERROR", live.rcode)]
    out: list[Drift] = []
    if live.cname is not None and not exp.planned_cname:
        target = live.cname[0].to_text() if len(live.cname) else "?"
        out.append(drift("extra", f"served CNAME {target} is not in the plan (asked {rdtype})", None,
                         f"CNAME {target}"))
    expected = list(exp.expected) if exp.expected is not None else []
    got = list(live.rrset) if live.rrset is not None else []
    if expected and not got:
        what = "NXDOMAIN" if live.rcode == "NXDOMAIN" else "a CNAME" if live.cname is not None else "no records"
        return out + [drift("missing", f"planned {rd.to_text()} not served (live answer: {what})",
                            rd.to_text(), None) for rd in sorted(expected, key=lambda r: r.to_text())]
    key = _key
    for side in (expected, got):
        if len({_key(rd) for rd in side}) != len(side):  # e.g. one SRV target on two ports
            key = _text_key
    exp_by = {key(rd): rd for rd in expected}
    live_by = {key(rd): rd for rd in got}
    for key in sorted(exp_by.keys() - live_by.keys()):
        text = exp_by[key].to_text()
        out.append(drift("missing", f"planned {text} not served", text, None))
    for key in sorted(live_by.keys() - exp_by.keys()):
        text = live_by[key].to_text()
        out.append(drift("extra", f"served {text} is not in the plan", None, text))
    for key in sorted(exp_by.keys() & live_by.keys()):
        e, g = exp_by[key], live_by[key]
        fields = _FIELDS.get(exp.rdtype)
        if fields is None:
            continue
        for f in fields:
            ev, lv = _field_text(e, f), _field_text(g, f)
            if ev != lv:
                target = " ".join(k.rstrip(".") for k in key)
                out.append(drift("changed", f"{f} of {target}: plan {ev}, live {lv}", ev, lv, f))
    if exp.expected is not None and live.rrset is not None and exp.expected.ttl != live.rrset.ttl:
        out.append(drift("ttl", f"TTL: plan {exp.expected.ttl}, live {live.rrset.ttl}",
                         str(exp.expected.ttl), str(live.rrset.ttl), "ttl"))
    return out


def _served_text(live: LiveAnswer) -> str:
    """What a live answer served, for a message: its CNAME or records, if any."""
    if live.cname is not None and len(live.cname):
        return f" with CNAME {live.cname[0].to_text()}"
    if live.rrset is not None and len(live.rrset):
        return " with " + ", ".join(sorted(rd.to_text() for rd in live.rrset))
    return ""


# --- what to ask ---------------------------------------------------------------------------------------

def sample_indices(count: int, sample: int) -> list[int]:
    """``sample`` deterministic positions in ``0..count-1``: first, last, evenly spaced between."""
    if count <= 0 or sample <= 0:
        return []
    if count <= sample:
        return list(range(count))
    if sample == 1:
        return [0]
    return sorted({i * (count - 1) // (sample - 1) for i in range(sample)})


def enum_sample_numbers(block: Any, sample: int) -> list[str]:
    """Sampled E.164 digits of a plan ENUM block (``prefix``, ``style``, ``first``, ``last``, ``length``)."""
    if block.first is not None and block.last is not None:  # numbers, or a ranged wildcard block
        count = block.last - block.first + 1
        width = block.length or len(str(block.last))
        return [str(block.first + i).zfill(width) for i in sample_indices(count, sample)]
    prefix = block.prefix
    digits = (block.length - len(prefix)) if block.length else WILDCARD_SAMPLE_DIGITS
    digits = max(1, min(digits, 15 - len(prefix)))
    return [prefix + str(i).zfill(digits) for i in sample_indices(10**digits, sample)]


@lru_cache(maxsize=1 << 17)  # the same names are asked once per client source
def _name(text: str) -> dns.name.Name:
    return dns.name.from_text(text.rstrip(".") + ".")


def plan_questions(plan: Any, view: str, names: Sequence[str] | None, enum_sample: int,
                   ) -> Iterator[tuple[dns.name.Name, dns.rdatatype.RdataType, str]]:
    """(name, type, note) the plan stores for any view; only ``names`` (and their ENUM) when given.

    Every view is asked every name, access and core: a view that must not see a name (a core
    name from a user view) expects no answer, so a leak shows as drift.
    """
    wanted = None if names is None else {n.rstrip(".").lower() for n in names}
    seen: set[tuple[str, str]] = set()
    view_plan = plan.view(view)
    keys: list[tuple[str, str]] = []
    for zone in [*plan.zones.values(), *plan.access_zones.values()]:
        keys.extend(zone.rrsets.keys())
        if zone.kind == "enum":
            for block in zone.blocks:
                for digits in enum_sample_numbers(block, enum_sample):
                    keys.append((".".join(reversed(digits)) + "." + plan.enum_suffix, "NAPTR"))
    for overrides in view_plan.overrides.values():
        keys.extend(overrides.keys())
    for qname, rdtype in keys:
        if (qname, rdtype) in seen or (wanted is not None and qname not in wanted):
            continue
        seen.add((qname, rdtype))
        yield _name(qname), dns.rdatatype.from_text(rdtype), ""
    if wanted is not None:
        for qname in sorted(wanted):
            if not any(qname == k[0] for k in seen):
                # not among the plan's stored names (an ENUM number outside the sample, or a name
                # the plan lacks): ask the usual types; the plan's answer (maybe none) is expected
                for rdtype in ("NAPTR", "SRV", "A", "AAAA"):
                    yield _name(qname), dns.rdatatype.from_text(rdtype), "asked by --names"


def expectations(source: RecordSource, plan: Any, clients: Sequence[str | None], *,
                 names: Sequence[str] | None = None, enum_sample: int = DEFAULT_SAMPLE,
                 ) -> tuple[list[Expectation], list[dict[str, Any]]]:
    """Every question to ask, per client source address, with the plan's answer."""
    out: list[Expectation] = []
    chosen: list[dict[str, Any]] = []
    for client in clients:
        view = select_view(source.views(), client)
        if view is None:
            raise ValueError(f"no view of the plan matches source {client}")
        chosen.append({"source": client, "view": view.name})
        out.extend(view_expectations(source, plan, view.name, client, names=names, enum_sample=enum_sample))
    return out, chosen


def view_expectations(source: RecordSource, plan: Any, view: str, client: str | None, *,
                      names: Sequence[str] | None = None, enum_sample: int = DEFAULT_SAMPLE,
                      ) -> list[Expectation]:
    """Every question to ask ``view`` (from ``client``, or signed with the view's key: None)."""
    out: list[Expectation] = []
    planned = plan.view(view)
    for qname, rdtype, note in plan_questions(plan, view, names, enum_sample):
        expected = source.rrset(view, qname, rdtype)
        unserved = plan.find_zone(qname.to_text(omit_final_dot=True), planned.side,
                                  planned if plan.areas else None) is None  # (areas: its own zones)
        cname = rdtype != dns.rdatatype.CNAME and not unserved \
            and source.rrset(view, qname, dns.rdatatype.CNAME) is not None
        out.append(Expectation(client, view, qname, rdtype, expected, note, unserved, cname))
    return out


# --- asking a live server ---------------------------------------------------------------------------------

@dataclass
class LiveQuerier:
    """Queries one server: UDP, ``retries`` more tries on timeout, TCP when truncated."""

    server: str
    port: int = 53
    timeout: float = 2.0
    retries: int = 2
    tsig: tuple[Any, str, str] | None = None  # (keyring, key name, algorithm): every query signed

    def ask(self, qname: dns.name.Name, rdtype: dns.rdatatype.RdataType, source: str | None) -> LiveAnswer:
        query = dns.message.make_query(qname, rdtype)
        query.flags &= ~dns.flags.RD
        if self.tsig is not None:  # the view's key selects the view from any source address
            keyring, keyname, algorithm = self.tsig
            query.use_tsig(keyring, keyname=keyname, algorithm=algorithm)
        last_error: Exception | None = None
        for _attempt in range(self.retries + 1):
            try:
                response, used_tcp = dns.query.udp_with_fallback(
                    query, self.server, timeout=self.timeout, port=self.port, source=source)
            except dns.exception.Timeout as exc:
                last_error = exc
                continue
            except (ConnectionRefusedError, ConnectionResetError) as exc:
                last_error = exc
                time.sleep(min(0.05, self.timeout))
                continue
            except OSError as exc:  # e.g. the source address is not configured on this host
                return LiveAnswer("NETWORK-ERROR", error=exc.strerror or str(exc))
            except ValueError as exc:  # e.g. an IPv6 source for an IPv4 server
                return LiveAnswer("NETWORK-ERROR", error=str(exc))
            except dns.exception.DNSException as exc:  # a malformed or mismatched response
                return LiveAnswer("BAD-RESPONSE", error=str(exc))
            rrset = cname = None
            for answer in response.answer:
                if answer.name == qname and answer.rdtype == rdtype:
                    rrset = answer
                    break
                if answer.name == qname and answer.rdtype == dns.rdatatype.CNAME:
                    cname = answer
            return LiveAnswer(dns.rcode.to_text(response.rcode()), rrset, used_tcp,
                              bool(response.flags & dns.flags.AA), cname=cname)
        if isinstance(last_error, OSError):
            return LiveAnswer("REFUSED-CONNECTION")
        return LiveAnswer("TIMEOUT")

    def probe(self, source: str | None, qname: dns.name.Name) -> None:
        """Raise :class:`ServerUnreachable` unless the server answers something from ``source``."""
        answer = self.ask(qname, dns.rdatatype.SOA, source)
        if answer.rcode in ("TIMEOUT", "REFUSED-CONNECTION", "NETWORK-ERROR"):
            why = {"TIMEOUT": "no answer", "REFUSED-CONNECTION": "connection refused"}.get(
                answer.rcode, f"cannot send: {answer.error}")
            src = f" from {source}" if source else ""
            raise ServerUnreachable(
                f"DNS server {self.server} port {self.port} is unreachable{src}: {why} after "
                f"{self.retries + 1} tries of {self.timeout:g} s; nothing was compared")


def _is_decimal(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other digits int() refuses."""
    return bool(text) and text.isascii() and text.isdigit()


def parse_server(text: str) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``[v6]:PORT`` or a bare IPv6 address → (address, port)."""
    host, port = text, 53
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":") or not _is_decimal(rest[1:]):
                raise ValueError(f"invalid server {text!r}")
            port = int(rest[1:])
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        if not _is_decimal(port_text):
            raise ValueError(f"invalid port in {text!r}")
        port = int(port_text)
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} out of range")
    try:
        address = ipaddress.ip_address(host).compressed
    except ValueError:
        try:
            address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0][4][0]
        except OSError as exc:
            raise ValueError(f"cannot resolve server name {host!r}: {exc}") from None
    return str(address), port


def local_source_for(server: str, port: int) -> str:
    """The source address the OS uses to reach ``server`` (what the server's views see)."""
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.connect((server, port))
        return str(sock.getsockname()[0])


def verify(questions: Iterable[Expectation], querier: LiveQuerier, *, workers: int = 16,
           progress: Callable[[int], None] | None = None, deadline: float | None = DEFAULT_DEADLINE_S,
           silent_after: int | None = None) -> tuple[list[Drift], int, int]:
    """Ask every question concurrently (at most ``workers`` at once); (drift, checked, tcp fallbacks).

    The run stops with :class:`VerifyIncomplete` when ``deadline`` seconds have passed (questions in
    flight finish; nothing new is asked) or when ``silent_after`` questions in a row timed out (a
    server that answered the probe and then went silent would otherwise cost every question its
    full timeout and retries).
    """
    items = list(questions)
    drift: list[Drift] = []
    tcp = 0
    stop_at = None if deadline is None else time.monotonic() + deadline
    silent_max = silent_after if silent_after is not None else silent_limit(workers)
    lock = threading.Lock()
    stopped = threading.Event()
    state = {"silent": 0, "asked": 0, "why": ""}

    def stop(why: str) -> None:
        with lock:
            if not state["why"]:
                state["why"] = why
        stopped.set()

    def one(exp: Expectation) -> tuple[list[Drift], bool] | None:
        if stopped.is_set():
            return None
        if stop_at is not None and time.monotonic() > stop_at:
            stop(f"the deadline of {deadline:g} s passed")
            return None
        live = querier.ask(exp.qname, exp.rdtype, exp.source)
        with lock:
            state["asked"] += 1
            state["silent"] = state["silent"] + 1 if live.rcode == "TIMEOUT" else 0
            silent = state["silent"]
        if silent >= silent_max:
            stop(f"the server stopped answering ({silent} questions in a row timed out)")
        return compare(exp, live), live.tcp

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for result in pool.map(one, items):
            if result is None:
                continue
            found, used_tcp = result
            drift.extend(found)
            tcp += used_tcp
            if progress is not None:
                progress(1)
    if stopped.is_set():
        raise VerifyIncomplete(
            f"verify stopped: {state['why']}; {state['asked']} of {len(items)} questions asked, so no "
            "verdict (ask fewer with --names or --enum-sample, or allow more time with --deadline)")
    rank: dict[str | None, int] = {}
    for q in items:
        rank.setdefault(q.source, len(rank))
    drift.sort(key=lambda d: (rank.get(d.source, 0), d.name, d.rdtype, d.kind, d.expected or "",
                              d.live or ""))
    return drift, len(items), tcp
