"""The rendered Diameter peer configuration is loaded by the real freeDiameter daemon.

The daemon runs in a network namespace the test creates, with the element's own addresses on its
loopback; peers are unreachable there, which is fine: the daemon only has to parse, load its
extensions (the rendered dict_ims_cxsh.c built here included) and start. Talking to real peers is
tests/test_diameter_deployed.py.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from inventory_factory import PROVINCE, province_data, topology_from_data, with_dras

READY = "freeDiameterd daemon initialized."


def _daemon() -> str:
    path = shutil.which("freeDiameterd")
    assert path, "freeDiameterd is not installed: run bash .ci/test (installs freediameterd, freediameter-extensions)"
    return path


@pytest.fixture(scope="module")
def extension(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dict_ims_cxsh.fdx built from the source imsdr writes (cc + libfreediameter-dev)."""
    from imsdr.diameter import extension_source

    out = tmp_path_factory.mktemp("fdx")
    (out / "dict_ims_cxsh.c").write_text(extension_source(), encoding="utf-8")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(out / "dict_ims_cxsh.fdx"), str(out / "dict_ims_cxsh.c"),
                    "-lfdcore", "-lfdproto"], check=True, capture_output=True)
    return out


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


def _load(config_dir: Path, addresses: list[str], extension: Path, timeout: float = 30.0) -> tuple[bool, str]:
    """Start freeDiameterd on the rendered file in a fresh network namespace; (started, log)."""
    setup = ["ip link set lo up"]
    for addr in addresses:
        setup.append(f"ip -6 addr add {addr}/128 dev lo nodad" if ":" in addr else f"ip addr add {addr}/32 dev lo")
    script = "; ".join(setup) + f"; LD_LIBRARY_PATH={extension} exec {_daemon()} -c freeDiameter.conf"
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
def test_rendered_config_is_loaded_by_freediameter(tmp_path: Path, client: str, extension: Path) -> None:
    from imsdr.diameter import diameter_configs
    from imsdr.plan import load_topology

    topo = load_topology(PROVINCE)
    config = next(c for c in diameter_configs(topo) if c.client == client)
    _write(tmp_path, config.files, client, topo.fqdn(client))
    started, log = _load(tmp_path, list(topo.elements[client].addresses), extension)
    assert started, log
    assert "rt_default.conf], loaded" in log and "rt_redirect.fdx" in log
    # the Cx/Dx and Sh applications are registered, so the CER advertises them
    assert "App: 16777216,Au--,Vnd:10415" in log and "App: 16777217,Au--,Vnd:10415" in log


def test_a_dra_config_is_loaded_by_freediameter(tmp_path: Path, extension: Path) -> None:
    """A DRA pair: its rendered relay configuration (range routes, clients whitelisted) starts."""
    from imsdr.diameter import diameter_configs

    topo = topology_from_data(with_dras(province_data()), tmp_path)
    config = next(c for c in diameter_configs(topo) if c.client == "dra-a-1")
    assert set(config.files) == {"freeDiameter.conf", "rt_default.conf", "acl_wl.conf"}
    work = tmp_path / "dra"
    _write(work, config.files, "dra-a-1", topo.fqdn("dra-a-1"))
    started, log = _load(work, list(topo.elements["dra-a-1"].addresses), extension)
    assert started, log
    assert "acl_wl.conf], loaded" in log and "Relay app .... : Enabled" in log


def test_a_broken_route_file_is_refused_by_the_daemon(tmp_path: Path, extension: Path) -> None:
    """The load test can fail: a route rule freeDiameter does not understand stops it."""
    from imsdr.diameter import diameter_configs
    from imsdr.plan import load_topology

    topo = load_topology(PROVINCE)
    config = diameter_configs(topo)[0]
    files = dict(config.files)
    files["rt_default.conf"] += 'REALM="ims.example.net" : "x" += 1 ;\n'
    _write(tmp_path, files, config.client, topo.fqdn(config.client))
    started, log = _load(tmp_path, list(topo.elements[config.client].addresses), extension)
    assert not started and "rt_default" in log


