"""The shape of the national example's rendered DNS per server (issue 26, point 1): a province
server holds one view per local network and core site of its own province, its peers view and
default, and its own zones only; a national server holds the delegations only.

Three provinces at the example's default size per province (4 sites, 10 local networks): each
province's servers are what they are in the 31-province example (a province server's content does
not depend on how many other provinces there are). ``benchmarks/run.py --only areas`` measures the
same counts on the full example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.example.national import NationalParams, national_yaml

PARAMS = NationalParams(provinces=3, enum_numbers=30_000, enum_block_size=10_000)
GPP = "ims.mnc001.mcc460.3gppnetwork.org"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    from imsdr.dns.plan import build_dns_plan
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    base = tmp_path_factory.mktemp("national-shape")
    inventory = base / "national3.yaml"
    inventory.write_text(national_yaml(PARAMS))
    result = CliRunner().invoke(app, ["render", "dns", str(inventory), "--out", str(base / "out")])
    assert result.exit_code == 0, result.output[-2000:]
    topo = Topology(*load_inventory(inventory))
    return base / "out", (topo, build_dns_plan(topo))


def _views_and_zones(text: str) -> tuple[list[str], list[str]]:
    return re.findall(r'^view "([^"]+)"', text, re.M), re.findall(r'^    zone "([^"]+)"', text, re.M)


def test_a_province_server_holds_its_own_views_and_zones_only(rendered: tuple[Path, object]) -> None:
    out, (topo, plan) = rendered  # type: ignore[misc]
    confs = {p.stem: p.read_text() for p in (out / "named").glob("*.conf")}
    provinces = ("beijing", "tianjin", "hebei")
    assert set(confs) == {f"{p}-dns-{n:02d}" for p in provinces for n in range(1, 5)} | \
        {"national-dns-01", "national-dns-02"}
    for province in provinces:
        domain = f"ims.{province}.example.net"
        own_blocks = {z.name for z in plan.zones.values() if z.kind == "enum" and z.blocks
                      and z.blocks[0].domain == domain}
        assert len(own_blocks) == 2  # its share of the mobile range and its fixed-line range
        sites = [s for s in topo.sites if s.startswith(province + "-")]
        lns = [ln for ln in topo.local_networks if ln.startswith(province + "-")]
        for n in range(1, 5):
            views, zones = _views_and_zones(confs[f"{province}-dns-{n:02d}"])
            # 10 local networks + 4 sites (an SBC view before each core view) + peers + default = 20 views
            assert views == [f"users-{ln}" for ln in lns] + [v for s in sites for v in (f"sbc-{s}", f"core-{s}")] + \
                [f"peers-{province}", "default"]
            assert len(views) == len(lns) + 2 * len(sites) + 2 == 20
            # its own zones, and the stubs to the national (level-1) set: nothing of another province
            assert set(zones) <= {domain, GPP, *own_blocks, "example.net", "6.8.e164.arpa"}, set(zones)
            assert domain in zones and own_blocks <= set(zones)
            # every view carries its province's home domain once; the zone statements stay per view
            assert zones.count(domain) == len(views) - 1  # (default: refuses everything)
            assert len(zones) <= 3 * len(views)
    for n in (1, 2):
        views, zones = _views_and_zones(confs[f"national-dns-{n:02d}"])
        assert views == ["national", "default"] and set(zones) == {"example.net", "6.8.e164.arpa"}


def test_capacity_loads_each_server_with_the_local_networks_its_views_serve(rendered: tuple[Path, object]) -> None:
    """Capacity's attribution of users to ENUM/DNS servers (imsdr.model.areas.dns_clients, read
    by the load model) is what the rendered named.conf serves: a server's user views are exactly
    the local networks whose queries capacity puts on it; the national servers carry none."""
    from imsdr.model.areas import dns_clients

    out, (topo, _plan) = rendered  # type: ignore[misc]
    serving, scope = dns_clients(topo)
    assert scope is not None
    for conf in (out / "named").glob("*.conf"):
        views, _zones = _views_and_zones(conf.read_text())
        served = {v.removeprefix("users-") for v in views if v.startswith("users-")}
        assert served == {ln for ln, servers in scope.items() if conf.stem in servers}, conf.stem
        assert (conf.stem in serving) == (not conf.stem.startswith("national-"))
