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


def test_init_table_writes_the_element_list_template_that_imports_as_its_example_row(tmp_path: Path) -> None:
    from imsdr.importers.table import COLUMNS, template_csv

    table = tmp_path / "lists" / "elements.csv"
    result = runner.invoke(app, ["init", "--table", str(table)])
    assert result.exit_code == 0, result.output
    assert f"wrote {table}" in result.stdout and "imsdr import table" in result.stdout
    assert table.read_text(encoding="utf-8") == template_csv()
    assert table.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in table.parent.iterdir()) == ["elements.csv"], "no staging file left"
    header, example, *rest = table.read_text().splitlines()
    assert header.split(",") == [c.name for c in COLUMNS] and rest == []
    draft = tmp_path / "draft.yaml"
    imported = runner.invoke(app, ["import", "table", str(table), "--out", str(draft)])
    assert imported.exit_code == 0, imported.output
    doc = yaml.safe_load(draft.read_text())
    cells = dict(zip(header.split(","), example.split(","), strict=True))
    [element] = doc["elements"]
    assert element == {"id": cells["id"], "type": cells["type"], "roles": cells["roles"].split(),
                       "site": cells["site"], "vendor": cells["vendor"], "addresses": cells["addresses"].split(),
                       "capacity": {"registered_users": int(cells["registered_users"]),
                                    "sessions": int(cells["sessions"])}}
    [pool] = doc["redundancy"]["pools"]
    assert (pool["id"], pool["members"]) == (cells["pool"], [cells["id"]])


def test_init_table_replaces_only_its_own_unchanged_template(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    assert runner.invoke(app, ["init", "--table", str(table)]).exit_code == 0
    assert runner.invoke(app, ["init", "--table", str(table)]).exit_code == 0, "its own template: replaced"
    filled = table.read_text() + "hss-a-1,hss,site-a,vendor-x,192.0.2.30\n"
    table.write_text(filled)
    result = runner.invoke(app, ["init", "--table", str(table)])
    assert result.exit_code == 2 and "--force" in result.stderr and "nothing written" in result.stderr
    assert table.read_text() == filled
    assert runner.invoke(app, ["init", "--table", str(table), "--force"]).exit_code == 0
    assert table.read_text() != filled
    (tmp_path / "a-dir.csv").mkdir()
    assert runner.invoke(app, ["init", "--table", str(tmp_path / "a-dir.csv")]).exit_code == 2


def test_init_table_writes_nothing_else(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "proj"), "--table", str(tmp_path / "e.csv")])
    assert result.exit_code == 2 and "--table" in result.stderr
    assert list(tmp_path.iterdir()) == []
