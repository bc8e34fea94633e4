"""One model for PS and fixed access: a P-CSCF whose registered users are all PS (VoLTE) users,
listed only as a backup by fixed-access SBCs, fails with the PS switchover (P-CSCF restoration,
TS 23.380), not the fixed-access refresh; its impact text says how PS users are restored (per
user, at the first terminating request that fails) and never promises the fixed refresh."""

from __future__ import annotations

from typing import Any

import pytest

from imsdr.capacity.timing import access_types, registration_refresh, switchover
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.scenarios.simulate import simulate


def _ps_only(d: dict[str, Any]) -> None:
    """coast becomes PS-only and its SBC prefers pcscf-c-1; the fixed SBCs of hill and lake list
    pcscf-c-1 second (a backup), pcscf-b-2 first."""
    for ln in d["local_networks"]:
        if ln["id"] == "coast":
            ln["access"] = "ps"
    for el in d["elements"]:
        if el["id"] == "sbc-coast":
            el["pcscfs"] = ["pcscf-c-1", "pcscf-b-2"]
        if el["id"] in ("sbc-hill", "sbc-lake"):
            el["pcscfs"] = ["pcscf-b-2", "pcscf-c-1"]


@pytest.fixture
def topo(make_inventory: Any) -> Topology:
    return Topology(*load_inventory(make_inventory(_ps_only)))


def test_a_backup_listing_brings_no_fixed_users(topo: Topology) -> None:
    assert access_types(topo, topo.elements["pcscf-c-1"]) == ("ps",)
    assert access_types(topo, topo.elements["pcscf-b-2"]) == ("fixed",)  # primary of hill and lake (fixed)
    ps = switchover(topo, topo.elements["pcscf-c-1"])
    fixed = switchover(topo, topo.elements["pcscf-b-2"])
    assert {p.name for p in ps.parts} == {"detection", "restoration", "re_registration"}
    assert any("TS 23.380 §5.4" in p.how for p in ps.parts) and ps.seconds < fixed.seconds
    # the fixed-access window (detection + one refresh), for the element that has fixed users
    assert fixed.seconds == 32 + registration_refresh(topo, topo.elements["pcscf-b-2"])


def test_simulate_reports_the_ps_switchover_and_ps_impact_only(topo: Topology) -> None:
    (failed,) = simulate(topo, ["pcscf-c-1"]).failed
    refresh = registration_refresh(topo, topo.elements["pcscf-c-1"])
    assert failed.switchover == switchover(topo, topo.elements["pcscf-c-1"])
    assert failed.switchover.seconds < refresh
    text = " ".join(failed.impact)
    assert "refresh" not in text and f"{refresh} s" not in text
    assert "per user, at the first terminating request that fails" in text and "TS 23.380" in text
    (fixed,) = simulate(topo, ["pcscf-b-2"]).failed
    assert f"(up to the {refresh} s refresh)" in " ".join(fixed.impact)
    assert "per user" not in " ".join(fixed.impact)  # no PS users registered through it


def test_failback_text_separates_fixed_from_ps_and_outbound(topo: Topology) -> None:
    (ps_only,) = simulate(topo, ["pcscf-c-1"]).failed
    back = " ".join(ps_only.failback)
    assert "PS (VoLTE" in back and "keep their flow" in back
    assert "Fixed-access" not in back  # no fixed users to move back


def test_both_access_pcscf_describes_both_failbacks(make_inventory: Any) -> None:
    topo = Topology(*load_inventory(make_inventory()))  # the sample: coast is fixed and PS
    (failed,) = simulate(topo, ["pcscf-b-2"]).failed
    back = " ".join(failed.failback)
    assert "Fixed-access UEs" in back and "PS (VoLTE" in back and "RFC 5626 outbound" in back


def test_capacity_storm_of_the_ps_only_pcscf_arrives_as_ps(topo: Topology) -> None:
    """The registration storm its failure causes (capacity model) is the PS one: every user moved
    arrives within the P-CSCF restoration window the simulation reports, none at the fixed refresh."""
    report = simulate(topo, ["pcscf-c-1"])
    arrivals = report.storm.arrivals
    assert [a.access for a in arrivals] == ["ps"] and arrivals[0].share == 1.0
    assert arrivals[0].within == report.failed[0].switchover.seconds
    assert "P-CSCF restoration" in arrivals[0].reason
