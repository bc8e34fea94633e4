"""The rendered Diameter peer configuration is loaded by the real freeDiameter daemon.

The daemon runs in a network namespace the test creates, with the client's own addresses on its
loopback, so the rendered file is loaded exactly as written (ListenOn included); peers are
unreachable there, which is fine: the daemon only has to parse, load its extensions and start.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from inventory_factory import PROVINCE, province_data, topology_from_data

READY = "freeDiameterd daemon initialized."


def _daemon() -> str:
    path = shutil.which("freeDiameterd")
    assert path, "freeDiameterd is not installed: run bash .ci/test (installs freediameterd, freediameter-extensions)"
    return path


def _write(config_dir: Path, files: dict[str, str], client: str, identity: str) -> None:
    (config_dir / "tls").mkdir(parents=True)
    for name, text in files.items():
        (config_dir / name).write_text(text, encoding="utf-8")
    # the operator installs real credentials; the test makes a throw-away self-signed pair
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={identity}",
         "-keyout", str(config_dir / "tls" / f"{client}.key.pem"),
         "-out", str(config_dir / "tls" / f"{client}.cert.pem")],
        check=True, capture_output=True)
    shutil.copy(config_dir / "tls" / f"{client}.cert.pem", config_dir / "tls" / "ca.pem")


def _load(config_dir: Path, addresses: list[str], timeout: float = 30.0) -> tuple[bool, str]:
    """Start freeDiameterd on the rendered file in a fresh network namespace; (started, log)."""
    setup = ["ip link set lo up"]
    for addr in addresses:
        setup.append(f"ip -6 addr add {addr}/128 dev lo nodad" if ":" in addr else f"ip addr add {addr}/32 dev lo")
    script = "; ".join(setup) + f"; exec {_daemon()} -c freeDiameter.conf"
    proc = subprocess.Popen(["unshare", "--net", "sh", "-c", script], cwd=config_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    started = False
    deadline = time.monotonic() + timeout
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if READY in line:
                started = True
                break
            if "FATAL" in line or time.monotonic() > deadline:
                break
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return started, "".join(lines)


@pytest.mark.parametrize("client", ["cscf-a-1", "as-b-1"])
def test_rendered_config_is_loaded_by_freediameter(tmp_path: Path, client: str) -> None:
    from imsdr.diameter import diameter_configs
    from imsdr.plan import load_topology

    topo = load_topology(PROVINCE)
    config = next(c for c in diameter_configs(topo) if c.client == client)
    _write(tmp_path, config.files, client, topo.fqdn(client))
    started, log = _load(tmp_path, list(topo.elements[client].addresses))
    assert started, log
    assert "rt_default.conf], loaded" in log and "rt_redirect.fdx" in log
    for addr in topo.elements[client].addresses:
        assert addr in log  # it listens where the inventory says


def test_a_broken_route_file_is_refused_by_the_daemon(tmp_path: Path) -> None:
    """The load test can fail: a route rule freeDiameter does not understand stops it."""
    from imsdr.diameter import diameter_configs
    from imsdr.plan import load_topology

    topo = load_topology(PROVINCE)
    config = diameter_configs(topo)[0]
    files = dict(config.files)
    files["rt_default.conf"] += 'REALM="ims.example.net" : "x" += 1 ;\n'
    _write(tmp_path, files, config.client, topo.fqdn(config.client))
    started, log = _load(tmp_path, list(topo.elements[config.client].addresses))
    assert not started and "rt_default" in log


def test_peers_and_routes_follow_the_pair_design(tmp_path: Path) -> None:
    from imsdr.diameter import diameter_clients, diameter_configs

    data = province_data()
    topo = topology_from_data(data, tmp_path)
    assert [c.id for c in diameter_clients(topo)] == [
        "as-a-1", "as-b-1", "cscf-a-1", "cscf-b-1", "cscf-b-2", "cscf-c-1"]
    conf = next(c for c in diameter_configs(topo) if c.client == "cscf-b-1")
    text = conf.files["freeDiameter.conf"]
    assert 'Identity = "cscf-b-1.ims.example.net";' in text and "TwTimer = 8;" in text
    assert 'ConnectPeer = "hss-b-1.ims.example.net" { ConnectTo = "192.0.2.94"; ConnectTo = "2001:db8:b::30";' in text
    assert "No_SCTP;" in text  # TCP unless SCTP heartbeats are declared
    # hss-pair is active-standby with hss-a-1 first: the standby scores lower
    assert conf.files["rt_default.conf"].splitlines()[1:] == [
        'dr="ims.example.net" : "hss-a-1.ims.example.net" += 100 ;',
        'dr="ims.example.net" : "hss-b-1.ims.example.net" += 50 ;',
    ]
    data["network"]["timers"]["diameter_transport"] = {"sctp_heartbeat": {"interval": 1}}
    topo = topology_from_data(data, tmp_path)
    assert "No_SCTP" not in diameter_configs(topo)[0].files["freeDiameter.conf"]


def test_plan_writes_the_diameter_tree(tmp_path: Path) -> None:
    from imsdr.plan import write_plan

    write_plan(PROVINCE, tmp_path / "out")
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert {"diameter/cscf-a-1/freeDiameter.conf", "diameter/as-b-1/rt_default.conf"} <= written
