"""The verify engine without BIND: comparison, sampling, and the live querier against a tiny
in-process DNS server on loopback (truncation → TCP fallback, source binding, timeouts)."""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from collections.abc import Iterator
from types import SimpleNamespace

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from imsdr.resolve.verify import (
    Expectation,
    LiveAnswer,
    LiveQuerier,
    ServerUnreachable,
    compare,
    enum_sample_numbers,
    parse_server,
    sample_indices,
    verify,
)

N = dns.name.from_text


def rrset(name: str, ttl: int, rdtype: str, *rdatas: str) -> dns.rrset.RRset:
    return dns.rrset.from_text(name, ttl, "IN", rdtype, *rdatas)


def exp(rr: dns.rrset.RRset | None, name: str = "x.example.net.", rdtype: str = "A") -> Expectation:
    return Expectation("127.0.0.2", "v1", N(name), dns.rdatatype.from_text(rdtype), rr)


SRV_PLAN = rrset("_sip._udp.ims.example.net.", 60, "SRV", "10 100 5060 a.ims.example.net.",
                 "10 50 5060 b.ims.example.net.", "20 100 5060 c.ims.example.net.")


def test_identical_answers_have_no_drift() -> None:
    live = rrset("_sip._udp.ims.example.net.", 60, "SRV", "20 100 5060 c.ims.example.net.",
                 "10 50 5060 b.ims.example.net.", "10 100 5060 a.ims.example.net.")
    assert compare(exp(SRV_PLAN, "_sip._udp.ims.example.net.", "SRV"), LiveAnswer("NOERROR", live)) == []


def test_srv_field_changes_missing_extra_and_ttl() -> None:
    live = rrset("_sip._udp.ims.example.net.", 30, "SRV", "10 7 5060 a.ims.example.net.",
                 "10 50 5070 b.ims.example.net.", "20 100 5060 d.ims.example.net.")
    drift = compare(exp(SRV_PLAN, "_sip._udp.ims.example.net.", "SRV"), LiveAnswer("NOERROR", live))
    got = sorted((d.kind, d.field, d.expected, d.live) for d in drift)
    assert got == sorted([
        ("changed", "weight", "100", "7"),
        ("changed", "port", "5060", "5070"),
        ("missing", None, "20 100 5060 c.ims.example.net.", None),
        ("extra", None, None, "20 100 5060 d.ims.example.net."),
        ("ttl", "ttl", "60", "30"),
    ])
    assert all(d.view == "v1" and d.source == "127.0.0.2" and d.name == "_sip._udp.ims.example.net"
               for d in drift)


def test_address_removed_and_name_gone() -> None:
    plan = rrset("x.example.net.", 60, "A", "192.0.2.1", "192.0.2.2")
    one = compare(exp(plan), LiveAnswer("NOERROR", rrset("x.example.net.", 60, "A", "192.0.2.1")))
    assert [(d.kind, d.expected) for d in one] == [("missing", "192.0.2.2")]
    gone = compare(exp(plan), LiveAnswer("NXDOMAIN"))
    assert [(d.kind, d.expected) for d in gone] == [("missing", "192.0.2.1"), ("missing", "192.0.2.2")]
    assert "NXDOMAIN" in gone[0].detail
    assert compare(exp(None), LiveAnswer("NXDOMAIN")) == []
    extra = compare(exp(None), LiveAnswer("NOERROR", rrset("x.example.net.", 60, "A", "192.0.2.9")))
    assert [(d.kind, d.live) for d in extra] == [("extra", "192.0.2.9")]


def test_errors_and_timeouts_are_reported() -> None:
    plan = rrset("x.example.net.", 60, "A", "192.0.2.1")
    assert [d.kind for d in compare(exp(plan), LiveAnswer("SERVFAIL"))] == ["rcode"]
    assert [d.kind for d in compare(exp(plan), LiveAnswer("TIMEOUT"))] == ["timeout"]


