"""DRA routing with real software, in network namespaces the test creates.

Two HSS pairs (``diameter_peer.py`` processes, each pair active-standby, one subscriber range per
pair), the province's DRA pair as two real freeDiameterd relays loaded with imsdr's rendered DRA
files (its routing table sends each range to its HSS pair), and a real freeDiameterd client
loaded with the rendered cscf-a-1 files plus the test's request generator
(tests/data/diameter_probe.c). The HSSs and the client share one network namespace the test creates, each
DRA has its own joined to it by a veth pair (freeDiameter 1.2.1 listens on port 3868 of every
address it has, which the HSSs also use, and must not be the host's).

Proven: the client connects to its province's DRA pair only; a Cx request for a subscriber of
each range arrives, through a DRA, at the active HSS of the pair holding that range; the HSSs see
the DRAs as their only peers.
"""

from __future__ import annotations

import subprocess

import pytest
from diameter_lab import REALM, USERS, Lab, answers, lab_data, served_by, wait_for
from inventory_factory import topology_from_data

NET = "10.27.0."  # routed between the namespaces the test creates (127/8 would not cross a veth)
DRAS = {"dra-a-1": ("site-a", f"{NET}50"), "dra-b-1": ("site-b", f"{NET}51")}
HSS_PAIRS = (("hss-a-1", "hss-b-1"), ("hss-c-1", "hss-d-1"))


def dra_lab_data() -> dict:
    """The two-pair lab province with a DRA pair (no SLF): its clients route through the DRAs."""
    data = lab_data(with_slf=False, net=NET)
    for dra, (site, address) in DRAS.items():
        data["elements"].append({"id": dra, "type": "dra", "site": site, "vendor": "vendor-z",
                                 "addresses": [address], "capacity": {"transactions_per_second": 20000}})
    data["redundancy"]["pairs"].append({"id": "dra-pair", "members": list(DRAS)})
    return data


class Namespace:
    """A network namespace held open by one ``sleep`` process (stopped by its PID)."""

    def __init__(self, *setup: str) -> None:
        script = " && ".join(["ip link set lo up", *setup, "exec sleep 900"])
        self.proc = subprocess.Popen(["unshare", "--net", "sh", "-c", script])
        self.wrap = ("nsenter", "-t", str(self.proc.pid), "-n", "--")
        wait_for(lambda: "LOOPBACK,UP" in self.run("ip", "-o", "link", "show", "lo"), 10, "the namespace")

    def run(self, *command: str) -> str:
        done = subprocess.run([*self.wrap, *command], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, (command, done.stderr)
        return done.stdout

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def link(core: Namespace, other: Namespace, address: str, name: str) -> None:
    """A veth pair from ``core`` (the HSSs and the client) to ``other`` (one DRA at ``address``)."""
    core.run("ip", "link", "add", f"{name}c", "type", "veth", "peer", "name", f"{name}o")
    core.run("ip", "link", "set", f"{name}o", "netns", str(other.proc.pid))
    core.run("ip", "link", "set", f"{name}c", "up")
    core.run("ip", "route", "add", f"{address}/32", "dev", f"{name}c")
    other.run("ip", "addr", "add", f"{address}/32", "dev", f"{name}o")
    other.run("ip", "link", "set", f"{name}o", "up")
    other.run("ip", "route", "add", f"{NET}0/24", "dev", f"{name}o")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    from imsdr.diameter import diameter_configs

    topo = topology_from_data(dra_lab_data(), tmp_path_factory.mktemp("dra-inventory"))
    return {c.client: c.files for c in diameter_configs(topo)}


@pytest.fixture(scope="module")
def dra_lab(tmp_path_factory: pytest.TempPathFactory, rendered: dict[str, dict[str, str]]):  # type: ignore[no-untyped-def]
    """The HSSs and the client in one namespace, each DRA in its own (freeDiameter 1.2.1 binds its
    listening port 3868 on every address of its namespace), joined by veth pairs."""
    from diameter_lab import ADDRESSES, PROMOTION

    namespaces: list[Namespace] = []
    lab = None
    try:
        core = Namespace(*(f"ip addr add {NET}{n}/32 dev lo" for n in ADDRESSES.values()))
        namespaces.append(core)
        lab = Lab(tmp_path_factory.mktemp("dra-lab"), core.wrap, NET)
        for active, standby in HSS_PAIRS:
            lab.start_server(active)
            wait_for(lambda a=active: lab.log(a), 10, f"{active} to listen")
            lab.start_server(standby, "--standby", f"{NET}{ADDRESSES[active]}", "--promotion", str(PROMOTION))
        for k, (dra, (_site, address)) in enumerate(DRAS.items()):
            own = Namespace()
            namespaces.append(own)
            link(core, own, address, f"dra{k}")
            lab.start_daemon(dra, rendered[dra], dra, wrap=own.wrap)
        # each DRA has its CER answered by the active HSS of each pair before the client starts
        wait_for(lambda: all(any(e[1] == "CER" and e[2] == f"peer={d}.{REALM}" for e in lab.log(a))
                             for d in DRAS for a, _ in HSS_PAIRS), 30, "the DRAs' CER at the active HSSs")
        yield lab
    finally:
        if lab is not None:
            lab.close()
        for ns in reversed(namespaces):
            ns.close()


def test_the_client_connects_to_its_dra_pair_only(rendered: dict[str, dict[str, str]]) -> None:
    conf = rendered["cscf-a-1"]["freeDiameter.conf"]
    peers = [line.split('"')[1] for line in conf.splitlines() if line.startswith("ConnectPeer")]
    assert peers == [f"dra-a-1.{REALM}", f"dra-b-1.{REALM}"]
    dra_routes = rendered["dra-a-1"]["rt_default.conf"]
    assert f'un=["^8610"] : "hss-a-1.{REALM}" += 40 ;' in dra_routes
    assert f'un=["^8622"] : "hss-d-1.{REALM}" += 40 ;' in dra_routes


def test_each_range_reaches_its_hss_pair_through_the_dra(dra_lab: Lab, rendered: dict[str, dict[str, str]]) -> None:
    probe = dra_lab.start_client("cscf-a-1", rendered["cscf-a-1"], "dra-client")
    try:
        for user, (active, _standby) in USERS.items():
            wait_for(lambda u=user, a=active: served_by(probe, u, a), 30,
                     f"{user} answered by {active}: {answers(probe)[-4:]}")
    finally:
        dra_lab.stop("dra-client")
    holders = {"hss-a-1": "8610555000001@ims.example.net", "hss-c-1": "8622666000001@ims.example.net"}
    for hss, user in holders.items():
        requests = [dict(f.split("=", 1) for f in e[2:]) for e in dra_lab.log(hss) if e[1] == "request"]
        assert requests and {r["user"] for r in requests} == {user}  # only the range it holds
        assert {r["peer"] for r in requests} == {f"cscf-a-1.{REALM}"}  # sent by the client ...
        assert {r["via"] for r in requests} <= {f"{d}.{REALM}" for d in DRAS}  # ... relayed by a DRA
    for hss in ("hss-a-1", "hss-c-1"):  # the client never connected to an HSS itself
        cer_peers = {e[2] for e in dra_lab.log(hss) if e[1] == "CER"}
        assert cer_peers == {f"peer={d}.{REALM}" for d in DRAS}
    assert not any(e[1] == "request" for s in ("hss-b-1", "hss-d-1") for e in dra_lab.log(s))  # standbys idle
