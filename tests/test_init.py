"""`imsdr init`: a new project that validates and checks clean, never overwriting a user's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.inventory.jsonschema import inventory_json_schema

runner = CliRunner()
FILES = ["inventory.yaml", "inventory.schema.json", ".pre-commit-config.yaml", ".github/workflows/imsdr.yml"]


@pytest.mark.parametrize("args", [[], ["--sites", "3"], ["--sites", "8"], ["--lab"]],
                         ids=["default", "3-sites", "8-sites", "lab"])
def test_init_writes_a_project_that_checks_clean(tmp_path: Path, args: list[str]) -> None:
    project = tmp_path / "mynet"
    result = runner.invoke(app, ["init", str(project), *args])
    assert result.exit_code == 0, result.output
    for name in FILES:
        assert (project / name).is_file(), name
    inventory = project / "inventory.yaml"
    text = inventory.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=inventory.schema.json\n")
    assert text.count("#") > 10, "the inventory explains itself"
    assert runner.invoke(app, ["validate", str(inventory)]).exit_code == 0
    checked = runner.invoke(app, ["check", str(inventory), "--format", "json", "--fail-on", "info"])
    report = json.loads(checked.stdout)
    payload = report.get("payload", report)
    assert payload["findings"] == [], "a fresh design earns no findings"
    assert checked.exit_code == 0
    assert payload["deployment"] == ("lab" if "--lab" in args else "production")


def test_init_ships_the_schema_and_valid_tool_configs(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    assert json.loads((tmp_path / "inventory.schema.json").read_text()) == inventory_json_schema()
    hooks = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())
    assert {h["id"] for repo in hooks["repos"] for h in repo["hooks"]} >= {"imsdr-validate", "imsdr-check"}
    workflow = yaml.safe_load((tmp_path / ".github/workflows/imsdr.yml").read_text())
    steps = [s.get("run", "") for s in workflow["jobs"]["check"]["steps"]]
    assert any("--format sarif" in s for s in steps)


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    mine = tmp_path / "inventory.yaml"
    mine.write_text("mine\n")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 2
    assert "already exist" in result.stderr and "--force" in result.stderr
    assert mine.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inventory.yaml"], "nothing else written"
    assert runner.invoke(app, ["init", str(tmp_path), "--force"]).exit_code == 0
    assert mine.read_text() != "mine\n"


def test_init_rejects_one_production_site(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path), "--sites", "1"])
    assert result.exit_code == 2 and "--lab" in result.stderr
    assert list(tmp_path.iterdir()) == []
