"""Runbook rendering: clean Markdown, valid Mermaid, content from the model, safe user templates."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from imsdr.errors import RenderError
from imsdr.plan import analyse, runbook_pages_text

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
LAB = ROOT / "inventories" / "lab.yaml"
MERMAID_RE = re.compile(r"```mermaid\n(.*?)```", re.S)
LINK_RE = re.compile(r"\]\(([^)#]+)(#[^)]*)?\)")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def province() -> tuple[object, dict[str, str]]:
    pipe = analyse(PROVINCE)
    return pipe, runbook_pages_text(pipe)


@pytest.fixture(scope="module")
def lab_pages() -> dict[str, str]:
    return runbook_pages_text(analyse(LAB))


def lint(text: str) -> list[str]:
    """pymarkdownlnt with every rule on except line length (tables and commands cannot wrap)."""
    from pymarkdown.api import PyMarkdownApi

    api = PyMarkdownApi().disable_rule_by_identifier("md013")
    # the capacity page folds its formulas under the headroom picture (<details>)
    api.set_string_property("plugins.md033.allowed_elements", "details,summary")
    result = api.scan_string(text)
    return [f"{f.line_number}: {f.rule_id} {f.rule_description} {f.extra_error_information or ''}"
            for f in result.scan_failures + result.pragma_errors]


def test_page_set_covers_types_sites_findings_capacity(province) -> None:
    pipe, pages = province
    topo = pipe.topology
    expected = {"README.md", "sbc.md", "pcscf.md", "cscf.md", "hss-slf.md", "enum-dns.md", "mgcf-imgw.md",
                "as.md", "drill.md", "findings.md", "capacity.md", "capacity-headroom.svg"} | {
                    f"site-{s}.md" for s in topo.sites}
    assert set(pages) == expected


@pytest.mark.parametrize("which", ["province", "lab"])
def test_every_page_passes_the_markdown_linter(which, province, lab_pages) -> None:
    pages = province[1] if which == "province" else lab_pages
    problems = {name: lint(text) for name, text in pages.items() if name.endswith(".md")}
    assert {k: v for k, v in problems.items() if v} == {}


def test_linter_catches_a_broken_page() -> None:
    # guards the lint helper itself: a heading without a blank line after it is reported
    assert lint("# Title\nText right under\n")


@pytest.mark.parametrize("which", ["province", "lab"])
def test_every_mermaid_block_is_valid(which, province, lab_pages) -> None:
    from imsdr.output.mermaid_check import mermaid_blocks, mermaid_errors

    pages = province[1] if which == "province" else lab_pages
    blocks = [(name, line, body) for name, text in pages.items() for line, body in mermaid_blocks(text)]
    assert len(blocks) >= 1 + sum(1 for name in pages if name.startswith("site-") and "No simulation" not in
                                  pages[name])
    for name, line, body in blocks:
        assert mermaid_errors(body, require_declared=True) == [], f"{name}:{line}"


def test_mermaid_validator_rejects_a_broken_diagram() -> None:
    from imsdr.output.mermaid_check import mermaid_errors

    broken = "flowchart LR\n  subgraph a[\"x\"]\n  el_a[\"a\"] --> el_b\n"  # no 'end', el_b undeclared
    assert mermaid_errors(broken, require_declared=True)


def test_internal_links_point_at_rendered_pages(province) -> None:
    _, pages = province
    for name, text in pages.items():
        for target, _anchor in LINK_RE.findall(text):
            if "://" in target:
                continue
            assert target in pages, f"{name} links to missing page {target}"


def test_index_summarises_network_and_lists_every_page(province) -> None:
    pipe, pages = province
    topo = pipe.topology
    index = pages["README.md"]
    assert index.startswith(f"# DR runbook: {topo.network.name}\n")
    for site in topo.sites.values():
        assert f"| {site.id} | {site.name} | {site.region} |" in index
    for ln_id in topo.local_networks:
        answer = " → ".join(e.id for e in topo.sbc_answer(ln_id))
        assert answer in index
    for page in pages:
        if page.endswith(".md"):  # (the capacity page shows its picture)
            assert f"]({page})" in index, page
    assert "check verdict | pass" in index
    assert len(MERMAID_RE.findall(index)) == 1


def test_topology_diagram_has_sites_as_subgraphs_and_redundancy_links(province) -> None:
    pipe, pages = province
    topo = pipe.topology
    diagram = MERMAID_RE.findall(pages["README.md"])[0]
    assert diagram.startswith("flowchart LR\n")
    for site in topo.sites:
        assert f"subgraph site_{site.replace('-', '_')}[" in diagram
    for group in topo.groups.values():  # as `imsdr graph` draws them: a pair's link, a pool's node
        assert (f'|"{group.id} 1+1"|' if group.kind == "pair" else f"pool_{group.id.replace('-', '_')}{{{{") in diagram
    for ln_id, sbc in topo.dr_sbc.items():
        assert f"el_{sbc.id.replace('-', '_')} -.->|\"DR\"| ln_{ln_id.replace('-', '_')}" in diagram


def test_sbc_page_names_each_dr_sbc_from_the_model(province) -> None:
    pipe, pages = province
    topo = pipe.topology
    sbc = pages["sbc.md"]
    for ln_id, backer in topo.dr_sbc.items():
        local = ", ".join(e.id for e in topo.sbcs_of_ln[ln_id])
        assert f"| {ln_id} | {local} | {backer.id} | {backer.site} | yes |" in sbc


def test_detection_times_come_from_configured_timers(province) -> None:
    pipe, pages = province
    timers = pipe.topology.network.timers
    detection = timers.options_interval * timers.options_failure_threshold + timers.options_timeout
    pcscf = pages["pcscf.md"]
    row = (f"| sbc-capital | active | {timers.options_interval} s | {timers.options_failure_threshold} | "
           f"{timers.options_timeout} s | {detection} s |")
    assert row in pcscf
    assert f"| hss-a-1 | {timers.diameter_watchdog} s |" in pages["hss-slf.md"]


def test_verification_answers_are_the_dns_plan_answers(province) -> None:
    pipe, pages = province
    plan = pipe.dns_plan
    checks = pipe.analyses.dns_checks
    assert checks["sbc"] and checks["cscf"] and checks["pcscf"] and checks["enum_dns"]
    for key, items in checks.items():
        for item in items:
            view = next(v for v in plan.views if v.name == item["view"])
            assert plan.view_for_client(item["source"]) == view if item["source"] else True
            rdatas = plan.lookup(view, item["qname"], item["rdtype"])
            assert [line.split(" IN ", 1)[1].split(" ", 1)[1] for line in item["expected"]] == \
                [rd.to_text() for rd in rdatas]
            pages_of = {"hss": "hss-slf.md", "enum_dns": "enum-dns.md", "mgcf": "mgcf-imgw.md"}
            page = pages_of.get(key, f"{key}.md")
            assert item["command"] in pages[page]
            for line in item["expected"]:
                assert line in pages[page]


def test_rendering_twice_is_byte_identical(province) -> None:
    _, pages = province
    again = runbook_pages_text(analyse(PROVINCE))
    assert again == pages


def test_cli_render_runbook_writes_pages(tmp_path: Path) -> None:
    out = tmp_path / "rb"
    result = run("render", "runbook", str(PROVINCE), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "README.md").read_text().startswith("# DR runbook: Example Province IMS")
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    result = run("render", "runbook", str(PROVINCE), "--out", str(out), "--format", "json")
    assert result.returncode == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first


# --- user templates ------------------------------------------------------------------------------

def test_user_template_overrides_by_file_name(tmp_path: Path, province) -> None:
    (tmp_path / "README.md.j2").write_text("# {{ network.name }} custom index\n\n{{ counts.sites }} sites\n")
    pages = runbook_pages_text(province[0], tmp_path)
    assert pages["README.md"] == "# Example Province IMS custom index\n\n3 sites\n"
    assert pages["sbc.md"].startswith("# SBC disaster recovery")  # not overridden: built-in


def test_user_template_undefined_variable_names_template_and_line(tmp_path: Path, province) -> None:
    (tmp_path / "sbc.md.j2").write_text("# SBC\n\nfine line\n{{ network.nmae }}\n")
    (tmp_path / "element-sbc.md.j2").write_text("# SBC\n\nfine line\n\n{{ no_such_variable }}\n")
    with pytest.raises(RenderError) as info:
        runbook_pages_text(province[0], tmp_path)
    message = str(info.value)
    assert "element-sbc.md.j2" in message and ":5:" in message and "line 5" in message
    assert "no_such_variable" in message


def test_cli_undefined_variable_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "rb"
    assert run("render", "runbook", str(PROVINCE), "--out", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "capacity.md.j2").write_text("# Capacity\n\n{{ capacity_appendix.nope }}\n")
    result = run("render", "runbook", str(PROVINCE), "--out", str(out), "--templates", str(templates))
    assert result.returncode == 2
    assert "capacity.md.j2:3" in result.stderr and "nope" in result.stderr
    assert "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rb", "tpl"]  # no staging left behind


@pytest.mark.parametrize("source", [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ network.__class__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{% for x in sites %}{{ x.update({'id': 1}) }}{% endfor %}",
    "{{ lipsum.__globals__['os'].listdir('/') }}",
])
def test_sandbox_refuses_python_internals(tmp_path: Path, source: str, province) -> None:
    (tmp_path / "README.md.j2").write_text(f"# x\n\n{source}\n")
    with pytest.raises(RenderError) as info:
        runbook_pages_text(province[0], tmp_path)
    message = str(info.value)
    assert "README.md.j2" in message
    assert "sandbox" in message or "undefined" in message


def test_user_template_cannot_include_files_outside_the_template_dirs(tmp_path: Path, province) -> None:
    (tmp_path / "README.md.j2").write_text('# x\n\n{% include "../../etc/passwd" %}\n')
    with pytest.raises(RenderError, match="not found"):
        runbook_pages_text(province[0], tmp_path)


def test_template_syntax_error_names_file_and_line(tmp_path: Path, province) -> None:
    (tmp_path / "findings.md.j2").write_text("# F\n\n{% for x in %}\n")
    with pytest.raises(RenderError, match=r"findings\.md\.j2:3: template syntax error"):
        runbook_pages_text(province[0], tmp_path)


def test_missing_templates_dir_is_a_clear_error(tmp_path: Path, province) -> None:
    with pytest.raises(RenderError, match="templates directory not found"):
        runbook_pages_text(province[0], tmp_path / "nope")


def test_builtin_templates_render_in_the_sandbox_too(tmp_path: Path, province) -> None:
    # an override directory with one harmless template switches every page to the sandbox
    (tmp_path / "unused.md.j2").write_text("nothing\n")
    _, pages = province
    assert runbook_pages_text(province[0], tmp_path) == pages


def test_builtin_templates_found_from_checkout() -> None:
    from imsdr.runbook.render import builtin_templates

    names = set(builtin_templates())
    assert {p.name for p in (ROOT / "templates").glob("*.j2")} == names


def test_site_ids_reach_file_names_only_through_safe_join(tmp_path: Path) -> None:
    from imsdr.runbook.render import write_runbook

    with pytest.raises(Exception, match="inside the output directory"):
        write_runbook(tmp_path / "x", {"../evil.md": "x\n"})
    assert not (tmp_path / "evil.md").exists()
    shutil.rmtree(tmp_path / "x", ignore_errors=True)


def test_committed_sample_runbook_is_up_to_date(province) -> None:
    """docs/sample-runbook is what `imsdr render runbook inventories/province.yaml` renders today.
    Regenerate: imsdr render runbook inventories/province.yaml --out docs/sample-runbook"""
    _, pages = province
    sample = ROOT / "docs" / "sample-runbook"
    committed = {p.name: p.read_text(encoding="utf-8")
                 for p in [*sample.glob("*.md"), sample / "capacity-headroom.svg"]}
    stale = sorted(name for name in set(pages) | set(committed) if pages.get(name) != committed.get(name))
    assert not stale, ("docs/sample-runbook is out of date; regenerate with: imsdr render runbook "
                       f"inventories/province.yaml --out docs/sample-runbook ({stale})")


def test_free_text_with_markdown_characters_is_escaped(tmp_path: Path) -> None:
    from inventory_factory import province_data, write_inventory

    from imsdr.output.mermaid_check import mermaid_blocks, mermaid_errors

    data = province_data()
    data["sites"][0]["name"] = 'Capital "DC1" | main*site_#1'
    data["local_networks"][0]["name"] = "Capital [City](x) *big* _town_"
    pages = runbook_pages_text(analyse(write_inventory(data, tmp_path)))
    site = pages["site-site-a.md"]
    assert site.startswith('# Site failure: Capital "DC1" \\| main\\*site\\_\\#1 (site-a)\n')
    assert "Capital \\[City\\](x) \\*big\\* \\_town\\_" in pages["README.md"]
    for name, text in pages.items():
        assert name.endswith(".svg") or lint(text) == [], name
        for line, body in mermaid_blocks(text):
            assert mermaid_errors(body, require_declared=True) == [], f"{name}:{line}"


def test_site_pages_query_a_surviving_dns_server(province) -> None:
    pipe, pages = province
    topo = pipe.topology
    for site_id in topo.sites:
        text = pages[f"site-{site_id}.md"]
        verification = text.split("\n## Verification\n", 1)[1].split("\n## ", 1)[0]
        lost = [ln for ln, sbcs in topo.sbcs_of_ln.items() if any(s.site == site_id for s in sbcs)]
        servers = re.findall(r"dig @(\S+) ", verification)
        assert len(servers) == 2 * len(lost)  # per lost local network: the SRV set and the DR name
        dead = {a for e in topo.by_site[site_id] for a in e.addresses}
        assert servers and not dead & set(servers), site_id
        # the site's drain procedure asks only surviving servers too (the failback, once the site is
        # back, checks every server)
        drain = text.split(f"\n#### Drain {site_id}\n", 1)[1].split("\n#### ", 1)[0]
        asked = set(re.findall(r"dig @(\S+) ", drain))
        assert asked and not dead & asked, site_id


def test_pages_with_many_checks_and_elements_lint_clean(tmp_path: Path) -> None:
    """Two provinces: pages with ten or more verification checks stay valid Markdown."""
    from imsdr.example.national import NationalParams, national_yaml

    inventory = tmp_path / "two-provinces.yaml"
    inventory.write_text(national_yaml(NationalParams(provinces=2, enum_numbers=1000)))
    result = run("render", "runbook", str(inventory), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    pages = sorted((tmp_path / "out").glob("*.md"))
    assert max(page.read_text().count("**Check ") for page in pages) >= 10
    problems = {page.name: lint(page.read_text()) for page in pages}
    assert {name: found for name, found in problems.items() if found} == {}


def test_every_named_sip_group_gets_its_dns_checks_in_every_province(tmp_path: Path) -> None:
    """A pool or pair is published under the home domain of its members (a province's own
    domain at national scale): the runbook asks for that name, so every named SIP group of every
    province has a check, and each asks a name the plan answers."""
    from imsdr.dns.plan import build_dns_plan
    from imsdr.example.national import NationalParams, write_yaml
    from imsdr.runbook.verification import dns_checks

    path = tmp_path / "national3.yaml"
    params = NationalParams(provinces=3, sites_per_province=4, local_networks_per_province=3, seed=7,
                            enum_numbers=0, enum_block_size=1000, wildcard_blocks=True)
    with open(path, "w", encoding="utf-8") as fh:
        write_yaml(params, fh)
    from imsdr.plan import load_topology

    topo = load_topology(path)
    assert len(topo.network.home_domains) == 3  # one home domain per province
    plan = build_dns_plan(topo)
    checks = [c for items in dns_checks(topo, plan).values() for c in items]
    asked = {c["qname"] for c in checks if c["rdtype"] == "SRV"}
    sip_groups = [g for g in topo.groups.values() if g.spec.dns_name
                  and topo.elements[g.members[0]].type.value in ("pcscf", "cscf", "as")]
    assert sip_groups
    for group in sip_groups:
        assert any(f".{group.spec.dns_name}." in q for q in asked), f"{group.id}: no DNS check"
    for check in checks:
        view = next(v for v in plan.views if v.name == check["view"])
        assert plan.lookup(view, check["qname"], check["rdtype"]), check["command"]
