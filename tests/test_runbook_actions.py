"""The Actions sections: what an on-call engineer runs, taken from the same model as the DNS files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from imsdr.dns.drain import drain_changes
from imsdr.dns.plan import build_dns_plan
from imsdr.inventory.schema import Command
from imsdr.plan import analyse, runbook_pages_text

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
TYPE_PAGES = ("sbc.md", "pcscf.md", "cscf.md", "hss-slf.md", "enum-dns.md", "mgcf-imgw.md", "as.md")


@pytest.fixture(scope="module")
def rendered() -> tuple[Any, dict[str, str]]:
    pipe = analyse(PROVINCE)
    return pipe, runbook_pages_text(pipe)


def _between(text: str, start: str, end_pattern: str = r"\n#{2,4} ") -> str:
    rest = text.split(start, 1)[1]
    match = re.search(end_pattern, rest)
    return rest[: match.start()] if match else rest


def _steps(section: str) -> list[str]:
    return re.split(r"\n(?=\*\*Step \d+\. )", section)[1:]


def test_every_element_and_site_page_has_actions(rendered: tuple[Any, dict[str, str]]) -> None:
    pipe, pages = rendered
    for name in (*TYPE_PAGES, *(f"site-{s}.md" for s in pipe.topology.sites)):
        page = pages[name]
        assert "\n## Actions\n" in page, name
        assert "\n### Declare" in page and "\n### Notify" in page, name
        assert "\n#### Drain " in page and "\n#### Before failing back " in page and "\n#### Fail back " in page, name


def test_every_step_has_owner_command_expected_output_go_nogo_and_rollback(rendered: Any) -> None:
    _pipe, pages = rendered
    counted = 0
    for name, page in pages.items():
        for heading in re.findall(r"\n(#### (?:Drain|Fail back) [^\n]+)\n", page):
            for step in _steps(_between(page, heading + "\n")):
                assert re.search(r"Owner: \S", step) and "Run on: " in step, (name, step[:120])
                assert "```sh\n" in step or "Placeholder (vendor CLI" in step, (name, step[:120])
                assert re.search(r"Expected( output|:)", step), (name, step[:120])
                for field in ("- Go: ", "- No-go: ", "- Rollback: "):
                    assert field in step, (name, field, step[:120])
                counted += 1
    assert counted > 100


def test_drain_steps_are_the_drained_state_render_dns_writes(rendered: Any) -> None:
    pipe, pages = rendered
    topo = pipe.topology
    drain = _between(pages["sbc.md"], "#### Drain sbc-capital\n", r"\n#### ")
    changes = drain_changes(topo, ["sbc-capital"])
    assert "imsdr render dns province.yaml --out /etc/imsdr/dns --drain sbc-capital" in drain
    for reload in changes.live_reloads():
        assert f"{reload.element}: {reload.command}" in drain  # printed by the render step
    for element, commands in changes.by_element().items():  # and run by a later step: its script
        if element.startswith("dns-"):
            assert f"\nsh /etc/imsdr/dns/reload/{element}.sh\n" in drain
            assert f"\n{element}: {len(commands)} command(s), every output as expected\n" in drain
        else:
            assert f"\n{commands[0].command}\n" in drain
    assert "imsdr verify province.yaml --drain sbc-capital" in drain  # every answer, every view
    assert drain.count("```sh\ndig @") == 1  # of the manual digs, the one a human sees
    # the expected dig answers after the drain are the drained plan's answers
    drained = build_dns_plan(topo, excluded=["sbc-capital"])
    check = re.search(r"```sh\n(dig @\S+ -b (\S+) (\S+) SRV \+noall \+answer)\n```\n\nExpected output:\n\n"
                      r"```text\n(.*?)```", drain, re.S)
    assert check, drain[-2000:]
    view = drained.view_for_client(check.group(2))
    want = [f"{r.name}. {r.ttl} IN SRV {rd.to_text()}" for r in [drained.lookup_rrset(view, check.group(3), "SRV")]
            if r for rd in r.rdatas]
    assert check.group(4).strip().splitlines() == want
    assert not any("sbc-capital" in line for line in want)


def test_declare_uses_kamailio_state_for_pcscf_and_placeholders_for_vendor_clis(rendered: Any) -> None:
    _pipe, pages = rendered
    declare = _between(pages["pcscf.md"], "\n### Declare\n")
    assert "`kamcmd dispatcher.list \\| grep -F -A1 'URI: sip:192.0.2.10:5060;transport=udp'" in declare
    assert "| pcscf-a-1 | 32 s |" in declare and "FLAGS: IP" in declare  # 10 s × 3 + 2 s
    hss = _between(pages["hss-slf.md"], "\n### Declare\n")
    # observed from two Diameter clients at different sites, never on the failed HSS itself
    assert re.search(r"\| hss-a-1 \| \d+ s \|[^\n]*\| cscf-b-1 \(192.0.2.84\), a peer of hss-a-1 \| "
                     r"placeholder: `VENDOR-Y-CLI show diameter peer hss-a-1`", hss), hss
    assert "| hss-a-1 | 1 s |" in hss and "cscf-a-1 (192.0.2.20), a peer of hss-a-1" in hss
    sbc = _between(pages["sbc.md"], "\n### Declare\n")
    assert "pcscf-b-1 (192.0.2.74), a peer of sbc-capital" in sbc and "sbc-capital (203.0.113.10)" not in sbc
    dns = _between(pages["enum-dns.md"], "\n### Declare\n")
    assert "dig @192.0.2.53 ims.example.net SOA +short +time=2 +tries=1" in dns


def test_notify_names_the_contacts_with_escalation(rendered: Any) -> None:
    _pipe, pages = rendered
    notify = _between(pages["hss-slf.md"], "\n### Notify\n")
    from imsdr.runbook.render import md

    phone = md("+1 555 0103")  # however the Markdown escaping writes it
    assert f"| hss-on-call | Harper Subscriber (fictional) | {phone} | dr-manager (Morgan Decider" in notify
    assert "| core-on-call |" not in notify  # called for SIP elements only (the NOC escalates to them)
    assert "Harper Subscriber" in _between(pages["site-site-a.md"], "\n### Notify everyone\n")


def test_time_budget_against_rto(rendered: Any) -> None:
    _pipe, pages = rendered
    budget = _between(pages["cscf.md"], "\n### cscf-a-1: time budget, drain and failback\n", r"\n#### ")
    assert "RTO **10 min**" in budget and "The automatic switchover is within the RTO." in budget
    site = _between(pages["site-site-a.md"], "\n### Time budget\n")
    assert "| SBC | sbc-capital | 20 min 32 s | 1 h | 0 s | yes |" in site  # 32 s + the 1,200 s refresh
    # 1 s detection + 30 s promotion + 32 s reconnect (Tc)
    assert "| HSS | hss-a-1 | 1 min 3 s | 5 min | 0 s | yes |" in site


def test_failback_has_checklist_canary_and_storm_figures(rendered: Any) -> None:
    _pipe, pages = rendered
    page = pages["pcscf.md"]
    checklist = _between(page, "#### Before failing back pcscf-a-1\n")
    assert "DNS serials equal across servers" in checklist
    assert "dig @192.0.2.117 -b 192.0.2.1 ims.example.net SOA +short" in checklist  # asked from core-site-a
    assert "Capacity headroom" in checklist and "OPTIONS answered" in checklist
    failback = _between(page, "#### Fail back pcscf-a-1\n")
    assert "**Step 2. Canary: load the normal dispatcher list on sbc-capital (one SBC at a time).**" in failback
    assert "Wait 42 s (the OPTIONS detection time plus one probe interval)" in failback  # 32 s + 10 s
    assert "Owner: dns-on-call (Dana Resolver" in failback and "Owner: core-on-call (Casey Core" in failback
    assert "FLAGS: AP" in failback
    # the users of capital + river come back through their two dispatcher sources, 42 s apart, each
    # over one 1,200 s refresh: 1,500k × 2 / 1,200 = 2,500 REGISTER/s while both run, + 1,250 refreshes
    # = 3,750 of 8,000 (46.9 %); everyone back after 42 + 1,200 s (simulate's failback storm)
    assert "Returning load on failback: 1,500,000 users through 2 dispatcher source(s) (sbc-capital, sbc-river), " \
           "loaded one at a time 42 s apart, canary first; each source's users re-register over one refresh " \
           "(20 min): at most 2,500 REGISTER/s (1,250 registrations/s) plus refreshes, 46.9% of 8,000 " \
           "REGISTER/s: enough; everyone is back after 20 min 42 s." in page
    hss = pages["hss-slf.md"]
    assert "data of hss-a-1 resynchronised with hss-pair" in hss and "placeholder (vendor CLI)" in hss


def test_site_drain_skips_the_lost_sites_servers(rendered: Any) -> None:
    _pipe, pages = rendered
    drain = _between(pages["site-site-a.md"], "#### Drain site-a\n", r"\n#### ")
    assert "Load the changed zones on dns-b-1" in drain and "Load the changed zones on dns-a-1" not in drain
    assert "Load the new dispatcher list on sbc-capital" not in drain  # at the lost site


def test_drill_page_lists_what_to_disable_measure_and_pass(rendered: Any) -> None:
    pipe, pages = rendered
    drill = pages["drill.md"]
    for site in pipe.topology.sites:
        section = _between(drill, f"({site})\n", r"\n## ")
        assert f"--drain {site}" in section and "**What to measure.**" in section
        assert "**Pass criteria.**" in section and "**What clients must do.**" in section
    assert "| pcscf-a-1 | 32 s | 20 min 32 s |" in drill
    assert "[DR drill](drill.md)" in pages["README.md"]


def test_contact_names_are_markdown_escaped(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(PROVINCE.read_text())
    data["contacts"][0]["name"] = "Night *Shift* _NOC_ [x](y) | z"
    inventory = tmp_path / "hostile.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    pages = runbook_pages_text(analyse(inventory))
    assert "Night \\*Shift\\* \\_NOC\\_ \\[x\\](y) \\| z" in pages["drill.md"]


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_commands_with_shell_metacharacters_are_refused(text: str) -> None:
    adapter = TypeAdapter(Command)
    allowed = re.fullmatch(r"[A-Za-z0-9_./:=@+,-]+(?: [A-Za-z0-9_./:=@+,-]+)*", text) is not None
    try:
        adapter.validate_python(text)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == allowed, text


def test_unknown_platform_is_a_precise_error(tmp_path: Path) -> None:
    import yaml
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    data = yaml.safe_load(PROVINCE.read_text())
    data["elements"][0]["platform"] = "bnid"
    data["platforms"] = {"lab": {"kind": "bind", "control": "rndc; reboot"}}
    inventory = tmp_path / "bad.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    result = CliRunner().invoke(app, ["validate", str(inventory)])
    assert result.exit_code == 2
    assert "unknown platform 'bnid'" in result.stderr and "did you mean 'bind'?" in result.stderr
    assert "no shell metacharacters" in result.stderr and "Traceback" not in result.output


def test_returning_load_on_failback_is_the_traffic_models_storm(rendered: Any) -> None:
    """A failed S-CSCF's 750,000 users are restored from the HSS (simulate's storm), so that is what
    comes back on failback, not the element's whole load of 825,000 (its I-CSCF share included)."""
    pipe, pages = rendered
    storm = pipe.analyses.element_failures["cscf-a-1"]["storm"]
    assert storm["moved_users"] + storm["restored_users"] == 750_000 and storm["window_s"] == 1200
    failback = _between(pages["cscf.md"], "\n### cscf-a-1: time budget, drain and failback\n", r"\n### ")
    assert "Returning load on failback: 750,000 users; left to the UEs they re-register over one refresh " \
           "(20 min), about 625 registrations/s." in failback


