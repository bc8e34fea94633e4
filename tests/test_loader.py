"""Inventory loading: every class of bad input reported with file:line:col and path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from imsdr.errors import InventoryError
from imsdr.inventory.build import load_inventory, load_inventory_text

ROOT = Path(__file__).resolve().parent.parent

MINIMAL = """\
version: 1
network:
  name: Test
  operator_domain: example.net
  home_domains: [ims.example.net]
  country_code: "86"
sites:
  - {id: site-a, name: A, region: r1, power: [p1], transmission: [t1]}
  - {id: site-b, name: B, region: r2, power: [p2], transmission: [t2]}
local_networks:
  - {id: ln-1, name: One, prefixes: [198.51.100.0/24], home_sites: [site-a]}
elements:
  - {id: hss-1, type: hss, site: site-a, vendor: v, addresses: [192.0.2.1]}
  - {id: hss-2, type: hss, site: site-b, vendor: v, addresses: [192.0.2.2]}
redundancy:
  pairs:
    - {id: hss-pair, members: [hss-1, hss-2]}
"""


def col(text: str, line: int, needle: str) -> int:
    """1-based column of ``needle`` on 1-based ``line`` of ``text``."""
    return text.splitlines()[line - 1].index(needle) + 1


def problems_of(text: str) -> list[str]:
    with pytest.raises(InventoryError) as info:
        load_inventory_text(textwrap.dedent(text), "inv.yaml")
    return [str(p) for p in info.value.problems]


def test_minimal_inventory_loads_with_defaults() -> None:
    inv, source = load_inventory_text(MINIMAL, "inv.yaml")
    assert inv.network.enum_suffix == "e164.arpa"
    assert inv.network.timers.diameter_watchdog == 8
    assert inv.network.capacity_model.hss_restoration_overhead == 0.08
    assert inv.network.capacity_model.failover_cost_per_moved_user == 1.8
    assert inv.network.retry_responses == [408, 503, 504]
    loc = source.locate_id("hss-2", "site")
    assert (loc.line, loc.column) == (14, col(MINIMAL, 14, "site-b"))


@pytest.mark.parametrize("sample", ["province.yaml", "lab.yaml"])
def test_samples_validate(sample: str) -> None:
    inv, _ = load_inventory(ROOT / "inventories" / sample)
    assert inv.version == 1


def test_threegpp_domain_pads_two_digit_mnc() -> None:
    inv, _ = load_inventory(ROOT / "inventories" / "province.yaml")
    assert inv.network.threegpp_domain == "ims.mnc001.mcc460.3gppnetwork.org"


def test_several_mistakes_are_all_reported_with_locations() -> None:
    text = MINIMAL.replace("[ims.example.net]", '["ims.exa mple.net"]').replace(
        "transmission: [t1]}", "transmision: [t1]}"
    ).replace("addresses: [192.0.2.2]", "addresses: [300.1.1.1]")
    found = problems_of(text)
    assert any(p.startswith("inv.yaml:5:18: network.home_domains[0]: invalid DNS name") for p in found)
    # a misspelt required field is one problem, at the misspelling, not two
    assert not any("sites[0].transmission: required field" in p for p in found)
    assert any(
        p.startswith("inv.yaml:8:52: sites[0].transmision: unknown field 'transmision'; did you mean "
                     "'transmission'? ('transmission' is required)")
        for p in found
    )
    c = col(text, 14, "300.1.1.1")
    expected = f"inv.yaml:14:{c}: elements[1].addresses[0]: invalid IP address '300.1.1.1'"
    assert any(p.startswith(expected) for p in found)
    assert len(found) == 3


def test_duplicate_ids_name_both_places() -> None:
    found = problems_of(MINIMAL.replace("id: hss-2,", "id: hss-1,"))
    c = col(MINIMAL, 14, "hss-2")
    assert any(
        p.startswith(f"inv.yaml:14:{c}: elements[1].id: duplicate id 'hss-1' (already used by element at line 13)")
        for p in found
    )


def test_dangling_references_suggest_the_close_match() -> None:
    found = problems_of(MINIMAL.replace("members: [hss-1, hss-2]", "members: [hss-1, hsz-2]"))
    c = col(MINIMAL, 17, "hss-2")
    assert found == [
        f"inv.yaml:17:{c}: redundancy.pairs[0].members[1]: unknown element 'hsz-2'; did you mean 'hss-2'?"
    ]
    found = problems_of(MINIMAL.replace("site: site-b", "site: site-q"))
    c = col(MINIMAL, 14, "site-b")
    assert found[0].startswith(f"inv.yaml:14:{c}: elements[1].site: unknown site 'site-q'")


def test_duplicate_yaml_keys_are_refused() -> None:
    found = problems_of(MINIMAL.replace("  name: Test\n", "  name: Test\n  name: Again\n"))
    assert found == ["inv.yaml:4:3: network.name: duplicate key 'name' (first at line 3)"]


def test_tabs_are_explained() -> None:
    found = problems_of(MINIMAL.replace("  name: Test", "\tname: Test"))
    assert "tabs" in found[0]
    assert found[0].startswith("inv.yaml:3:")


@pytest.mark.parametrize(
    ("bad_name", "what"),
    [
        ('"evil.example.net\\n$INCLUDE /etc/passwd"', "invalid DNS name"),
        ('"evil;example.net"', "invalid DNS name"),
        ('"ev\\"il.example.net"', "invalid DNS name"),
        ('"$ORIGIN.example.net"', "invalid DNS name"),
    ],
)
def test_zone_file_injection_in_names_is_refused(bad_name: str, what: str) -> None:
    found = problems_of(MINIMAL.replace("operator_domain: example.net", f"operator_domain: {bad_name}"))
    assert found[0].startswith("inv.yaml:4:20: network.operator_domain: " + what)


@pytest.mark.parametrize("bad_id", ['"../etc"', '"a/b"', '".hidden"', '"UPPER"', '"-x"', '"a\\u0000b"'])
def test_ids_must_be_safe_file_names(bad_id: str) -> None:
    found = problems_of(MINIMAL.replace("{id: hss-2,", f"{{id: {bad_id},").replace("hss-1, hss-2]", "hss-1]"))
    assert any("elements[1].id: invalid id" in p for p in found)


def test_injection_in_free_text_is_refused() -> None:
    found = problems_of(MINIMAL.replace("name: Test", 'name: "Test\\n$ORIGIN evil."'))
    assert found[0].startswith("inv.yaml:3:9: network.name: text")


def test_prefix_with_host_bits_suggests_the_network() -> None:
    found = problems_of(MINIMAL.replace("198.51.100.0/24", "198.51.100.7/24"))
    c = col(MINIMAL, 11, "198.51.100.0/24")
    assert found == [
        f"inv.yaml:11:{c}: local_networks[0].prefixes[0]: invalid prefix '198.51.100.7/24': "
        "host bits set (did you mean 198.51.100.0/24?)"
    ]


def test_python_tags_are_refused() -> None:
    found = problems_of(MINIMAL.replace("name: Test", "name: !!python/object/apply:os.system ['true']"))
    assert "is not allowed" in found[0] and found[0].startswith("inv.yaml:3:9:")


def test_alias_bomb_is_refused_quickly() -> None:
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    prev = "a"
    for name in "bcdefghij":
        bomb += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    found = problems_of(bomb)
    assert "alias bomb" in found[0]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("", "the file is empty"), ("- a\n- b\n", "the document is a list"), ("just text\n", "the document is a str")],
)
def test_empty_and_non_mapping_documents(text: str, fragment: str) -> None:
    assert fragment in problems_of(text)[0]


def test_non_utf8_file_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(MINIMAL.replace("name: Test", "name: Caf\xe9").encode("latin-1"))
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    assert str(info.value.problems[0]).startswith(f"{path}:3:") and "not valid UTF-8" in str(info.value)


def test_merge_keys_work_and_explicit_keys_win() -> None:
    text = MINIMAL.replace(
        "sites:\n",
        "x-site: &site {region: r1, power: [p1], transmission: [t1]}\nsites:\n",
    )
    found = problems_of(text)  # x-site is not a field of the format: a typo-style error, not a crash
    assert "unknown field 'x-site'" in found[0]


def test_yes_no_on_off_are_text_as_in_yaml_1_2() -> None:
    text = MINIMAL + "rules:\n  GEO-004: off\n"
    inv, _ = load_inventory_text(text, "inv.yaml")
    assert inv.rules["GEO-004"].value == "off"
    found = problems_of(MINIMAL.replace("name: Test", "name: true"))
    assert found[0].startswith("inv.yaml:3:9: network.name:") and "boolean" in found[0]


def test_dns_fields_of_issue_13_are_checked() -> None:
    text = MINIMAL.replace(
        "home_sites: [site-a]}", "home_sites: [site-a], resolvers: [198.51.100.53]}"
    ).replace(
        "addresses: [192.0.2.1]}", "addresses: [192.0.2.1], access_addresses: [203.0.113.1]}"
    ) + "  enum_dns: {primaries: [hss-2]}\n"
    found = problems_of(text)
    assert any("access_addresses" in p and "applies to sbc and enum_dns elements only" in p for p in found), found
    assert any("primaries" in p and "is a hss, not an enum_dns" in p for p in found), found
    bad_dir = MINIMAL.replace('country_code: "86"', 'country_code: "86"\n  dns: {secondary_directory: /var/../etc}')
    assert any("secondary_directory" in p and "invalid directory" in p for p in problems_of(bad_dir))
    inv, _ = load_inventory_text(MINIMAL.replace(
        "home_sites: [site-a]}", "home_sites: [site-a], resolvers: [198.51.100.53]}"), "inv.yaml")
    assert inv.local_networks[0].resolvers == ["198.51.100.53"]
    assert inv.network.dns.default_view == "refuse"
    assert inv.network.dns.publish == ["home_domains", "3gpp"]


def test_a_missing_required_field_without_a_misspelling_is_still_reported() -> None:
    found = problems_of(MINIMAL.replace("transmission: [t1]}", "colour: [t1]}"))
    assert any(p.startswith("inv.yaml:8:5: sites[0].transmission: required field 'transmission' is missing")
               for p in found)
    assert any("sites[0].colour: unknown field 'colour' (expected one of" in p for p in found)
