"""docs/cli.md and the README's command table are generated from the CLI and kept in sync."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.cli.reference import cli_markdown, command_table, commands, help_text, with_command_table

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
REGENERATE = "run `python -m imsdr.cli.reference` and commit docs/cli.md and README.md"


def test_docs_cli_md_is_in_sync() -> None:
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == cli_markdown(), REGENERATE


def test_readme_command_table_is_in_sync() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_command_table(readme) == readme, REGENERATE


def test_every_command_is_documented_and_linked() -> None:
    """Found by walking the CLI, so a command added by anyone is covered without editing this test."""
    cli_md = cli_markdown()
    table = command_table()
    names = [name for name, _ in commands() if name]
    assert {"init", "validate", "check", "plan", "render dns"} <= set(names)
    for name, cmd in commands():
        assert f"## `{f'imsdr {name}'.strip()}`" in cli_md
        if name and not hasattr(cmd, "commands"):
            assert f"[`imsdr {name}`](docs/cli.md#" in table, name


def test_generated_help_is_what_the_cli_prints() -> None:
    for name, cmd in commands():
        if name in ("check", "render dns"):
            shown = runner.invoke(app, [*name.split(), "-h"], env={"COLUMNS": "100"}, terminal_width=100)
            assert shown.exit_code == 0
            assert shown.stdout.splitlines()[0] == help_text(name, cmd).splitlines()[0]


def test_help_is_readable() -> None:
    """-h works everywhere; options show a metavar, not a Python type (list[str], int range).
    (typer prints an argument's type after its name; only options can be given a plain metavar.)"""
    options = [line for line in cli_markdown().splitlines() if line.lstrip().startswith("-")]
    for leak in ("list[", "<int>", "<str>", "int range", "float range"):
        assert [line for line in options if leak in line] == [], leak
    for name, _ in commands():
        result = runner.invoke(app, [*name.split(), "-h"])
        assert result.exit_code == 0 and "Usage:" in result.stdout, name


def test_arguments_are_shown_by_name_in_usage_and_help() -> None:
    """No Python type after an argument (``INVENTORY... <list[Path]>``, ``RULE-ID <str>``) and a
    click-style usage line (``INVENTORY...``, ``[RULE-ID]``; typer wrote ``{INVENTORY...}...``)."""
    for name, cmd in commands():
        if hasattr(cmd, "commands"):
            continue
        result = runner.invoke(app, [*name.split(), "-h"], env={"COLUMNS": "100"}, terminal_width=100)
        assert result.exit_code == 0, name
        lines = result.stdout.splitlines()
        usage = lines[0]
        assert usage.startswith(f"Usage: imsdr {name} [OPTIONS]"), usage
        assert "{" not in usage and "...." not in usage, usage
        if "Arguments:" in lines:
            section = lines[lines.index("Arguments:") + 1:lines.index("Options:")]
            assert section and not any("<" in line.split("  ")[0] for line in section if line.strip()), section
    check = runner.invoke(app, ["check", "-h"], env={"COLUMNS": "100"}, terminal_width=100).stdout
    assert check.splitlines()[0] == "Usage: imsdr check [OPTIONS] INVENTORY..."
    assert "\n  INVENTORY...  Inventory YAML files" in check
    assert runner.invoke(app, ["rules", "-h"]).stdout.splitlines()[0] == "Usage: imsdr rules [OPTIONS] [RULE-ID]"
