"""Proven by real BIND: named serves the rendered province config on loopback and answers each
client by its view (queries from 127.0.0.2 / 127.0.0.3 / 127.0.0.4 / 127.0.0.1)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dns.rdatatype
import pytest

from imsdr.dns.plan import DnsPlan, build_dns_plan
from imsdr.dns.render import render_dns
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

CAPITAL, HARBOUR, CORE_A, DEFAULT = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.1"


def _loopback_clients(d: dict[str, Any]) -> None:
    lns = {ln["id"]: ln for ln in d["local_networks"]}
    lns["capital"]["prefixes"].append(f"{CAPITAL}/32")
    lns["harbour"]["prefixes"].append(f"{HARBOUR}/32")
    d["sites"][0]["core_subnets"].append(f"{CORE_A}/32")  # site-a


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DnsPlan]:
    import yaml

    root = Path(__file__).resolve().parent.parent
    data = yaml.safe_load((root / "inventories/province.yaml").read_text())
    _loopback_clients(data)
    base = tmp_path_factory.mktemp("named")
    inventory = base / "province-loopback.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    inv, source = load_inventory(inventory)
    topo = Topology(inv, source)
    render_dns(topo, base / "dns", inventory.name, serial=1)
    return base / "dns", build_dns_plan(topo)


def srv_order(server: Any, qname: str, source: str) -> list[tuple[int, str]]:
    rrset = server.answer(qname, "SRV", source)
    assert rrset is not None, f"no SRV answer for {qname} from {source}"
    return sorted((r.priority, r.target.to_text(omit_final_dot=True).split(".")[0]) for r in rrset)


def addresses(server: Any, qname: str, source: str, rdtype: str = "A") -> set[str]:
    rrset = server.answer(qname, rdtype, source)
    return {r.address for r in rrset} if rrset else set()


def test_real_named_answers_per_view(served: tuple[Path, DnsPlan], start_named: Any) -> None:
    out, plan = served
    server = start_named(out)
    sbc = "_sip._udp.sbc.ims.example.net"

    # SBC discovery: local SBC first, DR SBC (ring) second, per local network view
    assert srv_order(server, sbc, CAPITAL) == [(10, "sbc-capital"), (20, "sbc-coast")]
    assert srv_order(server, sbc, HARBOUR) == [(10, "sbc-harbour"), (20, "sbc-capital")]
    assert addresses(server, "sbc.ims.example.net", CAPITAL) == {"203.0.113.10", "203.0.113.60"}
    assert addresses(server, "sbc.ims.example.net", HARBOUR) == {"203.0.113.20", "203.0.113.10"}
    assert addresses(server, "sbc.ims.example.net", HARBOUR, "AAAA") == {
        "2001:db8:f00::20",
        "2001:db8:f00::10",
    }
    assert len(srv_order(server, sbc, DEFAULT)) == 6  # default view: every SBC

    # RFC 3263 chain for the home domain from a core element at site-a: NAPTR -> SRV -> A
    naptr = server.answer("ims.example.net", "NAPTR", CORE_A)
    best = min(naptr, key=lambda r: (r.order, r.preference))
    assert (best.flags, best.service) == (b"s", b"SIP+D2U")
    srv_name = best.replacement.to_text(omit_final_dot=True)
    assert srv_name == "_sip._udp.ims.example.net"
    assert srv_order(server, srv_name, CORE_A) == [(10, "cscf-a-1"), (20, "cscf-c-1"), (30, "cscf-b-1")]
    assert addresses(server, "cscf-a-1.ims.example.net", CORE_A) == {"192.0.2.20"}
    assert {p for p, _ in srv_order(server, srv_name, DEFAULT)} == {10}  # no site preference outside

    # ENUM: a numbers block and a wildcard block, served in every view (shared with in-view)
    for source in (CAPITAL, HARBOUR, DEFAULT):
        rr = server.answer("5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR", source)
        assert [(r.flags, r.service, r.regexp) for r in rr] == [
            (b"u", b"E2U+sip", b"!^.*$!sip:+8613800138005@ims.example.net!")
        ]
    rr = server.answer("4.3.2.1.0.0.5.5.5.0.1.6.8.e164.arpa", "NAPTR", CAPITAL)
    assert [r.regexp for r in rr] == [b"!^(.*)$!sip:\\1@ims.example.net!"]
    assert server.answer("9.9.9.9.0.0.8.3.1.6.8.e164.arpa", "NAPTR", CAPITAL) is None  # outside every block


def test_real_named_agrees_with_the_plan(served: tuple[Path, DnsPlan], start_named: Any) -> None:
    out, plan = served
    server = start_named(out)
    sources = {"users-capital": CAPITAL, "users-harbour": HARBOUR, "core-site-a": CORE_A, "default": DEFAULT}
    queries = [
        ("ims.example.net", "NAPTR"),
        ("_sip._tcp.ims.example.net", "SRV"),
        ("_sip._udp.pcscf1.ims.example.net", "SRV"),
        ("_sip._udp.scscf.ims.example.net", "SRV"),
        ("_sips._tcp.sbc.ims.example.net", "SRV"),
        ("sbc.ims.example.net", "A"),
        ("pcscf-b-2.ims.example.net", "AAAA"),
        ("ims.example.net", "NS"),
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


def test_named_is_stopped_by_pid(served: tuple[Path, DnsPlan], start_named: Any) -> None:
    out, _ = served
    server = start_named(out)
    pid = server.pid
    os.kill(pid, 0)  # running
    server.stop()
    assert server.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
