"""The rendered dispatcher lists load into a real Kamailio 5.6 (config check + a short run on
loopback), and Kamailio orders each set the way imsdr means: highest dispatcher priority first."""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from imsdr.dns.dispatcher import dispatcher_list_path, probing_cfg_path
from imsdr.dns.render import render_dns
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

ROOT = Path(__file__).resolve().parent.parent


def kamailio_bin() -> str:
    found = shutil.which("kamailio") or "/usr/sbin/kamailio"
    assert os.path.exists(found), "kamailio is not installed: run bash .ci/test, which installs it"
    return found


def kamcmd_bin() -> str:
    return shutil.which("kamcmd") or "/usr/sbin/kamcmd"


def module_dir() -> str:
    found = sorted(
        glob.glob("/usr/lib/*/kamailio/modules/dispatcher.so")
        + glob.glob("/usr/lib/kamailio/modules/dispatcher.so")
    )
    assert found, "kamailio's dispatcher module is missing: run bash .ci/test, which installs kamailio"
    return os.path.dirname(found[0])


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def minimal_cfg(list_file: Path, ctl: Path, port: int) -> str:
    # ds_ping_interval 0: no OPTIONS probes are sent (the destinations are not loopback addresses)
    return f"""#!KAMAILIO
debug=2
log_stderror=yes
children=1
listen=udp:127.0.0.1:{port}
disable_tcp=yes
auto_aliases=no
dns=no
rev_dns=no
mpath="{module_dir()}/"
loadmodule "kex.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "ctl.so"
loadmodule "dispatcher.so"
modparam("ctl", "binrpc", "unix:{ctl}")
modparam("dispatcher", "list_file", "{list_file}")
modparam("dispatcher", "ds_ping_interval", 0)
request_route {{
    exit;
}}
"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inv, source = load_inventory(ROOT / "inventories/province.yaml")
    out = tmp_path_factory.mktemp("kam") / "dns"
    render_dns(Topology(inv, source), out, "province.yaml", serial=1)
    return out


@pytest.fixture
def rundir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="kam-"))  # short: unix socket paths are limited to 108 bytes
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_and_list(list_file: Path, rundir: Path) -> str:
    """Config check, then a short foreground run; returns `kamcmd dispatcher.list` output."""
    ctl = rundir / "ctl.sock"
    cfg = rundir / "kamailio.cfg"
    cfg.write_text(minimal_cfg(list_file, ctl, free_udp_port()))
    check = subprocess.run([kamailio_bin(), "-c", "-f", str(cfg)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    log = open(rundir / "kamailio.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [
            kamailio_bin(),
            "-DD",
            "-E",
            "-f",
            str(cfg),
            "-Y",
            str(rundir),
            "-P",
            str(rundir / "kamailio.pid"),
            "-w",
            str(rundir),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, (rundir / "kamailio.log").read_text(errors="replace")
            if ctl.exists():
                listed = subprocess.run(
                    [kamcmd_bin(), "-s", f"unix:{ctl}", "dispatcher.list"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                )
                if listed.returncode == 0 and "NRSETS" in listed.stdout:
                    return listed.stdout
            assert time.monotonic() < deadline, (rundir / "kamailio.log").read_text(errors="replace")
            time.sleep(0.1)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


def parse_sets(listing: str) -> dict[int, list[tuple[str, int, int]]]:
    """set id -> [(uri, priority, weight)] in Kamailio's order."""
    sets: dict[int, list[tuple[str, int, int]]] = {}
    current: list[tuple[str, int, int]] = []
    uri = ""
    prio = 0
    for line in listing.splitlines():
        line = line.strip()
        if m := re.match(r"ID: (\d+)$", line):
            current = sets.setdefault(int(m.group(1)), [])
        elif line.startswith("URI: "):
            uri = line[5:]
        elif line.startswith("PRIORITY: "):
            prio = int(line[10:])
        elif m := re.match(r"WEIGHT: (\d+)$", line):
            current.append((uri, prio, int(m.group(1))))
    return sets


def parse_file(path: Path) -> dict[int, list[tuple[str, int, int]]]:
    sets: dict[int, list[tuple[str, int, int]]] = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            setid, uri, _flags, prio, attrs = line.split()
            weight = int(re.search(r"weight=(\d+)", attrs).group(1))  # type: ignore[union-attr]
            sets.setdefault(int(setid), []).append((uri, int(prio), weight))
    return sets


SBC_LIST, PCSCF_LIST = dispatcher_list_path("sbc-capital"), dispatcher_list_path("pcscf-a-1")


