"""CLI conventions: validate/schema output, exit codes, stdout vs stderr, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
LAB = ROOT / "inventories" / "lab.yaml"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_validate_province_prints_summary() -> None:
    result = run("validate", str(PROVINCE))
    assert result.returncode == 0, result.stderr
    assert "Example Province IMS" in result.stdout
    assert "local networks" in result.stdout and result.stderr == ""


def test_validate_json_counts_match_inventory() -> None:
    result = run("validate", str(PROVINCE), "--format", "json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    raw = yaml.safe_load(PROVINCE.read_text())
    assert data["valid"] is True
    assert data["counts"]["elements"] == len(raw["elements"])
    assert data["counts"]["sites"] == len(raw["sites"])
    assert data["elements_by_type"]["sbc"] == sum(1 for e in raw["elements"] if e["type"] == "sbc")


def test_broken_inventory_reports_every_mistake_on_stderr(tmp_path: Path) -> None:
    text = PROVINCE.read_text()
    text = text.replace("operator_domain: example.net", "operator_domain: example..net", 1)
    text = text.replace("{id: dns-b-1, type: enum_dns, site: site-b", "{id: dns-b-1, type: enum_dns, site: site-x")
    text = text.replace("addresses: [192.0.2.53,", "addresses: [192.0.2.530,")
    broken = tmp_path / "broken.yaml"
    broken.write_text(text)
    result = run("validate", str(broken))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(str(broken))]
    assert len(lines) == 3, result.stderr
    assert any(": network.operator_domain: invalid DNS name" in line for line in lines)
    assert any(": elements[0].addresses[0]: invalid IP address '192.0.2.530'" in line for line in lines)
    assert result.stderr.rstrip().endswith("error: 3 problems found")


def test_missing_file_is_a_usage_error() -> None:
    result = run("validate", "does-not-exist.yaml")
    assert result.returncode == 2
    assert "does-not-exist.yaml" in result.stderr and "Traceback" not in result.stderr


def test_unknown_format_is_a_usage_error() -> None:
    assert run("validate", str(PROVINCE), "--format", "xml").returncode == 2


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("imsdr ")


def test_schema_is_valid_json_schema_and_accepts_samples() -> None:
    result = run("schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for sample in (PROVINCE, LAB):
        data = json.loads(json.dumps(yaml.safe_load(sample.read_text()), default=str))
        errors = list(validator.iter_errors(data))
        assert errors == [], f"{sample.name}: {errors[0].message}"
    bad = json.loads(json.dumps(yaml.safe_load(PROVINCE.read_text()), default=str))
    bad["sites"][0]["id"] = "Bad/Id"
    bad["elements"][0]["tipe"] = "sbc"
    assert len(list(validator.iter_errors(bad))) == 2


def test_committed_schema_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "inventory.schema.json").read_text()
    assert committed == run("schema").stdout, "run: imsdr schema > docs/inventory.schema.json"


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from imsdr.cli.app import app\n"
        "heavy = {'pydantic', 'networkx', 'jinja2', 'dns', 'yaml'} & {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stdout


def test_help_lists_commands() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "validate" in result.stdout and "schema" in result.stdout


def test_validate_reads_stdin_and_directories(tmp_path: Path) -> None:
    """`validate -` reads standard input (diagnostics name it <stdin>); `validate DIR` finds every
    inventory below DIR (not other YAML such as CI configurations, not hidden directories)."""
    import shutil

    from typer.testing import CliRunner

    from imsdr.cli.app import app

    lab = Path(__file__).resolve().parent.parent / "inventories" / "lab.yaml"
    runner = CliRunner()
    piped = runner.invoke(app, ["validate", "-"], input=lab.read_bytes())
    assert piped.exit_code == 0 and piped.stdout.rstrip().endswith("<stdin>: valid")
    bad = runner.invoke(app, ["validate", "-"], input=b"network: [\n")
    assert bad.exit_code == 2 and bad.stderr.startswith("<stdin>:2:1: YAML syntax error")
    (tmp_path / "net" / "north").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    shutil.copy(lab, tmp_path / "net" / "north" / "a.yaml")
    shutil.copy(lab, tmp_path / "net" / "b.yml")
    shutil.copy(lab, tmp_path / ".hidden" / "c.yaml")
    (tmp_path / "net" / ".gitlab-ci.yml").write_text("imsdr:\n  script: [imsdr check inventory.yaml]\n")
    (tmp_path / "net" / "other.yaml").write_text("network: {}\n")  # no sites: not an inventory
    (tmp_path / "net" / "link.yaml").symlink_to(lab)
    found = runner.invoke(app, ["validate", str(tmp_path), "--format", "json"])
    assert found.exit_code == 0, found.output
    files = [r["file"] for r in json.loads(found.stdout)["reports"]]
    assert files == [str(tmp_path / "net" / "b.yml"), str(tmp_path / "net" / "north" / "a.yaml")]
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = runner.invoke(app, ["validate", str(empty)])
    assert nothing.exit_code == 2 and "no inventory in this directory" in nothing.stderr


def test_validate_table_lists_element_types_under_elements() -> None:
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    lab = Path(__file__).resolve().parent.parent / "inventories" / "lab.yaml"
    lines = CliRunner().invoke(app, ["validate", str(lab)]).stdout.splitlines()
    names = [line.rsplit(None, 1)[0] for line in lines[2:-1]]
    start = names.index("elements")
    assert names[start + 1].startswith("  ") and names[names.index("pairs") - 1].startswith("  ")
    assert not any(name.startswith("  ") for name in names[names.index("pairs"):])


def test_every_command_help_shows_examples_of_itself() -> None:
    """`-h` of each command ends its description with one or two examples, each an invocation of
    that command (a new command without them fails here)."""
    import re

    import typer
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    def leaves(group, prefix: tuple[str, ...]):  # type: ignore[no-untyped-def]
        for name, cmd in sorted(group.commands.items()):
            if hasattr(cmd, "commands"):
                yield from leaves(cmd, (*prefix, name))
            else:
                yield (*prefix, name)

    runner = CliRunner()
    commands = list(leaves(typer.main.get_command(app), ()))
    assert len(commands) >= 18
    for path in commands:
        text = runner.invoke(app, [*path, "-h"], env={"COLUMNS": "400"}).stdout
        described = re.split(r"\n(?:Arguments|Options):\n", text)[0]
        shown = described.split("Examples:", 1)[1] if "Examples:" in described else ""
        examples = re.findall(r"`(imsdr [^`]+)`", shown)
        assert examples, f"imsdr {' '.join(path)} -h shows no example"
        for example in examples:
            assert example.split()[1:1 + len(path)] == list(path), (path, example)
