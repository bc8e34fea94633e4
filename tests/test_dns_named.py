"""Proven by real BIND: named serves the rendered province config on loopback and answers each
client by its view. Loopback sources: 127.0.0.2 is capital's access resolver, 127.0.0.3 is in
harbour's UE prefixes, 127.0.0.4 is in site-a's core subnets, 127.0.0.5 is sbc-capital's core
side (site-a: its SBC view, the P-CSCF names only), 127.0.0.1 is nobody (the default view, which refuses)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.tsigkeyring
import dns.xfr
import dns.zone
import pytest

from imsdr.dns.plan import DnsPlan, build_dns_plan
from imsdr.dns.render import render_dns
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

CAPITAL, HARBOUR, CORE_A, SBC_CORE, DEFAULT = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.1"
PEER = "127.0.0.6"  # dns-b-1, the other name server: the only address a transfer may come from
HOME, GPP = "ims.example.net", "ims.mnc001.mcc460.3gppnetwork.org"
CORE_NAMES = ["hss-a-1", "slf-a-1", "cscf-a-1", "cscf-b-1", "mgcf-a-1", "imgw-a-1", "as-a-1", "pcscf-a-1"]


def _loopback_clients(d: dict[str, Any]) -> None:
    lns = {ln["id"]: ln for ln in d["local_networks"]}
    lns["capital"]["resolvers"] = [CAPITAL]  # the access resolver the capital UEs ask
    lns["harbour"]["prefixes"].append(f"{HARBOUR}/32")
    # site-a; the /31 holds the SBC's core address too, as a real core subnet does: its SBC view comes first
    d["sites"][0]["core_subnets"].append(f"{CORE_A}/31")
    sbc = next(e for e in d["elements"] if e["id"] == "sbc-capital")
    sbc["core_addresses"] = [SBC_CORE]
    next(e for e in d["elements"] if e["id"] == "dns-b-1")["addresses"] = [PEER]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DnsPlan, Path]:
    import yaml

    root = Path(__file__).resolve().parent.parent
    data = yaml.safe_load((root / "inventories/province.yaml").read_text())
    _loopback_clients(data)
    base = tmp_path_factory.mktemp("named")
    inventory = base / "province-loopback.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    inv, source = load_inventory(inventory)
    topo = Topology(inv, source)
    keys = base / "secret" / "tsig.keys"
    report = render_dns(topo, base / "dns", inventory.name, serial=1, keys=keys)
    assert len(report.keys_added) == 12  # 6 user, 3 SBC and 3 core views; the refusing default has none
    return base / "dns", build_dns_plan(topo), keys


def keyring(keys: Path) -> dict[Any, Any]:
    text = keys.read_text()
    found = re.findall(r'key "([a-z0-9.-]+)" \{\s*algorithm hmac-sha256;\s*secret "([^"]+)";', text)
    return dns.tsigkeyring.from_text({name: ("hmac-sha256", secret) for name, secret in found})


def srv_order(server: Any, qname: str, source: str) -> list[tuple[int, str]]:
    rrset = server.answer(qname, "SRV", source)
    assert rrset is not None, f"no SRV answer for {qname} from {source}"
    return sorted((r.priority, r.target.to_text(omit_final_dot=True).split(".")[0]) for r in rrset)


def addresses(server: Any, qname: str, source: str, rdtype: str = "A") -> set[str]:
    rrset = server.answer(qname, rdtype, source)
    return {r.address for r in rrset} if rrset else set()


def rcode(server: Any, qname: str, rdtype: str, source: str) -> str:
    return dns.rcode.to_text(server.query(qname, rdtype, source).rcode())


def axfr(server: Any, zone: str, source: str, keys: Path | None = None, key: str | None = None) -> dns.zone.Zone:
    """AXFR ``zone`` from ``source``, signed with ``key`` when given; raises when refused."""
    xfr_zone = dns.zone.Zone(zone)
    query, _serial = dns.xfr.make_query(xfr_zone)
    if key is not None:
        assert keys is not None
        query.use_tsig(keyring(keys), keyname=key, algorithm="hmac-sha256")
    dns.query.inbound_xfr(server.address, xfr_zone, query=query, port=server.port, source=source, timeout=5)
    return xfr_zone


def test_user_views_see_access_data_only(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _plan, _keys = served
    server = start_named(out)
    for source in (CAPITAL, HARBOUR):
        for name in CORE_NAMES:  # internal names: NXDOMAIN from the access zone
            assert rcode(server, f"{name}.{HOME}", "A", source) == "NXDOMAIN", (name, source)
        for name in ("_sip._udp.scscf", "_sip._udp.pcscf1", "_sip._udp.mmtel"):
            assert rcode(server, f"{name}.{HOME}", "SRV", source) == "NXDOMAIN"
        # the ENUM tree is core-only: not served at all here
        assert rcode(server, "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR", source) == "REFUSED"
        # the home domain's NAPTR leads to SBCs, never to a CSCF
        for domain in (HOME, GPP):
            naptr = server.answer(domain, "NAPTR", source)
            assert naptr is not None
            for record in naptr:
                targets = srv_order(server, record.replacement.to_text(omit_final_dot=True), source)
                assert targets and all(t.startswith("sbc-") for _, t in targets), targets
    # capital UEs (through their resolver): local SBC first, ring DR second, for home and 3GPP domain
    assert srv_order(server, f"_sip._udp.{HOME}", CAPITAL) == [(10, "sbc-capital"), (20, "sbc-coast")]
    assert srv_order(server, f"_sip._udp.{GPP}", CAPITAL) == [(10, "sbc-capital"), (20, "sbc-coast")]
    assert srv_order(server, f"_sip._tcp.sbc.{HOME}", HARBOUR) == [(10, "sbc-harbour"), (20, "sbc-capital")]


def test_a_only_clients_get_the_local_sbc_and_a_dr_name(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _plan, _keys = served
    server = start_named(out)
    assert addresses(server, f"sbc.{HOME}", CAPITAL) == {"203.0.113.10"}
    assert addresses(server, f"sbc-dr.{HOME}", CAPITAL) == {"203.0.113.60"}
    assert addresses(server, f"sbc.{HOME}", HARBOUR) == {"203.0.113.20"}
    assert addresses(server, f"sbc.{HOME}", HARBOUR, "AAAA") == {"2001:db8:f00::20"}
    assert addresses(server, f"sbc-dr.{HOME}", HARBOUR) == {"203.0.113.10"}
    for _ in range(5):  # whatever the rotation, the first address is the local SBC
        first = server.answer(f"sbc.{HOME}", "A", CAPITAL)[0].address
        assert first == "203.0.113.10"


def test_core_views_and_the_sbc_core_side(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _plan, _keys = served
    server = start_named(out)
    naptr = server.answer(HOME, "NAPTR", CORE_A)
    best = min(naptr, key=lambda r: (r.order, r.preference))
    assert best.replacement.to_text(omit_final_dot=True) == f"_sip._udp.{HOME}"
    assert srv_order(server, f"_sip._udp.{HOME}", CORE_A) == [
        (10, "cscf-a-1"), (20, "cscf-c-1"), (30, "cscf-b-1"), (30, "cscf-b-2")]
    assert srv_order(server, f"_sip._udp.{GPP}", CORE_A) == [
        (10, "cscf-a-1"), (20, "cscf-c-1"), (30, "cscf-b-1"), (30, "cscf-b-2")]
    assert addresses(server, f"hss-a-1.{HOME}", CORE_A) == {"192.0.2.30"}
    # the SBC's core interface is in its site's SBC view (before the core view, whose subnet holds
    # its address too): the P-CSCF pair same site first, and nothing else of the core (no HSS, SLF,
    # CSCF, MGCF, AS, I-CSCF entry, ENUM)
    assert srv_order(server, f"_sip._udp.pcscf1.{HOME}", SBC_CORE) == [(10, "pcscf-a-1"), (30, "pcscf-b-1")]
    assert srv_order(server, f"_sip._udp.pcscf2.{HOME}", SBC_CORE) == [(20, "pcscf-c-1"), (30, "pcscf-b-2")]
    assert addresses(server, f"pcscf-b-1.{HOME}", SBC_CORE) == {"192.0.2.74"}
    for name in ("hss-a-1", "slf-a-1", "cscf-a-1", "mgcf-a-1", "imgw-a-1", "as-a-1", "scscf", "sbc-capital"):
        assert rcode(server, f"{name}.{HOME}", "A", SBC_CORE) == "NXDOMAIN", name
    assert rcode(server, f"_sip._udp.{HOME}", "SRV", SBC_CORE) == "NXDOMAIN"  # the I-CSCF entry
    assert rcode(server, "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR", SBC_CORE) == "REFUSED"  # no ENUM
    assert addresses(server, f"sbc-capital.{HOME}", CORE_A) == {SBC_CORE}  # core side of the SBC
    # ENUM in the core: numbers, wildcard, and NXDOMAIN outside every block (the parent zone)
    rr = server.answer("5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR", CORE_A)
    assert [r.regexp for r in rr] == [b"!^.*$!sip:+8613800138005@ims.example.net!"]
    rr = server.answer("4.3.2.1.0.0.5.5.5.0.1.6.8.e164.arpa", "NAPTR", CORE_A)
    assert [r.regexp for r in rr] == [b"!^(.*)$!sip:\\1@ims.example.net!"]
    assert rcode(server, "9.9.9.9.0.0.8.3.1.6.8.e164.arpa", "NAPTR", CORE_A) == "NXDOMAIN"
    assert rcode(server, "1.1.1.1.1.1.1.1.1.6.8.e164.arpa", "NAPTR", CORE_A) == "NXDOMAIN"


def test_default_view_refuses_and_recursion_is_off(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _plan, _keys = served
    server = start_named(out)
    for qname, rdtype in ((HOME, "SOA"), (f"sbc.{HOME}", "A"), (GPP, "NAPTR"),
                          ("5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR"), ("example.org", "A")):
        assert rcode(server, qname, rdtype, DEFAULT) == "REFUSED", qname
    request = dns.message.make_query("example.org", "A")  # recursion desired: still refused
    assert dns.rcode.to_text(dns.query.udp(request, server.address, port=server.port, source=CAPITAL,
                                           timeout=2).rcode()) == "REFUSED"


def test_axfr_needs_the_views_key(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _plan, keys = served
    server = start_named(out, keys=keys)
    for source in (DEFAULT, CAPITAL, CORE_A):  # unsigned: refused from anywhere, even inside the view
        with pytest.raises(dns.xfr.TransferError):
            axfr(server, HOME, source)
    with pytest.raises(dns.xfr.TransferError):  # another view's zone is not reachable with this key
        axfr(server, "6.8.e164.arpa", DEFAULT, keys, "imsdr-users-capital")
    for source in (DEFAULT, CAPITAL):  # the view's key from an address that is no name server: refused
        with pytest.raises(dns.xfr.TransferError):
            axfr(server, HOME, source, keys, "imsdr-users-capital")
    zone = axfr(server, HOME, PEER, keys, "imsdr-users-capital")  # key AND the other server's address
    names = {n.to_text() for n in zone.nodes}
    assert "sbc" in names and "sbc-dr" in names
    assert not any(n.split(".")[0] in CORE_NAMES for n in names), names
    core = axfr(server, HOME, PEER, keys, "imsdr-core-site-a")
    assert "hss-a-1" in {n.to_text() for n in core.nodes}
    enum = axfr(server, "8.3.1.0.0.8.3.1.6.8.e164.arpa", PEER, keys, "imsdr-core-site-b")  # shared via in-view
    assert len([n for n in enum.nodes if n.to_text() != "@"]) == 1000


def test_real_named_agrees_with_the_plan(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, plan, _keys = served
    server = start_named(out)
    sources = {"users-capital": CAPITAL, "users-harbour": HARBOUR, "core-site-a": CORE_A}
    queries = [
        (HOME, "NAPTR"),
        (GPP, "NAPTR"),
        (f"_sip._tcp.{HOME}", "SRV"),
        (f"_sip._udp.{GPP}", "SRV"),
        (f"_sip._udp.pcscf1.{HOME}", "SRV"),
        (f"_sip._udp.scscf.{HOME}", "SRV"),
        (f"_sips._tcp.sbc.{HOME}", "SRV"),
        (f"sbc.{HOME}", "A"),
        (f"sbc-dr.{HOME}", "AAAA"),
        (f"pcscf-b-2.{HOME}", "AAAA"),
        (HOME, "NS"),
        ("0.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR"),
    ]
    for view, source in sources.items():
        assert plan.view_for_client(source).name == view
        for qname, rdtype in queries:
            expected = {rd.to_text() for rd in plan.lookup(view, qname, rdtype)}
            answer = server.answer(qname, rdtype, source)
            got = {r.to_text() for r in answer} if answer else set()
            assert got == expected, (view, qname, rdtype)
            if answer:
                assert answer.rdtype == dns.rdatatype.from_text(rdtype)
    assert plan.view_for_client(DEFAULT).side == "none"


def test_named_is_stopped_by_pid(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    out, _, _ = served
    server = start_named(out)
    pid = server.pid
    os.kill(pid, 0)  # running
    server.stop()
    assert server.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_nothing_says_what_or_who_the_server_is(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    """named-options.conf (version, hostname, server-id none), included inside options."""
    out, _plan, _keys = served
    server = start_named(out)
    for qname in ("version.bind", "hostname.bind", "id.server", "authors.bind"):
        for source in (DEFAULT, CAPITAL, CORE_A):
            request = dns.message.make_query(qname, "TXT", rdclass="CH")
            response = dns.query.udp(request, server.address, port=server.port, source=source, timeout=2)
            assert not response.answer, (qname, source, response.answer)


def test_access_views_rate_limit_identical_answers(served: tuple[Path, DnsPlan, Path], start_named: Any) -> None:
    """Response-rate-limiting in the user views: a burst of one query from one UE address gets
    truncated (or dropped) answers beyond the limit; the access resolver and the core are not limited."""
    import socket

    out, _plan, _keys = served
    server = start_named(out)

    def burst(source: str, qname: str, count: int = 200) -> int:
        limited = 0
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind((source, 0))
            sock.settimeout(0.5)
            wire = dns.message.make_query(qname, "A").to_wire()
            for _ in range(count):
                sock.sendto(wire, (server.address, server.port))
            for _ in range(count):
                try:
                    response = dns.message.from_wire(sock.recv(4096))
                except (TimeoutError, OSError):
                    limited += count  # the rest never came (dropped): all counted as limited
                    break
                limited += bool(response.flags & dns.flags.TC)
        return min(limited, count)

    assert burst(HARBOUR, f"sbc.{HOME}") > 100  # a UE address: 20/s over a 5 s window, most are limited
    assert burst(CAPITAL, f"sbc.{HOME}") == 0  # the access resolver (aggregating many users) is exempt
    assert burst(CORE_A, f"hss-a-1.{HOME}") == 0  # the core view is not limited


# --- network.dns.host_zone: host records in one zone per side, shared by every view ----------------

HOSTS = f"hosts.{HOME}"


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, DnsPlan, Any]]:
    """The loopback province with ``host_zone: hosts``, rendered, and one named serving it for the
    module (started once, stopped by pid at teardown)."""
    import named_harness
    import yaml

    root = Path(__file__).resolve().parent.parent
    data = yaml.safe_load((root / "inventories/province.yaml").read_text())
    _loopback_clients(data)
    data["network"]["dns"]["host_zone"] = "hosts"
    base = tmp_path_factory.mktemp("named-hosts")
    inventory = base / "province-hosts.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    inv, source = load_inventory(inventory)
    topo = Topology(inv, source)
    render_dns(topo, base / "dns", inventory.name, serial=1)
    server = named_harness.start_named(base / "dns", probe=(HOME, "SOA"))
    try:
        yield base / "dns", build_dns_plan(topo), server
    finally:
        server.stop()


def test_host_zone_passes_named_checkzone_and_checkconf(hosted: tuple[Path, DnsPlan, Any],
                                                        tmp_path: Path) -> None:
    import named_harness
    from rendered_checks import named_checkconf, named_checkzone

    out, _plan, _server = hosted
    zones = sorted(out.rglob("*.zone"))
    assert {z.relative_to(out).as_posix() for z in zones if z.name == f"{HOSTS}.zone"} == {
        f"zones/{side}/{HOSTS}.zone" for side in ("access", "core", "sbc")}  # one file per side, no view's
    for zone in zones:
        assert named_checkzone(zone.name[: -len(".zone")], zone) is None, zone
    for config in sorted((out / "named").glob("*.conf")):
        wrapper = tmp_path / f"check-{config.name}"
        wrapper.write_text(named_harness.wrapper_conf(out.resolve(), tmp_path, named_harness.free_port(),
                                                      f"named/{config.name}"))
        assert named_checkconf(wrapper) is None, config
        text = config.read_text()
        # defined once per side (a users, an SBC and a core view), every other view refers to it
        assert text.count(f'zone "{HOSTS}" {{\n') == 3
        assert text.count(f'zone "{HOSTS}" {{ in-view') == 5 + 2 + 2


def test_host_zone_answers_a_host_and_an_srv_in_two_views(hosted: tuple[Path, DnsPlan, Any]) -> None:
    _out, _plan, server = hosted
    # one host name, two views, two answers: the access side's address, the core side's
    assert addresses(server, f"sbc-capital.{HOSTS}", CAPITAL) == {"203.0.113.10"}
    assert addresses(server, f"sbc-capital.{HOSTS}", CORE_A) == {SBC_CORE}
    assert addresses(server, f"hss-a-1.{HOSTS}", CORE_A) == {"192.0.2.30"}
    assert rcode(server, f"hss-a-1.{HOSTS}", "A", CAPITAL) == "NXDOMAIN"  # core names stay out of the access side
    assert rcode(server, f"hss-a-1.{HOME}", "A", CORE_A) == "NXDOMAIN"  # the old name is gone
    # the SRV differs per view (the home-domain zone of each view) and leads into the host zone
    for source, first in ((CAPITAL, "sbc-capital"), (HARBOUR, "sbc-harbour")):
        rrset = server.answer(f"_sip._udp.sbc.{HOME}", "SRV", source)
        assert rrset is not None
        best = min(rrset, key=lambda r: r.priority).target.to_text(omit_final_dot=True)
        assert best == f"{first}.{HOSTS}", (source, best)
        assert addresses(server, best, source)  # and the target answers in that view
    assert srv_order(server, f"_sip._udp.{HOME}", CORE_A)[0] == (10, "cscf-a-1")
    # a referral-following resolver finds the cut: the home-domain zone delegates the host zone
    request = dns.message.make_query(f"{HOSTS}", "NS")
    response = dns.query.udp(request, server.address, port=server.port, source=CORE_A, timeout=2)
    assert response.flags & dns.flags.AA and response.answer


def test_host_zone_named_agrees_with_the_plan(hosted: tuple[Path, DnsPlan, Any]) -> None:
    _out, plan, server = hosted
    sources = {"users-capital": CAPITAL, "users-harbour": HARBOUR, "core-site-a": CORE_A, "sbc-site-a": SBC_CORE}
    queries = [(f"_sip._udp.{HOME}", "SRV"), (f"_sip._udp.pcscf1.{HOME}", "SRV"), (f"sbc.{HOME}", "A"),
               (f"sbc-dr.{HOME}", "AAAA"), (f"pcscf-b-2.{HOSTS}", "AAAA"), (f"sbc-harbour.{HOSTS}", "A"),
               (f"dns-a-1.{HOSTS}", "A"), (HOSTS, "NS"), (HOME, "NS")]
    for view, source in sources.items():
        assert plan.view_for_client(source).name == view
        for qname, rdtype in queries:
            expected = {rd.to_text() for rd in plan.lookup(view, qname, rdtype)}
            answer = server.answer(qname, rdtype, source)
            assert ({r.to_text() for r in answer} if answer else set()) == expected, (view, qname, rdtype)