def test_decision_rules_drain_period_pco_and_restoration_answer(rendered: Any) -> None:
    """Per-type decision rules with their reason; the P-CSCF drain waits for its registered users
    (one refresh + TTL) and changes the P-GW's P-CSCF list; with 504-3gpp configured no page says
    502, and the 504 example carries the P-Asserted-Identity a UE checks."""
    _pipe, pages = rendered
    assert "Decision rule for this type: swap the active role only when the active member is down as seen by two " \
           "observers" in pages["hss-slf.md"]
    assert "Why: a fixed-access UE or IAD sends every new request to its first proxy address" in pages["sbc.md"]
    drain = _between(pages["pcscf.md"], "#### Drain pcscf-a-1\n", r"\n#### ")
    # the model's refresh interval (1,200 s, as the simulation and capacity use) + the 60 s TTL
    assert "Wait for the users registered through pcscf-a-1 to move (drain period 1260 s)" in drain
    assert "Repeat every 30 s until the output is as expected, at most 1260 s (the drain period):" in drain
    assert "\nkamcmd stats.get_statistics registered_users\n" in drain and "usrloc:registered_users = 0" in drain
    assert "- Lever (optional, shortens the wait): PS users: P-CSCF restoration (TS 23.380 §5)" in drain
    assert "Take pcscf-a-1 out of the P-CSCF list PGW pgw-coast hands to coast's UEs" in drain
    assert not any("502" in page for name, page in pages.items() if name.endswith(".md"))
    assert "P-Asserted-Identity: <sip:pcscf-a-1.ims.example.net;lr>" in pages["pcscf.md"]
    assert "VoLTE UEs (IPsec security associations to one P-CSCF) and RFC 5626 outbound UEs" in pages["pcscf.md"]


def test_hss_drain_moves_diameter_routes_and_failback_restores_the_active_role(rendered: Any) -> None:
    page = rendered[1]["hss-slf.md"]
    drain = _between(page, "#### Drain hss-a-1\n", r"\n#### ")
    assert "Move the Diameter routes of hss-a-1's clients to its mate" in drain
    back = _between(page, "#### Fail back hss-a-1\n", r"\n#### ")
    assert back.index("Put hss-a-1 back in service") < back.index("Make hss-a-1 the active member of hss-pair again")
    assert "both report active (split brain)" in back
