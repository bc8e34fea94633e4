"""Master-slave promotion in the drained state: which server becomes primary, what is written, in
which order the page runs it (offline; tests/test_dns_promotion.py runs it on two real named)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from imsdr.dns.drain import drained_state
from imsdr.dns.render import render_dns
from imsdr.dns.views import server_layout
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology


def _master_slave(make_inventory: Any, **design: Any) -> tuple[Path, Topology]:
    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["enum_dns"] = {"sync": "master-slave", "primaries": ["dns-a-1"], "load_sharing": "regional",
                                       **design}

    path = make_inventory(mutate)
    return path, Topology(*load_inventory(path))


def test_layout_promotes_the_survivor_only_when_every_primary_is_drained(make_inventory: Any) -> None:
    _, topo = _master_slave(make_inventory)
    normal = server_layout(topo)
    assert [s.id for s in normal.primaries] == ["dns-a-1"] and not normal.promoted
    for drained in ({"dns-a-1"}, {"dns-a-1", "pcscf-a-1"}):
        layout = server_layout(topo, frozenset(drained))
        assert layout.promoted == ("dns-b-1",)
        assert {s.id: s.role for s in layout.servers} == {"dns-a-1": "secondary", "dns-b-1": "primary"}
        assert any("dns-b-1 promoted to primary" in n for n in layout.notes)
    assert server_layout(topo, frozenset({"dns-b-1"})) == normal  # a secondary drained: nothing to promote
    province = Topology(*load_inventory(Path(__file__).resolve().parent.parent / "inventories" / "province.yaml"))
    assert server_layout(province, frozenset({"dns-a-1"})).promoted == ()  # provisioning: every server primary


def test_drained_render_makes_the_survivor_primary_and_the_old_primary_its_secondary(
        make_inventory: Any, tmp_path: Path) -> None:
    path, topo = _master_slave(make_inventory)
    out = tmp_path / "dns"
    render_dns(topo, out, path.name)
    before = {p.name: re.search(r"IN SOA\s+\S+ \S+ (\d+) ", p.read_text()).group(1)
              for p in out.glob("zones/core-site-a/*.zone")}
    report = render_dns(topo, out, path.name, drain=("site-a",))
    assert report.drain is not None and report.drain.promoted == ("dns-b-1",)
    assert report.drain.demoted == ("dns-a-1",)
    conf_b, conf_a = (out / "named/dns-b-1.conf").read_text(), (out / "named/dns-a-1.conf").read_text()
    # 26 zone instances (12 keyed views: 6 users, 3 sbc, 3 core) and one catalog per view
    assert conf_b.count("type primary") == 26 + 12 and "type secondary" not in conf_b
    assert conf_b.count('.catalog.invalid" {') == 12
    assert "type primary" not in conf_a and 'primaries { 192.0.2.117 key "imsdr-core-site-a"; }' in conf_a
    after = {p.name: re.search(r"IN SOA\s+\S+ \S+ (\d+) ", p.read_text()).group(1)
             for p in out.glob("zones/core-site-a/*.zone")}
    assert all(int(after[z]) > int(before[z]) for z in before)  # the NS of dns-a-1 left them: upward
    note = (out / "DRAIN.md").read_text()
    assert "## Promotion" in note and "dns-b-1 is promoted" in note
    assert note.index("1. dns-b-1 (192.0.2.117): `sh reload/dns-b-1.sh` (2 command(s): full reload)") > 0
    promote = (out / "reload/dns-b-1.sh").read_text()
    assert re.findall(r"out=\$\((.*?) 2>&1\)", promote) == ["rndc reconfig", "rndc reload"]
    rejoin = re.findall(r"out=\$\((.*?) 2>&1\)", (out / "reload/dns-a-1.sh").read_text())
    # back as a catalog consumer it holds every view's copy as its own zone (no in-view): each
    # once, the 26 zone files and the 10 copies the primary shares with in-view (its catalogs do
    # not change in a drain: their copies stay valid)
    shared = conf_b.count("in-view")
    assert shared == 10
    assert len(rejoin) == len(set(rejoin)) == conf_b.count("type primary") - 12 + shared == 36
    assert all(c.startswith("rndc retransfer ") for c in rejoin)
    assert {f"rndc retransfer 6.8.e164.arpa IN core-site-{s}" for s in "abc"} <= set(rejoin)
    assert "`sh reload/dns-a-1.sh` (36 zone transfer(s))" in note
    # a member its catalogs have not created yet answers "not found": retried, bounded
    assert (out / "reload/dns-a-1.sh").read_text().count("*'not found'*) [ \"$n\" -lt 30 ]") == 36
    assert "dns-a-1" in note[note.index("Down (drained themselves), skipped: "):].split(". They", 1)[0]

    back = render_dns(topo, out, path.name)  # the failback: the normal state over the drained directory
    assert back.failback is not None
    order = [(r.element, r.command.split(" ", 2)[1]) for r in back.failback.reloads if r.element.startswith("dns-")]
    assert order[:3] == [("dns-a-1", "reconfig"), ("dns-a-1", "reload"), ("dns-b-1", "reconfig")]
    assert {c for e, c in order[3:]} == {"retransfer"} and all(e == "dns-b-1" for e, _ in order[3:])
    assert len(order[3:]) == 36  # stepped down, a catalog consumer again: every view's copy
    assert "type primary" in (out / "named/dns-a-1.conf").read_text()
    assert "type primary" not in (out / "named/dns-b-1.conf").read_text()


def test_render_cli_says_who_is_promoted(make_inventory: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    path, _ = _master_slave(make_inventory)
    out = tmp_path / "dns"
    assert CliRunner().invoke(app, ["render", "dns", str(path), "--out", str(out)]).exit_code == 0
    result = CliRunner().invoke(app, ["render", "dns", str(path), "--out", str(out), "--drain", "dns-a-1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-2:] == ["dns-b-1: rndc reconfig", "dns-b-1: rndc reload"]
    assert "skipped (drained, down): dns-a-1" in result.stderr
    assert "promoted to primary (every primary is drained): dns-b-1; dns-a-1 comes back as its secondary first" \
        in result.stderr


def test_state_and_json_name_the_promotion(make_inventory: Any) -> None:
    _, topo = _master_slave(make_inventory)
    state = drained_state(topo, ["dns-a-1"])
    assert state.promoted == ("dns-b-1",)
    data = state.changes.to_dict()
    assert data["promoted"] == ["dns-b-1"] and data["demoted"] == ["dns-a-1"]
    assert [r["command"] for r in data["reload"]] == ["rndc reconfig", "rndc reload"]
    assert drained_state(topo, ["dns-b-1"]).promoted == ()


def _steps(section: str) -> list[str]:
    return re.findall(r"^\*\*Step \d+\. (.*?)\.\*\*", section, re.M)


@pytest.mark.parametrize("page, drain, subject", [("enum-dns.md", "dns-a-1", "dns-a-1"),
                                                  ("site-site-a.md", "site-a", "site-a")])
def test_page_promotes_first_and_fails_back_as_secondary_first(make_inventory: Any, tmp_path: Path, page: str,
                                                               drain: str, subject: str) -> None:
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    path, _ = _master_slave(make_inventory, provisioning_window=2700)
    result = CliRunner().invoke(app, ["render", "runbook", str(path), "--out", str(tmp_path / "rb")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "rb" / page).read_text()
    drain_part = text[text.index(f"#### Drain {subject}\n"):text.index(f"#### Before failing back {subject}\n")]
    back_part = text[text.index(f"#### Fail back {subject}\n"):]
    steps = _steps(drain_part)
    assert steps[1:3] == ["Promote dns-b-1 to primary (every primary is drained)",
                          "Check dns-b-1 holds the zones as primary"]
    flat = " ".join(drain_part.split())
    assert "provisioning window, **45 min**" in flat and "not the SOA expire (336 h)" in flat
    assert "Decide at the provisioning window (2700 s" in flat
    assert "rndc zonestatus ims.example.net in core-site-a" in drain_part and "type: primary" in drain_part
    back = _steps(back_part)
    assert back[:3] == ["Start dns-a-1 as a secondary of dns-b-1", "Check dns-a-1 came back as a secondary of dns-b-1",
                        f"Render the normal state (fail back {'dns-a-1' if drain == 'dns-a-1' else 'site site-a'})"]
    assert f"imsdr verify {path.name} --drain {drain} --server 192.0.2.53" in back_part
    assert back.index("Return the primary role to dns-a-1") < back.index("dns-b-1 steps down to secondary")
    assert "asking dns-a-1" not in drain_part  # the drained server is never the one a check asks
    if page == "enum-dns.md":  # the type's decision rule, with its reason
        assert "promote a surviving secondary if no primary is back within the provisioning window" in \
            " ".join(text.split())


def test_with_service_areas_only_the_area_that_lost_its_primary_promotes(tmp_path: Path) -> None:
    import yaml

    from imsdr.example.national import NationalParams, generate_national

    data = generate_national(NationalParams(provinces=2, sites_per_province=2, local_networks_per_province=2,
                                            seed=3, enum_numbers=2000, enum_block_size=1000))
    data["redundancy"]["enum_dns"]["sync"] = "master-slave"
    path = tmp_path / "national.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    topo = Topology(*load_inventory(path))
    state = drained_state(topo, ["beijing-dns-01"])
    assert state.promoted == ("beijing-dns-02",) and state.changes.demoted == ("beijing-dns-01",)
    roles = {s.id: s.role for s in server_layout(topo, frozenset(state.drained)).servers}
    assert roles == {"national-dns-01": "primary", "national-dns-02": "secondary", "beijing-dns-01": "secondary",
                     "beijing-dns-02": "primary", "tianjin-dns-01": "primary", "tianjin-dns-02": "secondary"}
    assert drained_state(topo, ["beijing-dns-02"]).promoted == ()  # its secondary: nothing to promote
