"""Diameter as deployed, with real peers on loopback (127.27.0.0/24).

* Servers: ``tests/diameter_peer.py`` processes (one per HSS/SLF, so one can be stopped by its
  PID) stand in for two active-standby HSS pairs and an SLF: freeDiameter 1.2.1 as packaged has no
  extension that answers or redirects Cx requests.
* Client: the real ``freeDiameterd`` loaded with imsdr's rendered files (and the rendered
  ``dict_ims_cxsh.c`` built here), plus a test-only extension (tests/data/diameter_probe.c) that
  sends a Cx UAR per subscriber every 200 ms and logs who answered.
* Kamailio with ``cdp`` loads the rendered ``cdp.xml`` and connects to the same servers.

Measured: the first answer from the standby after the active HSS process is killed, and from the
recovered HSS after the failback step; both within imsdr's predicted time.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from diameter_lab import (
    ADDRESSES,
    NET,
    PROMOTION,
    REALM,
    USERS,
    Lab,
    answers,
    lab_data,
    now_ms,
    served_by,
    wait_for,
)
from inventory_factory import topology_from_data


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    lab = Lab(tmp_path_factory.mktemp("diameter-lab"))
    try:
        for active, standby in (("hss-a-1", "hss-b-1"), ("hss-c-1", "hss-d-1")):
            lab.start_server(active)
            wait_for(lambda a=active: lab.log(a), 10, f"{active} to listen")  # before its standby watches it
            lab.start_server(standby, "--standby", f"{NET}{ADDRESSES[active]}", "--promotion", str(PROMOTION))
        lab.start_server("slf-a-1", "--role", "slf", "--range", "8610=hss-a-1.ims.example.net,hss-b-1.ims.example.net",
                         "--range", "8622=hss-c-1.ims.example.net,hss-d-1.ims.example.net")
        wait_for(lambda: all(lab.log(n) for n in ("hss-a-1", "hss-c-1", "slf-a-1")), 10, "the servers to listen")
        yield lab
    finally:
        lab.close()


def _config(with_slf: bool, client: str, tmp_path: Path) -> tuple[dict[str, str], object]:
    from imsdr.diameter import diameter_configs

    topo = topology_from_data(lab_data(with_slf), tmp_path)
    return next(c for c in diameter_configs(topo) if c.client == client).files, topo


def test_slf_redirect_reaches_the_hss_holding_each_range(lab: Lab, tmp_path: Path) -> None:
    files, _ = _config(True, "cscf-a-1", tmp_path)
    assert "rt_redirect.fdx" in files["freeDiameter.conf"] and "Port = 3868; No_TLS;" in files["freeDiameter.conf"]
    probe = lab.start_client("cscf-a-1", files, "slf-client")
    try:
        for user, (active, _) in USERS.items():
            wait_for(lambda u=user, a=active: served_by(probe, u, a), 20, f"{user} answered by {active}")
    finally:
        lab.stop("slf-client")
    # CER/CEA over plain TCP 3868 with the Cx and Sh application ids, to each server
    for server in ("hss-a-1", "hss-c-1", "slf-a-1"):
        cers = [e for e in lab.log(server) if e[1] == "CER" and e[2] == f"peer=cscf-a-1.{REALM}"]
        assert cers and cers[0][3] == "apps=16777216,16777217", lab.log(server)
    requests = {n: {f.split("=", 1)[1] for e in lab.log(n) if e[1] == "request" for f in e[2:] if f.startswith("user=")}
                for n in ("slf-a-1", "hss-a-1", "hss-c-1")}
    assert requests["slf-a-1"] == set(USERS)  # asked first (Dx) ...
    assert requests["hss-a-1"] == {"8610555000001@ims.example.net"}  # ... and each range went where it is held
    assert requests["hss-c-1"] == {"8622666000001@ims.example.net"}


def test_kamailio_cdp_loads_the_rendered_xml_and_reaches_the_servers(lab: Lab, tmp_path: Path) -> None:
    files, topo = _config(True, "cscf-b-1", tmp_path)
    work = tmp_path / "kamailio"
    work.mkdir()
    (work / "cdp.xml").write_text(files["cdp.xml"], encoding="utf-8")
    hosts = "127.0.0.1 localhost\n" + "".join(f"{NET}{n} {name}.{REALM}\n" for name, n in ADDRESSES.items())
    (work / "hosts").write_text(hosts)
    modules = "/usr/lib/x86_64-linux-gnu/kamailio/modules"
    (work / "kamailio.cfg").write_text(
        "#!KAMAILIO\ndebug=2\nlog_stderror=yes\nchildren=1\n"
        f"listen=udp:{NET}{ADDRESSES['cscf-b-1']}:5060\n"
        f'mpath="{modules}"\nloadmodule "cdp.so"\n'
        f'modparam("cdp", "config_file", "{work / "cdp.xml"}")\n'
        "request_route { drop; }\n")
    started = time.monotonic()
    kamailio = shutil.which("kamailio")
    assert kamailio, "kamailio is not installed: run bash .ci/test"
    proc = subprocess.Popen(
        ["unshare", "--mount", "sh", "-c",
         f"mount --bind {work / 'hosts'} /etc/hosts && exec {kamailio} -DD -E -f {work / 'kamailio.cfg'}"],
        stdout=(work / "out.log").open("w"), stderr=subprocess.STDOUT)
    try:
        def cer_seen() -> bool:
            return all(any(e[1] == "CER" and e[2] == f"peer=cscf-b-1.{REALM}" and e[3] == "apps=16777216,16777217"
                           and int(e[0]) >= 0 for e in lab.log(n)) for n in ("hss-c-1", "slf-a-1"))
        wait_for(cer_seen, 20, "Kamailio cdp's CER at the servers:\n" + (work / "out.log").read_text()[-2000:])
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert time.monotonic() - started < 30


def test_failover_to_the_standby_and_failback_within_the_predicted_time(lab: Lab, tmp_path: Path) -> None:
    from imsdr.capacity.timing import failback_time, switchover

    files, topo = _config(False, "cscf-a-1", tmp_path)
    rules = files["rt_default.conf"]
    assert 'un=["^8610"] : "hss-a-1.ims.example.net" += 40 ;' in rules
    assert 'un=["^8610"] : "hss-b-1.ims.example.net" += 40 ;' in rules  # equal: the standby refuses until promoted
    predicted = switchover(topo, topo.elements["hss-a-1"]).seconds
    predicted_back = failback_time(topo, topo.elements["hss-a-1"]).seconds
    probe = lab.start_client("cscf-a-1", files, "direct-client")
    user_a, user_c = USERS
    try:
        for user, (active, _) in USERS.items():
            wait_for(lambda u=user, a=active: served_by(probe, u, a), 20, f"{user} answered by {active}")
        killed = now_ms()
        lab.stop("hss-a-1", signal.SIGKILL)
        first = wait_for(lambda: served_by(probe, user_a, "hss-b-1", killed), predicted + 10, "the standby")
        failover_ms = first[0] - killed
        assert failover_ms <= predicted * 1000, (failover_ms, predicted)
        assert served_by(probe, user_c, "hss-c-1", killed)  # the other range never moved
        # failback: the recovered HSS comes back as standby, the active one is demoted (swap back)
        lab.start_server("hss-a-1", "--standby", f"{NET}{ADDRESSES['hss-b-1']}", "--promotion", str(PROMOTION))
        wait_for(lambda: any(e[1] == "standby" for e in lab.log("hss-a-1")[-1:]), 10, "hss-a-1 standby")
        swapped = now_ms()
        lab.procs["hss-b-1"].send_signal(signal.SIGUSR1)
        back = wait_for(lambda: served_by(probe, user_a, "hss-a-1", swapped), predicted_back + 10, "failback")
        failback_ms = back[0] - swapped
        assert failback_ms <= predicted_back * 1000, (failback_ms, predicted_back)
        time.sleep(0.6)
        recent = [a for a in answers(probe) if a[1] == user_a and a[0] > back[0]]
        assert recent and all(a[3] == "hss-a-1" for a in recent if a[2] == 2001)
    finally:
        lab.stop("direct-client")
    print(f"failover {failover_ms} ms (predicted {predicted} s), failback {failback_ms} ms "
          f"(predicted {predicted_back} s)")
