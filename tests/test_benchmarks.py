"""The benchmark harness's own pieces: per-run peak RSS, octoDNS YAML conversion, key order."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _run_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("imsdr_benchmarks_run", ROOT / "benchmarks" / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run = _run_module()


def test_run_once_reports_the_child_peak_rss_and_exit_code(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    big = run.run_once([sys.executable, "-c", "b = bytearray(64 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"],
                       out, err)
    small = run.run_once([sys.executable, "-c", "print('hi')"], out, err)
    assert big.exit_code == 0 and small.exit_code == 0
    assert big.rss_kib - small.rss_kib >= 60 * 1024
    assert small.rss_kib < 40 * 1024
    assert out.read_text() == "hi\n"
    failed = run.run_once([sys.executable, "-c", "raise SystemExit(3)"], out, err)
    assert failed.exit_code == 3
    slow = run.run_once([sys.executable, "-c", "import time; time.sleep(30)"], out, err, timeout=0.5)
    assert slow.timed_out and slow.wall < 10


def test_a_grown_parent_does_not_inflate_the_child_peak(tmp_path: Path) -> None:
    # exec on Linux counts the spawning address space's peak in the child's ru_maxrss
    ballast = bytearray(256 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = run.run_once([sys.executable, "-c", "pass"], tmp_path / "out", tmp_path / "err")
    assert small.rss_kib < 64 * 1024
    del ballast


def test_natural_key_order_matches_octodns() -> None:
    names = ["_sip._tcp.pcscf10", "", "_sip._tcp.pcscf2", "10.1", "9.2", "a10b", "a2b"]
    assert sorted(names, key=run._natural) == ["", "9.2", "10.1", "_sip._tcp.pcscf2", "_sip._tcp.pcscf10",
                                              "a2b", "a10b"]


def test_zone_files_become_octodns_yaml_with_escaped_backreferences(tmp_path: Path) -> None:
    zones = tmp_path / "zones"
    zones.mkdir()
    (zones / "example.net.zone").write_text(
        "$ORIGIN example.net.\n$TTL 300\n"
        "@\t3600\tIN\tSOA\tns1.example.net. hostmaster.example.net. 1 3600 600 604800 300\n"
        "@\t3600\tIN\tNS\tns1.example.net.\n"
        "ns1\t60\tIN\tA\t198.18.0.53\n"
        "ns1\t60\tIN\tAAAA\t2001:db8::53\n"
        "_sip._udp.pcscf10\t60\tIN\tSRV\t10 50 5060 ns1.example.net.\n"
        "_sip._udp.pcscf2\t60\tIN\tSRV\t10 50 5060 ns1.example.net.\n"
        '*.5.5.5\t300\tIN\tNAPTR\t100 10 "u" "E2U+sip" "!^\\\\+?(.*)$!sip:+\\\\1@example.net!" .\n'
    )
    names, total = run.zones_to_octodns(zones, tmp_path / "config")
    assert names == ["example.net."]
    assert total == 6  # NS, A, AAAA, 2 SRV, NAPTR; SOA is octoDNS's own
    text = (tmp_path / "config" / "example.net.yaml").read_text()
    data = yaml.safe_load(text)
    assert list(data) == sorted(data, key=run._natural)
    naptr = data["*.5.5.5"]
    assert naptr["type"] == "NAPTR"
    assert naptr["values"][0]["regexp"] == "!^\\\\+?(.*)$!sip:+\\\\1@example.net!"  # \\1 as octoDNS needs
    assert {r["type"] for r in data["ns1"]} == {"A", "AAAA"}
    assert data["_sip._udp.pcscf2"]["values"][0] == {"port": 5060, "priority": 10, "target": "ns1.example.net.",
                                                     "weight": 50}


def test_the_diameter_row_counts_peers_on_a_generated_network(tmp_path: Path) -> None:
    import subprocess

    from inventory_factory import write_inventory

    from imsdr.example.national import NationalParams, generate_national

    path = write_inventory(generate_national(NationalParams(provinces=2, enum_numbers=1000)), tmp_path)
    out = subprocess.run([sys.executable, "-c", run.DIAMETER_COUNT, str(path)], check=True, capture_output=True,
                         text=True).stdout
    assert run.diameter_note(out) == ("120 clients, at most 18 peers each (allowed: province's HSSs + 2 = 18), "
                                      "2,160 Diameter connections network-wide")


def test_the_dra_row_turns_every_slf_pair_into_a_dra_pair(tmp_path: Path) -> None:
    """The DRA variant of the national example: each client's peers are its DRA pair only, and the
    DRAs connect to their province's 16 HSSs."""
    import subprocess

    from inventory_factory import write_inventory

    from imsdr.example.national import NationalParams, generate_national

    path = write_inventory(generate_national(NationalParams(provinces=2, enum_numbers=1000)), tmp_path)
    dra = run.write_with_dras(path, tmp_path / "dra.yaml")
    assert dra.read_text(encoding="utf-8").count("type: dra") == 8  # 2 SLF pairs per province
    out = subprocess.run([sys.executable, "-c", run.DIAMETER_COUNT, str(dra)], check=True, capture_output=True,
                         text=True).stdout
    assert run.diameter_note(out) == ("120 clients, at most 2 peers each (allowed: province's HSSs + 2 = 18), "
                                      "368 Diameter connections network-wide")  # 120 x 2 + 8 DRAs x 16 HSSs


def test_the_host_zone_rows_measure_what_a_province_server_loads(tmp_path: Path) -> None:
    from inventory_factory import write_inventory

    from imsdr.dns.render import render_dns
    from imsdr.example.national import NationalParams, generate_national
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    sizes = {}
    for label in (None, "hosts"):
        params = NationalParams(provinces=2, enum_numbers=1000, host_zone=label)
        path = write_inventory(generate_national(params), tmp_path, f"national-{label}.yaml")
        out = tmp_path / f"out-{label}"
        render_dns(Topology(*load_inventory(path)), out, path.name, serial=1)
        sizes[label] = run._dns_size(out)
    before, after = sizes[None], sizes["hosts"]
    # a host zone per side and province: 3 more files per province, one statement more per view
    assert after["zone_files"] == before["zone_files"] + 2 * 3
    assert after["zone_statements"][1] == before["zone_statements"][1] + 19  # 18 views serving zones + 1
    assert after["loaded_bytes"][1] < before["loaded_bytes"][1]
    assert after["bytes"] < before["bytes"]


def test_a_previous_output_is_set_aside_not_deleted_before_a_measured_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The output of the last run moves into the trash (a rename: no inode is freed while the
    next run creates its files) and goes when the trash is emptied; nothing there is no error."""
    monkeypatch.setattr(run, "TRASH", tmp_path / ".trash")
    out = tmp_path / "out"
    (out / "zones").mkdir(parents=True)
    (out / "zones" / "a.zone").write_text("x")
    run.set_aside(out)
    assert not out.exists()
    [moved] = list((tmp_path / ".trash").iterdir())
    assert (moved / "zones" / "a.zone").read_text() == "x"
    run.set_aside(out)  # (already gone)
    run.empty_trash()
    assert not (tmp_path / ".trash").exists()