def test_peers_transport_and_routes(tmp_path: Path) -> None:
    from imsdr.diameter import diameter_clients, diameter_configs

    data = province_data()
    topo = topology_from_data(data, tmp_path)
    assert [c.id for c in diameter_clients(topo)] == [
        "as-a-1", "as-b-1", "cscf-a-1", "cscf-b-1", "cscf-b-2", "cscf-c-1"]
    conf = next(c for c in diameter_configs(topo) if c.client == "cscf-b-1")
    text = conf.files["freeDiameter.conf"]
    assert 'Identity = "cscf-b-1.ims.example.net";' in text and "TwTimer = 8;" in text
    # plain TCP on 3868 by default, not TLS on 5868
    assert ('ConnectPeer = "hss-b-1.ims.example.net" { ConnectTo = "192.0.2.94"; ConnectTo = "2001:db8:b::30"; '
            'Port = 3868; No_TLS; No_SCTP; TwTimer = 8; TcTimer = 30; Realm = "ims.example.net"; };') in text
    assert "No_SCTP;  # every peer" in text
    # SLF routing: the SLF pair first, every HSS only through its redirect; equal scores per pair
    assert conf.files["rt_default.conf"].splitlines()[-4:] == [
        'dr="ims.example.net" : "slf-a-1.ims.example.net" += 5 ;',
        'dr="ims.example.net" : "slf-b-1.ims.example.net" += 5 ;',
        '* : "hss-a-1.ims.example.net" += -20 ;',
        '* : "hss-b-1.ims.example.net" += -20 ;',
    ]
    # per-server options: TLS from the first byte on the secure port, SCTP, IPsec
    for el in data["elements"]:
        if el["id"] == "hss-a-1":
            el["diameter"] = {"security": "tls"}
        if el["id"] == "hss-b-1":
            el["diameter"] = {"transport": "sctp", "security": "ipsec"}
    text = next(c for c in diameter_configs(topology_from_data(data, tmp_path)) if c.client == "cscf-b-1"
                ).files["freeDiameter.conf"]
    assert 'Port = 5868; No_SCTP; TwTimer' in text and "# TLS, RFC 6733 §13" in text
    assert "Port = 3868; No_TLS; No_TCP;" in text and "IPsec" in text
    assert "No_SCTP;  # every peer" not in text


def test_direct_rules_per_range_and_realm_per_home_domain(tmp_path: Path) -> None:
    from imsdr.diameter import diameter_configs

    data = province_data()
    data["elements"] = [e for e in data["elements"] if e["type"] != "slf"]
    data["redundancy"]["pairs"] = [p for p in data["redundancy"]["pairs"] if p["id"] != "slf-pair"]
    next(p for p in data["redundancy"]["pairs"] if p["id"] == "hss-pair")["user_ranges"] = ["+8610", "user.a"]
    data["network"]["home_domains"].append("ims.other.example.net")
    next(e for e in data["elements"] if e["id"] == "as-a-1")["fqdn"] = "as-a-1.ims.other.example.net"
    configs = {c.client: c.files for c in diameter_configs(topology_from_data(data, tmp_path))}
    routes = configs["cscf-a-1"]["rt_default.conf"]
    assert 'un=["^[+]8610"] : "hss-a-1.ims.example.net" += 40 ;' in routes
    assert 'un=["^user[.]a"] : "hss-b-1.ims.example.net" += 40 ;' in routes
    assert "rt_redirect" not in configs["cscf-a-1"]["freeDiameter.conf"]
    assert 'Realm = "ims.other.example.net";' in configs["as-a-1"]["freeDiameter.conf"]


