"""`imsdr import bind|kamailio|table`: drafts from existing state, round trips, refusals."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from import_fill import fill_from

from imsdr.importers.bind import import_bind
from imsdr.importers.errors import ImportProblems
from imsdr.inventory.placeholders import PREFIX, find_placeholders

ROOT = Path(__file__).resolve().parent.parent
HANDWRITTEN = ROOT / "examples" / "import" / "handwritten"


def imsdr(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def ok(*args: str | Path) -> subprocess.CompletedProcess[str]:
    result = imsdr(*args)
    assert result.returncode == 0, result.stderr
    return result


def refused(*args: str | Path) -> str:
    result = imsdr(*args)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stderr


def same_tree(a: Path, b: Path) -> list[str]:
    """Files that differ or exist on one side only (README.md excepted: it lists notes in
    inventory order, which is not part of DNS)."""
    cmp = filecmp.dircmp(a, b, ignore=["README.md"])
    out = [*cmp.left_only, *cmp.right_only]
    out += [f for f in cmp.common_files if (a / f).read_bytes() != (b / f).read_bytes()]
    for sub in cmp.common_dirs:
        out += [f"{sub}/{f}" for f in same_tree(a / sub, b / sub)]
    return out


@pytest.fixture(scope="module")
def three_provinces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("three") / "three.yaml"
    result = ok("example", "national", "--provinces", "3", "--enum-numbers", "3000", "--enum-block-size", "1000")
    # one set serving every province (the round trip imports one server's configuration; with
    # service areas a server holds its own province only): no areas, no national pair
    doc = yaml.safe_load(result.stdout)
    del doc["network"]["dns"]["areas"]
    doc["elements"] = [e for e in doc["elements"] if not e["id"].startswith("national-")]
    doc["redundancy"]["pairs"] = [p for p in doc["redundancy"]["pairs"] if p["id"] != "national-dns-pair"]
    doc["network"]["dns"]["nameservers"] = [e["id"] for e in doc["elements"] if e["type"] == "enum_dns"][::3]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _roundtrip(inventory: Path, tmp_path: Path) -> None:
    orig = tmp_path / "orig"
    again = tmp_path / "again"
    orig.mkdir()
    again.mkdir()
    shutil.copy(inventory, orig / inventory.name)
    ok("render", "dns", orig / inventory.name, "--out", orig / "dns", "--serial", "7")
    draft = tmp_path / "draft.yaml"
    servers = sorted((orig / "dns" / "named").glob("*.conf"))  # one per name server
    ok("import", "bind", *servers, "--zones-dir", orig / "dns", "--out", draft)
    lists = sorted((orig / "dns" / "kamailio").glob("*/dispatcher.list"))
    ok("import", "kamailio", *lists, "--into", draft, "--out", draft)
    filled = fill_from(yaml.safe_load(draft.read_text()), yaml.safe_load(inventory.read_text()))
    assert not list(find_placeholders(filled))
    (again / inventory.name).write_text(yaml.safe_dump(filled, sort_keys=False))
    ok("render", "dns", again / inventory.name, "--out", again / "dns", "--serial", "7")
    assert same_tree(orig / "dns", again / "dns") == []


@pytest.mark.parametrize("name", ["lab", "province"])
def test_round_trip_of_the_samples_is_byte_identical(name: str, tmp_path: Path) -> None:
    _roundtrip(ROOT / "inventories" / f"{name}.yaml", tmp_path)


def test_round_trip_of_three_provinces_is_byte_identical(three_provinces: Path, tmp_path: Path) -> None:
    _roundtrip(three_provinces, tmp_path)


def test_handwritten_bind_config_is_accepted_by_bind_itself() -> None:
    result = subprocess.run(["named-checkconf", "-z", "named.conf"], cwd=HANDWRITTEN, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_handwritten_config_leaves_exactly_what_dns_cannot_carry(tmp_path: Path) -> None:
    draft = tmp_path / "draft.yaml"
    ok("import", "bind", HANDWRITTEN / "named.conf", "--out", draft)
    doc = yaml.safe_load(draft.read_text())
    asked = {".".join(str(p) for p in path) for path, _ in find_placeholders(doc)}
    per_element = {
        "ns1": ["vendor", "capacity.queries_per_second"], "ns2": ["vendor", "capacity.queries_per_second"],
        "sbc-metro": ["site", "vendor", "capacity.registered_users"],
        "sbc-west": ["site", "vendor", "capacity.registered_users"],
        "icscf1": ["vendor", "capacity.registered_users"], "icscf2": ["vendor", "capacity.registered_users"],
        "scscf-east": ["vendor", "capacity.registered_users"], "scscf-west": ["vendor", "capacity.registered_users"],
        "hss1": ["vendor", "capacity.subscribers"], "hss2": ["vendor", "capacity.subscribers"],
    }
    index = {e["id"]: i for i, e in enumerate(doc["elements"])}
    expected = {"network.name", "network.country_code", "network.deployment", "enum_blocks.0.id",
                "redundancy.pools.0.spare", "redundancy.pools.0.selection",
                # one server's configuration: how the servers synchronise and share load is not in it
                "redundancy.enum_dns.sync", "redundancy.enum_dns.load_sharing"}
    expected |= {f"sites.{i}.{f}" for i in (0, 1) for f in ("name", "region", "power.0", "transmission.0")}
    expected |= {f"local_networks.0.{f}" for f in ("name", "home_sites.0", "subscribers", "busy_hour_erlangs")}
    expected |= {f"elements.{index[e]}.{f}" for e, fields in per_element.items() for f in fields}
    assert asked == expected
    # and what DNS does carry is there, as facts
    by_id = {e["id"]: e for e in doc["elements"]}
    assert doc["network"]["home_domains"] == ["ims.example.com"]
    assert doc["network"]["operator_domain"] == "example.com"
    assert doc["network"]["dns"]["hostmaster"] == "dnsadmin"
    assert by_id["icscf1"]["addresses"] == ["192.0.2.20", "2001:db8:e::20"]
    assert (by_id["icscf1"]["site"], by_id["icscf2"]["site"]) == ("east", "west")
    assert by_id["scscf-east"]["port"] == 5070 and by_id["scscf-east"]["roles"] == ["scscf"]
    assert by_id["hss1"]["type"] == "hss" and by_id["ns2"]["type"] == "enum_dns"
    assert "hss" not in by_id  # a CNAME is an alias, not an element
    assert by_id["sbc-metro"]["serves"] == ["metro"]
    assert doc["redundancy"]["sbc_dr"] == {"layout": "hub", "hub": "sbc-west"}
    assert doc["local_networks"][0]["prefixes"] == ["198.51.100.0/24", "2001:db8:100::/48"]
    assert doc["enum_blocks"][0] | {"id": None} == {
        "id": None, "prefix": "+8620155", "length": 11, "style": "numbers", "domain": "ims.example.com",
        "first": "+86201550000", "last": "+86201550003"}
    # validate lists every placeholder with its line, and nothing else
    result = imsdr("validate", draft)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("error:")]
    assert len(lines) == len(expected)
    assert all(f"{draft}:" in line and "placeholder to fill in" in line for line in lines)


def _write_config(tmp_path: Path, conf: str, zone: str | None = None) -> Path:
    (tmp_path / "named.conf").write_text(conf)
    if zone is not None:
        (tmp_path / "db.zone").write_text(zone)
    return tmp_path / "named.conf"


GOOD_ZONE = ("$ORIGIN ims.example.com.\n$TTL 60\n@ IN SOA ns1 h.example.com. 1 2 3 4 5\n@ IN NS ns1\n"
             "ns1 IN A 192.0.2.1\n")
BAD_CONFIGS = {
    "missing semicolon": ('zone "ims.example.com" { type master; file "db.zone" };\n', GOOD_ZONE, ":1:"),
    "unclosed brace": ('view "v" {\n match-clients { any; };\n', None, ":1:"),
    "unclosed string": ('zone "ims.example.com { type master; };\n', None, ":1:"),
    "stray brace": ('options { };\n};\n', None, ":2:"),
    "zone that does not parse": ('zone "ims.example.com" { type master; file "db.zone"; };\n',
                                 GOOD_ZONE + "broken IN A not-an-address\n", "db.zone:"),
    "missing zone file": ('zone "ims.example.com" { type master; file "nowhere.zone"; };\n', None, ":1:"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_configs_bind_would_reject_are_refused_with_their_location(case: str, tmp_path: Path) -> None:
    conf_text, zone, where = BAD_CONFIGS[case]
    conf = _write_config(tmp_path, conf_text, zone)
    bind = subprocess.run(["named-checkconf", "-z", "named.conf"], cwd=tmp_path, capture_output=True, text=True)
    assert bind.returncode != 0, "the fixture must be a configuration BIND refuses too"
    out = tmp_path / "draft.yaml"
    stderr = refused("import", "bind", conf, "--out", out)
    assert where in stderr
    assert not out.exists()


def test_includes_outside_the_tree_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.conf"
    secret.write_text('acl "x" { 10.0.0.0/8; };\n')
    tree = tmp_path / "conf"
    tree.mkdir()
    (tree / "link.conf").symlink_to(secret)
    for target in ("../secret.conf", str(secret), "link.conf"):
        conf = tree / "named.conf"
        conf.write_text(f'include "{target}";\n')
        stderr = refused("import", "bind", conf, "--out", tmp_path / "d.yaml")
        assert "outside the configuration's directory tree" in stderr, stderr
        assert f"{conf}:1:" in stderr


def test_zone_file_includes_outside_the_tree_are_refused_at_their_line(tmp_path: Path) -> None:
    """A zone's $INCLUDE could pull any readable file into the draft (and its text into error
    messages): one outside the configuration's directory tree is refused where it stands (inside
    it, it is read: tests/test_import_operator.py)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("$TTL 60\nsecret-host IN A 192.0.2.99\n")
    tree = tmp_path / "handwritten"
    shutil.copytree(HANDWRITTEN, tree)
    zone = tree / "zones" / "db.ims.example.com"
    lines = zone.read_text().splitlines(keepends=True)
    lines.insert(2, f"$INCLUDE {outside}\n")
    zone.write_text("".join(lines))
    for kind in ("home", "enum"):
        if kind == "enum":  # the same in an ENUM zone (read by its own streaming reader)
            zone = tree / "zones" / "db.enum.8620155"
            lines = zone.read_text().splitlines(keepends=True)
            lines.insert(2, f"$INCLUDE {outside}\n")
            zone.write_text("".join(lines))
        draft = tmp_path / f"draft-{kind}.yaml"
        stderr = refused("import", "bind", tree / "named.conf", "--out", draft)
        assert f"{zone}:3:" in stderr and "$INCLUDE" in stderr, stderr
        assert "secret-host" not in stderr and not draft.exists()
        zone.write_text("".join(line for line in lines if not line.startswith("$INCLUDE")))


