"""Summaries never say "0 s" for an outage nothing takes over (issue 30, point 7)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.output.switchover_text import switchover_text, worst_switchover_phrase

LAB = Path(__file__).resolve().parent.parent / "inventories" / "lab.yaml"
runner = CliRunner()


def test_the_wording() -> None:
    assert switchover_text(0, None, "outage") == "not taken over"
    assert switchover_text(0, None, "no loss") == "–"
    assert switchover_text(32, "cscf-a-1", "no loss") == "32 s"
    assert worst_switchover_phrase(0, None, "outage") == "nothing takes over"
    assert worst_switchover_phrase(1832, "lab-cscf-1", "outage") == "worst switchover 1,832 s (lab-cscf-1)"


def test_scenarios_say_not_taken_over_in_text_and_markdown() -> None:
    for fmt in ("text", "markdown"):
        result = runner.invoke(app, ["scenarios", str(LAB), "--format", fmt])
        assert result.exit_code in (0, 1), result.output
        rows = [line for line in result.stdout.splitlines() if "element:lab-sbc-1" in line]
        assert rows and all("not taken over" in row and " 0 s" not in row for row in rows), (fmt, rows)
        outage_rows = [line for line in result.stdout.splitlines() if "outage" in line and "element:" in line]
        assert outage_rows and not any(" 0 s" in line for line in outage_rows), fmt
        cscf = next(line for line in result.stdout.splitlines() if "element:lab-cscf-1" in line)
        assert "32 s" in cscf  # a real switchover keeps its time


def test_simulate_summary_says_nothing_takes_over() -> None:
    for fmt in ("table", "markdown"):
        result = runner.invoke(app, ["simulate", str(LAB), "--fail", "lab-sbc-1", "--format", fmt])
        assert result.exit_code in (0, 1), result.output
        assert "nothing takes over" in result.stdout and "worst switchover 0 s" not in result.stdout, fmt
    result = runner.invoke(app, ["simulate", str(LAB), "--fail", "lab-cscf-1"])
    assert "worst switchover 32 s (lab-cscf-1)" in result.stdout
