"""HSS timing per failure mode, promotion and reconnection; one set of figures everywhere:
imsdr.capacity.timing, the simulation, the HSS/SLF runbook page and the drill page."""

from __future__ import annotations

from pathlib import Path

import pytest
from inventory_factory import PROVINCE, province_data, topology_from_data


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from imsdr.plan import write_plan

    out = tmp_path_factory.mktemp("plan") / "out"
    write_plan(PROVINCE, out)
    return out


def test_hss_failover_is_detection_plus_promotion_plus_reconnect(tmp_path: Path) -> None:
    from imsdr.capacity.timing import diameter_failure_modes, failback_time, switchover

    data = province_data()
    topo = topology_from_data(data, tmp_path)
    active = topo.elements["hss-a-1"]
    assert [(p.name, p.seconds) for p in switchover(topo, active).parts] == [
        ("detection", 1), ("promotion", 30), ("reconnect", 32)]  # BFD 3 x 300 ms; Tc 30 s + 2 s jitter
    modes = diameter_failure_modes(topo, active)
    assert modes["host"].seconds == 63
    assert modes["application"].parts[0].seconds == 16 and "hung application" in modes["application"].parts[0].how
    assert failback_time(topo, active).seconds == 62
    # the standby and the active-active SLF need no promotion
    assert [p.name for p in switchover(topo, topo.elements["hss-b-1"]).parts] == ["detection"]
    assert [p.name for p in switchover(topo, topo.elements["slf-a-1"]).parts] == ["detection"]
    # manual promotion: its default, or what the pair says
    pair = next(p for p in data["redundancy"]["pairs"] if p["id"] == "hss-pair")
    pair["promotion"] = "manual"
    pair.pop("promotion_time")  # the sample states 30 s
    topo = topology_from_data(data, tmp_path)
    assert switchover(topo, topo.elements["hss-a-1"]).parts[1].seconds == 900
    next(p for p in data["redundancy"]["pairs"] if p["id"] == "hss-pair")["promotion_time"] = 120
    topo = topology_from_data(data, tmp_path)
    assert switchover(topo, topo.elements["hss-a-1"]).parts[1].seconds == 120


def test_losing_the_standby_reports_redundancy_lost_with_the_restore_target(tmp_path: Path) -> None:
    from imsdr.scenarios.simulate import simulate

    topo = topology_from_data(province_data(), tmp_path)
    standby = simulate(topo, ["hss-b-1"]).failed[0]
    assert any(line.startswith("redundancy lost: hss-a-1 serves alone") and "within 300 s" in line
               for line in standby.impact), standby.impact
    active = simulate(topo, ["hss-a-1"]).failed[0]
    assert active.switchover is not None and active.switchover.seconds == 63
    assert any("a hung application in 16 s" in line for line in active.impact)
    assert any(line.startswith("swap the roles back") and "= 62 s" in line for line in active.failback)


def test_runbook_and_drill_pages_state_the_predicted_figures(plan_dir: Path, tmp_path: Path) -> None:
    from imsdr.capacity.timing import failback_time, switchover

    topo = topology_from_data(province_data(), tmp_path)
    over = switchover(topo, topo.elements["hss-a-1"]).formula()
    back = failback_time(topo, topo.elements["hss-a-1"]).formula()
    hss_page = (plan_dir / "runbooks" / "hss-slf.md").read_text()
    drill = " ".join((plan_dir / "runbooks" / "drill.md").read_text().split())
    assert over in hss_page and back in hss_page
    assert "Start hss-a-1 as **standby**" in hss_page and "--drain <hss>" in hss_page
    assert f"at most 1 min 3 s after hss-a-1 stops ({over})" in drill
    assert f"after the failback swap ({back})" in drill


def test_plan_writes_cdp_and_the_extension_source(plan_dir: Path) -> None:
    diameter = plan_dir / "diameter"
    assert (diameter / "dict_ims_cxsh.c").read_text().startswith("/*\n * dict_ims_cxsh")
    assert (diameter / "cscf-a-1" / "cdp.xml").is_file()
    assert not (diameter / "as-a-1" / "cdp.xml").exists()  # cdp is the CSCF's (Kamailio IMS) stack