def test_an_existing_file_imsdr_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "notes.yaml"
    mine.write_text("my own notes\n")
    stderr = refused("import", "bind", HANDWRITTEN / "named.conf", "--out", mine)
    assert "was not written by imsdr import" in stderr
    assert mine.read_text() == "my own notes\n"


def test_dispatcher_list_without_imsdr_comments_needs_hop_and_owners(tmp_path: Path) -> None:
    lst = tmp_path / "dispatcher.list"
    lst.write_text("# hand-made\n1 sip:192.0.2.74:5060;transport=udp 8 10 duid=pcscf-b\n"
                   "1 sip:192.0.2.10:5060;transport=udp 8 20 duid=pcscf-a\n"
                   "2 sip:192.0.2.74:5060 0 5 duid=pcscf-b\n")
    out = tmp_path / "draft.yaml"
    assert "--hop" in refused("import", "kamailio", lst, "--out", out)
    stderr = refused("import", "kamailio", lst, "--hop", "sbc-pcscf", "--out", out)
    assert "--set 1=ELEMENT_ID" in stderr and f"{lst}:2:" in stderr
    ok("import", "kamailio", lst, "--hop", "sbc-pcscf", "--set", "1=sbc-x", "--set", "2=sbc-y", "--out", out)
    by_id = {e["id"]: e for e in yaml.safe_load(out.read_text())["elements"]}
    assert by_id["sbc-x"]["pcscfs"] == ["pcscf-a", "pcscf-b"]  # priority 20 (higher) first
    assert by_id["sbc-x"]["options_probing"] == "active"  # flag 8 on its destinations
    assert "options_probing" not in by_id["sbc-y"]  # flag 0: passive or off, the list cannot tell
    assert by_id["pcscf-a"] | {"vendor": None, "site": None} == {
        "id": "pcscf-a", "type": "pcscf", "site": None, "vendor": None, "addresses": ["192.0.2.10"],
        "capacity": {"registered_users": f"{PREFIX}registered users capacity of pcscf-a"}}


