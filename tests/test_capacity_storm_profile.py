"""The registration storm as it arrives: arrival profiles, refresh interval versus expiry, REGISTER
units, background Diameter, registration rate limits, the failback storm, trunk blocking and the
ENUM-outage breakout. Every figure is worked out by hand in the comment above its assert.

The province sample (inventories/province.yaml) grants an 1,800 s expiry, so its UEs refresh every
1,200 s; its SBCs limit registrations to 500/s; HSS and SLF process 20,000 Diameter/s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inventory_factory import PROVINCE, element, local_network, province_data, topology_from_data, write_inventory
from typer.testing import CliRunner

from imsdr.capacity.storm import fluid_drain
from imsdr.capacity.timing import refresh_from_expiry, refresh_interval
from imsdr.cli.app import app


def invoke(*args: Any):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [str(a) for a in args])


def _storm(path: Path | str, failed: str) -> dict[str, Any]:
    result = invoke("simulate", path, "--fail", failed, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["storm"]


def _unlimited(tmp_path: Path) -> Path:
    """The province without its SBCs' registration limits (the design before the limits)."""
    data = province_data()
    for el in data["elements"]:
        el.pop("registration_limit", None)
    return write_inventory(data, tmp_path)


# --- refresh interval versus expiry (TS 24.229 §5.1.1.4.1) ------------------------------------------------


def test_refresh_interval_follows_ts_24229_from_the_expiry(tmp_path: Path) -> None:
    # > 1,200 s: 600 s before expiry (1,800 − 600 = 1,200); ≤ 1,200 s: at half (1,200 / 2 = 600, 1,000 / 2 = 500)
    assert (refresh_from_expiry(1800), refresh_from_expiry(1200), refresh_from_expiry(1000)) == (1200, 600, 500)
    topo = topology_from_data(province_data(), tmp_path)
    refresh = refresh_interval(topo)
    assert (refresh.seconds, refresh.basis) == (1200, "ts24229")
    assert "1800 − 600 = 1200 s from the 1800 s expiry (TS 24.229 §5.1.1.4.1)" in refresh.how
    # the operator's own interval wins over the expiry and says so
    data = province_data()
    data["network"]["timers"]["registration_refresh"] = 900
    (tmp_path / "b").mkdir()
    refresh = refresh_interval(topology_from_data(data, tmp_path / "b"))
    assert (refresh.seconds, refresh.basis) == (900, "operator")


# --- arrival profile, units, background -------------------------------------------------------------------


def test_site_a_storm_peak_sustained_and_units_without_limits(tmp_path: Path) -> None:
    storm = _storm(_unlimited(tmp_path), "site-a")
    assert storm["window_s"] == 1200 and storm["refresh_basis"] == "ts24229"
    # capital 1,200k + river 300k fixed users move; default profile 30 % within 60 s, the rest over 1,200 s:
    # peak = 1,500k × 0.3 / 60 + 1,500k × 0.7 / 1,200 = 7,500 + 875 = 8,375 registrations/s; sustained 875
    assert storm["registrations_per_second"] == 8375 and storm["sustained_registrations_per_second"] == 875
    rows = {e["id"]: e for e in storm["elements"]}
    coast = rows["sbc-coast"]
    # capital's 1,200k at sbc-coast: (1,200k × 0.3 / 60 + 1,200k × 0.7 / 1,200) × 2 REGISTER
    # = (6,000 + 700) × 2 = 13,400 REGISTER/s in the first 60 s, then 700 × 2 = 1,400
    assert (coast["peak_rate"], coast["sustained_rate"], coast["peak_s"]) == (13400, 1400, 60)
    # capacity in REGISTER/s: registrations_per_second 3,000 × 2 REGISTER = 6,000
    assert coast["unit"] == "REGISTER/s" and coast["capacity"] == 6000
    assert coast["capacity_basis"] == "registrations_per_second 3000 × 2 REGISTER"
    # its own 250k coast users + capital's 1,200k refresh once per 1,200 s: 1,450k / 1,200 = 1,208.33;
    # (13,400 + 1,208.33) / 6,000 = 243.47 %: overloaded, and without a limit
    assert coast["background_rate"] == 1208.33 and coast["utilisation"] == 2.4347
    assert coast["verdict"] == "overload" and "sbc-coast" in storm["unlimited"]
    hss = rows["hss-b-1"]
    # background per subscriber: (UAR + SAR) / 1,200 s + 1 BHCA × 0.5 on-net / 3,600 (LIR)
    # 3,000k × (2 / 1,200 + 0.5 / 3,600) = 5,000 + 416.67 = 5,416.67 Diameter/s
    assert hss["unit"] == "Diameter/s" and hss["background_rate"] == 5416.67
    # storm: 1,500k moved × (4 Cx + 1 Sh) × (0.3 / 60 + 0.7 / 1,200) + 750k restored × 1 SAR / 1,200
    # = 7,500k × (0.005 + 0.000583) + 625 = 41,875 + 625 = 42,500 peak; sustained 4,375 + 625 = 5,000
    assert (hss["peak_rate"], hss["sustained_rate"]) == (42500, 5000)


