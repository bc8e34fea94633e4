"""Input safety, class by class: every value is matched in full against what its field allows.

Each test drives a whole class of input (every field of a kind, every spelling of a trick), not
one example; tests/test_hostile_fields.py generates hostile text for every string field.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from imsdr.errors import InventoryError
from imsdr.inventory.build import load_inventory_text

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from make_bad import BASE  # noqa: E402  (the corpus' valid base inventory)


def refused(text: str) -> list[str]:
    """The problems reported for ``text`` (the test fails when it is accepted)."""
    with pytest.raises(InventoryError) as info:
        load_inventory_text(text, "inv.yaml")
    return [str(p) for p in info.value.problems]


def test_base_inventory_is_valid() -> None:
    load_inventory_text(BASE, "inv.yaml")


# --- trailing newlines: '$' in a pattern matches before a final '\n' ----------------------------

# one value of each pattern-checked field kind: (text in BASE, replacement with a trailing newline)
TRAILING_NEWLINE = {
    "id": ("{id: site-a,", '{id: "site-a\\n",'),
    "reference id": ("home_sites: [site-a], subscribers", 'home_sites: ["site-a\\n"], subscribers'),
    "dns label": ("sbc_name: sbc", 'sbc_name: "sbc\\n"'),
    "dns name": ("operator_domain: example.net", 'operator_domain: "example.net\\n"'),
    "dns name label": ("fqdn: mgcf-a.ims.example.net", 'fqdn: "mgcf-a\\n.ims.example.net"'),
    "group dns name": ("dns_name: scscf", 'dns_name: "scscf\\n"'),
    "vendor": ("vendor: vendor-z, addresses: [192.0.2.30]", 'vendor: "vendor-z\\n", addresses: [192.0.2.30]'),
    "rule id": ("rule: GEO-001", 'rule: "GEO-001\\n"'),
    "rule id key": ("rules: {TMR-001: warning}", 'rules: {"TMR-001\\n": warning}'),
    "e164 prefix": ('prefix: "+862266"', 'prefix: "+862266\\n"'),
    "e164 first": ('first: "+86105550000"', 'first: "+86105550000\\n"'),
    "mcc": ('mcc: "460"', 'mcc: "460\\n"'),
    "mnc": ('mnc: "01"', 'mnc: "01\\n"'),
    "country code": ('country_code: "86"', 'country_code: "86\\n"'),
    "free text": ("name: Site A", 'name: "Site A\\n"'),
    "directory": ("dns: {sbc_name: sbc,", 'dns: {secondary_directory: "/var/cache/bind\\n", sbc_name: sbc,'),
}


@pytest.mark.parametrize("kind", sorted(TRAILING_NEWLINE))
def test_trailing_newline_is_refused_in_every_pattern_field(kind: str) -> None:
    old, new = TRAILING_NEWLINE[kind]
    assert old in BASE
    problems = refused(BASE.replace(old, new, 1))
    assert any("\\n" in p for p in problems), problems  # the message quotes the value, newline escaped


def test_yaml_block_scalar_id_is_refused() -> None:
    """`id: |` keeps a final newline: the id would be 'site-a\\n' (an empty label in a zone)."""
    text = BASE.replace("sites:\n  - {id: site-a, name: Site A, region: north, power: [grid-a], "
                        "transmission: [ring-a], lat: 39.9, lon: 116.4}\n",
                        "sites:\n  - id: |\n      site-a\n    name: Site A\n    region: north\n"
                        "    power: [grid-a]\n    transmission: [ring-a]\n")
    assert text != BASE
    problems = refused(text)
    assert any("invalid id 'site-a\\n'" in p for p in problems), problems


@pytest.mark.parametrize("suffix", ["\n", "\r\n", "\r", "\x85", "\u2028", "\x00", " "])
def test_dns_lint_refuses_labels_with_line_ends(suffix: str) -> None:
    """The lint that guards every rendered name: no trailing newline slips through its patterns."""
    from imsdr.dns.names import label_problem, name_problems

    assert label_problem("sbc" + suffix) is not None
    assert label_problem("_sip" + suffix) is not None
    assert name_problems(f"sbc{suffix}.ims.example.net")
    assert name_problems(f"sbc.ims.example.net{suffix}")


def test_dns_lint_refuses_services_with_trailing_newline() -> None:
    from imsdr.dns.records import NAPTR

    naptr = NAPTR(10, 10, "s", "SIP+D2U\n", "", "_sip._udp.ims.example.net")
    assert any("services" in p for p in naptr.problems())


@pytest.mark.parametrize("number", ["+861055500\n", "+8610555\n00", "+٨٦١٠"])
def test_resolve_refuses_numbers_beyond_digits(number: str) -> None:
    from imsdr.resolve.enum import EnumError, is_e164, normalise_e164

    assert not is_e164(number)
    with pytest.raises(EnumError):
        normalise_e164(number)


@pytest.mark.parametrize("server", ["127.0.0.1:5³", "[::1]:5³", "127.0.0.1:53\n"])
def test_verify_server_port_is_ascii_digits(server: str) -> None:
    from imsdr.resolve.verify import parse_server

    with pytest.raises(ValueError):
        parse_server(server)


def test_enum_digits_are_ascii() -> None:
    from imsdr.dns.names import enum_digits

    assert enum_digits("5.5.e164.arpa") == "55"
    assert enum_digits("٥.5.e164.arpa") is None


def test_diagnostics_are_one_line_whatever_the_input(tmp_path: Path) -> None:
    """A newline in a file name, a value or a 'did you mean' hint never splits a diagnostic."""
    from imsdr.diagnostics import Location, Problem

    problem = Problem(Location("a\nb.yaml", 1, 2), "sites[0].id", "bad 'x\ny\u2028z'")
    assert str(problem) == "a\\nb.yaml:1:2: sites[0].id: bad 'x\\ny\\u2028z'"
    text = BASE.replace("{id: site-b, name", '{id: "site-b\\n", name')
    for line in refused(text):
        assert "\n" not in line
        assert "did you mean 'site-b\\n'?" in line or "invalid id" in line or "unknown" not in line


def test_missing_file_with_newline_in_its_name_is_one_line(tmp_path: Path) -> None:
    import subprocess

    name = str(tmp_path / "no\nsuch.yaml")
    result = subprocess.run([sys.executable, "-m", "imsdr", "validate", name], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "no\\nsuch.yaml" in result.stderr


# --- IP addresses and prefixes: plain notation only, written from the parsed value --------------

HOSTILE_SUFFIXES = ["%1", "%eth0", '%1; }; view "evil" { match-clients { any; }; }; acl "z" { ::/64',
                    "%x. IN A 192.0.2.66", " ", "\n", ";", "/"]


@pytest.mark.parametrize("suffix", HOSTILE_SUFFIXES)
@pytest.mark.parametrize("field", ["address", "core subnet", "prefix"])
def test_ip_values_beyond_plain_notation_are_refused(field: str, suffix: str) -> None:
    edits = {
        "address": ("addresses: [192.0.2.40]", "addresses: [{!r}]", "fe80::1"),
        "core subnet": ("lat: 39.9, lon: 116.4}", "lat: 39.9, lon: 116.4, core_subnets: [{!r}]}}", "2001:db8:5::/64"),
        "prefix": ('"2001:db8:100::/48"', "{!r}", "2001:db8:100::/48"),
    }
    old, template, good = edits[field]
    value = good + suffix
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    problems = refused(BASE.replace(old, template.replace("{!r}", quoted).replace("}}", "}"), 1))
    assert any("invalid IP" in p for p in problems), problems


@pytest.mark.parametrize(("given", "written"), [
    ("2001:DB8:B::10", "2001:db8:b::10"), ("2001:0db8:000b:0000::0010", "2001:db8:b::10"),
])
def test_model_holds_the_canonical_address(given: str, written: str) -> None:
    inv, _ = load_inventory_text(BASE.replace('"2001:db8:b::10"', f'"{given}"'), "inv.yaml")
    assert written in next(e for e in inv.elements if e.id == "pcscf-b").addresses


def test_model_holds_the_canonical_prefix() -> None:
    inv, _ = load_inventory_text(BASE.replace('"2001:db8:100::/48"', '"2001:DB8:0100:0000::/48"'), "inv.yaml")
    assert "2001:db8:100::/48" in next(ln for ln in inv.local_networks if ln.id == "ln-b").prefixes


def test_named_conf_acls_are_written_from_parsed_prefixes(tmp_path: Path) -> None:
    """Whatever spelling the inventory uses, named.conf carries the canonical prefix."""
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    inventory = tmp_path / "inv.yaml"
    inventory.write_text(BASE.replace('"2001:db8:100::/48"', '"2001:DB8:0100:0000::/48"'))
    result = CliRunner().invoke(app, ["render", "dns", str(inventory), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    confs = [p.read_text() for p in (tmp_path / "out").rglob("*.conf*") if p.is_file()]
    assert confs and any("2001:db8:100::/48;" in c for c in confs)
    assert not any("DB8" in c or "0100:0000" in c for c in confs)


# --- YAML 1.1 leftovers in numbers ----------------------------------------------------------------

@pytest.mark.parametrize(("written", "hint"), [
    ("05060", "write 5060"), ("09", "write 9"), ("1e3", "write 1000"), ("1.5e3", "write 1500"),
    ("1e+3", "write 1000"), ("0x13C4", "write 5060"), ("0o17", "write 15"), ("0b101", "write 5"),
    ("1_000", "write 1000"), ("1:30", "write 90"), ("190:20:30.15", "write 685230.15"), ("-.5", "write -0.5"),
    ("+.5", "write 0.5"), ("+0x1F", "write 31"), ("1_0.5", "write 10.5"), ("00", "write 0"),
])
def test_numbers_read_differently_by_yaml_versions_are_refused(written: str, hint: str) -> None:
    from imsdr.inventory.scalars import number_problem

    problem = number_problem(written)
    assert problem is not None and f"{hint} for a number" in problem and f'"{written}" in quotes' in problem
    problems = refused(BASE.replace("    port: 5060", f"    port: {written}"))
    assert any(hint in p and p.startswith("inv.yaml:35:11: elements[10].port: ") for p in problems), problems


@pytest.mark.parametrize("written", ["5060", "+5", "-5", "0", "-0", ".5", "1.", "0.25", "00.5", "1.0e+3",
                                     "2.5E-3", "2030-01-01", "192.0.2.1", "1.2.3", "-sbc", "+8610555",
                                     "12:60", "5060a", ".inf"])
def test_numbers_both_versions_agree_on_pass(written: str) -> None:
    from imsdr.inventory.scalars import number_problem

    assert number_problem(written) is None


def test_number_check_applies_to_plain_scalars_only() -> None:
    """Quoted, "05060" is text: a text field takes it, a number field says how to write it."""
    from imsdr.inventory.loader import load_yaml_text

    doc = load_yaml_text('a: "05060"\nb: \'1e3\'\nc: |\n  1:30\n', "x.yaml")
    assert doc.data == {"a": "05060", "b": "1e3", "c": "1:30\n"}
    problems = refused(BASE.replace("    port: 5060", '    port: "05060"'))
    assert any("write it without quotes: 5060" in p for p in problems), problems


# --- terminal output: Rich markup in names and DNS answers is text -----------------------------------

MARKUP = "[/x] [bold]b[/bold] [link=http://example.invalid]l[/link] :bomb: [red"


def markup_inventory(tmp_path: Path) -> Path:
    text = (BASE.replace("name: Corpus IMS", f'name: "Corpus {MARKUP} IMS"')
            .replace("name: Site A", 'name: "Site [/] A"')
            .replace("name: Town B", 'name: "Town [/x] B"')
            .replace("reason: Accepted until the new site opens", 'reason: "[/x] Accepted until the new site opens"')
            .replace("rules: {TMR-001: warning}\n", ""))
    path = tmp_path / "markup.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", [
    ["validate"], ["capacity"], ["check"], ["graph"], ["simulate", "--fail", "site-a"], ["scenarios"],
    ["resolve", "sbc.ims.example.net"], ["resolve", "+86105550042"], ["render", "dns"], ["render", "runbook"],
    ["plan"],
])
def test_markup_in_names_is_printed_as_text(command: list[str], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    inventory = markup_inventory(tmp_path)
    args = [*command[:2], str(inventory), *command[2:]] if command[0] == "render" else \
        [command[0], str(inventory), *command[1:]]
    if command[0] in ("render", "plan"):
        args += ["--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1), result.output
    if command[0] in ("validate", "plan"):
        squeezed = "".join(result.stdout.split())  # the table wraps its title; compare without spaces
        assert "".join(f"Corpus {MARKUP} IMS".split()) in squeezed  # the title, exactly as written


def test_markup_in_dns_answers_is_printed_as_text(tmp_path: Path) -> None:
    """A live server answering with '[/x]' in its records: verify reports the drift, verbatim."""
    import dns.flags
    import dns.message
    import dns.rdatatype
    import dns.rrset
    from test_verify_engine import FakeServer
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    class LyingServer(FakeServer):
        def answer(self, wire: bytes, source: str, tcp: bool) -> bytes | None:
            query = dns.message.from_wire(wire)
            q = query.question[0]
            response = dns.message.make_response(query)
            response.flags |= dns.flags.AA
            fake = {dns.rdatatype.SRV: "10 10 5060 x[/x].example.net.",
                    dns.rdatatype.NAPTR: '10 10 "u" "E2U+sip" "!^.*$!sip:[/x]@x!" .',
                    dns.rdatatype.A: "192.0.2.99"}.get(q.rdtype)
            if fake:
                response.answer.append(dns.rrset.from_text(q.name, 60, "IN", q.rdtype, fake))
            return response.to_wire()

    server = LyingServer({}, set(), set())
    try:
        inventory = tmp_path / "inv.yaml"
        inventory.write_text(BASE.replace("rules: {TMR-001: warning}\n", ""))
        result = CliRunner().invoke(app, ["verify", str(inventory), "--server", f"127.0.0.1:{server.port}",
                                          "--timeout", "1", "--retries", "0"], env={"COLUMNS": "300"})
    finally:
        server.close()
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1, result.output
    assert "x[/x].example.net" in result.stdout


# --- runbook Markdown: raw HTML and Mermaid directives from names show as text ------------------------

# Names cannot hold '<', '>', '`', ';' or '$' (the schema refuses them); everything else Markdown
# or Mermaid could read as syntax is here. The file name is not validated: it holds all of it.
HOSTILE_NAMES = {
    "network": '%%{init: {"theme": "dark"}}%% IMS & co',
    "site": "Site A [link](http://example.invalid) ![i](x) *em* __u__ # 1. | x",
    "town": "Town & B %%{init: {'securityLevel': 'loose'}}%% **bold** {{ x }} \"q\" 'a'",
    "reason": "- accepted ~~until~~ the new site opens \\ 100% [^1] :bomb:",
}


def hostile_runbook_inventory(tmp_path: Path, file_name: str) -> Path:
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    text = (BASE.replace("name: Corpus IMS", f"name: {quoted(HOSTILE_NAMES['network'])}")
            .replace("name: Site A", f"name: {quoted(HOSTILE_NAMES['site'])}")
            .replace("name: Town B", f"name: {quoted(HOSTILE_NAMES['town'])}")
            .replace("reason: Accepted until the new site opens", f"reason: {quoted(HOSTILE_NAMES['reason'])}")
            .replace("rules: {TMR-001: warning}\n", ""))
    path = tmp_path / file_name
    path.write_text(text)
    return path


@pytest.mark.parametrize("file_name", [
    "inventory.yaml", "a`b``c <img src=x onerror=alert(1)>.yaml", "%%{init: {'theme':'dark'}}%%.yaml",
    "``.yaml", "line\nbreak.yaml",
])
def test_runbook_shows_hostile_names_and_file_names_as_text(file_name: str, tmp_path: Path) -> None:
    from rendered_checks import runbook_problems
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    inventory = hostile_runbook_inventory(tmp_path, file_name)
    out = tmp_path / "runbook"
    result = CliRunner().invoke(app, ["render", "runbook", str(inventory), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    pages = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.md")}
    assert pages
    texts = [*HOSTILE_NAMES.values(), inventory.name]
    assert runbook_problems(pages, texts) == []


def test_mermaid_labels_encode_every_syntax_character() -> None:
    from imsdr.output.mermaid_check import mermaid_errors
    from imsdr.runbook.diagrams import edge, label

    hostile = '%%{init: {"theme": "dark"}}%% <b>x</b> & "q" #35; [a] (b) {c} |d| `e` ; \\ \n\u2028end'
    text = label(hostile)
    assert "%" not in text and "<" not in text and "\n" not in text and "\u2028" not in text and text.count('"') == 2
    assert "%" not in edge(hostile) and "|" not in edge(hostile)
    assert mermaid_errors(f"flowchart LR\n  a[{text}]\n  b([{text}])\n  a -->|{edge(hostile)}| b\n") == []


@pytest.mark.parametrize("file_name", ["inventory.yaml", "a`b <img src=x onerror=alert(1)>``.yaml"])
def test_every_markdown_writer_shows_hostile_text_as_text(file_name: str, tmp_path: Path) -> None:
    """The DNS README and the Markdown reports of check, capacity and scenarios, like the runbooks."""
    from rendered_checks import runbook_problems
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    inventory = hostile_runbook_inventory(tmp_path, file_name)
    runner = CliRunner()
    pages: dict[str, str] = {}
    result = runner.invoke(app, ["render", "dns", str(inventory), "--out", str(tmp_path / "dns")])
    assert result.exit_code in (0, 1), result.output
    pages["dns/README.md"] = (tmp_path / "dns" / "README.md").read_text()
    for command in (["check"], ["capacity"], ["scenarios"]):
        result = runner.invoke(app, [*command, str(inventory), "--format", "markdown"])
        assert result.exit_code in (0, 1), result.output
        pages[f"{command[0]}.md"] = result.stdout
    assert runbook_problems(pages, [HOSTILE_NAMES["network"], inventory.name]) == []


def test_graph_output_shows_hostile_names_as_text(tmp_path: Path) -> None:
    """`imsdr graph`: Mermaid labels carry no directive or HTML; DOT strings stay one quoted token."""
    from test_topology_export import parse_dot

    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology
    from imsdr.output.mermaid_check import mermaid_errors
    from imsdr.output.topology import to_dot, to_mermaid

    topology = Topology(*load_inventory(hostile_runbook_inventory(tmp_path, "inv.yaml")))
    mermaid = to_mermaid(topology)
    assert "%%" not in mermaid and "<img" not in mermaid and mermaid_errors(mermaid) == []
    assert "Town & B" not in mermaid and "Town #amp; B #37;#37;{init" in mermaid  # shown as written
    dot = parse_dot(to_dot(topology))
    assert any(HOSTILE_NAMES["site"] in str(cluster) for cluster in dot["clusters"].values()), dot["clusters"]


def test_number_check_never_raises() -> None:
    """Any plain scalar made of number characters: a problem or None, never an exception
    ('._' and '-0x_' match YAML 1.1 number patterns yet hold no digit)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from imsdr.inventory.scalars import decimal_spelling, number_problem

    @settings(max_examples=500, deadline=None, database=None)
    @given(st.text("0123456789+-._:xobeEaf", min_size=1, max_size=8))
    def check(text: str) -> None:
        number_problem(text)
        decimal_spelling(text)
        refused(f"version: 1\nnetwork: {{name: {text}}}\n") if text[0] not in "-" else None

    check()
    for text in ("._", "-0x_", "0b_", "+0o", "1:_", "._e+1"):
        assert isinstance(number_problem(text), str | type(None))