TABLE = ("id,type,site,vendor,addresses,roles,registered_users,sessions,pool\n"
         "cscf-a-1,cscf,site-a,vendor-y,192.0.2.20 2001:db8:a::20,icscf scscf,2000000,60000,cscf-pool\n"
         "cscf-b-1,cscf,site-b,vendor-y,192.0.2.84,icscf scscf,2000000,60000,cscf-pool\n")


def test_table_csv_imports_elements_and_groups(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text(TABLE)
    out = tmp_path / "draft.yaml"
    ok("import", "table", table, "--out", out)
    doc = yaml.safe_load(out.read_text())
    assert doc["elements"][0] == {"id": "cscf-a-1", "type": "cscf", "roles": ["icscf", "scscf"], "site": "site-a",
                                  "vendor": "vendor-y", "addresses": ["192.0.2.20", "2001:db8:a::20"],
                                  "capacity": {"registered_users": 2000000, "sessions": 60000}}
    pool = doc["redundancy"]["pools"][0]
    assert pool["id"] == "cscf-pool" and pool["members"] == ["cscf-a-1", "cscf-b-1"]
    assert pool["spare"].startswith(PREFIX)


@pytest.mark.parametrize(("row", "where", "reason"), [
    ("x-1,router,site-a,v,192.0.2.1", ":2:2:", "type"),
    ("x-1,sbc,site-a,v,192.0.2.999", ":2:5:", "invalid IP address"),
    ("X_1,sbc,site-a,v,192.0.2.1", ":2:1:", "invalid id"),
    ("x-1,sbc,site-a,v,fe80::1%eth0", ":2:5:", "invalid IP address"),
    ("x-1,sbc,site-a,v,192.0.2.1,1e3", ":2:6:", "not a whole number"),
])
def test_table_cell_errors_name_file_row_and_column(row: str, where: str, reason: str, tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text("id,type,site,vendor,addresses,registered_users\n" + row + "\n")
    out = tmp_path / "draft.yaml"
    stderr = refused("import", "table", table, "--out", out)
    assert f"{table}{where}" in stderr and reason in stderr, stderr
    assert not out.exists()


def test_table_unknown_column_gets_a_suggestion(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text("id,tpye\nx-1,sbc\n")
    stderr = refused("import", "table", table, "--out", tmp_path / "d.yaml")
    assert f"{table}:1:2:" in stderr and "did you mean 'type'" in stderr


def _workbook(tmp_path: Path, rows: list[list[object]], merge: str | None = None) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    if merge:
        sheet.merge_cells(merge)
    path = tmp_path / "elements.xlsx"
    book.save(path)
    return path


def test_table_xlsx_reads_like_csv(tmp_path: Path) -> None:
    rows = [line.split(",") for line in TABLE.strip().splitlines()]
    rows = [[int(c) if c.isdigit() else c for c in row] for row in rows]
    out = tmp_path / "draft.yaml"
    ok("import", "table", _workbook(tmp_path, rows), "--out", out)
    csv_path = tmp_path / "elements.csv"
    csv_path.write_text(TABLE)
    ok("import", "table", csv_path, "--out", tmp_path / "from-csv.yaml")
    assert yaml.safe_load(out.read_text())["elements"] == yaml.safe_load(
        (tmp_path / "from-csv.yaml").read_text())["elements"]


@pytest.mark.parametrize("case", ["merged header", "formula", "too many rows"])
def test_table_xlsx_refusals(case: str, tmp_path: Path) -> None:
    header = ["id", "type", "site", "vendor", "addresses", "registered_users"]
    if case == "merged header":
        path, where = _workbook(tmp_path, [header, ["x-1", "sbc", "a", "v", "192.0.2.1", 5]], "A1:B1"), ":1:1:"
    elif case == "formula":
        path, where = _workbook(tmp_path, [header, ["x-1", "sbc", "a", "v", "192.0.2.1", "=2*3"]]), ":2:6:"
    else:
        rows = [header] + [[f"x-{i}", "sbc", "a", "v", "192.0.2.1", 5] for i in range(100_000)]
        path, where = _workbook(tmp_path, rows), ":50002:1:"
    out = tmp_path / "draft.yaml"
    stderr = refused("import", "table", path, "--out", out)
    assert f"{path}{where}" in stderr, stderr
    assert not out.exists()


def test_merging_sources_reports_conflicts_instead_of_guessing(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text("id,type,addresses\nicscf1,hss,192.0.2.20\n")
    draft = tmp_path / "draft.yaml"
    ok("import", "bind", HANDWRITTEN / "named.conf", "--out", draft)
    before = draft.read_bytes()
    stderr = refused("import", "table", table, "--into", draft, "--out", draft)
    assert "elements[icscf1].type" in stderr and "'cscf'" in stderr and "'hss'" in stderr
    assert draft.read_bytes() == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*'{};"/*#\n abc.-0123', "include", "acl", "view", "zone", "file", "in-view",
                                 "match-clients", "//", "/*", "*/"]), max_size=80).map("".join))