def test_backlog_drain_by_hand() -> None:
    # 1,000 transactions, half within 10 s, the rest over 100 s, served at 40/s:
    # t < 10: 1,000 × 0.5 / 10 + 500 / 100 = 55/s → backlog (55 − 40) × 10 = 150;
    # then 5/s arrive: 150 / (40 − 5) = 4.2857 s more → empty at 14.2857 s; the last arrival at 100 s
    backlog, done = fluid_drain([(1000, 0.5, 10, 100)], 40)
    assert backlog == pytest.approx(10 + 150 / 35) and done == 100
    assert fluid_drain([(1000, 0.5, 10, 100)], 0) == (float("inf"), float("inf"))
    # served at 4/s, slower than even the sustained 5/s: arrivals end at 100 s with
    # 1,000 − 4 × 100 = 600 left → 100 + 600 / 4 = 250 s
    assert fluid_drain([(1000, 0.5, 10, 100)], 4) == (250, 250)


def test_ps_users_arrive_in_the_restoration_window(tmp_path: Path) -> None:
    storm = _storm(_unlimited(tmp_path), "site-b")
    coast = next(a for a in storm["arrivals"] if a["local_network"] == "coast")
    # coast is fixed + PS with HSS-based P-CSCF restoration: OPTIONS 10 s × 3 + 2 s = 32 s detection
    # + 5 s signalling + 2 s registration = 39 s; the faster profile of the two counts (all within 39 s)
    assert (coast["access"], coast["immediate_share"], coast["within_s"]) == ("both", 1.0, 39)
    river = next(e for e in storm["elements"] if e["id"] == "sbc-river")  # coast's DR SBC
    # 250,000 × 2 REGISTER / 39 s = 12,820.51 REGISTER/s (6,410.26 registrations/s)
    assert river["peak_rate"] == 12820.51


def test_own_arrival_profile_of_a_local_network(tmp_path: Path) -> None:
    data = province_data()
    for el in data["elements"]:
        el.pop("registration_limit", None)
    local_network(data, "capital")["registration_arrival"] = {"immediate_share": 0.1, "within": 120}
    storm = _storm(write_inventory(data, tmp_path), "site-a")
    coast = next(e for e in storm["elements"] if e["id"] == "sbc-coast")
    # 1,200k × (0.1 / 120 + 0.9 / 1,200) × 2 = (1,000 + 900) × 2 = 3,800 REGISTER/s, then 900 × 2 = 1,800
    assert (coast["peak_rate"], coast["sustained_rate"], coast["peak_s"]) == (3800, 1800, 120)


def test_register_transactions_capacity_is_its_own_field(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-coast")["capacity"]["register_transactions_per_second"] = 5000
    coast = next(e for e in _storm(write_inventory(data, tmp_path), "site-a")["elements"] if e["id"] == "sbc-coast")
    assert coast["capacity"] == 5000 and coast["capacity_basis"] == "register_transactions_per_second"


# --- overload control -------------------------------------------------------------------------------------


def test_registration_limit_spreads_the_storm_and_the_core_behind_it() -> None:
    storm = _storm(PROVINCE, "site-a")
    rows = {e["id"]: e for e in storm["elements"]}
    coast = rows["sbc-coast"]
    # sbc-coast admits 500 registrations/s = 1,000 REGISTER/s (its spare 6,000 × 85 % − 1,208.33 is more);
    # 2,400k REGISTERs arrive at 13,400/s for 60 s, then 1,400/s to 1,200 s, always above 1,000:
    # backlog (13,400 − 1,000) × 60 + (1,400 − 1,000) × 1,140 = 1,200k, worked off in 1,200 s more,
    # + 30 s Retry-After = 2,430 s
    assert coast["limit"] == 1000 and coast["verdict"] == "limited" and coast["drain_s"] == 2430
    # the P-CSCF behind it: capital's 1,200k come through at most evenly over 2,400k / 1,000 = 2,400 s:
    # 1,200k × 2 / 2,400 = 1,000 REGISTER/s; river through sbc-lake (peak 3,350, sustained 350, limit 1,000)
    # has its 60 s burst spread × (3,350 − 350) / (1,000 − 350) = 4.615: 90k × 2 / 276.9 s = 650, + 350
    # → 1,000 + 650 + 350 = 2,000 REGISTER/s at pcscf-b-2
    assert rows["pcscf-b-2"]["peak_rate"] == 2000 and rows["pcscf-b-2"]["verdict"] == "ok"
    assert storm["verdict"] == "ok" and storm["unlimited"] == []


def test_cap014_flags_an_unlimited_sbc_above_capacity(tmp_path: Path) -> None:
    result = invoke("check", _unlimited(tmp_path), "--format", "json")
    found = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "CAP-014"]
    assert {f["subjects"][0] for f in found} >= {"sbc-coast", "sbc-capital"}
    assert all(f["severity"] == "warning" for f in found) and result.exit_code == 1  # CAP-010 errors too
    clean = json.loads(invoke("check", PROVINCE, "--format", "json").stdout)["findings"]
    assert not [f for f in clean if f["rule"] in ("CAP-010", "CAP-014")]


