"""The capacity report on the sample and on under-sized variants, and the CAP rules it drives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inventory_factory import (
    element,
    group,
    lab_data,
    line_of,
    load_from_data,
    province_data,
    topology_from_data,
)

from imsdr.capacity import capacity_report, capacity_to_dict
from imsdr.capacity.report import CapacityReport
from imsdr.model.topology import Topology
from imsdr.rules.base import RuleContext
from imsdr.rules.capacity_rules import RULES


def _report(data: dict[str, Any], tmp_path: Path) -> CapacityReport:
    return capacity_report(topology_from_data(data, tmp_path))


def _findings(data: dict[str, Any], tmp_path: Path) -> list[Any]:
    inv, source = load_from_data(data, tmp_path)
    ctx = RuleContext(Topology(inv, source))
    return [f for rule in RULES for f in rule.check(rule, ctx)]


def _ids(findings: list[Any]) -> set[str]:
    return {f.rule_id for f in findings}


def test_province_passes_with_the_numbers_laid_out(tmp_path: Path) -> None:
    report = _report(province_data(), tmp_path)
    assert report.verdict == "ok" and report.failures() == []
    (pool,) = report.pools
    assert pool.id == "cscf-pool" and pool.load == 3_300_000  # 3,000k users × 1.10 restoration factor
    # N=4, K=2 (two per region): s = 825k, spare s×K/(N−K) = 825k, headroom 2,000k − 825k
    assert "spare needed = s×K/(N−K) = 825,000×2/(4−2) = 825,000" in pool.formula
    assert pool.headroom == 1_175_000
    # the same verdict from the load model: losing two members puts a survivor at 3,300k/4,000k
    assert pool.formula[-1].endswith("at 82.5% (limit 85%) → ok")
    (hss,) = report.hss
    assert hss.required == 4_840_000 and hss.ratio == 0.8067  # (3,000k × 1.08 + 2,000k × 0.8) / 6,000k
    assert "= 3,000,000 × 1.08 + 2,000,000 × (1.8 − 1) = 4,840,000" in hss.formula
    (cscf,) = report.cscf
    assert cscf.factor == 1.1
    mgcf = next(t for t in report.trunks if t.id == "mgcf-pool")
    assert mgcf.total_needed == 1829  # Erlang B: 1,800 E at 1%
    assert [(m.erlangs, m.needed) for m in mgcf.normal] == [(900, 929), (900, 929)]
    assert mgcf.after_site and mgcf.after_site[0].needed == 1727  # 1,800 E at the failure GoS 5%
    hill = next(t for t in report.takeovers if t.failed == "sbc-hill")
    assert hill.takers[0][:2] == ("sbc-harbour", 1_000_000)  # the ring's DR SBC: 600k + 400k
    assert hill.takers[0][3] == 0.8333  # of 1,200k
    assert {(s.site, s.element_type) for s in report.sites} >= {("site-a", "hss"), ("site-c", "sbc")}


def test_worked_example_inventory_needs_exactly_148_percent(tmp_path: Path) -> None:
    data = province_data()
    # 1,000k subscribers, HSS 1,000k per side, S-CSCFs of 500k with restoration data
    for ln in data["local_networks"]:
        ln["subscribers"] = 0
    data["local_networks"][0]["subscribers"] = 1_000_000
    for hss_id in ("hss-a-1", "hss-b-1"):
        element(data, hss_id)["capacity"] = {"subscribers": 1_000_000}
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"):
        element(data, cscf_id)["capacity"]["registered_users"] = 500_000
    (hss,) = _report(data, tmp_path).hss
    assert hss.required == 1_480_000 and hss.ratio == 1.48 and hss.verdict == "fail"
    assert hss.largest_scscf_users == 500_000


def test_hss_too_small_is_cap_003_at_its_capacity(tmp_path: Path) -> None:
    data = province_data()
    for hss_id in ("hss-a-1", "hss-b-1"):
        element(data, hss_id)["capacity"] = {"subscribers": 4_000_000, "transactions_per_second": 20000}
    findings = _findings(data, tmp_path)
    # the real S-CSCF moves of a site/region loss push the surviving HSS over the limit too
    assert "CAP-003" in _ids(findings) and _ids(findings) <= {"CAP-003", "CAP-006", "CAP-009"}
    (f,) = [f for f in findings if f.rule_id == "CAP-003"]
    assert "4,840,000" in f.message and "121%" in f.message
    assert "subscribers: 4000000" in line_of(tmp_path / "inventory.yaml", f.location.line)


def test_scscf_pool_without_spare_is_cap_001(tmp_path: Path) -> None:
    data = province_data()
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"):
        element(data, cscf_id)["capacity"]["registered_users"] = 1_200_000
    report = _report(data, tmp_path)
    (pool,) = report.pools
    # s = 825k, spare needed 825k × 2 / 2 = 825k, headroom 1,200k − 825k = 375k
    assert pool.verdict == "fail" and pool.spare_needed == 825_000 and pool.headroom == 375_000
    ids = _ids(_findings(data, tmp_path))
    assert "CAP-001" in ids
    assert "CAP-003" not in ids  # a smaller S-CSCF moves fewer users: the HSS gets easier


def test_pool_with_a_second_spare_needs_more(tmp_path: Path) -> None:
    data = province_data()
    group(data, "cscf-pool")["spare"] = 3  # 3,300k on one 2,000k survivor
    (pool,) = _report(data, tmp_path).pools
    assert pool.verdict == "fail" and pool.spare_needed == 2_475_000  # 825k × 3 / (4 − 3)


def test_one_site_carrying_everything_is_cap_006_per_type(tmp_path: Path) -> None:
    data = province_data()
    for el in data["elements"]:
        el["site"] = "site-a"
    findings = _findings(data, tmp_path)
    site_a = [f for f in findings if f.rule_id == "CAP-006"]
    types = {f.message.split(":")[0] for f in site_a}
    assert types == {"sbc", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw"}
    assert all(f.subjects == ("site-a",) for f in site_a)
    assert "leaves no hss" in next(f.message for f in site_a if f.message.startswith("hss"))


def test_trunks_short_after_a_site_loss_is_cap_004(tmp_path: Path) -> None:
    data = province_data()
    for el_id in ("mgcf-a-1", "mgcf-b-1"):
        element(data, el_id)["capacity"] = {"circuits": 1000}
    report = _report(data, tmp_path)
    mgcf = next(t for t in report.trunks if t.id == "mgcf-pool")
    assert all(m.ok for m in mgcf.normal)  # 900 E needs 929 of 1,000
    # after the loss the survivor is held to the failure grade of service (5%): 1,727 circuits
    assert mgcf.verdict == "fail" and mgcf.after_site[0].needed == 1727
    assert "(GoS 5%)" in mgcf.formula[-1]
    assert any(f.rule_id == "CAP-004" and "mgcf-pool" in f.message for f in _findings(data, tmp_path))


def test_grade_of_service_is_overridable_per_pool(tmp_path: Path) -> None:
    data = province_data()
    group(data, "mgcf-pool")["grade_of_service"] = 0.001
    mgcf = next(t for t in _report(data, tmp_path).trunks if t.id == "mgcf-pool")
    assert mgcf.grade_of_service == 0.001 and mgcf.total_needed > 1829


def test_dr_sbc_too_small_is_cap_005(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-harbour")["capacity"]["registered_users"] = 900_000  # hill's 400k + own 600k
    findings = [f for f in _findings(data, tmp_path) if f.rule_id == "CAP-005"]
    assert [f.subjects[0] for f in findings] == ["sbc-hill"]
    assert "sbc-harbour must carry 1,000,000" in findings[0].message


def test_normal_overload_and_missing_capacity(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-capital")["capacity"]["registered_users"] = 1_000_000
    element(data, "sbc-river").pop("capacity")
    findings = _findings(data, tmp_path)
    assert any(f.rule_id == "CAP-007" and f.subjects == ("sbc-capital",) for f in findings)
    missing = [f for f in findings if f.rule_id == "CAP-008"]
    assert [f.subjects for f in missing] == [("sbc-river",)]
    assert missing[0].severity.value == "warning"


def test_capacity_model_overrides_change_the_numbers(tmp_path: Path) -> None:
    data = province_data()
    data["network"]["capacity_model"].update(
        registration_share=0.2,
        restoration_registration_cost=1.2,
        hss_restoration_overhead=0.04,
        failover_cost_per_moved_user=1.5,
    )
    report = _report(data, tmp_path)
    assert report.cscf[0].factor == 1.04 and report.pools[0].load == 3_120_000
    assert report.hss[0].required == 3_000_000 * 1.04 + 2_000_000 * 0.5


def test_max_utilisation_turns_a_100_percent_dr_sbc_into_a_shortfall(tmp_path: Path) -> None:
    data = province_data()
    data["network"]["capacity_model"]["max_utilisation"] = 0.8
    report = _report(data, tmp_path)
    assert report.verdict == "fail"  # sbc-capital takes harbour: 1,800k of 2,200k = 81.8%
    assert any(t.failed == "sbc-harbour" and t.verdict == "fail" for t in report.takeovers)


def test_without_restoration_data_no_overheads(tmp_path: Path) -> None:
    data = province_data()
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"):
        element(data, cscf_id)["features"] = []
    report = _report(data, tmp_path)
    assert report.cscf[0].factor == 1 and report.pools[0].load == 3_000_000
    assert report.hss[0].required == 3_000_000 + 2_000_000 * 0.8


def test_lab_single_site_losses_are_shown_not_failed(tmp_path: Path) -> None:
    report = _report(lab_data(), tmp_path)
    assert report.verdict == "ok"
    verdicts = {s.verdict for s in report.sites}
    assert "lab" in verdicts and "fail" not in verdicts


def test_rules_share_one_report_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import imsdr.capacity.report as mod

    calls = []
    real = mod.capacity_report

    def counting(topology: Topology, engine: Any = None, storms: Any = None) -> CapacityReport:
        calls.append(1)
        return real(topology, engine, storms)

    monkeypatch.setattr(mod, "capacity_report", counting)
    inv, source = load_from_data(province_data(), tmp_path)
    ctx = RuleContext(Topology(inv, source))
    for rule in RULES:
        list(rule.check(rule, ctx))
    assert len(calls) == 1 and isinstance(ctx.analysis.capacity, CapacityReport)


def test_runs_share_nothing(tmp_path: Path) -> None:
    """Two analyses of the same topology compute their own report: nothing is kept between runs."""
    from imsdr.analysis import Analysis

    topo = topology_from_data(province_data(), tmp_path)
    first, second = Analysis(topo), Analysis(topo)
    assert first.capacity is first.capacity  # computed once per run
    assert first.capacity is not second.capacity and first.capacity == second.capacity
    assert first.engine is not second.engine


def test_check_and_plan_read_the_analysis_they_are_given(tmp_path: Path) -> None:
    """check's CAP rules read the capacity report of the analysis the caller passes (plan shares it)."""
    from imsdr.analysis import Analysis
    from imsdr.rules.engine import run_checks

    topo = topology_from_data(province_data(), tmp_path)
    analysis = Analysis(topo)
    run_checks(topo, analysis=analysis)
    assert "capacity" in analysis.__dict__  # the CAP rules computed it on this object


def test_rule_ids_and_docs() -> None:
    assert sorted(r.id for r in RULES) == [f"CAP-{i:03d}" for i in range(1, 15)]
    assert all("Passes" in r.doc and "Fails" in r.doc for r in RULES)


def test_json_is_deterministic_and_complete(tmp_path: Path) -> None:
    from imsdr.output.jsonout import dumps

    topo = topology_from_data(province_data(), tmp_path)
    first = dumps(capacity_to_dict(capacity_report(topo)))
    assert first == dumps(capacity_to_dict(capacity_report(topo)))
    data = capacity_to_dict(capacity_report(topo))
    assert set(data) >= {
        "verdict",
        "failures",
        "pools",
        "pairs",
        "hss",
        "cscf",
        "trunks",
        "takeovers",
        "sites",
        "elements",
        "subscribers",
        "busy_hour_erlangs",
        "max_utilisation",
        "network",
    }
    assert data["takeovers"][0]["takers"][0].keys() == {"id", "load_after", "capacity", "utilisation"}
