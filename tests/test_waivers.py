"""Waivers: a scope may name every id findings name (regions, power feeds, routes, ENUM blocks as
well as elements and groups), and WAIVER-002 says what is true of a waiver that matched nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = (ROOT / "inventories" / "province.yaml").read_text()
runner = CliRunner()


def check(tmp_path: Path, waivers: str, rules: str = "") -> tuple[int, dict]:
    text = PROVINCE.replace("waivers: []", f"waivers:\n{waivers}")
    if rules:
        text = text.replace("\nwaivers:", f"\n{rules}\nwaivers:", 1)
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["check", str(path), "--format", "json", "--today", "2026-12-01"])
    assert result.exit_code in (0, 1, 2), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("scope", ["north", "grid-harbour", "imgw-a-1"])
def test_scope_accepts_regions_feeds_and_elements(tmp_path: Path, scope: str) -> None:
    code, report = check(tmp_path, f"  - {{rule: MGCF-004, scope: [{scope}], reason: r, expires: 2099-01-01}}")
    assert code != 2, report
    assert not [f for f in report["findings"] if f["rule"] == "INV-001"]


def test_scope_with_an_unknown_id_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    code, report = check(tmp_path, "  - {rule: MGCF-004, scope: [nort], reason: r, expires: 2099-01-01}")
    assert code == 2
    assert any("unknown id" in f["message"] and "north" in f["message"] for f in report["findings"])


def test_a_waiver_that_misses_a_reported_finding_says_so(tmp_path: Path) -> None:
    _, report = check(tmp_path, "  - {rule: MGCF-004, scope: [north], reason: r, expires: 2099-01-01}")
    (unused,) = [f for f in report["findings"] if f["rule"] == "WAIVER-002"]
    assert "MGCF-004 still reports 1 finding: its scope names none of their subjects (imgw-a-1, imgw-b-1)" \
        in unused["message"]
    assert "gone" not in unused["message"]
    assert any(f["rule"] == "MGCF-004" for f in report["findings"]), "the finding is still there"


def test_a_waiver_of_a_rule_that_did_not_run_or_found_nothing(tmp_path: Path) -> None:
    _, off = check(tmp_path, "  - {rule: MGCF-004, scope: [imgw-a-1], reason: r, expires: 2099-01-01}",
                   rules="rules: {MGCF-004: off}")
    (unused,) = [f for f in off["findings"] if f["rule"] == "WAIVER-002"]
    assert "MGCF-004 did not run" in unused["message"]
    _, quiet = check(tmp_path, "  - {rule: GEO-001, scope: [hss-pair], reason: r, expires: 2099-01-01}")
    (unused,) = [f for f in quiet["findings"] if f["rule"] == "WAIVER-002"]
    assert "GEO-001 reports nothing now, so the waiver can be removed" in unused["message"]


def test_a_matching_waiver_waives(tmp_path: Path) -> None:
    code, report = check(tmp_path, "  - {rule: MGCF-004, scope: [imgw-b-1], reason: r, expires: 2099-01-01}")
    assert code == 0 and report["counts"]["waived"] == 1
    assert not [f for f in report["findings"] if f["rule"].startswith("WAIVER-")]