def test_naptr_and_enum_content() -> None:
    name = "4.3.2.1.0.0.5.5.5.0.1.6.8.e164.arpa."
    plan = rrset(name, 3600, "NAPTR", '100 10 "u" "E2U+sip" "!^(.*)$!sip:\\\\1@ims.example.net!" .')
    live = rrset(name, 3600, "NAPTR", '100 20 "u" "E2U+sip" "!^(.*)$!sip:\\\\1@other.example.net!" .')
    drift = compare(exp(plan, name, "NAPTR"), LiveAnswer("NOERROR", live))
    assert sorted((d.kind, d.field) for d in drift) == [("changed", "preference"), ("changed", "regexp")]
    regexp = next(d for d in drift if d.field == "regexp")
    assert regexp.expected == "!^(.*)$!sip:\\1@ims.example.net!"


def test_soa_serial_is_ignored_but_timers_are_not() -> None:
    names = "ns1.example.net. hostmaster.example.net."
    plan = rrset("example.net.", 3600, "SOA", f"{names} 1 3600 600 1209600 300")
    bumped = rrset("example.net.", 3600, "SOA", f"{names} 7 3600 600 1209600 300")
    changed = rrset("example.net.", 3600, "SOA", f"{names} 7 3600 600 1209600 60")
    assert compare(exp(plan, "example.net.", "SOA"), LiveAnswer("NOERROR", bumped)) == []
    assert [d.field for d in compare(exp(plan, "example.net.", "SOA"), LiveAnswer("NOERROR", changed))] == [
        "minimum"]


def test_sampling_is_deterministic_and_covers_the_ends() -> None:
    assert sample_indices(10, 4) == [0, 3, 6, 9]
    assert sample_indices(3, 16) == [0, 1, 2]
    big = sample_indices(10_000_000, 16)
    assert len(big) == 16 and big[0] == 0 and big[-1] == 9_999_999 and big == sorted(set(big))
    block = SimpleNamespace(style="numbers", prefix="8613800138", first=8613800138000, last=8613800138999,
                            length=13)
    numbers = enum_sample_numbers(block, 5)
    assert numbers == ["8613800138000", "8613800138249", "8613800138499", "8613800138749", "8613800138999"]
    wildcard = SimpleNamespace(style="wildcard", prefix="861055500", first=None, last=None, length=None)
    assert enum_sample_numbers(wildcard, 3) == ["8610555000000", "8610555004999", "8610555009999"]


def test_parse_server() -> None:
    assert parse_server("127.0.0.1") == ("127.0.0.1", 53)
    assert parse_server("127.0.0.1:5353") == ("127.0.0.1", 5353)
    assert parse_server("[::1]:5353") == ("::1", 5353)
    assert parse_server("::1") == ("::1", 53)
    for bad in ("127.0.0.1:x", "127.0.0.1:70000", "[::1]x"):
        with pytest.raises(ValueError):
            parse_server(bad)


# --- a tiny authoritative server on loopback ------------------------------------------------------------

