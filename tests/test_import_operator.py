"""`imsdr import bind` on a hand-written operator configuration (tests/data/operator).

Two name servers (ns1 primary, ns2 secondary), four views named the operator's way
(INTERNAL-DC1/2, ACCESS-NORTH/SOUTH), zone files with $INCLUDE, $ORIGIN, $TTL, relative names,
comments, a CNAME and a TXT record, an ENUM zone with per-number NAPTRs written with the common
rewrite, user=phone, a ported-out number and a wildcard one label below the apex; SBC DR order
10/20 reversed between the access views; SBC core-side names; CSCFs outside every view's match list.
`named-checkconf -z` accepts it: so must the import.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from imsdr.inventory.placeholders import is_placeholder

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = ROOT / "tests" / "data" / "operator"
CONFS = ("named-ns1.conf", "named-ns2.conf")


def imsdr(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def copy_fixture(tmp_path: Path) -> Path:
    tree = tmp_path / "operator"
    shutil.copytree(OPERATOR, tree)
    return tree


def import_tree(tree: Path, *confs: str) -> tuple[dict[str, Any], str]:
    result = imsdr("import", "bind", *(confs or CONFS), "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return yaml.safe_load((tree / "draft.yaml").read_text()), result.stderr


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    tree = copy_fixture(tmp_path_factory.mktemp("operator"))
    doc, stderr = import_tree(tree)
    return tree, doc, stderr


def by_id(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in entries}


def test_bind_accepts_the_fixture(tmp_path: Path) -> None:
    tree = copy_fixture(tmp_path)
    for conf in CONFS:
        result = subprocess.run(["named-checkconf", "-z", conf], cwd=tree, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr


def test_views_are_classified_by_what_they_match_and_serve(imported: tuple[Path, dict[str, Any], str]) -> None:
    _tree, doc, _ = imported
    sites, locals_ = by_id(doc["sites"]), by_id(doc["local_networks"])
    assert set(sites) == {"internal-dc1", "internal-dc2"}
    assert sites["internal-dc1"]["core_subnets"] == ["10.1.0.0/24"]
    assert set(locals_) == {"access-north", "access-south"}
    assert locals_["access-north"]["prefixes"] == ["100.64.0.0/16", "2001:db8:64::/48"]
    assert locals_["access-north"]["resolvers"] == ["172.16.1.53"]


def test_misleading_view_names_change_nothing_but_the_ids(tmp_path: Path) -> None:
    """The core view named like an access view, the access view like a core one: still a site and a local network."""
    tree = copy_fixture(tmp_path)
    for name in CONFS:
        conf = tree / name
        text = conf.read_text().replace('"INTERNAL-DC1"', '"users-dc1"').replace('"ACCESS-NORTH"', '"core-north"')
        conf.write_text(text)
    doc, _ = import_tree(tree)
    assert set(by_id(doc["sites"])) == {"users-dc1", "internal-dc2"}
    assert set(by_id(doc["local_networks"])) == {"core-north", "access-south"}


def test_includes_origins_and_relative_names(imported: tuple[Path, dict[str, Any], str]) -> None:
    _tree, doc, _ = imported
    elements = by_id(doc["elements"])
    # every host of zones/hosts/core.inc ($INCLUDEd), typed by its records or its name
    assert {i: elements[i]["type"] for i in ("hss1", "hss2", "icscf1", "scscf1", "pcscf1", "dns1")} == {
        "hss1": "hss", "hss2": "hss", "icscf1": "cscf", "scscf1": "cscf", "pcscf1": "pcscf", "dns1": "enum_dns"}
    assert elements["hss1"]["addresses"] == ["10.1.0.20"]
    assert elements["hss1"]["site"] == "internal-dc1"  # inside DC1's match list
    assert is_placeholder(elements["icscf1"]["site"])  # outside every match list: not guessed
    assert elements["icscf1"]["roles"] == ["icscf"]
    assert doc["network"]["home_domains"] == ["ims.example.net"]


def test_include_outside_the_tree_is_refused_at_its_line(tmp_path: Path) -> None:
    tree = copy_fixture(tmp_path)
    (tmp_path / "outside.inc").write_text("evil A 192.0.2.1\n")
    zone = tree / "zones" / "db.ims.dc1"
    zone.write_text(zone.read_text().replace("$INCLUDE zones/hosts/core.inc", "$INCLUDE ../outside.inc"))
    result = imsdr("import", "bind", "named-ns1.conf", "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 2
    line = zone.read_text().splitlines().index("$INCLUDE ../outside.inc") + 1
    assert f"zones/db.ims.dc1:{line}:1: $INCLUDE ../outside.inc is outside the configuration's directory tree" \
        in result.stderr
    assert not (tree / "draft.yaml").exists()


def refused_with_included_line(tmp_path: Path, line: str) -> tuple[int, str]:
    """(the line's number in zones/hosts/core.inc, stderr) of the import refused after adding it."""
    tree = copy_fixture(tmp_path)
    inc = tree / "zones" / "hosts" / "core.inc"
    inc.write_text(inc.read_text() + line + "\n")
    result = imsdr("import", "bind", "named-ns1.conf", "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    return len(inc.read_text().splitlines()), result.stderr


def test_include_error_names_the_included_file_and_line(tmp_path: Path) -> None:
    line, stderr = refused_with_included_line(tmp_path, "broken  A  not-an-address")
    assert f"zones/hosts/core.inc:{line}:1: zone does not parse" in stderr


def test_sbc_dr_order_and_core_sides(imported: tuple[Path, dict[str, Any], str]) -> None:
    _tree, doc, stderr = imported
    elements = by_id(doc["elements"])
    assert doc["redundancy"]["sbc_dr"] == {"layout": "ring", "order": ["access-north", "access-south"]}
    assert elements["north1"]["type"] == "sbc" and elements["north1"]["serves"] == ["access-north"]
    assert elements["south1"]["serves"] == ["access-south"]
    assert elements["north1"]["addresses"] == ["198.51.100.10"]
    assert elements["north1"]["core_addresses"] == ["10.1.0.40"]
    assert "north1-core" not in elements and "south1-core" not in elements
    assert "north1-core.sbc.ims.example.net is the core side of SBC north1" in stderr
    assert not any("core_addresses" in el for el in doc["elements"] if el["type"] != "sbc")


def test_enum_entries_outside_the_model_become_exceptions(imported: tuple[Path, dict[str, Any], str]) -> None:
    tree, doc, stderr = imported
    blocks = sorted((b["prefix"], b["style"], b.get("first"), b.get("last")) for b in doc["enum_blocks"])
    assert blocks == [("+447700900", "numbers", "+447700900001", "+447700900006"),
                      ("+4477009009", "wildcard", None, None)]
    rows = (tree / "draft.enum-exceptions.csv").read_text().splitlines()
    assert rows[2:] == ["number,kind,target,params", "+447700900004,uri,,user=phone",
                        "+447700900005,ported,ims.other-operator.example,", "+447700900006,ported-tel,+447700111,"]
    assert "warning: 3 ENUM number(s) answer otherwise than their block" in stderr


def test_unknown_records_are_kept_with_a_warning_per_kind(imported: tuple[Path, dict[str, Any], str]) -> None:
    _tree, doc, stderr = imported
    assert doc["network"]["dns"]["kept_records"] == [
        {"zone": "ims.example.net", "records": [
            'ims.example.net. 3600 IN TXT "v=spf1 -all"',
            "p-cscf.ims.example.net. 3600 IN CNAME pcscf1.ims.example.net."]},
        {"zone": "0.0.9.0.0.7.7.4.4.e164.arpa", "records": [
            '7.0.0.0.0.9.0.0.7.7.4.4.e164.arpa. 3600 IN NAPTR 100 10 "u" "E2U+email:mailto" '
            '"!^.*$!mailto:info@example.net!" .']}]
    assert stderr.count("warning: 1 TXT record(s)") == 1 and stderr.count("warning: 1 CNAME record(s)") == 1
    assert stderr.count("warning: 1 ENUM record(s) imsdr cannot express") == 1


def test_two_servers_tell_the_synchronisation(imported: tuple[Path, dict[str, Any], str]) -> None:
    _tree, doc, _ = imported
    assert doc["redundancy"]["enum_dns"]["primaries"] == ["dns1"]


def fill(doc: dict[str, Any]) -> dict[str, Any]:
    """What a planner writes into the placeholders (any value the format accepts)."""
    sites = [s["id"] for s in doc["sites"]]
    values: dict[str, Any] = {
        "name": "Operator", "region": "region-1", "country_code": "44", "deployment": "lab", "home_sites": sites[:1],
        "subscribers": 1000, "busy_hour_erlangs": 10.0, "site": sites[0], "vendor": "acme", "roles": ["scscf"],
        "mode": "active-standby", "sync": "realtime", "spare": 1, "selection": "dns", "power": ["feed-a"],
        "transmission": ["route-a"], "load_sharing": "regional", "id": "block"}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for key, value in list(items):
            if is_placeholder(value) or (isinstance(value, list) and any(map(is_placeholder, value))):
                if path[-1:] == ("enum_dns",) and key == "sync":
                    node[key] = "master-slave"
                else:
                    node[key] = 100000 if path[-1:] == ("capacity",) else values[key]
            else:
                walk(value, (*path, str(key)))

    walk(doc, ())
    for n, block in enumerate(doc["enum_blocks"]):
        block["id"] = f"block-{n}"
    return doc


def test_the_draft_validates_and_renders_what_it_kept(imported: tuple[Path, dict[str, Any], str],
                                                       tmp_path: Path) -> None:
    tree, doc, _ = imported
    before = imsdr("validate", "draft.yaml", cwd=tree)
    problems = [line for line in before.stdout.splitlines() + before.stderr.splitlines() if "draft.yaml:" in line]
    assert problems and all("placeholder to fill in" in line for line in problems), problems
    filled = tmp_path / "filled.yaml"
    filled.write_text(yaml.safe_dump(fill(doc), sort_keys=False))
    assert imsdr("validate", filled, cwd=tmp_path).returncode == 0
    out = tmp_path / "rendered"
    result = imsdr("render", "dns", filled, "--enum-exceptions", tree / "draft.enum-exceptions.csv", "--out", out,
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    core = next((out / "zones").glob("core*/ims.example.net.zone"))
    text = core.read_text()
    assert 'ims.example.net. 3600 IN TXT "v=spf1 -all"\n' in text
    assert "p-cscf.ims.example.net. 3600 IN CNAME pcscf1.ims.example.net.\n" in text
    for zone, path in (("ims.example.net", core),
                       ("0.0.9.0.0.7.7.4.4.e164.arpa", out / "zones/enum/0.0.9.0.0.7.7.4.4.e164.arpa.zone")):
        check = subprocess.run(["named-checkzone", zone, path], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout
    enum = (out / "zones/enum/0.0.9.0.0.7.7.4.4.e164.arpa.zone").read_text()
    assert '"!^.*$!sip:+447700900004@ims.example.net;user=phone!"' in enum
    assert '"!^.*$!sip:+447700900005@ims.other-operator.example!"' in enum
    assert '"!^.*$!tel:+447700900006;npdi;rn=+447700111!"' in enum
    assert '7.0.0.0.0.9.0.0.7.7.4.4.e164.arpa. 3600 IN NAPTR 100 10 "u" "E2U+email:mailto" ' in enum


def test_a_view_imsdr_cannot_classify_is_reported_and_kept(tmp_path: Path) -> None:
    tree = copy_fixture(tmp_path)
    (tree / "zones" / "db.ims.lab").write_text(
        "$TTL 3600\n@ IN SOA dns1.ims.example.net. hostmaster.example.net. 1 3600 600 1209600 300\n"
        "@ IN NS dns1.ims.example.net.\n")
    conf = tree / "named-ns1.conf"
    conf.write_text(conf.read_text() + 'view "LAB" {\n    match-clients { 192.0.2.0/24; };\n'
                    '    zone "ims.example.net" { type master; file "zones/db.ims.lab"; };\n};\n')
    doc, stderr = import_tree(tree, "named-ns1.conf")
    assert "warning: view 'LAB' (named-ns1.conf:" in stderr
    assert "its home zones have no SIP NAPTR/SRV records; kept as local network 'lab' to confirm" in stderr
    lab = by_id(doc["local_networks"])["lab"]
    assert is_placeholder(lab["name"]) and lab["prefixes"] == ["192.0.2.0/24"]


def test_a_real_contradiction_names_what_says_what_where(tmp_path: Path) -> None:
    """A host named like an SBC listed as the home domain's server in a core view: its name says
    sbc, the view says cscf; the message names both, at the view's line (never a made-up 1:1)."""
    tree = copy_fixture(tmp_path)
    for dc in ("dc1", "dc2"):
        zone = tree / "zones" / f"db.ims.{dc}"
        zone.write_text(zone.read_text().replace("5060 icscf2", "5060 sbc-edge1") + "sbc-edge1 A 10.1.10.99\n")
    result = imsdr("import", "bind", "named-ns1.conf", "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 2, result.stderr
    line = next(n for n, text in enumerate((tree / "named-ns1.conf").read_text().splitlines(), 1)
                if text.startswith('view "INTERNAL-DC1"'))
    assert (f"named-ns1.conf:{line}:1: elements[sbc-edge1].type: its name sbc-edge1.ims.example.net says 'sbc', "
            f"view 'INTERNAL-DC1' (named-ns1.conf:{line}) says 'cscf'") in result.stderr
    assert ":1:1:" not in result.stderr


def test_kamailio_lists_without_duid_match_the_draft(imported: tuple[Path, dict[str, Any], str],
                                                      tmp_path: Path) -> None:
    """No duid=, an FQDN destination, no --hop, no --set: the draft names the destinations (by
    address or FQDN), tells the hop (they are P-CSCFs) and the owner (the list's directory names SBC north1)."""
    tree, _doc, _ = imported
    draft = tmp_path / "draft.yaml"
    shutil.copy(tree / "draft.yaml", draft)
    lst = tmp_path / "north1" / "dispatcher.list"
    lst.parent.mkdir()
    lst.write_text("# hand-made list of sbc north1\n1 sip:10.1.10.31:5060;transport=udp 8 20\n"
                   "1 sip:pcscf2.ims.example.net 8 10\n")
    result = imsdr("import", "kamailio", lst, "--into", draft, "--out", draft, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    elements = by_id(yaml.safe_load(draft.read_text())["elements"])
    assert elements["north1"]["pcscfs"] == ["pcscf1", "pcscf2"]
    assert elements["north1"]["options_probing"] == "active"
    assert len([e for e in elements.values() if e["type"] == "pcscf"]) == 2  # no new elements made up


def test_kamailio_line_without_duid_and_no_element_there(imported: tuple[Path, dict[str, Any], str],
                                                          tmp_path: Path) -> None:
    tree, _doc, _ = imported
    draft = tmp_path / "draft.yaml"
    shutil.copy(tree / "draft.yaml", draft)
    lst = tmp_path / "north1.list"
    lst.write_text("1 sip:10.9.9.9:5060 8 20\n")
    result = imsdr("import", "kamailio", lst, "--hop", "sbc-pcscf", "--into", draft, "--out", draft, cwd=tmp_path)
    assert result.returncode == 2
    assert f"{lst}:1:3: no duid= and no element of the draft at 10.9.9.9: add duid=<element id>" in result.stderr


@pytest.mark.parametrize(("record", "why"), [
    ("ims.example.net. 3600 IN NS dns9.ims.example.net.", "NS records are imsdr's own"),
    ("www.example.org. 3600 IN TXT \"x\"", "the owner is outside zone ims.example.net"),
    ("www.ims.example.net. 3600 IN MX not-a-number mail.example.net.", "www.ims.example.net. 3600 IN MX"),
    ("www 3600 IN TXT \"x\"", "expected 'OWNER. TTL IN TYPE DATA'"),
])
def test_kept_records_are_checked_before_render_writes_them(record: str, why: str, tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "inventories" / "lab.yaml").read_text())
    zone = data["network"]["home_domains"][0]
    data["network"].setdefault("dns", {})["kept_records"] = [{"zone": zone, "records": [record.replace(
        "ims.example.net", zone)]}]
    inventory = tmp_path / "lab.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    result = imsdr("render", "dns", inventory, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{inventory.name}:" in result.stderr and "kept_records[0]" in result.stderr
    assert why.replace("ims.example.net", zone) in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_include_loops_and_links_are_refused(tmp_path: Path) -> None:
    line, stderr = refused_with_included_line(tmp_path, "$INCLUDE zones/hosts/core.inc")
    assert f"zones/hosts/core.inc:{line}:1: $INCLUDE zones/hosts/core.inc includes itself (a loop): not followed" \
        in stderr
    tree = copy_fixture(tmp_path / "link")
    (tree / "zones" / "hosts" / "core.inc").rename(tree / "zones" / "hosts" / "real.inc")
    (tree / "zones" / "hosts" / "core.inc").symlink_to("real.inc")
    result = imsdr("import", "bind", "named-ns1.conf", "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "zones/db.ims.dc1:23:1: $INCLUDE zones/hosts/core.inc: " in result.stderr
    assert "link" in result.stderr


def test_a_bad_enum_record_is_reported_at_its_line(tmp_path: Path) -> None:
    tree = copy_fixture(tmp_path)
    enum = tree / "zones" / "db.enum.447700900"
    enum.write_text(enum.read_text() + "8.0.0   IN NAPTR 100 10 \"u\"\n")
    result = imsdr("import", "bind", "named-ns1.conf", "--out", "draft.yaml", cwd=tree)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"zones/db.enum.447700900:{len(enum.read_text().splitlines())}:1: ENUM zone " in result.stderr


def test_a_peers_view_is_told_apart_from_a_site(tmp_path: Path) -> None:
    """Core data served to single addresses that are none of its hosts (another service area's
    name servers): a peers view, said in a note, not made a site."""
    tree = copy_fixture(tmp_path)
    conf = tree / "named-ns1.conf"
    conf.write_text(conf.read_text() + 'view "FROM-OTHER-REGIONS" {\n    match-clients { 198.18.0.10; 198.18.1.10; };\n'
                    '    zone "ims.example.net" { in-view "INTERNAL-DC1"; };\n};\n')
    doc, stderr = import_tree(tree, "named-ns1.conf")
    assert set(by_id(doc["sites"])) == {"internal-dc1", "internal-dc2"}
    assert "note: view 'FROM-OTHER-REGIONS' (named-ns1.conf:" in stderr and "(a peers view), not a site" in stderr


def test_a_name_server_seen_at_another_address_by_the_access_views(tmp_path: Path) -> None:
    """The access views' glue gives dns1 another address: access_addresses (a field ENUM/DNS
    elements have), never core_addresses (an SBC's only): the draft validates but for placeholders."""
    tree = copy_fixture(tmp_path)
    for region in ("north", "south"):
        zone = tree / "zones" / f"db.ims.{region}"
        zone.write_text(zone.read_text().replace("dns1    IN A    10.1.0.53", "dns1    IN A    172.16.0.53"))
    doc, _ = import_tree(tree)
    dns1 = by_id(doc["elements"])["dns1"]
    assert (dns1["addresses"], dns1["access_addresses"]) == (["10.1.0.53"], ["172.16.0.53"])
    assert "core_addresses" not in dns1
    check = imsdr("validate", "draft.yaml", cwd=tree)
    problems = [line for line in check.stdout.splitlines() + check.stderr.splitlines() if "draft.yaml:" in line]
    assert problems and all("placeholder to fill in" in line for line in problems), problems


def test_a_view_matched_by_a_key_alone_is_classified_by_its_records(tmp_path: Path) -> None:
    tree = copy_fixture(tmp_path)
    conf = tree / "named-ns1.conf"
    conf.write_text(conf.read_text().replace('match-clients { 172.16.2.53; south-ue; };',
                                             'match-clients { key "north-resolvers"; };'))
    doc, _ = import_tree(tree, "named-ns1.conf")
    south = by_id(doc["local_networks"])["access-south"]
    assert is_placeholder(south["prefixes"][0]) and "resolvers" not in south
    assert by_id(doc["elements"])["south1"]["serves"] == ["access-south"]