def test_text_never_typed_is_text_for_every_reader() -> None:
    """The address shortcut (two dots, or a colon without a digit after it) only ever skips
    scalars that PyYAML's resolver reads as text and neither YAML version reads as a number."""
    import yaml
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from yaml.nodes import ScalarNode

    from imsdr.inventory import scalars
    from imsdr.inventory.loader import plain_reading

    resolver = yaml.resolver.Resolver()
    spelling = st.text("0123456789+-._:xobeEafTtZnNulY ", min_size=1, max_size=14)
    address = st.ip_addresses().map(str)

    @settings(max_examples=1500, deadline=None, database=None)
    @given(st.one_of(spelling, address))
    def check(text: str) -> None:
        if scalars.NEVER_TYPED.search(text):
            assert resolver.resolve(ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"
            assert scalars._yaml11(text) is None and scalars._yaml12(text) is None
            assert plain_reading(text) == "str" and scalars.number_problem(text) is None

    check()
    for typed in ("1:30", "1:30.5", "2001-12-14t21:59:43.10-05:00", "1.5", "0x1F"):
        assert not scalars.NEVER_TYPED.search(typed)


def test_no_python_pattern_relies_on_dollar() -> None:
    """Every Python pattern of imsdr is used with fullmatch: one ending in '$' (which matches before
    a final newline) is the mistake this class of bugs came from. Multi-line patterns over our own
    documents are exempt; JSON Schema and pydantic patterns (ECMA/Rust: '$' is the end) are not
    compiled with re."""
    import ast

    root = Path(__file__).resolve().parent.parent / "imsdr"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("compile", "match", "search", "fullmatch")
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            multiline = "MULTILINE" in ast.unparse(node) or "re.M" in ast.unparse(node)
            if node.args[0].value.endswith("$") and not multiline:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.args[0].value!r}")
    assert found == [], "use fullmatch without '$':\n" + "\n".join(found)
