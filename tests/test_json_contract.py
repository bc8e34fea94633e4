"""One JSON contract: every command's --format json carries the envelope (format with version,
imsdr version, inventory) and matches its JSON Schema under docs/schemas/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import typer.main
from referencing import Registry, Resource
from typer.testing import CliRunner

from imsdr import __version__
from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "schemas"
LAB = ROOT / "inventories" / "lab.yaml"
BAD = ROOT / "tests" / "corpus" / "bad" / "dns-uppercase.yaml"
runner = CliRunner()

# (schema, arguments): each command that prints JSON, run on the lab inventory
CASES = [
    ("validate", ["validate", "{lab}"]),
    ("validate", ["validate", "{lab}", "{bad}"]),
    ("check", ["check", "{lab}"]),
    ("check", ["check", "{bad}"]),
    ("checks", ["check", "{lab}", "{bad}"]),
    ("capacity", ["capacity", "{lab}"]),
    ("availability", ["availability", "{lab}"]),
    ("simulate", ["simulate", "{lab}", "--fail", "lab-cscf-1"]),
    ("scenarios", ["scenarios", "{lab}"]),
    ("graph", ["graph", "{lab}"]),
    ("rules", ["rules"]),
    ("rule", ["rules", "GEO-001"]),
    ("resolve", ["resolve", "{lab}", "ims.lab.example.org"]),
    ("plan", ["plan", "{lab}", "--out", "{out}"]),
    ("plan-check", ["plan", "{lab}", "--out", "{out}", "--check"]),
    ("render-dns", ["render", "dns", "{lab}", "--out", "{out}/dns"]),
    ("render-dns", ["render", "dns", "{lab}", "--out", "{out}/dns", "--drain", "lab-cscf-1",
                    "--serial", "2026120101"]),  # (a drain into a fresh directory needs --serial)
    ("render-runbook", ["render", "runbook", "{lab}", "--out", "{out}/runbooks"]),
    ("render-monitoring", ["render", "monitoring", "{lab}", "--out", "{out}/monitoring"]),
    ("apply", ["apply", "{out}", "--targets", "{targets}", "--state", "{out}/state", "--dry-run"]),
    ("apply", ["apply", "{out}", "--targets", "{targets}", "--state", "{out}/state", "--status"]),
]
# apply: a targets file naming the lab SBC (delivered to a local directory: no key file needed)
TARGETS = ("version: 1\nroot: {root}\ntargets:\n"
           "  lab-sbc-1: {{kind: kamailio, directory: sbc, rpc: {{kamcmd: /run/k.ctl}}}}\n")
# verify needs a live DNS server; its schema is exercised by the named tests' fixtures
NEEDS_A_SERVER = {"verify", "enum-update"}


def registry() -> Registry:
    resources = [(p.name, Resource.from_contents(json.loads(p.read_text()))) for p in SCHEMAS.glob("*.schema.json")]
    return Registry().with_resources(resources)


def validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=registry())


def json_commands() -> set[str]:
    """Every command whose --format offers json, found by walking the CLI (new ones included)."""
    found = set()

    def walk(group, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                walk(cmd, f"{prefix}{name} ")
            elif any(p.name == "fmt" and "json" in [str(getattr(c, "value", c)) for c in _choices(p)]
                     for p in cmd.params):
                found.add(f"{prefix}{name}")

    walk(typer.main.get_command(app), "")
    return found


def _choices(param) -> tuple:  # type: ignore[no-untyped-def]
    descriptor = getattr(param, "type_descriptor", None)  # typer >= 0.29 (no click types)
    return tuple(getattr(descriptor, "choices", None) or getattr(getattr(param, "type", None), "choices", ()) or ())


def test_every_json_command_has_a_schema_and_a_case() -> None:
    assert {"check", "validate", "plan", "render dns", "verify"} <= json_commands()
    covered = {" ".join(a for a in args if not a.startswith(("{", "-")))[:40] for _, args in CASES}
    for command in json_commands():
        kind = command.replace(" ", "-")
        assert (SCHEMAS / f"{kind}.schema.json").is_file(), f"docs/schemas/{kind}.schema.json is missing"
        assert command in NEEDS_A_SERVER or any(c == command or c.startswith(command + " ") for c in covered), (
            f"`imsdr {command} --format json` has no case in tests/test_json_contract.py")


def _case_id(kind: str, args: list[str]) -> str:
    return f"{kind}:{' '.join(args[:2])}" + (" --drain" if "--drain" in args else "")


@pytest.mark.parametrize(("kind", "args"), CASES, ids=[_case_id(k, a) for k, a in CASES])
def test_output_matches_its_schema(kind: str, args: list[str], tmp_path: Path) -> None:
    shutil.copy(LAB, tmp_path / "lab.yaml")
    shutil.copy(BAD, tmp_path / "bad.yaml")
    (tmp_path / "targets.yaml").write_text(TARGETS.format(root=tmp_path / "srv"))
    argv = [a.format(lab=tmp_path / "lab.yaml", bad=tmp_path / "bad.yaml", out=tmp_path / "out",
                     targets=tmp_path / "targets.yaml") for a in args]
    if kind == "plan-check":
        assert runner.invoke(app, argv[:-1]).exit_code == 0
    if kind == "apply":
        assert runner.invoke(app, ["plan", str(tmp_path / "lab.yaml"), "--out", str(tmp_path / "out")]).exit_code == 0
    result = runner.invoke(app, [*argv, "--format", "json"])
    assert result.exit_code in (0, 1, 2), result.output
    document = json.loads(result.stdout)
    errors = sorted(validator(kind).iter_errors(document), key=str)
    assert errors == [], "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert document["imsdr"] == __version__
    assert document["format"].startswith("imsdr.")
    if "{lab}" in args and kind != "checks" and "{bad}" not in args:
        assert document["inventory"] == str(tmp_path / "lab.yaml")


def test_schemas_are_valid_and_documented() -> None:
    text = (ROOT / "docs" / "json.md").read_text()
    for path in SCHEMAS.glob("*.schema.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))
        assert f"schemas/{path.name}" in text, f"docs/json.md does not list {path.name}"