class FakeServer:
    """Answers from a dict; truncates UDP answers for some names; ignores others; logs sources."""

    def __init__(self, data: dict[tuple[str, str], dns.rrset.RRset], truncate: set[str],
                 silent: set[str]) -> None:
        self.data, self.truncate, self.silent = data, truncate, silent
        self.seen: list[tuple[str, str, str]] = []  # (protocol, source, qname)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        server = self

        class Tcp(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                length = struct.unpack("!H", self.request.recv(2))[0]
                wire = server.answer(self.request.recv(length), self.client_address[0], tcp=True)
                if wire:
                    self.request.sendall(struct.pack("!H", len(wire)) + wire)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.tcp = socketserver.ThreadingTCPServer(("127.0.0.1", self.port), Tcp)
        self.threads = [threading.Thread(target=self._udp, daemon=True),
                        threading.Thread(target=self.tcp.serve_forever, args=(0.05,), daemon=True)]
        for t in self.threads:
            t.start()

    def answer(self, wire: bytes, source: str, tcp: bool) -> bytes | None:
        query = dns.message.from_wire(wire)
        q = query.question[0]
        qname = q.name.to_text()
        self.seen.append(("tcp" if tcp else "udp", source, qname))
        if qname in self.silent:
            return None
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        if qname in self.truncate and not tcp:
            response.flags |= dns.flags.TC
            return response.to_wire()
        found = self.data.get((qname, dns.rdatatype.to_text(q.rdtype)))
        if found is not None:
            response.answer.append(found)
        elif not any(name == qname for name, _ in self.data):
            response.set_rcode(dns.rcode.NXDOMAIN)
        return response.to_wire()

    def _udp(self) -> None:
        while True:
            try:
                wire, addr = self.sock.recvfrom(65535)
            except OSError:
                return
            reply = self.answer(wire, addr[0], tcp=False)
            if reply:
                self.sock.sendto(reply, addr)

    def close(self) -> None:
        self.tcp.shutdown()
        self.tcp.server_close()
        self.sock.close()


@pytest.fixture()
def fake() -> Iterator[FakeServer]:
    data = {
        ("a.example.net.", "A"): rrset("a.example.net.", 60, "A", "192.0.2.1"),
        ("big.example.net.", "A"): rrset("big.example.net.", 60, "A",
                                         *[f"192.0.2.{i}" for i in range(1, 40)]),
    }
    server = FakeServer(data, truncate={"big.example.net."}, silent={"slow.example.net."})
    yield server
    server.close()


def test_tcp_fallback_on_truncation(fake: FakeServer) -> None:
    querier = LiveQuerier("127.0.0.1", fake.port, timeout=1.0, retries=0)
    answer = querier.ask(N("big.example.net."), dns.rdatatype.A, None)
    assert answer.tcp and answer.rrset is not None and len(answer.rrset) == 39 and answer.authoritative
    assert [p for p, _s, q in fake.seen if q == "big.example.net."] == ["udp", "tcp"]


def test_queries_leave_from_the_requested_source(fake: FakeServer) -> None:
    querier = LiveQuerier("127.0.0.1", fake.port, timeout=1.0, retries=0)
    assert querier.ask(N("a.example.net."), dns.rdatatype.A, "127.0.0.3").rrset is not None
    assert ("udp", "127.0.0.3", "a.example.net.") in fake.seen


def test_timeouts_are_retried_then_reported(fake: FakeServer) -> None:
    querier = LiveQuerier("127.0.0.1", fake.port, timeout=0.2, retries=2)
    assert querier.ask(N("slow.example.net."), dns.rdatatype.A, None).rcode == "TIMEOUT"
    assert sum(1 for _p, _s, q in fake.seen if q == "slow.example.net.") == 3


def test_verify_runs_concurrently_and_reports_drift(fake: FakeServer) -> None:
    questions = [
        Expectation("127.0.0.2", "v", N("a.example.net."), dns.rdatatype.A,
                    rrset("a.example.net.", 60, "A", "192.0.2.1")),
        Expectation("127.0.0.2", "v", N("big.example.net."), dns.rdatatype.A,
                    rrset("big.example.net.", 60, "A", *[f"192.0.2.{i}" for i in range(1, 39)])),
        Expectation("127.0.0.2", "v", N("gone.example.net."), dns.rdatatype.A,
                    rrset("gone.example.net.", 60, "A", "192.0.2.99")),
    ]
    ticks: list[int] = []
    drift, checked, tcp = verify(questions, LiveQuerier("127.0.0.1", fake.port, timeout=1.0, retries=0),
                                 workers=3, progress=ticks.append)
    assert checked == 3 and tcp == 1 and len(ticks) == 3
    assert [(d.name, d.kind, d.live or d.expected) for d in drift] == [
        ("big.example.net", "extra", "192.0.2.39"),
        ("gone.example.net", "missing", "192.0.2.99"),
    ]


def test_unreachable_server_is_an_error_not_drift() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    querier = LiveQuerier("127.0.0.1", port, timeout=0.2, retries=1)
    with pytest.raises(ServerUnreachable, match="unreachable"):
        querier.probe(None, N("example.net."))


def test_same_srv_target_on_two_ports_compares_whole_records() -> None:
    name = "_sip._udp.x.example.net."
    plan = rrset(name, 60, "SRV", "10 50 5060 a.example.net.", "10 50 5070 a.example.net.")
    live = rrset(name, 60, "SRV", "10 50 5060 a.example.net.", "10 50 5080 a.example.net.")
    drift = compare(exp(plan, "_sip._udp.x.example.net.", "SRV"), LiveAnswer("NOERROR", live))
    assert sorted((d.kind, d.expected or d.live) for d in drift) == [
        ("extra", "10 50 5080 a.example.net."), ("missing", "10 50 5070 a.example.net.")]
