"""The synthetic inventory generator: deterministic, valid, redundant by construction, and
clean for the planning commands at small scale."""

from __future__ import annotations

import ipaddress
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.example.national import NationalParams, circuits_for, erlang_b, generate_national, national_yaml
from imsdr.inventory.build import block_range, load_inventory_text

SMALL = NationalParams(provinces=2, sites_per_province=4, local_networks_per_province=3, seed=7,
                       enum_numbers=25_000, enum_block_size=10_000)
runner = CliRunner()


def _commands() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return set(group.commands)  # type: ignore[attr-defined]


def test_same_seed_same_bytes_other_seed_other_bytes() -> None:
    assert national_yaml(SMALL) == national_yaml(SMALL)
    other = NationalParams(**{**SMALL.__dict__, "seed": 8})
    assert national_yaml(other) != national_yaml(SMALL)


def test_small_output_validates_with_expected_counts() -> None:
    inv, _source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    assert len(inv.sites) == 8
    assert len(inv.local_networks) == 6
    assert Counter(e.type.value for e in inv.elements)["sbc"] == 6 + 2  # + a second SBC per province
    assert inv.network.home_domains == ["ims.beijing.example.net", "ims.tianjin.example.net"]
    assert _mobile_numbers(inv) == 25_000
    assert all(b.style == "wildcard" for b in inv.enum_blocks)  # blocks as the wildcards that cover them
    assert sum(1 for b in inv.enum_blocks if "-fixed" in b.id) == 2


def _mobile_numbers(inv: Any) -> int:
    """Numbers the mobile blocks cover (13 digits): a range, or the whole prefix."""
    total = 0
    for block in inv.enum_blocks:
        if "-mobile-" not in block.id:
            continue
        if block.first is None and block.last is None:
            total += 10 ** (13 - len(block.prefix))
        else:
            first, last, digits = block_range(block)
            assert digits == 13
            total += last - first + 1
    return total


def test_exceptions_file_holds_the_ported_share_and_loads(tmp_path: Path) -> None:
    import io

    from imsdr.dns.enum_exceptions import load_enum_exceptions
    from imsdr.example.national import write_exceptions

    buf = io.StringIO()
    rows = write_exceptions(SMALL, buf)
    assert rows == round(25_000 * 0.02)
    again = io.StringIO()
    write_exceptions(SMALL, again)
    assert again.getvalue() == buf.getvalue()  # deterministic for the seed
    path = tmp_path / "exceptions.csv"
    path.write_text(buf.getvalue())
    inv, _source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    loaded = load_enum_exceptions(path, inv.enum_blocks)
    kinds = Counter(r.kind for r in loaded.rows)
    assert len(loaded) == rows and set(kinds) == {"ported", "ported-tel", "routed"}
    assert kinds["ported"] > kinds["ported-tel"] > kinds["routed"]


def test_the_stress_input_keeps_one_record_per_number() -> None:
    stress = NationalParams(**{**SMALL.__dict__, "enum_style": "numbers"})
    inv, _source = load_inventory_text(national_yaml(stress), "stress.yaml")
    assert all(b.style == "numbers" for b in inv.enum_blocks if "-mobile-" in b.id)
    assert _mobile_numbers(inv) == 25_000


def test_default_national_scale_validates() -> None:
    doc = generate_national(NationalParams())
    assert len(doc["sites"]) == 124
    assert len(doc["local_networks"]) == 310
    assert 4_500 <= len(doc["elements"]) <= 5_500
    inv, _source = load_inventory_text(national_yaml(NationalParams()), "national.yaml")
    assert _mobile_numbers(inv) == 10_000_000
    assert len(inv.elements) == len(doc["elements"])