@pytest.mark.parametrize("relative", [SBC_LIST, PCSCF_LIST])
def test_kamailio_loads_the_rendered_list(rendered: Path, rundir: Path, relative: str) -> None:
    path = rendered / relative
    loaded = parse_sets(run_and_list(path, rundir))
    expected = parse_file(path)
    assert loaded.keys() == expected.keys()
    for setid, dests in loaded.items():
        # every destination with its priority and weight (Kamailio keeps no order within a priority)
        assert sorted(dests) == sorted(expected[setid])
        priorities = [p for _, p, _ in dests]
        assert priorities == sorted(priorities, reverse=True)  # highest priority first
        assert sum(w for _, _, w in dests) == 100


def test_kamailio_orders_by_highest_priority_first(rendered: Path, rundir: Path) -> None:
    """Feed Kamailio the rendered lines in reverse: it must restore imsdr's preference order,
    which proves the conversion (SRV lowest-first -> dispatcher highest-first) matches Kamailio."""
    lines = (rendered / SBC_LIST).read_text().splitlines()
    reversed_file = rundir / "reversed.list"
    reversed_file.write_text(
        "\n".join(line for line in reversed(lines) if line and not line.startswith("#")) + "\n"
    )
    loaded = parse_sets(run_and_list(reversed_file, rundir))
    # sbc-capital (set 1) prefers pcscf-a-1 (192.0.2.10), then pcscf-b-1 (192.0.2.74)
    assert [uri for uri, _, _ in loaded[1]] == [
        "sip:192.0.2.10:5060;transport=udp",
        "sip:192.0.2.74:5060;transport=udp",
    ]
    assert [p for _, p, _ in loaded[1]] == [20, 10]
    # pcscf-a-1 -> I-CSCF set 1: same site (cscf-a-1) first in the rendered file
    icscf = parse_file(rendered / PCSCF_LIST)[1]
    assert icscf[0][0].startswith("sip:192.0.2.20:") and icscf[0][1] == max(p for _, p, _ in icscf)


def test_each_source_loads_only_its_own_set(rendered: Path) -> None:
    """One list per SBC / P-CSCF: the dispatcher probes every set it loads, so a shared file would
    make each SBC probe P-CSCFs it never uses."""
    lists = sorted(rendered.glob("kamailio/*/dispatcher.list"))
    assert len(lists) >= 10
    for path in lists:
        sets = parse_file(path)
        assert len(sets) == 1, path
        (setid,) = sets
        assert f"# set {setid}: " in path.read_text() and f" {path.parent.name} " in path.read_text()
        assert (path.parent / "dispatcher-probing.cfg").is_file()
    assert not (rendered / "kamailio" / "dispatcher-sbc-pcscf.list").exists()


def test_probing_include_keeps_relay_timers_and_loads(rendered: Path, rundir: Path) -> None:
    """The include sets the probe timeout on the OPTIONS probes only (never tm's fr_timer), probes
    exactly the flagged destinations (mode 3), and Kamailio accepts it."""
    text = (rendered / probing_cfg_path("sbc-capital")).read_text()
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert not any('"tm"' in line for line in body)
    assert 'modparam("dispatcher", "ds_probing_mode", 3)' in body
    assert any("t_set_fr(0, " in line for line in body)
    cfg = rundir / "kamailio.cfg"
    plain = minimal_cfg(rendered / SBC_LIST, rundir / "ctl.sock", free_udp_port())
    cfg.write_text(plain.replace('modparam("dispatcher", "ds_ping_interval", 0)\n',
                                 f'include_file "{rendered / probing_cfg_path("sbc-capital")}"\n'))
    check = subprocess.run([kamailio_bin(), "-c", "-f", str(cfg)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    # a passive P-CSCF (options_probing: passive in the sample) flags no destination for probing
    assert all(line.split()[2] == "0" for line in (rendered / PCSCF_LIST).read_text().splitlines()
               if line and not line.startswith("#"))


def test_destinations_follow_the_networks_transport_order(tmp_path: Path) -> None:
    """A network that publishes TCP first relays over TCP where both ends accept it."""
    text = (ROOT / "inventories/province.yaml").read_text()
    network = text.index("  dns:")
    published = text.index("transports: [udp, tcp, tls]", network)
    path = tmp_path / "province.yaml"
    path.write_text(text[:published] + "transports: [tcp, udp, tls]" + text[published + 27:])
    inv, source = load_inventory(path)
    out = tmp_path / "dns"
    render_dns(Topology(inv, source), out, "province.yaml", serial=1)
    lines = [line for line in (out / SBC_LIST).read_text().splitlines() if line and not line.startswith("#")]
    assert lines and all(";transport=tcp " in line for line in lines)
