"""Rendering each record once: the shared render cache and the one-pass digest change nothing."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from imsdr.dns.plan import ACCESS_BASE, CORE_BASE, build_dns_plan
from imsdr.dns.records import AAAA, SOA
from imsdr.dns.views import zone_files
from imsdr.dns.zonefile import FORMAT_VERSION, RenderCache, header_lines, prepare_zone, write_prepared
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

ROOT = Path(__file__).resolve().parents[1]


def _plan():  # type: ignore[no-untyped-def]
    inv, source = load_inventory(ROOT / "inventories" / "province.yaml")
    return build_dns_plan(Topology(inv, source))


def _slow_digest(zone):  # type: ignore[no-untyped-def]
    """The digest as defined (docs/dns.md), computed the plain way, record by record: zone content
    only (no header comment: renaming the inventory must not change a serial)."""
    h = hashlib.sha256(FORMAT_VERSION.encode())
    for rrset in zone.sorted_rrsets():
        rdatas = rrset.rdatas
        if rrset.rdtype == "SOA":
            s = rdatas[0]
            rdatas = (SOA(s.mname, s.rname, 0, s.refresh, s.retry, s.expire, s.minimum),)
        h.update(f"{rrset.name}|{rrset.rdtype}|{rrset.ttl}|{'|'.join(r.to_text() for r in rdatas)}\n".encode())
    for b in zone.blocks:
        h.update(repr((b.id, b.prefix, b.style, b.domain, b.zone, b.ttl, b.first, b.last, b.length)).encode())
    return "sha256:" + h.hexdigest()


def test_shared_cache_writes_every_zone_file_as_without_it() -> None:
    plan = _plan()
    cache: RenderCache = {}
    refs = zone_files(plan)
    assert any(ref.view for ref in refs)  # per-view copies exist: the cache has something to share
    for ref in refs:
        base = ACCESS_BASE if ref.side == "access" else CORE_BASE
        zone = plan.zone_for_view(ref.view or base, ref.zone)
        header = header_lines(zone, ref.view, "inv.yaml", plan.network)
        cached, plain = prepare_zone(zone, header, None, cache), prepare_zone(zone, header)
        assert cached.digest == plain.digest == _slow_digest(zone)
        assert prepare_zone(zone, header_lines(zone, ref.view, "other.yaml", plan.network)).digest == plain.digest
        a, b = io.StringIO(), io.StringIO()
        assert write_prepared(a, cached, 7, header) == write_prepared(b, plain, 7, header)
        assert a.getvalue() == b.getvalue()
        soa = [line for line in a.getvalue().splitlines() if " IN SOA " in line]
        assert len(soa) == 1 and " 7 " in soa[0]  # the serial is filled in at write time
    assert cache


def test_aaaa_text_is_compressed_whatever_the_input_spelling() -> None:
    assert AAAA("2001:0db8:0000:0000:0000:0000:0000:0001").to_text() == "2001:db8::1"
    assert AAAA("2001:DB8::A").to_text() == "2001:db8::a"
    assert AAAA("2001:db8::1").to_text() == "2001:db8::1"


def test_rdata_problem_memo_reports_every_rrset_that_holds_the_rdata() -> None:
    from imsdr.dns.records import SRV, RecordChecks, RRset

    bad = SRV(10, 5, 0, "x.example.net")  # port 0 with a real target
    first = RRset("_sip._udp.a.example.net", "SRV", 60, (bad,))
    second = RRset("_sip._udp.b.example.net", "SRV", 60, (SRV(10, 5, 5060, "y.example.net"), bad))
    memo = RecordChecks()
    assert first.problems(memo) == first.problems() != []
    assert second.problems(memo) == second.problems()
    assert any("_sip._udp.b.example.net" in p and "port 0" in p for p in second.problems(memo))
    assert memo.rdatas[id(bad)] is bad and memo.faulty[id(bad)]


def test_rdata_tuple_memo_names_every_rrset_that_holds_the_tuple() -> None:
    """One tuple of records at several names (an SRV set under _sip._udp and _sip._tcp) is judged
    once; each rrset still gets its own name, type and TTL in the messages."""
    from imsdr.dns.records import SRV, RecordChecks, RRset

    shared = (SRV(10, 5, 0, "x.example.net"), SRV(10, 5, 0, "x.example.net"))  # port 0, twice
    udp = RRset("_sip._udp.a.example.net", "SRV", 60, shared)
    tcp = RRset("_sip._tcp.a.example.net", "SRV", 2**31, shared)
    star = RRset("a.*.example.net", "SRV", 60, shared)
    memo = RecordChecks()
    for rrset in (udp, tcp, star, udp):
        assert rrset.problems(memo) == rrset.problems() != []
    assert len(memo.contents) == 1
    assert [p for p in tcp.problems(memo) if "TTL" in p] == [
        "_sip._tcp.a.example.net SRV: TTL 2147483648 is outside 0..2147483647"]
    assert star.problems(memo)[-1] == "a.*.example.net: '*' is only allowed as the leftmost label"
    assert "_sip._udp.a.example.net SRV: a record is listed twice" in udp.problems(memo)


def test_view_copies_prepared_from_their_base_are_as_prepared_whole() -> None:
    """LayoutCache.prepare copies the base zone's rendering and puts the view's rrsets (and the
    local SBC note) in their places: the same digest, records and text as rendering the copy."""
    from imsdr.dns.zonefile import LayoutCache, RdataTexts

    plan = _plan()
    layouts, cache, texts = LayoutCache(), {}, RdataTexts()  # type: ignore[var-annotated]
    views = 0
    for ref in zone_files(plan):
        if not ref.view:
            continue
        view = plan.view(ref.view)
        zone = plan.zone_for_view(view, ref.zone)
        base = plan.zones_of(view.side)[ref.zone]
        header = header_lines(zone, ref.view, "inv.yaml", plan.network)
        comments = {(plan.sbc_name, "A"): "local SBC only"} if view.kind == "local" else {}
        fast = layouts.prepare(base, view.overrides[ref.zone], header, comments, cache, texts)
        whole = prepare_zone(zone, header, comments)
        assert fast.digest == whole.digest and fast.records == whole.records
        a, b = io.StringIO(), io.StringIO()
        write_prepared(a, fast, 3, header)
        write_prepared(b, whole, 3, header)
        assert a.getvalue() == b.getvalue()
        views += 1
    assert views
