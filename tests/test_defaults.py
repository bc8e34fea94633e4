"""Team defaults in imsdr.toml (or [tool.imsdr] of pyproject.toml) beside the inventory: applied
to the options not given, command-line flags win, bad entries refused at their line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    net = tmp_path / "net"
    net.mkdir()
    shutil.copy(ROOT / "inventories" / "lab.yaml", net / "lab.yaml")
    shutil.copy(ROOT / "inventories" / "province.yaml", net / "province.yaml")  # it earns a warning
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the defaults are found beside the inventory, not in the working directory
    return net


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def test_top_level_and_command_tables_apply_and_flags_win(project: Path) -> None:
    inventory = str(project / "province.yaml")
    baseline = invoke("check", inventory, "--format", "json")
    assert baseline.exit_code == 0
    warnings = json.loads(baseline.stdout)["counts"]["warning"]
    assert warnings > 0, "the province earns a warning: --fail-on warning turns it into a failure"
    (project / "imsdr.toml").write_text('fail-on = "warning"\n\n[check]\nformat = "json"\n')
    defaulted = invoke("check", inventory)
    assert defaulted.exit_code == 1
    assert json.loads(defaulted.stdout)["counts"]["warning"] == warnings, "[check] format = json applied"
    flagged = invoke("check", inventory, "--fail-on", "error", "--format", "text")
    assert flagged.exit_code == 0 and flagged.stdout.rstrip().endswith("rules run"), "flags win"


def test_paths_are_relative_to_the_defaults_file(project: Path) -> None:
    (project / "imsdr.toml").write_text('[plan]\nout = "plan"\n\n[render.dns]\nout = "dns-only"\n')
    assert invoke("plan", str(project / "lab.yaml")).exit_code == 0
    assert (project / "plan" / "plan.json").is_file()
    assert not Path("plan").exists()
    assert invoke("render", "dns", str(project / "lab.yaml")).exit_code == 0
    assert (project / "dns-only").is_dir()


def test_pyproject_tool_imsdr_and_imsdr_toml_first(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.imsdr]\nfail-on = "warning"\n')
    assert invoke("check", str(project / "province.yaml")).exit_code == 1
    (project / "imsdr.toml").write_text('fail-on = "error"\n')
    assert invoke("check", str(project / "province.yaml")).exit_code == 0


@pytest.mark.parametrize(("text", "message"), [
    ('[plan]\nfail_on = "warning"\n', r"imsdr.toml:2: \[plan\]: 'imsdr plan' has no option --fail_on to default; "
                                      r"did you mean 'fail-on'\?"),
    ('[check]\nformat = "sariff"\n',
     r"imsdr.toml:2: \[check\]: format = 'sariff' is not one of: .*did you mean 'sarif'"),
    ('[plan]\nforce = true\n', r"imsdr.toml:2: \[plan\]: 'imsdr plan' has no option --force to default"),
    ('fail-on = 3\n', r"imsdr.toml:1: top level: fail-on = 3 is not one of"),
    ('[check\n', r"imsdr.toml: not valid TOML"),
    ('check = 1\n', r"imsdr.toml:1: \[check\] must be a table of options|top level must be a table"),
])
def test_bad_defaults_are_refused_at_their_line(project: Path, text: str, message: str) -> None:
    import re

    (project / "imsdr.toml").write_text(text)
    result = invoke("check", str(project / "lab.yaml")) if "plan" not in text else invoke(
        "plan", str(project / "lab.yaml"), "--out", str(project / "p"))
    assert result.exit_code == 2
    assert re.search(message, result.stderr), result.stderr
    assert "Traceback" not in result.stderr and not (project / "p").exists()


def test_a_linked_defaults_file_is_never_read(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text('fail-on = "info"\n')
    (project / "imsdr.toml").symlink_to(secret)
    result = invoke("check", str(project / "lab.yaml"))
    assert result.exit_code == 2 and "symbolic link" in result.stderr


KEYS = st.sampled_from(["fail-on", "format", "out", "keys", "serial", "docs-url", "all", "x", "today", "drain"])
VALUES = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=8), st.sampled_from(["json", "info", "."]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=st.dictionaries(KEYS, VALUES, max_size=3), check=st.dictionaries(KEYS, VALUES, max_size=3))
def test_any_defaults_table_is_applied_or_refused_never_a_traceback(project: Path, top: dict, check: dict) -> None:
    def toml_value(value: object) -> str:
        return json.dumps(value) if not isinstance(value, bool) else str(value).lower()

    lines = [f'"{k}" = {toml_value(v)}' for k, v in top.items()]
    lines += ["[check]"] + [f'"{k}" = {toml_value(v)}' for k, v in check.items()]
    (project / "imsdr.toml").write_text("\n".join(lines) + "\n")
    result = invoke("check", str(project / "lab.yaml"))
    assert result.exit_code in (0, 1, 2)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