def test_any_config_text_is_read_or_refused_never_crashes(tmp_path: Path, text: str) -> None:
    conf = tmp_path / "named.conf"
    conf.write_text(text)
    problems = ImportProblems()
    import_bind([conf], problems)
    for problem in problems.problems:
        assert problem.location is not None and problem.location.line >= 1


def test_round_trip_of_master_slave_servers_recovers_the_primaries(tmp_path: Path) -> None:
    """Two servers, one primary: the secondary's zones name it; which sync mode stays a question."""
    data = yaml.safe_load((ROOT / "inventories" / "province.yaml").read_text())
    data["redundancy"]["enum_dns"] = {"sync": "master-slave", "load_sharing": "regional", "primaries": ["dns-a-1"]}
    inventory = tmp_path / "source" / "province.yaml"
    inventory.parent.mkdir()
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    _roundtrip(inventory, tmp_path)
    draft = yaml.safe_load((tmp_path / "draft.yaml").read_text())
    assert draft["redundancy"]["enum_dns"]["primaries"] == ["dns-a-1"]
    assert draft["redundancy"]["enum_dns"]["sync"].startswith(PREFIX + "master-slave or backend-db")


_PRINTABLE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=160)
_DRAFT_VALUES = st.recursive(st.one_of(_PRINTABLE, st.integers(), st.booleans(), st.none()),
                             lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
                                                                     inner, max_size=4)), max_leaves=16)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), _DRAFT_VALUES, min_size=1),
       st.sampled_from(["", "é", "\U0001f600", "\x1f", "\t"]))
def test_drafts_are_written_as_pyyaml_writes_them_whichever_emitter_runs(doc: dict[str, object], odd: str) -> None:
    """libyaml's emitter writes drafts of printable ASCII (a national draft: five times faster);
    the text is PyYAML's either way, and other characters are left to PyYAML's emitter."""
    from imsdr.importers.write import _printable_ascii

    doc = {**doc, "odd": f"vendor {odd}"}
    kwargs = {"sort_keys": False, "allow_unicode": True, "width": 110, "default_flow_style": False}
    pure = yaml.dump(doc, Dumper=yaml.SafeDumper, **kwargs)
    if _printable_ascii(doc):
        assert yaml.dump(doc, Dumper=yaml.CSafeDumper, **kwargs) == pure
    else:
        assert odd != ""