# --- background Diameter dimension ---------------------------------------------------------------------------


def test_background_diameter_is_a_dimension(tmp_path: Path) -> None:
    from imsdr.capacity import capacity_report

    data = province_data()
    checks = {d.id: d for d in capacity_report(topology_from_data(data, tmp_path)).dimensions
              if d.dimension == "transactions_per_second"}
    # active-standby hss-a-1 serves all 3,000k: 3,000k × (2 / 1,200 + 0.5 / 3,600) = 5,416.67 of 20,000
    assert checks["hss-a-1"].normal == 5416.667 and checks["hss-a-1"].verdict == "ok"
    assert checks["hss-a-1"].per_user == round(2 / 1200 + 0.5 / 3600, 8)
    assert "(2 (UAR + SAR) / 1200 s (ts24229) + 1 BHCA × 0.5 on-net / 3,600 (LIR))" in checks["hss-a-1"].formula


# --- failback storm --------------------------------------------------------------------------------------------


def test_failback_storm_lands_on_the_recovering_elements() -> None:
    back = {f["id"]: f for f in _storm(PROVINCE, "site-a")["failback"]}
    pcscf = back["pcscf-a-1"]
    # its dispatcher sources sbc-capital (1,200k) then sbc-river (300k), 32 s detection + 10 s interval = 42 s
    # apart; each source's users over 1,200 s: both at once in [42, 1,200) → 1,500k × 2 / 1,200 = 2,500
    # REGISTER/s, + refreshes 1,500k / 1,200 = 1,250 → 3,750 / 8,000 = 46.88 %; all back at 42 + 1,200 s
    assert pcscf["sources"] == ["sbc-capital", "sbc-river"] and pcscf["step_s"] == 42
    assert (pcscf["peak_rate"], pcscf["background_rate"], pcscf["utilisation"]) == (2500, 1250, 0.4688)
    assert pcscf["all_back_s"] == 1242 and pcscf["verdict"] == "ok"
    assert set(back) == {"pcscf-a-1", "sbc-capital", "sbc-river"}  # the recovering elements, not survivors


# --- presentation ------------------------------------------------------------------------------------------------


def test_trunk_rows_show_blocking_and_occupancy() -> None:
    from imsdr.capacity.erlang import erlang_b

    sim = json.loads(invoke("simulate", PROVINCE, "--fail", "site-a", "--format", "json").stdout)
    mgcf = next(r for r in sim["loads"] if r["id"] == "mgcf-b-1")
    # 1,800 E on 2,000 circuits: Erlang B = 2.0 × 10⁻⁷; occupancy 1,800 × (1 − B) / 2,000 = 90 %
    assert mgcf["blocking"] == float(f"{erlang_b(1800, 2000):.3g}") and 1.5e-7 < mgcf["blocking"] < 2.5e-7
    assert mgcf["occupancy"] == 0.9
    table = invoke("simulate", PROVINCE, "--fail", "site-a", "--format", "markdown").stdout
    assert "| utilisation | blocking | occupancy | status |" in table
    assert "| mgcf-b-1 | mgcf | 900 | 1,800 | 2,087.68 | 86.2% | 2e-07 | 90% | ok |" in table


def test_enum_outage_breakout_is_a_warning_with_provisioning_sync(tmp_path: Path) -> None:
    found = json.loads(invoke("check", PROVINCE, "--format", "json").stdout)["findings"]
    rules = {f["rule"]: f for f in found}
    assert rules["MGCF-004"]["severity"] == "warning" and "MGCF-003" not in rules
    assert "sync: provisioning pushes to every ENUM/DNS set at once" in rules["MGCF-004"]["message"]
    data = province_data()
    data["redundancy"]["enum_dns"]["sync"] = "master-slave"
    data["redundancy"]["enum_dns"]["primaries"] = ["dns-a-1"]
    found = json.loads(invoke("check", write_inventory(data, tmp_path), "--format", "json").stdout)["findings"]
    rules = {f["rule"]: f for f in found}
    assert rules["MGCF-003"]["severity"] == "info" and "MGCF-004" not in rules


# --- one model --------------------------------------------------------------------------------------------------


def test_capacity_simulate_and_runbook_read_the_same_storm(tmp_path: Path) -> None:
    capacity = json.loads(invoke("capacity", PROVINCE, "--format", "json").stdout)
    row = next(s for s in capacity["storms"] if s["scenario"] == "site:site-a")
    storm = _storm(PROVINCE, "site-a")
    assert (row["registrations_per_second"], row["sustained_registrations_per_second"], row["drain_s"]) == (
        storm["registrations_per_second"], storm["sustained_registrations_per_second"], storm["drain_s"])
    site_a = (Path(__file__).resolve().parent.parent / "docs" / "sample-runbook" / "site-site-a.md").read_text()
    # the committed sample runbook (tests/test_runbook.py keeps it current) shows the same figures
    assert "| pcscf-a-1 | pcscf | 1,500,000 | sbc-capital, sbc-river | 2,500 REGISTER/s |" in site_a
    assert "(peak 8,375\nregistrations/s, then 875/s)" in site_a