def test_redundancy_by_construction() -> None:
    inv, _source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    sites = {s.id: s for s in inv.sites}
    el = {e.id: e for e in inv.elements}
    for pair in inv.redundancy.pairs:
        a, b = (el[m] for m in pair.members)
        assert a.site != b.site
        assert sites[a.site].region != sites[b.site].region
        assert not set(sites[a.site].power) & set(sites[b.site].power)
    for pool in inv.redundancy.pools:
        member_sites = [el[m].site for m in pool.members]
        assert len(set(member_sites)) == len(member_sites) == 4
        assert len({el[m].type for m in pool.members}) == 1
    grouped = {m for g in (*inv.redundancy.pairs, *inv.redundancy.pools) for m in g.members}
    assert {e.id for e in inv.elements if e.type.value != "sbc"} <= grouped
    # ring: each local network's DR SBC (the previous one's) sits at another site and region
    order = inv.redundancy.sbc_dr.order
    sbcs: dict[str, list[str]] = {}
    for e in inv.elements:
        for ln in e.serves:
            sbcs.setdefault(ln, []).append(e.site)
    for i, ln in enumerate(order):
        backer = order[i - 1]
        assert sbcs[ln][0] != sbcs[backer][0]
        assert sites[sbcs[ln][0]].region != sites[sbcs[backer][0]].region
        if sites[sbcs[ln][0]].province != sites[sbcs[backer][0]].province:
            # backed up across provinces: only after a second SBC of its own, at another site
            assert len(sbcs[ln]) == 2 and sbcs[ln][1] != sbcs[ln][0]
            assert sites[sbcs[ln][1]].province == sites[sbcs[ln][0]].province
        else:
            assert len(sbcs[ln]) == 1
    # every SBC's P-CSCF list starts at its own site and goes on at another one
    for sbc in (e for e in inv.elements if e.type.value == "sbc"):
        assert "virtual_sbc" in {f.value for f in sbc.features}
        assert el[sbc.pcscfs[0]].site == sbc.site and el[sbc.pcscfs[1]].site != sbc.site


def test_pools_survive_a_region_loss() -> None:
    inv, _source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    el = {e.id: e for e in inv.elements}
    for province in ("beijing", "tianjin"):
        users = sum(ln.subscribers for ln in inv.local_networks if ln.id.startswith(province + "-"))
        cscf_pools = [p for p in inv.redundancy.pools if p.role and p.id.startswith(province + "-")]
        capacity_left = sum(el[p.members[0]].capacity.registered_users * 2 for p in cscf_pools)  # 2 of 4 left
        assert users <= capacity_left * 0.75
    for pool in inv.redundancy.pools:
        if pool.busy_hour_erlangs:
            circuits = el[pool.members[0]].capacity.circuits
            assert erlang_b(pool.busy_hour_erlangs, 2 * circuits) <= 0.01


def test_addresses_are_documentation_space_and_names_under_the_province_domain() -> None:
    inv, _source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    v4 = ipaddress.ip_network("198.18.0.0/15")
    v6 = ipaddress.ip_network("2001:db8::/32")
    sites = {s.id: s for s in inv.sites}
    for e in inv.elements:
        for addr in map(ipaddress.ip_address, e.addresses):
            assert addr in (v4 if addr.version == 4 else v6)
        if e.id.startswith("national-"):  # the national (level-1) pair: named under the delegating zone
            assert e.fqdn is not None and re.fullmatch(r"ns[0-9]+\.example\.net", e.fqdn)
            continue
        assert e.fqdn is not None and e.fqdn.endswith(f".ims.{sites[e.site].province}.example.net")
        if e.type.value == "sbc":  # the SBCs' signalling (access) side lies outside every core subnet
            core = [ipaddress.ip_network(p) for s in inv.sites for p in s.core_subnets]
            assert not any(ipaddress.ip_address(a) in n for a in e.addresses for n in core if n.version == 4)
            assert e.core_addresses
    for ln in inv.local_networks:
        for prefix in map(ipaddress.ip_network, ln.prefixes):
            assert prefix.subnet_of(v4 if prefix.version == 4 else v6)  # type: ignore[arg-type]


def test_erlang_b_against_published_values() -> None:
    # Erlang B tables: 10 circuits at 1% carry 4.461 E; 30 circuits carry 20.337 E.
    assert circuits_for(4.46, 0.01) == 10 and circuits_for(4.47, 0.01) == 11
    assert circuits_for(20.33, 0.01) == 30 and circuits_for(20.35, 0.01) == 31
    assert erlang_b(4.46, 10) == pytest.approx(0.01, abs=5e-4)


def test_cli_writes_the_same_yaml_to_stdout() -> None:
    result = runner.invoke(app, ["example", "national", "--provinces", "2", "--sites-per-province", "4",
                                 "--local-networks-per-province", "3", "--seed", "7",
                                 "--enum-numbers", "25000", "--enum-block-size", "10000"])
    assert result.exit_code == 0, result.output
    assert result.stdout == national_yaml(SMALL)


def test_cli_refuses_impossible_scales_with_exit_2() -> None:
    result = runner.invoke(app, ["example", "national", "--provinces", "100", "--sites-per-province", "16"])
    assert result.exit_code == 2
    assert "at most 256 sites" in result.stderr
    result = runner.invoke(app, ["example", "national", "--sites-per-province", "1"])
    assert result.exit_code == 2


