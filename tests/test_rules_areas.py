"""ENUM-006 (an ENUM/DNS element serving nothing) and DNS-006 (an address in two views' match
lists), on the province sample and on a small national example with service areas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from imsdr.example.national import NationalParams, generate_national
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.rules.engine import run_checks


def findings(path: Path, rule: str) -> list[Any]:
    inv, source = load_inventory(path)
    return [f for f in run_checks(Topology(inv, source)).findings if f.rule_id == rule]


def test_the_samples_pass_both(make_inventory: Callable[..., Path]) -> None:
    for base in ("province", "lab"):
        path = make_inventory(base=base)
        assert findings(path, "ENUM-006") == [] and findings(path, "DNS-006") == []


def test_a_name_server_left_out_of_nameservers_is_reported(make_inventory: Callable[..., Path]) -> None:
    def mutate(d: dict[str, Any]) -> None:
        dns = [e["id"] for e in d["elements"] if e["type"] == "enum_dns"]
        d["network"].setdefault("dns", {})["nameservers"] = dns[:1]

    found = findings(make_inventory(mutate), "ENUM-006")
    assert found and all("serves nothing" in f.message for f in found)
    assert found[0].location is not None and found[0].location.line > 0


def test_a_resolver_shared_by_two_local_networks_is_an_error(make_inventory: Callable[..., Path]) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["local_networks"][1]["resolvers"] = list(d["local_networks"][0]["resolvers"])  # harbour = capital's

    found = findings(make_inventory(mutate), "DNS-006")
    assert len(found) == 1 and "203.0.113.131/32" in found[0].message and "users-capital" in found[0].message
    assert found[0].severity.value == "error"


def test_overlap_is_judged_per_area(tmp_path: Path) -> None:
    """With areas, two provinces' views sit on different servers: the same prefix in both is fine,
    the same prefix twice inside one province is not."""
    import yaml

    data = generate_national(NationalParams(provinces=2, sites_per_province=2, local_networks_per_province=2,
                                            enum_numbers=0))
    lns = {ln["id"]: ln for ln in data["local_networks"]}
    lns["beijing-ln01"]["resolvers"] = ["192.0.2.53"]
    lns["tianjin-ln01"]["resolvers"] = ["192.0.2.53"]
    path = tmp_path / "areas.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert findings(path, "DNS-006") == []
    lns["beijing-ln02"]["resolvers"] = ["192.0.2.53"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    found = findings(path, "DNS-006")
    assert len(found) == 1 and "beijing-ln0" in found[0].message
    # every enum_dns element of the example is in an area: none serves nothing
    assert findings(path, "ENUM-006") == []


def test_an_sbc_core_address_belongs_inside_its_own_sites_core_subnet_only(
        make_inventory: Callable[..., Path]) -> None:
    """A site's SBC view comes before its core view: an SBC address inside the site's own core
    subnet is matched by the SBC view, as meant (the sample: 192.0.2.11 in 192.0.2.0/26); inside
    another site's core subnet it would get that site's core answers."""
    def own(d: dict[str, Any]) -> None:
        next(e for e in d["elements"] if e["id"] == "sbc-capital")["core_addresses"] = ["192.0.2.20"]  # site-a

    assert findings(make_inventory(own), "DNS-006") == []

    def other(d: dict[str, Any]) -> None:
        next(e for e in d["elements"] if e["id"] == "sbc-capital")["core_addresses"] = ["192.0.2.70"]  # site-b's

    found = findings(make_inventory(other), "DNS-006")
    assert len(found) == 1 and "sbc-site-a" in found[0].message and "core-site-b" in found[0].message
