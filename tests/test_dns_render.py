"""`render dns`: files parse with dnspython and pass BIND's strict checks; determinism; serials;
lint refusals leave the previous output untouched; the CLI."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import dns.zone
import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.dns.lint import lint_plan
from imsdr.dns.plan import ACCESS_BASE, build_dns_plan
from imsdr.dns.records import CNAME, SRV, RRset
from imsdr.dns.render import render_dns
from imsdr.errors import RenderError
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.output.atomic import MARKER

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
STRICT = [
    "-k",
    "fail",
    "-n",
    "fail",
    "-S",
    "fail",
    "-M",
    "fail",
    "-r",
    "fail",
    "-m",
    "fail",
    "-i",
    "local",
    "-W",
    "warn",
]


def topo(path: Path = PROVINCE) -> Topology:
    inv, source = load_inventory(path)
    return Topology(inv, source)


def tree(root: Path) -> dict[str, bytes]:
    """The rendered files (imsdr's output marker aside)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != MARKER}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render") / "dns"
    render_dns(topo(), out, "province.yaml", serial=2026010100)
    return out


def zone_files(out: Path) -> list[Path]:
    return sorted(out.joinpath("zones").rglob("*.zone"))


def test_layout_and_readme_lists_every_file(rendered: Path) -> None:
    files = tree(rendered)
    assert "named/dns-a-1.conf" in files and "named/dns-b-1.conf" in files and "README.md" in files
    assert "kamailio/sbc-capital/dispatcher.list" in files and "kamailio/pcscf-a-1/dispatcher.list" in files
    assert "kamailio/sbc-capital/dispatcher-probing.cfg" in files
    assert "zones/users-capital/ims.example.net.zone" in files and "zones/core-site-a/ims.example.net.zone" in files
    assert "zones/enum/6.8.e164.arpa.zone" in files and "resolvers/capital.conf" in files
    assert "zones/users-capital/ims.mnc001.mcc460.3gppnetwork.org.zone" in files
    readme = files["README.md"].decode()
    for name in files:
        assert f"`{name}`" in readme, name
    assert "in-view" in readme and "imsdr-users-capital" in readme and "dual write" in readme.lower()


def test_every_zone_parses_with_dnspython(rendered: Path) -> None:
    for path in zone_files(rendered):
        origin = path.name[: -len(".zone")]
        zone = dns.zone.from_file(str(path), origin=origin, relativize=False, check_origin=True)
        assert zone.get_soa().serial == 2026010100


def test_every_zone_passes_named_checkzone_strict(rendered: Path) -> None:
    for path in zone_files(rendered):
        origin = path.name[: -len(".zone")]
        result = subprocess.run(
            ["named-checkzone", *STRICT, origin, str(path)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, f"{path}: {result.stdout}{result.stderr}"
        assert "warning" not in result.stdout.lower(), result.stdout


@pytest.mark.parametrize("sync", ["provisioning", "master-slave", "backend-db"])
def test_every_server_conf_passes_named_checkconf_z(tmp_path: Path, make_inventory: Any, sync: str) -> None:
    from imsdr.dns.keys import ensure_keys

    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["enum_dns"]["sync"] = sync

    out = tmp_path / "dns"
    render_dns(topo(make_inventory(mutate)), out, "x.yaml", serial=5)
    keys = tmp_path / "keys.conf"
    confs = sorted(out.glob("named/*.conf"))
    assert [c.name for c in confs] == ["dns-a-1.conf", "dns-b-1.conf"]
    for conf in confs:
        ensure_keys(keys, sorted(set(re.findall(r'key "([a-z0-9-]+)"', conf.read_text()))), out)
        wrapper = tmp_path / "named.conf"
        wrapper.write_text(
            f'options {{ directory "{out}"; pid-file "{tmp_path}/named.pid"; '
            f"listen-on port 53530 {{ 127.0.0.1; }}; listen-on-v6 {{ none; }}; recursion no; }};\n"
            f'include "{keys}";\ninclude "{conf}";\n'
        )
        flags = ["-z"] if "type secondary" not in conf.read_text() else []  # no secondary files yet
        result = subprocess.run(["named-checkconf", *flags, str(wrapper)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        text = conf.read_text()
        assert text.count('\nview "') == 13 and text.count("recursion no;") == 13  # 6 user, 3 SBC, 3 core, default
        assert 'view "default" {\n    match-clients { any; };\n    allow-query { none; };' in text
        # a transfer needs the view's key AND the other server's address
        assert re.search(r'allow-transfer \{ !\{ !\{ [0-9.]+; \}; any; \}; key "imsdr-users-capital"; \};', text)
        role = "secondary" if sync != "provisioning" and conf.name == "dns-b-1.conf" else "primary"
        # a primary loads the ENUM zones once, shared by the other core views; a secondary's views
        # hold their catalog only (RFC 9432: tests/test_dns_catalog.py), one per view
        assert ('in-view "core-site-a"' in text) == (role == "primary")
        assert text.count("catalog-zones {") == (12 if role == "secondary" else 0)
        assert f"type {role};" in text and (role == "primary") == ("type secondary" not in text)
        assert ("also-notify" in text) == (sync != "provisioning" and role == "primary")
    resolver = (out / "resolvers/capital.conf").read_text()
    forward = 'zone "ims.example.net" { type forward; forward only; forwarders { 192.0.2.53; 192.0.2.117; }; };'
    assert forward in resolver
    wrapper.write_text(f'options {{ directory "{tmp_path}"; }};\ninclude "{out}/resolvers/capital.conf";\n')
    result = subprocess.run(["named-checkconf", str(wrapper)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_keys_are_generated_outside_the_output_tree_only(tmp_path: Path) -> None:
    out = tmp_path / "dns"
    with pytest.raises(RenderError, match="inside the output directory"):
        render_dns(topo(), out, "x.yaml", keys=out / "keys.conf")
    assert not out.exists()
    keys = tmp_path / "private" / "tsig.keys"
    report = render_dns(topo(), out, "x.yaml", keys=keys)
    assert keys.stat().st_mode & 0o777 == 0o640 and len(report.keys_added) == 12  # new: 0640, group of its directory
    before = keys.read_text()
    assert render_dns(topo(), out, "x.yaml", keys=keys).keys_added == []  # never rotated behind one's back
    assert keys.read_text() == before
    secrets = re.findall(r'secret "([^"]+)"', before)
    assert len(secrets) == 12 and not any(s in p.read_text() for p in out.rglob("*") if p.is_file() for s in secrets)


def test_zone_files_are_reviewable(rendered: Path) -> None:
    text = (rendered / "zones/users-capital/ims.example.net.zone").read_text()
    lines = text.splitlines()
    directives = [i for i, line in enumerate(lines) if line.startswith("$")]
    assert lines[directives[0]].startswith("$ORIGIN ims.example.net.") and lines[directives[1]].startswith("$TTL")
    assert all(line.startswith(";") for line in lines[: directives[0]])  # header comment only
    assert "; inventory: province.yaml (Example Province IMS)" in lines
    assert "view: users-capital" in text and "the local SBC(s) only" in text
    core = (rendered / "zones/core-site-a/ims.example.net.zone").read_text()
    owners = [line.split()[0] for line in core.splitlines()[directives[1] + 1 :] if line and not line.startswith(";")]
    assert owners.index("pcscf1") < owners.index("_sip._tcp.pcscf1") < owners.index("pcscf2")
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d", text)  # no dates or times written
    enum = (rendered / "zones/enum/0.0.5.5.5.0.1.6.8.e164.arpa.zone").read_text()
    assert '\n*\t3600\tIN\tNAPTR\t100 10 "u" "E2U+sip" "!^(.*)$!sip:\\\\1@ims.example.net!" .\n' in enum


def test_render_twice_is_byte_identical(tmp_path: Path) -> None:
    render_dns(topo(), tmp_path / "a", "province.yaml")
    first = tree(tmp_path / "a")
    render_dns(topo(), tmp_path / "a", "province.yaml")  # over the previous output: serials kept
    render_dns(topo(), tmp_path / "b", "province.yaml")
    assert tree(tmp_path / "a") == first == tree(tmp_path / "b")


def test_serial_kept_when_unchanged_bumped_when_changed(
    tmp_path: Path, make_inventory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01
    out = tmp_path / "dns"
    render_dns(topo(), out, "province.yaml")

    def serial(rel: str) -> int:
        return dns.zone.from_file(str(out / rel), origin=Path(rel).name[:-5], relativize=False).get_soa().serial

    assert serial("zones/core-site-a/ims.example.net.zone") == 2026010100
    render_dns(topo(), out, "renamed-inventory.yaml")  # the file name is not zone content
    assert serial("zones/core-site-a/ims.example.net.zone") == 2026010100
    assert "; inventory: renamed-inventory.yaml" in (out / "zones/core-site-a/ims.example.net.zone").read_text()

    def mutate(d: dict[str, Any]) -> None:
        d["elements"][0]["addresses"][0] = "192.0.2.55"  # dns-a-1 moves: home zones change, ENUM do not

    render_dns(topo(make_inventory(mutate)), out, "province.yaml")
    assert serial("zones/core-site-a/ims.example.net.zone") == 2026010101
    assert serial("zones/users-capital/ims.example.net.zone") == 2026010101
    assert serial("zones/enum/0.0.5.5.5.0.1.6.8.e164.arpa.zone") == 2026010100
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767657600")  # 2026-01-06
    render_dns(topo(), out, "province.yaml")
    assert serial("zones/core-site-a/ims.example.net.zone") == 2026010600


def refuse(path: Path, out: Path) -> RenderError:
    with pytest.raises(RenderError) as info:
        render_dns(topo(path), out, "x.yaml")
    return info.value


def test_lint_refuses_srv_target_without_address_and_keeps_previous_output(tmp_path: Path, make_inventory: Any) -> None:
    out = tmp_path / "dns"
    render_dns(topo(), out, "province.yaml")
    before = tree(out)

    def mutate(d: dict[str, Any]) -> None:
        d["elements"][10]["fqdn"] = "pcscf-a-1.elsewhere.org"  # SRV target outside every zone

    err = refuse(make_inventory(mutate), out)
    text = str(err)
    assert "pcscf-a-1.elsewhere.org has no A/AAAA record in the plan" in text
    assert ".yaml:" in text and "elements[10].fqdn" in text  # located at the inventory line
    assert tree(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_lint_refuses_srv_target_that_is_a_cname() -> None:
    plan = build_dns_plan(topo())
    zone = plan.zones["ims.example.net"]
    name = "cscf-a-1.ims.example.net"
    del zone.rrsets[(name, "A")], zone.rrsets[(name, "AAAA")]
    zone.rrsets[(name, "CNAME")] = RRset(name, "CNAME", 60, (CNAME("cscf-b-1.ims.example.net"),))
    messages = [i.message for i in lint_plan(plan)]
    assert any("SRV target cscf-a-1.ims.example.net is a CNAME" in m for m in messages)


def test_lint_refuses_naptr_without_srv_and_bad_records() -> None:
    plan = build_dns_plan(topo())
    zone = plan.zones["ims.example.net"]
    del zone.rrsets[("_sip._tcp.ims.example.net", "SRV")]
    zone.rrsets[("_sip._udp.pcscf1.ims.example.net", "SRV")] = RRset(
        "_sip._udp.pcscf1.ims.example.net", "SRV", 60, (SRV(10, 100, 0, "pcscf-a-1.ims.example.net"),)
    )
    messages = " | ".join(i.message for i in lint_plan(plan))
    assert "points at _sip._tcp.ims.example.net, which has no SRV records" in messages
    assert "SRV port 0" in messages


def test_lint_refuses_duplicate_enum_prefix_and_missing_nameservers(tmp_path: Path, make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["enum_blocks"].append(
            {"id": "again", "prefix": "+861055500", "style": "wildcard", "domain": "ims.example.net"}
        )
        d["network"]["dns"]["nameservers"] = []
        d["elements"] = [e for e in d["elements"] if e["type"] != "enum_dns"]
        d["redundancy"]["pairs"] = [p for p in d["redundancy"]["pairs"] if p["id"] != "enum-dns-pair"]

    text = str(refuse(make_inventory(mutate), tmp_path / "dns"))
    assert "same prefix +861055500" in text and "no nameserver" in text
    assert not (tmp_path / "dns").exists()


def test_cli_render_dns(tmp_path: Path, make_inventory: Any) -> None:
    runner = CliRunner()
    out = tmp_path / "dns"
    result = runner.invoke(
        app, ["render", "dns", str(PROVINCE), "--out", str(out), "--serial", "7", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"format", "imsdr", "inventory", "out", "views", "files", "notes",  # + the envelope
                         "drain", "failback"} and data["drain"] is None
    zones = [f for f in data["files"] if f["kind"] == "zone"]
    assert zones and all(f["serial"] == 7 for f in zones)
    assert {f["path"] for f in data["files"]} == set(tree(out))
    table = runner.invoke(app, ["render", "dns", str(PROVINCE), "--out", str(out)])
    assert table.exit_code == 0 and "named/dns-a-1.conf" in table.stdout

    def mutate(d: dict[str, Any]) -> None:
        d["elements"][10]["fqdn"] = "pcscf-a-1.elsewhere.org"

    bad = runner.invoke(app, ["render", "dns", str(make_inventory(mutate)), "--out", str(out)])
    assert bad.exit_code == 2 and "refusing" not in bad.stdout
    assert "has no A/AAAA record in the plan" in bad.stderr and "Traceback" not in bad.output


def test_transport_missing_in_a_view_answers_no_service(tmp_path: Path, make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        for e in d["elements"]:
            if e["id"] in ("sbc-harbour", "sbc-capital"):
                e["transports"] = ["udp", "tcp"]

    t = topo(make_inventory(mutate))
    plan = build_dns_plan(t)
    none = plan.lookup("users-harbour", "_sips._tcp.sbc.ims.example.net", "SRV")
    assert [(r.priority, r.weight, r.port, r.target) for r in none] == [(0, 0, 0, ".")]  # type: ignore[union-attr]
    assert plan.lookup(ACCESS_BASE, "_sips._tcp.sbc.ims.example.net", "SRV")  # other SBCs still offer TLS
    render_dns(t, tmp_path / "dns", "x.yaml")
    path = tmp_path / "dns/zones/users-harbour/ims.example.net.zone"
    result = subprocess.run(
        ["named-checkzone", *STRICT, "ims.example.net", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


def test_cli_render_dns_generates_keys_outside_the_output(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "dns"
    inside = runner.invoke(app, ["render", "dns", str(PROVINCE), "--out", str(out), "--keys", str(out / "k")])
    assert inside.exit_code == 2 and "inside the output directory" in inside.stderr and not out.exists()
    keys = tmp_path / "etc" / "imsdr-tsig.keys"
    result = runner.invoke(app, ["render", "dns", str(PROVINCE), "--out", str(out), "--keys", str(keys)])
    assert result.exit_code == 0, result.output
    assert "12 TSIG key(s) generated" in result.stderr and keys.stat().st_mode & 0o777 == 0o640
    assert 'key "imsdr-core-site-b"' in keys.read_text()


def test_table_summarises_a_large_render_and_all_lists_every_file(tmp_path: Path) -> None:
    """Up to 60 files the table lists each (the province: 49); above, one row per kind of file with
    the totals, and --all lists every file (a national render writes some ten thousand)."""
    runner = CliRunner()
    made = runner.invoke(app, ["example", "national", "--provinces", "2", "--enum-numbers", "1000",
                               "--enum-block-size", "1000"])
    assert made.exit_code == 0, made.output
    inventory = tmp_path / "two.yaml"
    inventory.write_text(made.stdout, encoding="utf-8")
    data = json.loads(runner.invoke(app, ["render", "dns", str(inventory), "--out", str(tmp_path / "j"),
                                          "--format", "json"]).stdout)
    files = data["files"]
    per_view = [f for f in files if f["kind"] == "zone" and f["view"]]
    assert len(files) > 60 and per_view
    summary = runner.invoke(app, ["render", "dns", str(inventory), "--out", str(tmp_path / "s")],
                            env={"COLUMNS": "200"})
    assert summary.exit_code == 0, summary.output
    text = summary.stdout
    assert "(summary)" in text and f"{len(files):,} files" in text and "--all lists every file" in text
    assert per_view[0]["path"] not in text  # no file row
    row = next(line for line in text.splitlines() if "per view" in line)
    assert f"{len(per_view):,}" in row and f"{sum(f['records'] for f in per_view):,}" in row
    listed = runner.invoke(app, ["render", "dns", str(inventory), "--out", str(tmp_path / "a"), "--all"],
                           env={"COLUMNS": "300"})
    assert listed.exit_code == 0 and "(summary)" not in listed.stdout
    assert all(f["path"] in listed.stdout for f in files)
    small = runner.invoke(app, ["render", "dns", str(PROVINCE), "--out", str(tmp_path / "p")])
    assert "(summary)" not in small.stdout and "named/dns-a-1.conf" in small.stdout
