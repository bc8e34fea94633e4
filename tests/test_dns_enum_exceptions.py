"""ENUM as blocks plus provisioned exceptions, proven by real BIND on loopback.

Two named serve the province sample with a ranged wildcard block added: one with the exceptions
rendered into the zone files, one rendered without them and brought to the same state by
``imsdr enum-update`` (RFC 2136 updates signed with the core view's TSIG key). For every name
asked, both answer what the plan's lookup (``resolve``) says, wildcard and exceptions included.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dns.rdata
import dns.rdatatype
import named_harness
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.dns.enum_exceptions import load_enum_exceptions, parse_enum_exceptions
from imsdr.dns.plan import DnsPlan, build_dns_plan, wildcard_stems
from imsdr.dns.render import render_dns
from imsdr.errors import ImsdrError
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

CORE = "127.0.0.4"  # in site-a's core subnets: a core view, which serves the ENUM zones
SUFFIX = "e164.arpa"
EXCEPTIONS = """# ported, routed and URI-option numbers (fictional)
number,kind,target,params
+867550001234,ported,ims.other-operator.example,
+867550001235,ported-tel,+8675599990000,
+867550003000,routed,ims.elsewhere.example.net,user=phone
+867550004999,uri,,user=phone
+8613800138005,ported,ims.other-operator.example,
+86105550012345,ported,ims.other-operator.example,
"""
RANGED = {"id": "ranged", "prefix": "+8675500", "length": 12, "style": "wildcard", "domain": "ims.example.net",
          "first": "+867550001000", "last": "+867550004999"}


def enum_qname(digits: str) -> str:
    return ".".join(reversed(digits)) + "." + SUFFIX


# names whose answers differ between a wildcard model done right and one done wrong: exception
# numbers, their siblings and cousins (the empty non-terminals), the edges of the ranged block,
# numbers outside it, names below an exception, non-digit labels under a wildcard
NAMES = sorted({
    *(enum_qname(f"86755000{x}") for x in (
        "1234", "1235", "1230", "1239", "1200", "1299", "1000", "1999", "2000", "3000", "3001", "4999",
        "4998", "0999", "5000", "9999", "0000")),
    *(enum_qname(f"8675500{x}") for x in ("0123", "012", "01", "0", "01234", "012345", "0123456")),
    *(enum_qname(f"861380013800{x}") for x in ("5", "4", "6", "51")),
    *(enum_qname(f"8610555001234{x}") for x in ("5", "4", "", "55")),
    enum_qname("86105550012"), enum_qname("861055500"), enum_qname("8610555009"),
    "x.0.0.5.5.5.0.1.6.8." + SUFFIX, "x.1.0.0.0.5.5.7.6.8." + SUFFIX,
})


def _inventory(base: Path, updates: bool) -> Path:
    import yaml

    root = Path(__file__).resolve().parent.parent
    data = yaml.safe_load((root / "inventories/province.yaml").read_text())
    data["sites"][0]["core_subnets"].append(f"{CORE}/32")
    data["network"].setdefault("dns", {})["enum_updates"] = updates
    data["enum_blocks"].append(dict(RANGED))
    path = base / f"province-enum-{'dyn' if updates else 'static'}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("enumexc")
    csv = base / "exceptions.csv"
    csv.write_text(EXCEPTIONS)
    inventory = _inventory(base, updates=True)
    inv, source = load_inventory(inventory)
    exceptions = load_enum_exceptions(csv, inv.enum_blocks)
    keys = base / "secret" / "tsig.keys"
    render_dns(Topology(inv, source, exceptions), base / "static", inventory.name, serial=1, keys=keys)
    render_dns(Topology(inv, source), base / "dynamic", inventory.name, serial=1, keys=keys)
    static = named_harness.start_named(base / "static", keys=keys)
    dynamic = named_harness.start_named(base / "dynamic", keys=keys)
    plan = build_dns_plan(Topology(inv, source, exceptions))
    yield {"base": base, "csv": csv, "inventory": inventory, "keys": keys, "static": static,
           "dynamic": dynamic, "plan": plan, "bare": build_dns_plan(Topology(inv, source))}
    static.stop()
    dynamic.stop()


def _live(server: Any, qname: str) -> tuple[str, set[Any]]:
    import dns.rcode

    response = server.query(qname, "NAPTR", source=CORE)
    found = {rd for rrset in response.answer if rrset.rdtype == dns.rdatatype.NAPTR for rd in rrset}
    return dns.rcode.to_text(response.rcode()), found


def _planned(plan: DnsPlan, qname: str) -> set[Any]:
    view = plan.view_for_client(CORE)
    return {dns.rdata.from_text("IN", "NAPTR", rd.to_text()) for rd in plan.lookup(view, qname, "NAPTR")}


def _regexp(server: Any, digits: str) -> str:
    _, found = _live(server, enum_qname(digits))
    assert len(found) == 1, (digits, found)
    return next(iter(found)).regexp.decode()


def test_blocks_answer_wildcards_and_exceptions_their_own(world: Any) -> None:
    server = world["static"]
    wildcard = "!^(.*)$!sip:\\1@ims.example.net!"
    assert _regexp(server, "867550001230") == wildcard  # a sibling of two exceptions
    assert _regexp(server, "867550001999") == wildcard
    assert _regexp(server, "867550001234") == "!^.*$!sip:+867550001234@ims.other-operator.example!"
    assert _regexp(server, "867550001235") == "!^.*$!tel:+867550001235;npdi;rn=+8675599990000!"
    assert _regexp(server, "867550003000") == "!^.*$!sip:+867550003000@ims.elsewhere.example.net;user=phone!"
    assert _regexp(server, "867550004999") == "!^.*$!sip:+867550004999@ims.example.net;user=phone!"
    assert _regexp(server, "8613800138005") == "!^.*$!sip:+8613800138005@ims.other-operator.example!"
    assert _regexp(server, "8613800138004") == "!^.*$!sip:+8613800138004@ims.example.net!"  # numbers style
    assert _live(server, enum_qname("867550000999"))[0] == "NXDOMAIN"  # below the range
    assert _live(server, enum_qname("867550005000"))[0] == "NXDOMAIN"  # above it
    services = {next(iter(_live(server, enum_qname(n))[1])).service.decode() for n in ("867550001235", "867550001234")}
    assert services == {"E2U+pstn:tel", "E2U+sip"}  # RFC 4769 for the tel: form


def test_the_plan_answers_every_name_as_named_does(world: Any) -> None:
    for qname in NAMES:
        rcode, found = _live(world["static"], qname)
        assert found == _planned(world["plan"], qname), (qname, rcode)


def test_dynamic_updates_bring_a_bare_primary_to_the_plan(world: Any) -> None:
    runner = CliRunner()
    server = world["dynamic"]
    assert _regexp(server, "867550001234") == "!^(.*)$!sip:\\1@ims.example.net!"  # before: the wildcard
    args = ["enum-update", str(world["inventory"]), "--enum-exceptions", str(world["csv"]),
            "--server", f"127.0.0.1:{server.port}", "--keys", str(world["keys"]), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    _valid(json.loads(result.stdout))
    zones = {z["zone"]: z for z in json.loads(result.stdout)["zones"]}
    assert zones["0.0.5.5.7.6.8.e164.arpa"]["replaced"] == 4 + 6  # 4 exceptions, 2 wildcards each for siblings
    assert all(z["messages"] <= 1 for z in zones.values())
    for qname in NAMES:
        assert _live(server, qname)[1] == _live(world["static"], qname)[1], qname
    again = runner.invoke(app, args)  # idempotent: nothing left to send
    assert again.exit_code == 0 and all(z["replaced"] == z["deleted"] == 0 for z in json.loads(again.stdout)["zones"])
    # an exception withdrawn from the file: the number (and its siblings' extra wildcards) go back
    fewer = world["base"] / "fewer.csv"
    fewer.write_text("\n".join(line for line in EXCEPTIONS.splitlines() if "1234" not in line and "1235" not in line))
    args[3] = str(fewer)
    back = runner.invoke(app, args)
    assert back.exit_code == 0, back.output
    zone = {z["zone"]: z for z in json.loads(back.stdout)["zones"]}["0.0.5.5.7.6.8.e164.arpa"]
    assert zone["deleted"] == 2 + 2 and zone["replaced"] == 0
    assert _regexp(server, "867550001234") == "!^(.*)$!sip:\\1@ims.example.net!"
    inv, source = load_inventory(world["inventory"])
    now = build_dns_plan(Topology(inv, source, load_enum_exceptions(fewer, inv.enum_blocks)))
    for qname in NAMES:  # exactly what the plan with the shorter file answers
        assert _live(server, qname)[1] == _planned(now, qname), qname
    assert _planned(now, enum_qname("867550001239")) == _planned(world["bare"], enum_qname("867550001239"))


def _valid(document: dict[str, Any]) -> None:
    import jsonschema
    from referencing import Registry, Resource

    schemas = Path(__file__).resolve().parent.parent / "docs" / "schemas"
    registry = Registry().with_resources(
        [(p.name, Resource.from_contents(json.loads(p.read_text()))) for p in schemas.glob("*.schema.json")])
    schema = json.loads((schemas / "enum-update.schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema, registry=registry).iter_errors(document))
    assert errors == [], errors[:3]


def test_updates_need_the_view_key(world: Any) -> None:
    import dns.query
    import dns.rcode
    import dns.rdata
    import dns.tsig
    import dns.tsigkeyring
    import dns.update

    zone, port = "0.0.5.5.7.6.8.e164.arpa.", world["dynamic"].port
    evil = dns.rdata.from_text("IN", "NAPTR", '100 10 "u" "E2U+sip" "!^.*$!sip:x@evil.example!" .')
    keyring = dns.tsigkeyring.from_text({"imsdr-core-site-a": ("hmac-sha256", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0")})
    forged = dns.update.UpdateMessage(zone, keyring=keyring, keyname="imsdr-core-site-a")
    forged.add("7.7.7.7.1.0." + zone, 60, evil)
    with pytest.raises(dns.tsig.PeerError):  # a wrong secret: the server rejects the signature
        dns.query.tcp(forged, "127.0.0.1", port=port, timeout=5)
    unsigned = dns.update.UpdateMessage(zone)
    unsigned.add("7.7.7.7.1.0." + zone, 60, evil)
    # from a core client (the core view, which serves the zone) but unsigned: refused
    assert dns.query.tcp(unsigned, "127.0.0.1", port=port, source=CORE, timeout=5).rcode() == dns.rcode.REFUSED
    assert evil not in _live(world["dynamic"], ("7.7.7.7.1.0." + zone).rstrip("."))[1]


def test_named_conf_grants_naptr_updates_only_when_asked(world: Any) -> None:
    conf = (world["base"] / "static" / "named" / "dns-a-1.conf").read_text()
    assert 'grant "imsdr-core-site-a" zonesub NAPTR;' in conf
    assert conf.count("update-policy") == 4  # the four block zones, not the parent or home zones
    plain = (world["base"] / "dynamic" / "named" / "dns-a-1.conf").read_text()
    assert plain.count("update-policy") == 4


# --- the provisioning file as hostile input ------------------------------------------------------


def _blocks() -> list[Any]:
    inv, _ = load_inventory(Path(__file__).resolve().parent.parent / "inventories/province.yaml")
    return list(inv.enum_blocks)


def test_every_bad_row_is_reported_with_its_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("number,kind,target,params\n"
                   "+8613800138001,ported,ims.x.example,\n"
                   "8613800138002,ported,ims.x.example,\n"          # 3: no +
                   "+8613800138003,stolen,ims.x.example,\n"         # 4: kind
                   "+8613800138004,ported,,\n"                      # 5: no target
                   "+8613800138005,ported-tel,+86abc,\n"            # 6: rn
                   "+8613800138006,routed,ims.x.example,user=evil\n"  # 7: params
                   "+8613800138001,routed,ims.y.example,\n"         # 8: twice
                   "+4420790000000,ported,ims.x.example,\n"         # 9: not ours
                   "+861380013800,ported,ims.x.example,\n"          # 10: wrong length
                   "+8613800138007,uri,,\n"                         # 11: uri without params
                   "+8613800138008,ported\n")                       # 12: fields
    result = CliRunner().invoke(app, ["render", "dns", "inventories/province.yaml", "--out", str(tmp_path / "o"),
                                      "--enum-exceptions", str(bad)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith(str(bad))]
    assert [line.split(":")[1:3] for line in lines] == [
        ["3", "1"], ["4", "16"], ["5", "23"], ["6", "27"], ["7", "37"], ["8", "1"], ["9", "1"], ["10", "1"],
        ["11", "21"], ["12", "1"]]
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def test_symlinks_devices_and_huge_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "good.csv"
    good.write_text("number,kind,target,params\n+8613800138001,ported,ims.x.example,\n")
    link = tmp_path / "link.csv"
    link.symlink_to(good)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    for path, why in ((link, "symbolic link"), (fifo, "not a regular file"), (tmp_path, "not a regular file"),
                      (tmp_path / "none.csv", "no such file")):
        with pytest.raises(ImsdrError, match=why):
            load_enum_exceptions(path, _blocks())
    import imsdr.dns.enum_exceptions as module

    monkeypatch.setattr(module, "MAX_BYTES", 10)
    with pytest.raises(ImsdrError, match="larger than|bytes; ENUM exceptions files larger"):
        load_enum_exceptions(good, _blocks())


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_give_rows_or_located_problems(raw: bytes) -> None:
    rows, problems = parse_enum_exceptions(b"number,kind,target,params\n" + raw, "f.csv", _BLOCKS)
    for p in problems:
        assert p.location is not None and p.location.file == "f.csv" and p.location.line >= 1
    assert len({r.number for r in rows}) == len(rows)


_BLOCKS = _blocks()


@pytest.mark.parametrize(("low", "high", "free"), [(0, 99, 4), (5, 99, 4), (123, 4567, 4), (0, 9999, 4), (7, 7, 3),
                                                    (1000, 4999, 5), (999, 1000, 4)])
def test_stems_cover_exactly_the_range(low: int, high: int, free: int) -> None:
    stems = wildcard_stems(low, high, free)
    covered = {n for n in range(10**free) if any(str(n).zfill(free).startswith(s) for s in stems)}
    assert covered == set(range(low, high + 1))
    assert len(stems) <= 18 * free  # the fewest: at most 9 per digit on each side


def test_a_numbers_block_skips_every_number_its_exceptions_replace(tmp_path: Path) -> None:
    """Each exception in a numbers-style block takes its number out of the block's stream (the
    skipped numbers are gathered once per block): the zone holds each number once."""
    csv = tmp_path / "exceptions.csv"
    csv.write_text("number,kind,target,params\n"
                   "+8613800138005,ported,ims.other-operator.example,\n"
                   "+8613800138009,routed,ims.elsewhere.example.net,\n"
                   "+8613800138002,uri,,user=phone\n")
    inventory = _inventory(tmp_path, updates=False)
    inv, source = load_inventory(inventory)
    plan = build_dns_plan(Topology(inv, source, load_enum_exceptions(csv, inv.enum_blocks)))
    [zone] = [z for z in plan.zones.values() if z.kind == "enum" and z.blocks and z.blocks[0].style == "numbers"
              and z.blocks[0].covers("8613800138005")]
    assert zone.blocks[0].skip == {8613800138005, 8613800138009, 8613800138002}
    out = tmp_path / "out"
    render_dns(Topology(inv, source, load_enum_exceptions(csv, inv.enum_blocks)), out, inventory.name, serial=1)
    text = (out / f"zones/enum/{zone.name}.zone").read_text()
    for digits in ("8613800138005", "8613800138009", "8613800138002"):
        owner = ".".join(reversed(digits[len(zone.blocks[0].prefix):]))
        assert len([line for line in text.splitlines() if line.split("\t")[0].split(" ")[0] == owner]) == 1, digits
