"""`imsdr resolve` / `imsdr verify` on the province sample: views, RFC 3263 chain, ENUM, exit codes.

Expected values are derived from the inventory itself (which SBC serves which local network, the
ring order, element sites and addresses), not copied from the command's output.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
RAW = yaml.safe_load(PROVINCE.read_text())
ELEMENTS = {e["id"]: e for e in RAW["elements"]}
runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, [*args])


def resolve_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = run("resolve", str(PROVINCE), *args, "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def ln(ln_id: str) -> dict[str, Any]:
    return next(x for x in RAW["local_networks"] if x["id"] == ln_id)


def sbc_of(ln_id: str) -> str:
    return next(e["id"] for e in RAW["elements"] if e["type"] == "sbc" and ln_id in e.get("serves", []))


def host_in(prefix: str, n: int = 5) -> str:
    import ipaddress

    return str(ipaddress.ip_network(prefix)[n])


def test_sbc_discovery_is_local_first_dr_second_per_view() -> None:
    order = RAW["redundancy"]["sbc_dr"]["order"]
    for ln_id in ("harbour", "coast"):
        backer = order[order.index(ln_id) - 1]  # ring: each local network backed up by the previous one
        client = host_in(ln(ln_id)["prefixes"][0])
        code, data = resolve_json(f"{RAW['network']['dns']['sbc_name']}.ims.example.net", "--from", client)
        assert code == 0 and data["resolved"] and data["source"] == client
        elements = [c["element"] for c in data["candidates"]]
        assert elements == [sbc_of(ln_id), sbc_of(backer)]
        first, second = data["candidates"]
        assert first["priority"] < second["priority"]
        assert first["p_first_exact"] == "1" and second["p_first_exact"] == "0"
        assert first["addresses"][0] == ELEMENTS[sbc_of(ln_id)]["addresses"][0]
        assert first["site"] == ELEMENTS[sbc_of(ln_id)]["site"]
        assert first["transport"] == "udp" and first["port"] == ELEMENTS[sbc_of(ln_id)].get("port", 5060)


def test_ipv6_sources_pick_their_view() -> None:
    client = host_in(ln("harbour")["prefixes"][1])
    code, data = resolve_json("sbc.ims.example.net", "--from", client, "--type", "SRV", "--transport", "tcp")
    assert code == 0 and data["view"] == "users-harbour" and data["source"] == client
    assert data["candidates"][0]["element"] == sbc_of("harbour")


def test_home_domain_same_site_first_from_a_core_subnet() -> None:
    site_b = next(s for s in RAW["sites"] if s["id"] == "site-b")
    client = host_in(site_b["core_subnets"][0])
    code, data = resolve_json("ims.example.net", "--from", client, "--transport", "tcp")
    assert code == 0
    assert data["naptr"].split()[3] == '"SIP+D2T"' and data["srv_name"] == "_sip._tcp.ims.example.net"
    # site-b has two I-CSCFs (cscf-b-1, cscf-b-2): equal weights, half each, the north ones never first
    firsts = data["candidates"][:2]
    assert {c["site"] for c in firsts} == {"site-b"} and {c["p_first_exact"] for c in firsts} == {"1/2"}
    assert {c["site"] for c in data["candidates"][2:]} == {"site-a", "site-c"}
    # from outside every view's prefixes: the default view refuses
    code, default = resolve_json("ims.example.net")
    assert code == 1 and default["view"] == "default" and default["source"] is None
    assert default["candidates"] == [] and "refuses every query" in default["reason"]
    # from a user view (its access resolver) the home domain leads to the SBCs, never to a CSCF
    capital = next(ln for ln in RAW["local_networks"] if ln["id"] == "capital")
    code, user = resolve_json("sip:ims.example.net", "--from", capital["resolvers"][0])
    assert code == 0 and user["view"] == "users-capital"
    assert [c["element"] for c in user["candidates"]][:2] == ["sbc-capital", "sbc-coast"]
    code, leak = resolve_json("hss-a-1.ims.example.net", "--from", capital["resolvers"][0])
    assert code == 1 and leak["candidates"] == []


def test_enum_number_then_sip_chain() -> None:
    block = next(b for b in RAW["enum_blocks"] if b["style"] == "wildcard")
    number = block["prefix"] + "1234"
    code, data = resolve_json(number, "--from", host_in("192.0.2.0/26"))  # ENUM is served to the core
    assert code == 0
    assert data["enum_domain"] == ".".join(reversed(number.lstrip("+"))) + ".e164.arpa"
    assert data["uri"] == f"sip:{number}@{block['domain']}"
    assert "E2U+sip" in data["enum_naptr"]
    assert data["resolved"] and all(c["element"].startswith("cscf") for c in data["candidates"])
    trail = [(s["type"], s["qname"]) for s in data["steps"]]
    assert trail[0] == ("NAPTR", data["enum_domain"]) and trail[1] == ("NAPTR", block["domain"])


def test_unresolvable_names_exit_1_with_a_reason() -> None:
    core = host_in("192.0.2.0/26")
    result = run("resolve", str(PROVINCE), "nosuch.ims.example.net", "--from", core)
    assert result.exit_code == 1
    assert "not resolved" in result.stderr
    code, data = resolve_json("+8699999999", "--from", core)
    assert code == 1 and data["resolved"] is False and "ENUM" in data["reason"]
    # the I-CSCFs accept udp and tcp only: a TLS-only client finds nothing
    code, data = resolve_json("ims.example.net", "--transport", "tls", "--from", core)
    assert code == 1 and data["candidates"] == []


def test_plain_address_lookup_and_table_output() -> None:
    el = ELEMENTS["pcscf-b-2"]
    code, data = resolve_json("pcscf-b-2.ims.example.net", "--type", "AAAA", "--from", host_in("192.0.2.0/26"))
    assert code == 0 and data["candidates"][0]["addresses"] == [a for a in el["addresses"] if ":" in a]
    assert data["candidates"][0]["element"] == "pcscf-b-2" and data["candidates"][0]["site"] == el["site"]
    table = run("resolve", str(PROVINCE), "pcscf1.ims.example.net", "--from", host_in("192.0.2.64/26"))
    assert table.exit_code == 0
    assert "pcscf-b-1.ims.example.net" in table.stdout and "P(first)" in table.stdout


def test_bad_input_exits_2() -> None:
    for args in (["--from", "not-an-ip"], ["--transport", "carrier-pigeon"]):
        result = run("resolve", str(PROVINCE), "ims.example.net", *args)
        assert result.exit_code == 2
    result = run("resolve", str(PROVINCE), "sips:ims.example.net", "--transport", "udp")
    assert result.exit_code == 2 and "TLS" in result.stderr and "Traceback" not in result.stderr


def test_verify_unreachable_server_exits_2_with_a_clear_message() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run("verify", str(PROVINCE), "--server", f"127.0.0.1:{port}", "--timeout", "0.2",
                 "--retries", "0")
    assert result.exit_code == 2
    assert "unreachable" in result.stderr and "nothing was compared" in result.stderr
    bad = run("verify", str(PROVINCE), "--server", "127.0.0.1:notaport")
    assert bad.exit_code == 2 and "--server" in bad.stderr


def test_verify_refuses_a_source_it_cannot_send_from() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # an IPv6 source cannot reach an IPv4 server: a clear error, exit 2, no traceback
    result = run("verify", str(PROVINCE), "--server", f"127.0.0.1:{port}", "--from", "::1",
                 "--timeout", "0.2")
    assert result.exit_code == 2 and "cannot send" in result.stderr, result.output
    bad = run("verify", str(PROVINCE), "--server", f"127.0.0.1:{port}", "--names", "a..b")
    assert bad.exit_code == 2 and "--names" in bad.stderr


def test_resolve_warns_about_plan_problems_render_would_refuse(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["pools"][3]["dns_name"] = "mmtel"
        d["redundancy"]["pools"][0]["dns_name"] = "mmtel"  # two pools under one name

    result = run("resolve", str(make_inventory(mutate)), "ims.example.net")
    assert "warning: the DNS plan has a problem `render dns` would refuse" in result.stderr
    assert "produced twice" in result.stderr