def test_province_is_one_province() -> None:
    result = runner.invoke(app, ["example", "province", "--enum-numbers", "1000", "--no-wildcards",
                                 "--enum-style", "numbers"])
    assert result.exit_code == 0, result.output
    inv, _source = load_inventory_text(result.stdout, "province.yaml")
    assert len({s.province for s in inv.sites}) == 1
    assert all(b.style == "numbers" for b in inv.enum_blocks)


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("example") / "small.yaml"
    path.write_text(national_yaml(SMALL))
    return path


@pytest.mark.parametrize("command", [["check"], ["capacity"], ["scenarios", "--depth", "1"]])
def test_small_national_plans_cleanly(small_file: Path, command: list[str]) -> None:
    """Every rule passes (no waiver: the example has none) and every capacity check, the
    registration storms of every site and region loss included, is within its limits."""
    assert command[0] in _commands(), f"imsdr {command[0]} is missing from the CLI"
    result = runner.invoke(app, [command[0], str(small_file), *command[1:], "--format", "json"])
    assert result.exit_code == 0, result.stdout[-3000:] + result.stderr[-2000:]
    data = json.loads(result.stdout)
    if command[0] == "check":
        assert data["findings"] == [] and not data.get("waived")
    elif command[0] == "capacity":
        assert data["verdict"] == "ok"
        assert data["storms"] and all(s["verdict"] == "ok" and not s["overloaded"] for s in data["storms"])


def test_sizing_follows_the_storm_model() -> None:
    """The generator restates the storm model's constants (an example may not import capacity):
    they are the model's, and the rates it sizes carry the storm of every user at the peak."""
    from imsdr.capacity import storm
    from imsdr.example import national

    for name in ("REGISTERS_PER_REGISTRATION", "CX_PER_REGISTRATION", "SH_PER_REGISTRATION",
                 "DX_PER_REGISTRATION", "CX_PER_RESTORATION", "FIXED_IMMEDIATE_SHARE", "FIXED_IMMEDIATE_WITHIN"):
        assert getattr(national, name) == getattr(storm, name), name
    inv, source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    from imsdr.model.topology import Topology

    topo = Topology(inv, source)
    assert inv.network.timers.registration_refresh == national.REGISTRATION_REFRESH
    cm = inv.network.capacity_model
    assert cm.busy_hour_call_attempts == national.BUSY_HOUR_CALL_ATTEMPTS and cm.onnet_share is None
    assert storm.background_per_user(topo).cx == pytest.approx(national.DIAMETER_BACKGROUND_PER_USER)
    assert {ln.access for ln in inv.local_networks} == {"fixed"} and not any(
        ln.registration_arrival for ln in inv.local_networks)
    # by hand: 0.3 / 60 + 0.7 / 1,800 = 0.0053889 registrations/s per moved user at the peak
    assert abs(national.STORM_PEAK_PER_USER - (0.3 / 60 + 0.7 / 1800)) < 1e-15
    el = {e.id: e for e in inv.elements}
    sbc = el["beijing-sbc-01"]
    users = sbc.capacity.registered_users  # sized at 75 %: every user it may carry, storming
    assert sbc.capacity.registrations_per_second * 2 >= users * (2 * (0.3 / 60 + 0.7 / 1800) + 1 / 1800)
    hss = el["beijing-hss-01"]
    beijing = sum(ln.subscribers for ln in inv.local_networks if ln.id.startswith("beijing-"))
    per_pair = beijing / 8  # 16 HSSs in 8 pairs
    # 5 Cx/Sh per registration at the peak + 1 restoration SAR and UAR + SAR per refresh + 1 LIR/h
    need = per_pair * (5 * (0.3 / 60 + 0.7 / 1800) + 3 / 1800 + 1 / 3600) / 0.75
    assert need <= hss.capacity.transactions_per_second < need + 100


def test_core_adjacencies_stay_inside_a_province() -> None:
    from imsdr.model.topology import Topology

    inv, source = load_inventory_text(national_yaml(SMALL), "small.yaml")
    topo = Topology(inv, source)
    province = {e.id: topo.sites[e.site].province for e in inv.elements}
    core = [(u, v) for u, v, k in topo.graph.edges(data="kind") if k in ("signalling", "diameter", "dns")]
    assert core
    assert all(province[u[3:]] == province[v[3:]] for u, v in core)
    with_dns = {u for u, v, k in topo.graph.edges(data="kind") if k == "dns"}
    assert with_dns == {f"el:{e.id}" for e in inv.elements if e.type.value != "enum_dns"}


