"""The small errors of the first runbooks, each pinned by a test."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from imsdr.plan import analyse, runbook_pages_text

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return runbook_pages_text(analyse(PROVINCE))


def _section(page: str, title: str) -> str:
    return page.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_sbc_failback_502_is_sent_by_the_recovered_primary(pages: dict[str, str]) -> None:
    failback = _section(pages["sbc.md"], "Failback")
    assert "recovered primary SBC. It answers a UE that is not registered on it" in failback
    assert "The DR SBC\nanswers" not in failback and "DR SBC answers" not in failback
    assert "the recovered sbc-capital answers 50" in failback  # the simulated line names the answer


def test_hss_detection_text_agrees_with_two_times_tw(pages: dict[str, str]) -> None:
    detection = _section(pages["hss-slf.md"], "Failure detection")
    assert "within 10 s" not in detection
    assert "**2 × Tw**" in detection and "| hss-a-1 | 8 s | 16 s |" in detection
    # the simulated switchover and the Declare table state the same detection (2 × Tw, or a faster
    # transport detection when one is configured)
    table = _section(pages["hss-slf.md"], "Expected impact and switchover time")
    row = next(line for line in table.splitlines() if line.startswith("| hss-a-1 | "))
    detected = row.split(" | ")[3].split(" detection")[0]
    assert f"| hss-a-1 | {detected} |" in _section(pages["hss-slf.md"], "Actions")


def test_no_dns_ttl_is_added_where_no_record_changes(pages: dict[str, str]) -> None:
    for name in ("sbc.md", "pcscf.md", "cscf.md", "as.md"):
        impact = _section(pages[name], "Expected impact and switchover time")
        assert "dns ttl" not in impact.lower(), name
    assert "32 s detection + 1200 s re-registration = 1232 s" in pages["sbc.md"]  # as simulate says


def test_json_schema_ring_direction_matches_the_model_and_the_docs() -> None:
    from imsdr.plan import load_topology

    schema = json.loads((ROOT / "docs" / "inventory.schema.json").read_text())
    text = json.dumps(schema)
    assert "each backed up by the next" not in text
    match = re.search(r'"ring: ([^"]*)"', text)
    assert match and "the SBC of each backs up the next one" in match.group(1)
    topo = load_topology(PROVINCE)
    order = topo.inventory.redundancy.sbc_dr.order  # type: ignore[union-attr]
    # the model: the SBC of order[i] backs up order[i + 1]; the docs say the same
    for i, ln in enumerate(order):
        backed = order[(i + 1) % len(order)]
        assert topo.dr_sbc[backed] in topo.sbcs_of_ln[ln]
    assert "each local network backs up the next" in (ROOT / "docs" / "inventory.md").read_text()


def test_simulated_failback_line_names_the_recovered_sbc(tmp_path: Any) -> None:
    from imsdr.plan import load_topology
    from imsdr.scenarios.simulate import simulate, simulation_to_dict

    sim = simulation_to_dict(simulate(load_topology(PROVINCE), ["sbc-hill"]))
    (line,) = sim["failed"][0]["failback"]
    assert "the recovered sbc-hill answers 50" in line  # 504 (TS 24.229) or the study's 502
