"""A capacity finding's fix is a sentence with the numbers that matter (what is needed, what there
is, how much to add), not the report's formula."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from inventory_factory import element, group, load_from_data, province_data

from imsdr.capacity import capacity_report
from imsdr.model.topology import Topology
from imsdr.rules.base import RuleContext
from imsdr.rules.capacity_rules import RULES


def _findings(data: dict[str, Any], tmp_path: Path, rule_id: str) -> list[Any]:
    inv, source = load_from_data(data, tmp_path)
    ctx = RuleContext(Topology(inv, source))
    return [f for rule in RULES if rule.id == rule_id for f in rule.check(rule, ctx)]


def _report(data: dict[str, Any], tmp_path: Path):  # type: ignore[no-untyped-def]
    inv, source = load_from_data(data, tmp_path)
    return capacity_report(Topology(inv, source))


def _sentence(hint: str) -> None:
    assert hint.endswith(".") and len(hint.split()) > 8, hint
    for formula_mark in ("×", "L/", "→", "required", "= ", " / "):
        assert formula_mark not in hint, (formula_mark, hint)


def test_pool_fix_says_what_each_survivor_needs(tmp_path: Path) -> None:
    data = province_data()
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"):
        element(data, cscf_id)["capacity"]["registered_users"] = 1_200_000
    (f,) = _findings(data, tmp_path, "CAP-001")
    _sentence(f.hint)
    # 3,300,000 users, N=4, K=2: each survivor 1,650,000; / 0.85 = 1,941,177; 4 members of 1.2M short
    assert ("each of the 2 survivors of cscf-pool carries 1,650,000 users (3,300,000 shared by 2); at the 85% limit "
            "that needs a capacity of 1,941,177 each (the smallest has 1,200,000)") in f.hint
    assert "Raise each member by 741,177, or add 2 members of 1,200,000." in f.hint  # ceil(3.3M/1.02M)+2-4


def test_pair_fix(tmp_path: Path) -> None:
    data = province_data()
    for slf in ("slf-a-1", "slf-b-1"):
        element(data, slf)["capacity"]["subscribers"] = 3_000_000
    (f,) = _findings(data, tmp_path, "CAP-002")
    _sentence(f.hint)
    assert f.hint == ("Each side of slf-pair must carry the pair's 3,000,000 users alone; at the 85% limit that "
                      "needs a capacity of 3,529,412 (the smallest side has 3,000,000): raise it by 529,412.")


def test_hss_fix(tmp_path: Path) -> None:
    data = province_data()
    for hss_id in ("hss-a-1", "hss-b-1"):
        element(data, hss_id)["capacity"] = {"subscribers": 4_000_000, "transactions_per_second": 20000}
    (f,) = _findings(data, tmp_path, "CAP-003")
    _sentence(f.hint)
    # 4,840,000 required / 0.85 = 5,694,118
    assert "must hold 4,840,000 subscriber-equivalents" in f.hint
    assert "needs a capacity of 5,694,118 subscribers per side (it has 4,000,000): raise it by 1,694,118." in f.hint


def test_trunk_fix(tmp_path: Path) -> None:
    data = province_data()
    for el_id in ("mgcf-a-1", "mgcf-b-1"):
        element(data, el_id)["capacity"] = {"circuits": 1000}
    findings = [f for f in _findings(data, tmp_path, "CAP-004") if "mgcf-pool" in f.message]
    assert findings
    _sentence(findings[0].hint)
    assert "needs 1,727 circuits, it has 1,000: add 727" in findings[0].hint


def test_takeover_fix(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-harbour")["capacity"]["registered_users"] = 900_000
    (f,) = _findings(data, tmp_path, "CAP-005")
    _sentence(f.hint)
    # harbour 600k + hill's 400k = 1,000,000 of 900,000; / 0.85 = 1,176,471
    assert ("When sbc-hill fails, sbc-harbour carries 1,000,000 users of its 900,000 (111.1%); at the 85% limit "
            "it needs 1,176,471: raise it by 276,471") in f.hint


def test_site_fix(tmp_path: Path) -> None:
    data = province_data()
    group(data, "cscf-pool")["spare"] = 1
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"):
        element(data, cscf_id)["capacity"]["registered_users"] = 1_500_000
    findings = [f for f in _findings(data, tmp_path, "CAP-006") if f.message.startswith("cscf")]
    assert findings
    for f in findings:
        _sentence(f.hint)
    site_b = next(f for f in findings if f.subjects == ("site-b",))
    check = next(c for c in _report(data, tmp_path).sites if (c.site, c.element_type) == ("site-b", "cscf"))
    need = math.ceil(check.load / 0.85)
    assert (f"With site-b lost, the surviving cscf elements carry {check.load:,.0f} users on "
            f"{check.surviving_capacity:,.0f} ({check.utilisation:.0%}); at the 85% limit they need {need:,}: "
            f"add {need - check.surviving_capacity:,.0f} in other sites") in site_b.hint
    assert check.surviving_capacity == 3_000_000  # site-b holds two of the four CSCFs of 1,500,000
