"""DNS service areas proven by real BIND: a national (level-1) server holding delegations only and
two province (level-2) servers, each with its own rendered ``named/<server>.conf``, on port 53 of
distinct loopback addresses. named listens only on addresses configured on an interface, so the
live part runs in a network namespace the test creates (``unshare --net``: its own loopback with
the addresses below added) - the host's network is never touched. A core client of one province
reaches the other province's home domain and numbers through its own server, which recurses
through the national delegations.

Loopback: 127.0.0.20 national-dns-01, 127.0.0.21 beijing-dns-01, 127.0.0.22 tianjin-dns-01;
127.0.0.31 a core client at beijing-s1, 127.0.0.41 beijing-ln01's access resolver, 127.0.0.1 nobody.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest

from imsdr.dns.plan import DnsPlan, build_dns_plan
from imsdr.dns.render import render_dns
from imsdr.example.national import NationalParams, generate_national
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from tests.named_harness import NamedServer, start_named

IN_NETNS = os.environ.get("IMSDR_TEST_NETNS") == "1"

NATIONAL, BEIJING, TIANJIN = "127.0.0.20", "127.0.0.21", "127.0.0.22"
BEIJING_CORE, BEIJING_USERS, NOBODY = "127.0.0.31", "127.0.0.41", "127.0.0.1"
GPP = "ims.mnc001.mcc460.3gppnetwork.org"
PARAMS = NationalParams(provinces=2, sites_per_province=2, local_networks_per_province=2, seed=3,
                        enum_numbers=2000, enum_block_size=1000)


def loopback_areas(data: dict[str, Any]) -> dict[str, Any]:
    """One server per area, on loopback; a core client and an access resolver of beijing."""
    servers = {"national-dns-01": NATIONAL, "beijing-dns-01": BEIJING, "tianjin-dns-01": TIANJIN}
    for el in data["elements"]:
        if el["id"] in servers:
            el["addresses"] = [servers[el["id"]]]
    for area in data["network"]["dns"]["areas"]:
        area["nameservers"] = [i for i in area["nameservers"] if i in servers]
    sites = {s["id"]: s for s in data["sites"]}
    sites["beijing-s1"]["core_subnets"].append(f"{BEIJING_CORE}/32")
    lns = {ln["id"]: ln for ln in data["local_networks"]}
    lns["beijing-ln01"]["resolvers"] = [BEIJING_USERS]
    return data


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DnsPlan, Topology]:
    import yaml

    base = tmp_path_factory.mktemp("areas")
    inventory = base / "areas.yaml"
    inventory.write_text(yaml.safe_dump(loopback_areas(generate_national(PARAMS)), sort_keys=False))
    inv, source = load_inventory(inventory)
    topo = Topology(inv, source)
    render_dns(topo, base / "dns", inventory.name, serial=1)
    return base / "dns", build_dns_plan(topo), topo


@pytest.fixture(scope="module")
def servers(rendered: tuple[Path, DnsPlan, Topology]) -> Iterator[dict[str, NamedServer]]:
    out, _plan, _topo = rendered
    started: dict[str, NamedServer] = {}
    try:
        for name, address in (("national-dns-01", NATIONAL), ("beijing-dns-01", BEIJING),
                              ("tianjin-dns-01", TIANJIN)):
            started[name] = start_named(out, f"named/{name}.conf", address=address, port=53,
                                        probe=("example.invalid", "A"))
        yield started
    finally:
        for server in started.values():
            server.stop()


def ask(server: NamedServer, qname: str, rdtype: str, source: str, recurse: bool = True) -> dns.message.Message:
    request = dns.message.make_query(qname, rdtype)
    if not recurse:
        request.flags &= ~dns.flags.RD  # type: ignore[attr-defined]
    response = dns.query.udp(request, server.address, port=server.port, source=source, timeout=8.0)
    if response.flags & dns.flags.TC:
        response = dns.query.tcp(request, server.address, port=server.port, source=source, timeout=8.0)
    return response


def records(response: dns.message.Message, rdtype: str) -> set[str]:
    want = dns.rdatatype.from_text(rdtype)
    return {rd.to_text().rstrip(".") for rrset in response.answer if rrset.rdtype == want for rd in rrset}


def plan_records(plan: DnsPlan, view: str, qname: str, rdtype: str) -> set[str]:
    return {rd.to_text().rstrip(".") for rd in plan.lookup(view, qname, rdtype)}


def test_each_server_holds_its_own_area_only(rendered: tuple[Path, DnsPlan, Topology]) -> None:
    out, plan, topo = rendered
    confs = {p.stem: p.read_text() for p in (out / "named").glob("*.conf")}
    # every server of an area gets a configuration, and only the area's servers
    assert set(confs) == {"national-dns-01", "beijing-dns-01", "tianjin-dns-01"}
    for province in ("beijing", "tianjin"):
        text = confs[f"{province}-dns-01"]
        views = re.findall(r'^view "([^"]+)"', text, re.M)
        sites = [s for s in topo.sites if s.startswith(province)]
        lns = [ln for ln in topo.local_networks if ln.startswith(province)]
        # one view per local network and core site of its own province (each site's SBC view
        # first: its SBCs' core interfaces), its peers view, default
        sbc_sites = {e.site for e in topo.by_type["sbc"] if e.core_addresses}
        assert views == [f"users-{ln}" for ln in lns] + \
            [v for s in sites for v in ([f"sbc-{s}"] if s in sbc_sites else []) + [f"core-{s}"]] + \
            [f"peers-{province}", "default"]
        zones = set(re.findall(r'zone "([^"]+)" \{ *(?:type|in-view|$)', text, re.M))
        other = "tianjin" if province == "beijing" else "beijing"
        assert f"ims.{province}.example.net" in zones and f"ims.{other}.example.net" not in zones
        assert "6.8.e164.arpa" in zones  # a static-stub to the national set, not a zone of its own
        assert "type primary; file \"zones/enum/6.8.e164.arpa.zone\"" not in text
    national = confs["national-dns-01"]
    assert re.findall(r'^view "([^"]+)"', national, re.M) == ["national", "default"]
    assert set(re.findall(r'zone "([^"]+)"', national)) == {"example.net", "6.8.e164.arpa"}
    # the national zones hold delegations only: NS + glue, no SRV/NAPTR
    text = (out / "zones/national/example.net.zone").read_text()
    assert re.search(r"^ims\.beijing +\d+ +IN NS +dns-01\.ims\.beijing\.example\.net\.$", text, re.M)
    assert re.search(r"^dns-01\.ims\.beijing +\d+ +IN A +127\.0\.0\.21$", text, re.M)
    assert not re.search(r"IN (SRV|NAPTR)", text)
    assert "max-records-per-type" not in "".join(confs.values())


def test_areas_in_a_network_namespace() -> None:
    """Run the live tests below in a fresh network namespace (loopback only) and check they passed."""
    if IN_NETNS:
        return  # (already inside: the live tests run instead)
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    assert unshare, "util-linux 'unshare' is needed for the network namespace"
    adds = " && ".join(f"{ip} addr add {a}/32 dev lo" for a in (NATIONAL, BEIJING, TIANJIN, BEIJING_CORE,
                                                                 BEIJING_USERS))
    setup = (f"{ip} link set lo up && {adds} && exec {sys.executable} -m pytest -q -p no:cacheprovider "
             f"-p no:randomly -p no:xdist {Path(__file__).resolve()} -k test_live")
    env = {**os.environ, "IMSDR_TEST_NETNS": "1"}
    result = subprocess.run([unshare, "--net", "sh", "-c", setup], capture_output=True, text=True, env=env,
                            timeout=180, check=False, cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "3 passed" in result.stdout, result.stdout[-3000:]


def live_core_client_reaches_the_other_province_through_delegation(
        servers: dict[str, NamedServer], rendered: tuple[Path, DnsPlan, Topology]) -> None:
    _out, plan, _topo = rendered
    beijing = servers["beijing-dns-01"]
    qname = "_sip._udp.ims.tianjin.example.net"
    answer = records(ask(beijing, qname, "SRV", BEIJING_CORE), "SRV")
    assert answer and all(r.endswith(".ims.tianjin.example.net") for r in answer)
    assert answer == (plan_records(plan, "core-beijing-s1", qname, "SRV"))  # resolve agrees
    # the other province's numbers: the national ENUM zone refers to tianjin's block zones
    block = next(b for b in plan.zones.values() if b.kind == "enum" and b.area == "tianjin" and b.blocks[0].style
                 == "wildcard").blocks[0]
    number = block.prefix + "1234"
    qname = ".".join(reversed(number)) + ".e164.arpa"
    naptr = records(ask(beijing, qname, "NAPTR", BEIJING_CORE), "NAPTR")
    assert naptr and all("ims.tianjin.example.net" in r for r in naptr)
    assert plan.enum_lookup("+" + number)[0].regexp.endswith("@ims.tianjin.example.net!")
    # a number outside every block: NXDOMAIN from the national set (breakout to the PSTN)
    outside = ask(beijing, ".".join(reversed("869991234567")) + ".e164.arpa", "NAPTR", BEIJING_CORE)
    assert outside.rcode() == dns.rcode.NXDOMAIN


def live_3gpp_domain_answers_the_provinces_own_icscfs(
        servers: dict[str, NamedServer], rendered: tuple[Path, DnsPlan, Topology]) -> None:
    _out, plan, topo = rendered
    answer = records(ask(servers["beijing-dns-01"], f"_sip._udp.{GPP}", "SRV", BEIJING_CORE, recurse=False), "SRV")
    own = {topo.fqdn(e) for e in topo.with_role("icscf") if e.site.startswith("beijing")}
    assert answer and {r.split()[-1] for r in answer} == own
    assert answer == (plan_records(plan, "core-beijing-s1", f"_sip._udp.{GPP}", "SRV"))


def live_users_and_strangers_get_no_recursion(servers: dict[str, NamedServer]) -> None:
    beijing, national = servers["beijing-dns-01"], servers["national-dns-01"]
    # an access resolver asking for another province's core: no recursion in user views
    assert ask(beijing, "_sip._udp.ims.tianjin.example.net", "SRV", BEIJING_USERS).rcode() == dns.rcode.REFUSED
    assert ask(national, "ims.beijing.example.net", "NS", NOBODY).rcode() == dns.rcode.REFUSED
    # the national set refers a province server; it answers nothing itself below the cut
    referral = ask(national, "_sip._udp.ims.beijing.example.net", "SRV", BEIJING, recurse=False)
    assert not referral.answer and any(r.rdtype == dns.rdatatype.NS for r in referral.authority)


if IN_NETNS:  # inside the namespace only: the live tests themselves
    test_live_delegation = live_core_client_reaches_the_other_province_through_delegation
    test_live_3gpp = live_3gpp_domain_answers_the_provinces_own_icscfs
    test_live_no_recursion = live_users_and_strangers_get_no_recursion
