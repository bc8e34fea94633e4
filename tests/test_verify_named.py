"""Proven by real BIND: `resolve` agrees with a live `named` serving the rendered province
configuration, and `verify` finds no drift there — then exactly the drift the test introduces.

A test copy of the province inventory puts 127.0.0.2/32 into the harbour local network,
127.0.0.3/32 into the coast local network and 127.0.0.4/32 into site-a's core subnets, so queries
sent from those loopback addresses land in those views; 127.0.0.1 matches no ACL and gets the
default view, which refuses. Only loopback is used.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dns.name
import dns.rdatatype
import dns.rrset
import pytest
import yaml
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
SOURCES = {"127.0.0.2": "harbour", "127.0.0.3": "coast"}
CORE_SOURCE = "127.0.0.4"
DEFAULT_SOURCE = "127.0.0.1"
runner = CliRunner()



def make_inventory(directory: Path) -> Path:
    raw = yaml.safe_load(PROVINCE.read_text())
    for ln in raw["local_networks"]:
        for source, ln_id in SOURCES.items():
            if ln["id"] == ln_id:
                ln["prefixes"].append(f"{source}/32")
    raw["sites"][0]["core_subnets"].append(f"{CORE_SOURCE}/32")
    # verify asks in bursts from one UE address, which the access views' response-rate-limiting
    # (proven in test_dns_named) would truncate or drop; here it is off
    raw["network"].setdefault("dns", {})["access_rate_limit"] = 0
    path = directory / "province-loopback.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def render(inventory: Path, out: Path) -> None:
    result = runner.invoke(app, ["render", "dns", str(inventory), "--out", str(out)])
    assert result.exit_code == 0, result.output


class Served:
    def __init__(self, inventory: Path, out: Path, server: Any) -> None:
        self.inventory, self.out, self.server = inventory, out, server


def serve(tmp: Path) -> Served:
    import named_harness

    inventory = make_inventory(tmp)
    out = tmp / "dns"
    render(inventory, out)
    server = named_harness.start_named(out, probe=("ims.example.net", "SOA"))
    return Served(inventory, out, server)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = serve(tmp_path_factory.mktemp("verify-named"))
    yield s
    s.server.stop()


def live_lookup(server: Any, source: str) -> Any:
    def lookup(qname: dns.name.Name, rdtype: dns.rdatatype.RdataType) -> dns.rrset.RRset | None:
        response = server.query(qname.to_text(), dns.rdatatype.to_text(rdtype), source=source)
        for rrset in response.answer:
            if rrset.name == qname and rrset.rdtype == rdtype:
                return rrset
        return None

    return lookup


NAMES = [
    ("sbc.ims.example.net", "auto", None),
    ("sbc.ims.example.net", "auto", "tls"),
    ("ims.example.net", "auto", "tcp"),
    ("pcscf1.ims.example.net", "auto", None),
    ("sip:scscf.ims.example.net", "auto", None),
    ("_sip._udp.mmtel.ims.example.net", "SRV", None),
    ("+8610555001234", "auto", None),
    ("+8613800138500", "auto", "tcp"),
    ("pcscf-b-2.ims.example.net", "A", None),
    ("nosuch.ims.example.net", "auto", None),
]


def test_resolve_agrees_with_named(served: Served) -> None:
    from imsdr.dns.plan import build_dns_plan
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology
    from imsdr.resolve.offline import resolve_in
    from imsdr.resolve.planview import PlanSource
    from imsdr.resolve.rfc3263 import Rfc3263Resolver

    inv, source_map = load_inventory(served.inventory)
    plan_source = PlanSource(build_dns_plan(Topology(inv, source_map)))
    views_seen = set()
    for source in [*SOURCES, CORE_SOURCE, DEFAULT_SOURCE]:
        for name, rdtype, transport in NAMES:
            offline = resolve_in(plan_source, name, client=source, rdtype=rdtype, transport=transport)
            live = Rfc3263Resolver(live_lookup(served.server, source)).resolve(name, rdtype, transport)
            views_seen.add(offline.view)
            assert offline.to_dict()["candidates"] == live.to_dict()["candidates"], (source, name)
            assert (offline.uri, offline.naptr, offline.srv_name, offline.resolved) == (
                live.uri, live.naptr, live.srv_name, live.resolved), (source, name)
            assert [(s.qname, s.rdtype, s.records, s.ttl) for s in offline.steps] == [
                (s.qname, s.rdtype, s.records, s.ttl) for s in live.steps], (source, name)
    assert views_seen == {"users-harbour", "users-coast", "core-site-a", "default"}


def test_resolve_cli_shows_the_view_named_answers_from(served: Served) -> None:
    for source, ln_id in SOURCES.items():
        result = runner.invoke(app, ["resolve", str(served.inventory), "sbc.ims.example.net",
                                     "--from", source, "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        srv = served.server.answer("_sip._udp.sbc.ims.example.net", "SRV", source=source)
        live_first = min(srv, key=lambda rd: rd.priority)
        assert data["view"] == f"users-{ln_id}"
        assert data["candidates"][0]["target"] + "." == live_first.target.to_text()
        assert data["candidates"][0]["element"] == f"sbc-{ln_id}"


def verify_json(served: Served, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["verify", str(served.inventory), "--server", f"127.0.0.1:{served.server.port}",
            "--from", "127.0.0.2", "--from", "127.0.0.3", "--from", CORE_SOURCE, "--from", DEFAULT_SOURCE,
            "--format", "json", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_verify_finds_no_drift_against_the_rendered_config(served: Served) -> None:
    code, report = verify_json(served)
    assert code == 0 and report["ok"] and report["drift"] == []
    assert [s["view"] for s in report["sources"]] == ["users-harbour", "users-coast", "core-site-a", "default"]
    assert report["checked"] > 150
    table = runner.invoke(app, ["verify", str(served.inventory), "--server",
                                f"127.0.0.1:{served.server.port}", "--from", "127.0.0.2",
                                "--names", "sbc.ims.example.net,+8613800138000"])
    assert table.exit_code == 0 and "no drift" in table.stdout
    # names outside the stored plan: an ENUM number outside the sample, and a name nobody serves
    code, subset = verify_json(served, "--names", "+8613800138123", "--names", "nosuch.ims.example.net")
    assert code == 0 and subset["checked"] == 4 * 2 * 4


def _edit_zone(path: Path) -> tuple[str, str]:
    """Change one SRV weight and remove the DR SBC's A record; bump the SOA serial. (old weight, removed address)"""
    lines = path.read_text().splitlines()
    out: list[str] = []
    old_weight = removed = ""
    for line in lines:
        tokens = line.split()
        if len(tokens) >= 5 and tokens[0] == "@" and tokens[3] == "SOA":
            tokens[6] = str(int(tokens[6]) + 1)
            line = " ".join(tokens)
        elif tokens[:1] == ["_sip._udp.sbc"] and tokens[3] == "SRV" and tokens[7].startswith("sbc-capital."):
            old_weight = tokens[5]
            tokens[5] = str(int(old_weight) // 2)
            line = " ".join(tokens)
        elif tokens[:1] == ["sbc-dr"] and tokens[3] == "A":
            removed = tokens[4]
            continue
        out.append(line)
    assert old_weight and removed, "the rendered zone no longer has the records this test edits"
    path.write_text("\n".join(out) + "\n")
    return old_weight, removed


def test_verify_reports_exactly_the_edited_records(tmp_path: Path) -> None:
    served = serve(tmp_path)
    try:
        code, report = verify_json(served)
        assert code == 0, report["drift"]
        zone = served.out / "zones" / "users-harbour" / "ims.example.net.zone"
        old_weight, removed = _edit_zone(zone)
        before = served.server.answer("ims.example.net", "SOA", source="127.0.0.2")[0].serial
        os.kill(served.server.pid, signal.SIGHUP)  # the harness has no rndc: SIGHUP reloads
        deadline = time.monotonic() + 10
        while served.server.answer("ims.example.net", "SOA", source="127.0.0.2")[0].serial == before:
            assert time.monotonic() < deadline, served.server.log()[-2000:]
            time.sleep(0.05)
        code, report = verify_json(served)
        assert code == 1 and not report["ok"]
        got = sorted((d["view"], d["source"], d["name"], d["type"], d["kind"], d["field"], d["expected"],
                      d["live"]) for d in report["drift"])
        assert got == sorted([
            ("users-harbour", "127.0.0.2", "_sip._udp.sbc.ims.example.net", "SRV", "changed", "weight",
             old_weight, str(int(old_weight) // 2)),
            ("users-harbour", "127.0.0.2", "sbc-dr.ims.example.net", "A", "missing", None, removed, None),
        ])
        table = runner.invoke(app, ["verify", str(served.inventory), "--server",
                                    f"127.0.0.1:{served.server.port}", "--from", "127.0.0.2"])
        assert table.exit_code == 1
        assert "2 difference(s)" in table.stdout and "sbc-dr.ims.example.net" in table.stdout
    finally:
        served.server.stop()