def test_without_enum_numbers_or_wildcards_the_list_is_empty_not_null() -> None:
    params = NationalParams(provinces=1, sites_per_province=2, local_networks_per_province=2,
                            enum_numbers=0, wildcard_blocks=False)
    inv, _source = load_inventory_text(national_yaml(params), "empty-enum.yaml")
    assert inv.enum_blocks == []


def test_enum_numbers_beyond_what_validation_accepts_are_refused() -> None:
    from imsdr.example import national
    from imsdr.inventory.build import MAX_ENUM_NUMBERS

    assert national.MAX_ENUM_NUMBERS == MAX_ENUM_NUMBERS
    result = runner.invoke(app, ["example", "national", "--enum-numbers", str(MAX_ENUM_NUMBERS + 1)])
    assert result.exit_code == 2
    assert "ENUM numbers must be" in result.stderr


def test_provinces_sit_at_their_capitals_with_the_documented_defaults() -> None:
    """Real coordinates (each site within ~100 km of its province capital), the default
    max_utilisation, and ENUM/DNS service areas: one per province under one national pair."""
    import math

    from imsdr.example.national import CAPITALS

    doc = generate_national(SMALL)
    for site in doc["sites"]:
        lat, lon = CAPITALS[site["province"]]
        km = 111.2 * math.hypot(site["lat"] - lat, (site["lon"] - lon) * math.cos(math.radians(lat)))
        assert km < 100, (site["id"], km)
    assert "max_utilisation" not in doc["network"]["capacity_model"]
    areas = doc["network"]["dns"]["areas"]
    assert [a["id"] for a in areas] == ["national", "beijing", "tianjin"]
    assert areas[0]["level"] == "national" and len(areas[0]["nameservers"]) == 2
    dns = {e["id"] for e in doc["elements"] if e["type"] == "enum_dns"}
    assert dns == {n for a in areas for n in a["nameservers"]}  # every ENUM/DNS element serves
    # each province's servers are its own ENUM/DNS pairs (level 2); the national pair (level 1)
    # sits at two provinces' sites, in different regions
    pairs = {frozenset(p["members"]) for p in doc["redundancy"]["pairs"]}
    site_of = {e["id"]: e["site"] for e in doc["elements"]}
    for area in areas[1:]:
        own = area["nameservers"]
        assert len(own) == 4 and all(site_of[n].startswith(area["id"] + "-") for n in own)
        assert {frozenset(own[:2]), frozenset(own[2:])} <= pairs, area["id"]
        assert area["home_domains"] == [f"ims.{area['id']}.example.net"]
    assert frozenset(areas[0]["nameservers"]) in pairs
    assert {site_of[n].split("-")[0] for n in areas[0]["nameservers"]} == {"beijing", "tianjin"}


def test_capitals_are_the_real_ones() -> None:
    """Spot checks against the capitals' published coordinates (not the table itself): Beijing,
    Urumqi, Lhasa, Guangzhou, Harbin, Haikou; none of them at Kolkata (22.57 N, 88.36 E)."""
    import math

    from imsdr.example.national import CAPITALS

    known = {"beijing": (39.90, 116.41), "xinjiang": (43.83, 87.62), "xizang": (29.65, 91.17),
             "guangdong": (23.13, 113.26), "heilongjiang": (45.80, 126.53), "hainan": (20.04, 110.20)}
    for province, (lat, lon) in known.items():
        assert CAPITALS[province] == (pytest.approx(lat, abs=0.02), pytest.approx(lon, abs=0.02)), province
    for lat, lon in CAPITALS.values():
        assert 18 < lat < 54 and 73 < lon < 135  # inside China's extent
        assert math.hypot(lat - 22.57, lon - 88.36) > 2


def test_default_national_example_checks_cleanly(tmp_path: Path) -> None:
    """The example at its default scale: every rule passes (the example has no waivers), at the
    documented default max_utilisation, every SBC's signalling address outside every core subnet."""
    from imsdr.inventory.schema import CapacityModel

    text = national_yaml(NationalParams())
    inv, _source = load_inventory_text(text, "national.yaml")
    assert inv.network.capacity_model.max_utilisation == CapacityModel().max_utilisation == 0.85
    core = [ipaddress.ip_network(p) for s in inv.sites for p in s.core_subnets]
    for sbc in (e for e in inv.elements if e.type.value == "sbc"):
        assert not any(ipaddress.ip_address(a) in n for a in sbc.addresses for n in core
                       if n.version == ipaddress.ip_address(a).version), sbc.id
    path = tmp_path / "national.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["check", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stdout[-3000:]
    data = json.loads(result.stdout)
    assert data["findings"] == [] and data["waived"] == [] and len(data["rules"]) >= 70
