"""`imsdr check` as a user runs it: the sample passes, the issue's mutations of the real sample
file fail at the edited line, formats (json, sarif read back by sarif-tools, github, markdown,
table), --fail-on, waivers with expiry, invalid input, determinism."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inventory_factory import PROVINCE
from typer.testing import CliRunner

from imsdr.cli.app import app

runner = CliRunner()
TODAY = "2026-06-01"


def invoke(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"COLUMNS": "160", **(env or {})})


def check_json(path: Path, *extra: str) -> tuple[int, dict]:
    result = invoke("check", str(path), "--format", "json", "--today", TODAY, *extra)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


#: a capacity no HSS check reads (CAP-013, a warning with a subject) on hss-a-1's line
HSS_SESSIONS = ("id: hss-a-1", "capacity: {", "capacity: {sessions: 10000, ")


def _unchecked_hss(text: str) -> str:
    marker, old, new = HSS_SESSIONS
    lines = text.splitlines(keepends=True)
    (i,) = [i for i, line in enumerate(lines) if marker in line]
    lines[i] = lines[i].replace(old, new)
    return "".join(lines)


def edit(tmp_path: Path, *edits: tuple[str, str, str]) -> tuple[Path, list[int]]:
    """Copy province.yaml, replacing ``old`` by ``new`` on the one line containing ``marker``;
    return the copy and the 1-based numbers of the edited lines."""
    lines = PROVINCE.read_text(encoding="utf-8").splitlines(keepends=True)
    numbers = []
    for marker, old, new in edits:
        hits = [i for i, line in enumerate(lines) if marker in line]
        assert len(hits) == 1, marker
        assert old in lines[hits[0]], (marker, old)
        lines[hits[0]] = lines[hits[0]].replace(old, new)
        numbers.append(hits[0] + 1)
    path = tmp_path / "province.yaml"
    path.write_text("".join(lines), encoding="utf-8")
    return path, numbers


def test_province_sample_passes() -> None:
    code, data = check_json(PROVINCE)
    assert code == 0 and data["passed"] is True
    assert data["counts"]["error"] == 0
    assert any(r["id"].startswith("CAP-") for r in data["rules"])  # capacity rules run through the registry


MUTATIONS = {
    "backup moved into its primary's site": ("GEO-001", 1, [("id: hss-b-1", "site: site-b", "site: site-a")]),
    "pair sites share one power feed": (
        "GEO-002",
        1,
        [("power: [grid-harbour]", "grid-harbour", "grid-capital-east")],
    ),
    "SBC ring broken": ("SBC-003", 1, [("order: [capital", "hill, ", "")]),
    "virtual SBC dropped on a DR SBC": (
        "SBC-005",
        1,
        [("id: sbc-coast", "features: [virtual_sbc]", "features: []")],
    ),
    "master-slave ENUM across vendors": (
        "ENUM-002",
        1,
        [("sync: provisioning", "provisioning", "master-slave"), ("id: dns-b-1", "vendor-d", "vendor-e")],
    ),
    "watchdog 15 s": ("TIMER-001", 1, [("diameter_watchdog: 8", "8", "15")]),
    "refresh 7200 s": ("TIMER-002", 0, [("registration_refresh: 1800", "1800", "7200")]),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_issue_mutations_raise_rule_at_edited_line(name: str, tmp_path: Path) -> None:
    rule, exit_code, edits = MUTATIONS[name]
    path, numbers = edit(tmp_path, *edits)
    code, data = check_json(path)
    assert code == exit_code
    hits = [f for f in data["findings"] if f["rule"] == rule]
    assert hits, [f["rule"] for f in data["findings"]]
    assert hits[0]["location"]["file"] == str(path)
    assert hits[0]["location"]["line"] == numbers[0], (hits[0], numbers)
    assert hits[0]["hint"]


def test_refresh_warning_fails_at_warning_level(tmp_path: Path) -> None:
    path, _ = edit(tmp_path, ("registration_refresh: 1800", "1800", "7200"))
    assert invoke("check", str(path), "--today", TODAY).exit_code == 0
    assert invoke("check", str(path), "--today", TODAY, "--fail-on", "warning").exit_code == 1
    assert invoke("check", str(path), "--today", TODAY, "--fail-on", "never").exit_code == 0


def test_fail_on_never_with_errors(tmp_path: Path) -> None:
    path, _ = edit(tmp_path, ("diameter_watchdog: 8", "8", "15"))
    assert invoke("check", str(path), "--fail-on", "never").exit_code == 0
    assert invoke("check", str(path)).exit_code == 1


def test_table_groups_by_severity(tmp_path: Path) -> None:
    path, (tw_line, _) = edit(
        tmp_path, ("diameter_watchdog: 8", "8", "15"), ("registration_refresh: 1800", "1800", "7200")
    )
    result = invoke("check", str(path), "--today", TODAY, env={"TTY_COMPATIBLE": "1", "NO_COLOR": "1"})  # a terminal's
    assert result.exit_code == 1
    out = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert out.index("ERRORS (") < out.index("WARNINGS (")
    assert out.index("TIMER-001") < out.index("WARNINGS (") < out.index("TIMER-002")
    assert re.search(rf"TIMER-001\s*│\s*{tw_line}\s*│", out)
    assert "failed (fail on error)" in out and "fix: set diameter_watchdog" in out


def test_pipe_gets_one_line_per_finding_with_its_place(tmp_path: Path) -> None:
    """Outside a terminal (a pipe, a CI log) and with --format text: one
    FILE:LINE:COL: SEVERITY RULE message line per finding, never wrapped, no box drawing."""
    path, (tw_line, _) = edit(
        tmp_path, ("diameter_watchdog: 8", "8", "15"), ("registration_refresh: 1800", "1800", "7200")
    )
    piped = invoke("check", str(path), "--today", TODAY)
    text = invoke("check", str(path), "--today", TODAY, "--format", "text", env={"TTY_COMPATIBLE": "1"})
    assert piped.exit_code == text.exit_code == 1
    assert piped.stdout == text.stdout
    lines = piped.stdout.splitlines()
    assert not set("│┃━─┏└").intersection(piped.stdout)
    timer = [line for line in lines if " TIMER-001 " in line]
    assert len(timer) == 1
    assert re.fullmatch(rf"{re.escape(str(path))}:{tw_line}:\d+: error TIMER-001 .+ — fix: set diameter_watchdog.*",
                        timer[0])
    assert lines[-1].startswith(f"{path}: failed (fail on error): ")
    errors = [i for i, line in enumerate(lines) if " error " in line]
    warnings = [i for i, line in enumerate(lines) if " warning " in line]
    assert errors and warnings and max(errors) < min(warnings)


def test_root_options_after_the_command_name(tmp_path: Path) -> None:
    inv = Path(__file__).resolve().parent.parent / "inventories" / "lab.yaml"
    after = invoke("validate", str(inv), "-v", "--debug")
    before = invoke("-v", "--debug", "validate", str(inv))
    assert after.exit_code == before.exit_code == 0
    assert re.search(r"loading .*lab.yaml: \d+\.\d\d s", after.stderr)
    assert re.sub(r"\d+\.\d\d s", "", after.stderr) == re.sub(r"\d+\.\d\d s", "", before.stderr)
    quiet = invoke("validate", str(inv), "-q", "-v")
    assert "loading" not in quiet.stderr


def test_sarif_read_back_by_sarif_tools(tmp_path: Path) -> None:
    from sarif import loader

    path, (line, _) = edit(
        tmp_path,
        ("id: hss-b-1", "site: site-b", "site: site-a"),
        ("registration_refresh: 1800", "1800", "7200"),
    )
    result = invoke("check", str(path), "--format", "sarif", "--today", TODAY)
    assert result.exit_code == 1
    out = tmp_path / "check.sarif"
    out.write_text(result.stdout, encoding="utf-8")
    sarif = loader.load_sarif_file(str(out))
    assert sarif.data["version"] == "2.1.0" and "sarif-2.1.0" in sarif.data["$schema"]
    (run,) = sarif.runs
    assert run.get_tool_name() == "imsdr"
    driver_rules = run.run_data["tool"]["driver"]["rules"]
    assert run.get_rules_by_id("GEO-001")[0]["shortDescription"]["text"]
    assert {"id", "shortDescription", "fullDescription", "help", "defaultConfiguration"} <= set(
        driver_rules[0]
    )
    results = run.get_results()
    geo = [r for r in results if r["ruleId"] == "GEO-001"]
    assert geo and geo[0]["level"] == "error" and geo[0]["message"]["text"]
    assert driver_rules[geo[0]["ruleIndex"]]["id"] == "GEO-001"
    physical = geo[0]["locations"][0]["physicalLocation"]
    assert physical["region"]["startLine"] == line
    assert physical["artifactLocation"]["uri"].endswith("province.yaml")
    assert {r["level"] for r in results} >= {"error", "warning"}
    records = run.get_records()  # sarif-tools' own reading of location and severity
    assert any(
        r["Code"].startswith("GEO-001") and r["Line"] == line and r["Severity"] == "error" for r in records
    ), records[:3]
    summary = subprocess.run(
        [sys.executable, "-m", "sarif", "summary", str(out)], capture_output=True, text=True, timeout=60
    )
    assert summary.returncode == 0 and "error" in summary.stdout


def test_sarif_waived_findings_are_suppressed(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    text = _unchecked_hss(PROVINCE.read_text(encoding="utf-8")).replace(
        "waivers: []",
        "waivers:\n  - {rule: CAP-013, scope: [hss-a-1], reason: HSS licence planned, expires: 2026-12-31}",
    )
    path.write_text(text, encoding="utf-8")
    data = json.loads(invoke("check", str(path), "--format", "sarif", "--today", TODAY).stdout)
    (result,) = [r for r in data["runs"][0]["results"] if r["ruleId"] == "CAP-013"]
    assert result["suppressions"][0]["status"] == "accepted"
    assert "HSS licence planned" in result["suppressions"][0]["justification"]


def test_github_annotations(tmp_path: Path) -> None:
    path, (line, _) = edit(tmp_path, ("diameter_watchdog: 8", "8", "15"), HSS_SESSIONS)
    result = invoke("check", str(path), "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    tw = [x for x in lines if "title=TIMER-001" in x]
    assert tw and tw[0].startswith(f"::error file={path},line={line},col=")
    assert "::the Diameter" not in tw[0] and "Diameter watchdog Tw is 15 s" in tw[0]
    assert any(x.startswith("::warning file=") and "CAP-013" in x for x in lines)
    assert lines[-1].startswith("imsdr check failed")


def test_github_escapes_properties() -> None:
    from imsdr.output.findings import _gh_data, _gh_prop

    assert _gh_prop("a,b:c%") == "a%2Cb%3Ac%25"
    assert _gh_data("x\ny%") == "x%0Ay%25"


def test_markdown_report_lints_clean(tmp_path: Path) -> None:
    from pymarkdown.api import PyMarkdownApi

    path = tmp_path / "inv.yaml"
    text = (
        _unchecked_hss(PROVINCE.read_text(encoding="utf-8"))
        .replace("diameter_watchdog: 8", "diameter_watchdog: 15")
        .replace(
            "waivers: []", "waivers:\n  - {rule: CAP-013, reason: HSS licence | planned, expires: 2026-12-31}"
        )
    )
    path.write_text(text, encoding="utf-8")
    result = invoke("check", str(path), "--format", "markdown", "--today", TODAY)
    assert result.exit_code == 1
    md = result.stdout
    assert md.startswith("# DR design check") and "**Verdict: failed**" in md
    assert "## Errors (1)" in md and "## Waived (1)" in md and "HSS licence \\| planned" in md
    scan = PyMarkdownApi().disable_rule_by_identifier("md013").scan_string(md)
    assert scan.scan_failures == []


def test_waivers_and_expiry_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    text = _unchecked_hss(PROVINCE.read_text(encoding="utf-8")).replace(
        "waivers: []",
        "waivers:\n  - {rule: CAP-013, scope: [slf-pair], reason: SLF south planned, expires: 2026-12-31}",
    )
    path.write_text(text, encoding="utf-8")
    waiver_line = (
        text.splitlines().index(
            "  - {rule: CAP-013, scope: [slf-pair], reason: SLF south planned, expires: 2026-12-31}"
        )
        + 1
    )
    # scope names a group that is not a subject of the CAP-013 finding: nothing waived, WAIVER-002 says so
    code, data = check_json(path, "--fail-on", "warning")
    assert code == 1 and not data["waived"]
    assert any(f["rule"] == "WAIVER-002" and f["location"]["line"] == waiver_line for f in data["findings"])
    path.write_text(text.replace("[slf-pair]", "[hss-a-1]"), encoding="utf-8")
    code, data = check_json(path, "--fail-on", "warning")
    assert code == 0 and data["counts"] == {"error": 0, "warning": 0, "info": 1, "waived": 1}  # info: MGCF-003
    assert data["waived"][0]["waiver"]["reason"] == "SLF south planned"
    assert data["waived"][0]["waiver"]["expires"] == "2026-12-31"
    table = re.sub(r"\x1b\[[0-9;]*m", "", invoke(
        "check", str(path), "--today", TODAY, env={"TTY_COMPATIBLE": "1"}).stdout)
    assert "WAIVED (1)" in table and "SLF south planned (expires 2026-12-31)" in table
    lines = invoke("check", str(path), "--today", TODAY).stdout.splitlines()
    waived = [line for line in lines if ": waived CAP-" in line]
    assert len(waived) == 1 and waived[0].endswith("— waived: SLF south planned (expires 2026-12-31)")
    # after expiry: the finding is back and the waiver itself is reported
    result = invoke("check", str(path), "--format", "json", "--today", "2027-01-01", "--fail-on", "warning")
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and not data["waived"]
    rules = {f["rule"] for f in data["findings"]}
    assert {"CAP-013", "WAIVER-001"} <= rules


def test_unknown_rule_id_in_inventory_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(
        PROVINCE.read_text(encoding="utf-8") + 'rules:\n  GEO-001: warning\n  SBC-042: "off"\n',
        encoding="utf-8",
    )
    line = len(PROVINCE.read_text(encoding="utf-8").splitlines()) + 3
    result = invoke("check", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{path}:{line}:" in result.stderr and "unknown rule id 'SBC-042'" in result.stderr
    assert "Traceback" not in result.stderr


def test_rule_settings_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    text = _unchecked_hss(PROVINCE.read_text(encoding="utf-8"))
    path.write_text(text + "rules:\n  CAP-013: error\n", encoding="utf-8")
    code, data = check_json(path)
    assert (
        code == 1 and data["findings"][0]["rule"] == "CAP-013" and data["findings"][0]["severity"] == "error"
    )
    path.write_text(text + 'rules:\n  CAP-013: "off"\n', encoding="utf-8")
    code, data = check_json(path, "--fail-on", "warning")
    assert code == 0 and not [f for f in data["findings"] if f["rule"] == "CAP-013"]


def test_invalid_input_exits_2(tmp_path: Path) -> None:
    result = invoke("check", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2 and "no such file" in result.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        PROVINCE.read_text(encoding="utf-8").replace("diameter_watchdog: 8", "diameter_watchdog: x")
    )
    result = invoke("check", str(bad))
    line = PROVINCE.read_text(encoding="utf-8").splitlines().index("    diameter_watchdog: 8") + 1
    assert result.exit_code == 2 and f"{bad}:{line}:" in result.stderr
    assert invoke("check", str(PROVINCE), "--today", "yesterday").exit_code == 2
    assert invoke("check", str(PROVINCE), "--format", "xml").exit_code == 2
    assert invoke("check", str(PROVINCE), "--fail-on", "sometimes").exit_code == 2


@pytest.mark.parametrize("fmt", ["table", "json", "sarif", "markdown", "github"])
def test_output_is_deterministic(fmt: str) -> None:
    first = invoke("check", str(PROVINCE), "--format", fmt, "--today", TODAY)
    second = invoke("check", str(PROVINCE), "--format", fmt, "--today", TODAY)
    assert first.exit_code == 0 and first.stdout == second.stdout and first.stdout


def test_check_as_a_subprocess() -> None:
    """The installed entry point: data on stdout, nothing on stderr, exit 0."""
    result = subprocess.run(
        [sys.executable, "-m", "imsdr", "check", str(PROVINCE), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["format"] == "imsdr.check/1"


def test_rules_config_file_overrides_inventory(tmp_path: Path) -> None:
    path, (line,) = edit(tmp_path, ("diameter_watchdog: 8", "8", "15"))
    config = tmp_path / "policy.yaml"
    config.write_text('rules:\n  DEP-002: "off"\n  TIMER-001: warning\n', encoding="utf-8")
    code, data = check_json(path, "--rules-config", str(config))
    assert code == 0 and [(f["rule"], f["severity"]) for f in data["findings"]] == [
        ("TIMER-001", "warning"), ("MGCF-003", "info")]
    assert data["findings"][0]["location"]["line"] == line
    # the config wins over the inventory's own setting
    with path.open("a", encoding="utf-8") as out:
        out.write("rules:\n  TIMER-001: error\n")
    code, data = check_json(path, "--rules-config", str(config))
    assert code == 0 and data["findings"][0]["severity"] == "warning"


def test_rules_config_errors_exit_2_with_locations(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("rules:\n  DEP-002: false\n  GEO-001: fatal\nextra: 1\n", encoding="utf-8")
    result = invoke("check", str(PROVINCE), "--rules-config", str(config))
    assert result.exit_code == 2 and result.stdout == ""
    err = result.stderr.splitlines()
    assert err[0].startswith(f"{config}:2:") and "write off" in err[0]
    assert err[1].startswith(f"{config}:3:") and "'fatal'" in err[1]
    assert err[2].startswith(f"{config}:4:") and "unknown key 'extra'" in err[2]
    config.write_text("rules:\n  GEO-009: info\n", encoding="utf-8")
    result = invoke("check", str(PROVINCE), "--rules-config", str(config))
    assert (
        result.exit_code == 2
        and f"{config}:2:" in result.stderr
        and "unknown rule id 'GEO-009'" in result.stderr
    )
    assert invoke("check", str(PROVINCE), "--rules-config", str(tmp_path / "none.yaml")).exit_code == 2