def test_dra_pair_is_the_only_peer_of_its_province_clients(tmp_path: Path) -> None:
    from imsdr.diameter import diameter_configs

    topo = topology_from_data(with_dras(province_data()), tmp_path)
    configs = {c.client: c.files for c in diameter_configs(topo)}
    conf = configs["cscf-a-1"]["freeDiameter.conf"]
    assert [line.split('"')[1] for line in conf.splitlines() if line.startswith("ConnectPeer")] == [
        "dra-a-1.ims.example.net", "dra-b-1.ims.example.net"]
    assert 'Peer FQDN="dra-a-1.ims.example.net"' in configs["cscf-a-1"]["cdp.xml"]
    dra = configs["dra-a-1"]
    assert 'un=["^8610"] : "hss-a-1.ims.example.net" += 40 ;' in dra["rt_default.conf"]
    assert "cscf-a-1.ims.example.net" in dra["acl_wl.conf"] and "NoRelay" not in dra["freeDiameter.conf"]


def test_drain_scores_the_drained_hss_no_delivery(tmp_path: Path) -> None:
    from imsdr.plan import write_plan

    write_plan(PROVINCE, tmp_path / "normal")
    write_plan(PROVINCE, tmp_path / "drained")  # a drain renders over the plan the servers load (its serials)
    write_plan(PROVINCE, tmp_path / "drained", drain=("hss-a-1",))
    normal = (tmp_path / "normal/diameter/cscf-a-1/rt_default.conf").read_text()
    drained = (tmp_path / "drained/diameter/cscf-a-1/rt_default.conf").read_text()
    assert drained == normal + '* : "hss-a-1.ims.example.net" += NO_DELIVERY ;  # drained\n'


def test_national_peers_per_client_stay_within_the_province(tmp_path: Path) -> None:
    """No client connects to more than its province's HSSs + 2 SLFs/DRAs (was: every HSS/SLF of the
    country, 620 peers, 1.15 M connections)."""
    from imsdr.diameter import diameter_configs, peer_count
    from imsdr.example.national import NationalParams, generate_national

    data = generate_national(NationalParams(provinces=3, enum_numbers=1000))
    topo = topology_from_data(data, tmp_path)
    count = peer_count(topo)
    assert count.clients == 3 * 60 and count.max_peers == 16 + 2 == count.max_allowed
    assert count.connections == count.clients * 18
    # realm per home domain: a Hebei client is in Hebei's realm and peers with Hebei's servers only
    conf = next(c for c in diameter_configs(topo) if c.client == "hebei-cscf-01").files["freeDiameter.conf"]
    assert 'Realm = "ims.hebei.example.net";' in conf
    peers = [line.split('"')[1] for line in conf.splitlines() if line.startswith("ConnectPeer")]
    assert len(peers) == 18 and all(p.endswith(".ims.hebei.example.net") for p in peers)


def test_plan_writes_the_diameter_tree(tmp_path: Path) -> None:
    from imsdr.plan import write_plan

    write_plan(PROVINCE, tmp_path / "out")
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert {"diameter/cscf-a-1/freeDiameter.conf", "diameter/as-b-1/rt_default.conf"} <= written


def test_range_rules_with_every_allowed_character_are_loaded(tmp_path: Path, extension: Path) -> None:
    """Direct routing: the un= regexes made of every character a user prefix may hold compile in
    rt_default (POSIX ERE) and the daemon starts."""
    from imsdr.diameter import diameter_configs

    data = province_data()
    data["elements"] = [e for e in data["elements"] if e["type"] != "slf"]
    data["redundancy"]["pairs"] = [p for p in data["redundancy"]["pairs"] if p["id"] != "slf-pair"]
    next(p for p in data["redundancy"]["pairs"] if p["id"] == "hss-pair")["user_ranges"] = [
        "+86.10", "a.b@c-d_e", "Z9"]
    topo = topology_from_data(data, tmp_path)
    config = next(c for c in diameter_configs(topo) if c.client == "cscf-a-1")
    assert 'un=["^[+]86[.]10"]' in config.files["rt_default.conf"]
    work = tmp_path / "client"
    _write(work, config.files, "cscf-a-1", topo.fqdn("cscf-a-1"))
    started, log = _load(work, list(topo.elements["cscf-a-1"].addresses), extension)
    assert started, log
