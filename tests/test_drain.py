"""`imsdr render dns --drain` / `plan --drain`: the drained state's files, its diff against the
normal state, serials moving forward, and a real named serving it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.dns.drain import drain_changes
from imsdr.dns.plan import build_dns_plan
from imsdr.plan import load_topology

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


def _serials(out: Path) -> dict[str, int]:
    found = {}
    for path in sorted(out.rglob("*.zone")):
        match = re.search(r"IN SOA\s+\S+\s+\S+\s+(\d+)", path.read_text())
        assert match, path
        found[path.relative_to(out).as_posix()] = int(match.group(1))
    return found


def _render(*args: str) -> Any:
    result = CliRunner().invoke(app, ["render", "dns", str(PROVINCE), *args])
    return result


@pytest.fixture(scope="module")
def topo() -> Any:
    return load_topology(PROVINCE)


def test_drained_pcscf_leaves_every_answer_but_keeps_its_own_address(topo: Any) -> None:
    normal, drained = build_dns_plan(topo), build_dns_plan(topo, excluded=["pcscf-a-1"])
    drained.materialise_all()
    target = "pcscf-a-1.ims.example.net"
    for zone, _view, rrset in drained.all_rrsets():
        if rrset.rdtype == "SRV":
            assert all(rd.target != target for rd in rrset.rdatas), (zone, rrset)
    assert drained.lookup("default", target, "A") == normal.lookup("default", target, "A")
    # pcscf1 answers its mate alone, same site first no longer applies: one tier
    srv = drained.lookup("core-site-a", "_sip._udp.pcscf1.ims.example.net", "SRV")
    assert [(rd.priority, rd.target) for rd in srv] == [(10, "pcscf-b-1.ims.example.net")]


def test_drain_changes_list_removed_records_and_reloads_per_server_and_kamailio(topo: Any) -> None:
    changes = drain_changes(topo, ["pcscf-a-1"])
    removed = [line for c in changes.records for line in c.removed]
    assert removed and all("pcscf1" in line for line in removed)
    assert any("pcscf-a-1.ims.example.net." in line for line in removed)
    # every SBC whose list named pcscf-a-1 reloads its dispatcher list; the others do not
    sources = {d.source for d in changes.dispatcher}
    assert sources == {s.id for s in topo.by_type["sbc"] if "pcscf-a-1" in s.pcscfs}
    commands = [(r.element, r.command) for r in changes.reloads]
    assert ("sbc-capital", "kamcmd dispatcher.reload") in commands
    for server in ("dns-a-1", "dns-b-1"):  # both primaries (provisioning sync)
        for site in ("a", "b", "c"):
            assert (server, f"rndc reload ims.example.net IN core-site-{site}") in commands
    # pool names live in the core zones only: no user view and no ENUM zone is reloaded
    assert not any("users-" in c or "e164" in c for _e, c in commands)
    # reconfig first: the render replaced the directory named reads relative file names from
    assert commands.index(("dns-a-1", "rndc reconfig")) < commands.index(
        ("dns-a-1", "rndc reload ims.example.net IN core-site-a"))
    assert not any("e164" in c for _e, c in commands)


def test_site_id_drains_every_element_of_the_site(topo: Any) -> None:
    changes = drain_changes(topo, ["site-a"])
    assert set(changes.drained) == {e.id for e in topo.by_site["site-a"]}


def test_render_drain_then_failback_moves_serials_forward_and_restores_files(tmp_path: Path) -> None:
    out = tmp_path / "dns"
    assert _render("--out", str(out)).exit_code == 0
    normal_files = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    normal = _serials(out)
    result = _render("--out", str(out), "--drain", "sbc-capital")
    assert result.exit_code == 0, result.output
    assert "sbc-capital: kamcmd" not in result.stdout  # an SBC holds a list, nothing points at it
    drained = _serials(out)
    changed = {p for p in normal if drained[p] != normal[p]}
    assert changed and all(drained[p] > normal[p] for p in changed)
    assert "zones/users-capital/ims.example.net.zone" in changed
    assert not any("e164" in p for p in changed)  # ENUM zones hold no element: untouched
    note = (out / "DRAIN.md").read_text()
    assert "- _sip._udp.sbc.ims.example.net. 60 IN SRV 10 100 5060 sbc-capital.ims.example.net." in note
    assert "`sh reload/dns-a-1.sh`" in note and "`sh reload/dns-b-1.sh`" in note
    assert "rndc reload ims.example.net IN users-capital" in (out / "reload/dns-a-1.sh").read_text()
    listing = (out / "zones/users-capital/ims.example.net.zone").read_text()
    assert "sbc-capital" not in listing.split("_sip._udp.sbc")[1].split("\n")[0]
    # failback: render the normal state over it; serials move forward again, content is normal
    assert _render("--out", str(out)).exit_code == 0
    back = _serials(out)
    assert all(back[p] > drained[p] for p in changed)
    assert not (out / "DRAIN.md").exists()
    # the failback's reload scripts: the same zones, loaded again with the normal files
    assert "rndc reload ims.example.net IN users-capital" in (out / "reload/dns-a-1.sh").read_text()
    strip = re.compile(r"IN SOA(.*) \d+ (\d+ \d+ \d+ \d+)")
    for rel, text in normal_files.items():
        if rel in ("README.md", ".imsdr-output"):
            continue  # list the serials / the files, the failback's reload scripts included
        again = (out / rel).read_text()
        assert strip.sub(r"IN SOA\1 S \2", again) == strip.sub(r"IN SOA\1 S \2", text), rel


def test_drained_files_pass_named_checkconf_and_named_serves_them(tmp_path: Path, start_named: Any,
                                                                  make_inventory: Any) -> None:
    def core_a_on_loopback(d: dict[str, Any]) -> None:
        d["sites"][0]["core_subnets"].append("127.0.0.4/32")  # site-a

    inventory = make_inventory(core_a_on_loopback)
    out = tmp_path / "dns"
    result = CliRunner().invoke(app, ["render", "dns", str(inventory), "--out", str(out), "--drain", "pcscf-a-1",
                                      "--serial", "5"])
    assert result.exit_code == 0, result.output
    server = start_named(out)
    check = subprocess.run(["named-checkconf", "-z", str(server.config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    answer = server.answer("_sip._udp.pcscf1.ims.example.net", "SRV", source="127.0.0.4")
    assert answer is not None and [rd.target.to_text() for rd in answer] == ["pcscf-b-1.ims.example.net."]
    lines = (out / "kamailio/sbc-capital/dispatcher.list").read_text()
    assert "duid=pcscf-a-1" not in lines and "duid=pcscf-b-1" in lines


def test_unknown_drain_id_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "dns"
    result = _render("--out", str(out), "--drain", "pcscf-a-9")
    assert result.exit_code == 2 and "pcscf-a-9" in result.stderr and "did you mean" in result.stderr
    assert not out.exists()


def test_json_output_carries_the_diff_and_reload_commands(tmp_path: Path) -> None:
    result = _render("--out", str(tmp_path / "dns"), "--drain", "dns-a-1", "--format", "json", "--serial", "7")
    assert result.exit_code == 0, result.output
    drain = json.loads(result.stdout)["drain"]
    assert drain["drained"] == ["dns-a-1"]
    assert any(r["type"] == "NS" and r["removed"] == ["ims.example.net. 86400 IN NS dns-a-1.ims.example.net."]
               for r in drain["records"])
    assert {r["element"] for r in drain["reload"]} == {"dns-a-1", "dns-b-1"}


def test_plan_drain_renders_dns_drained_and_says_so(tmp_path: Path) -> None:
    first = CliRunner().invoke(app, ["plan", str(PROVINCE), "--out", str(tmp_path / "p")])
    assert first.exit_code == 0, first.output
    result = CliRunner().invoke(app, ["plan", str(PROVINCE), "--out", str(tmp_path / "p"), "--drain",
                                      "cscf-b-1", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dns"]["drained"] == ["cscf-b-1"]
    icscf = (tmp_path / "p/dns/kamailio/pcscf-a-1/dispatcher.list").read_text()
    assert "duid=cscf-b-1" not in icscf and "duid=cscf-a-1" in icscf


NO_PREVIOUS = "it holds no previous render, so every changed zone's SOA serial would start again"


def test_render_drain_into_a_fresh_directory_is_refused_unless_serial_is_given(tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    result = _render("--out", str(out), "--drain", "site-a")
    assert result.exit_code == 2 and NO_PREVIOUS in " ".join(result.stderr.split())
    assert "--serial N" in result.stderr and "Traceback" not in result.output and not out.exists()
    given = _render("--out", str(out), "--drain", "site-a", "--serial", "2030010100")
    assert given.exit_code == 0, given.output
    assert set(_serials(out).values()) == {2030010100}


def test_plan_drain_refuses_without_a_previous_plan_and_moves_serials_forward_over_one(tmp_path: Path) -> None:
    out = tmp_path / "p"
    refused = CliRunner().invoke(app, ["plan", str(PROVINCE), "--out", str(out), "--drain", "site-a"])
    assert refused.exit_code == 2 and NO_PREVIOUS in " ".join(refused.stderr.split())
    assert "render dns --drain --serial N" in " ".join(refused.stderr.split()) and not out.exists()
    assert CliRunner().invoke(app, ["plan", str(PROVINCE), "--out", str(out)]).exit_code == 0
    before = _serials(out / "dns")
    drained = CliRunner().invoke(app, ["plan", str(PROVINCE), "--out", str(out), "--drain", "site-a"])
    assert drained.exit_code == 0, drained.output
    after = _serials(out / "dns")
    changed = [p for p in before if after[p] != before[p]]
    assert changed and all(after[p] > before[p] for p in changed)
    assert any("enum/" in p for p in changed)  # the ENUM zones lose the drained server's NS: re-serialled


def test_site_drain_note_lists_and_reloads_every_changed_zone_and_skips_the_site(tmp_path: Path) -> None:
    out = tmp_path / "dns"
    assert _render("--out", str(out)).exit_code == 0
    assert _render("--out", str(out), "--drain", "site-a").exit_code == 0
    note = (out / "DRAIN.md").read_text()
    enum_zones = sorted(p.name.removesuffix(".zone") for p in (out / "zones/enum").glob("*.zone"))
    assert len(enum_zones) == 4
    what = note[note.index("## What changes"):note.index("## On which servers")]
    assert all(f"`{z}`" in what for z in enum_zones)
    script = (out / "reload/dns-b-1.sh").read_text()
    for zone in enum_zones:  # every ENUM zone reloaded on the surviving server, in its defining view
        assert f"out=$(rndc reload {zone} IN core-site-a 2>&1)" in script
    assert not (out / "reload/dns-a-1.sh").exists()  # the drained server is down: no script
    down = note[note.index("Down (drained themselves), skipped: "):].split(". They", 1)[0]
    assert {"dns-a-1", "sbc-capital", "sbc-river", "pcscf-a-1"} <= set(re.findall(r"[a-z]+-[a-z0-9-]+", down))
    assert "dns-a-1:" not in _render("--out", str(out), "--drain", "site-a").stdout  # nothing asked of it
