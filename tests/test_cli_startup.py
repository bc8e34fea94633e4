"""Start-up work a command does not need: other subcommands are not built, and rich is not
imported when nothing is drawn on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import typer.main

from imsdr.cli.app import app
from imsdr.cli.common import _may_be_terminal

ROOT = Path(__file__).resolve().parent.parent


def test_a_looked_up_command_is_the_only_one_built() -> None:
    root = typer.main.get_command(app)
    commands = root.commands  # type: ignore[attr-defined]
    names = list(commands)
    assert names[:2] == ["init", "validate"] and {"check", "render", "example"} <= set(names)
    assert "check" in commands and "nosuch" not in commands
    assert commands._built == {}  # listing the names and asking for one built none
    check = root.get_command(typer.Context(root), "check")  # type: ignore[attr-defined]
    assert check is not None and check.name == "check"
    assert list(commands._built) == ["check"]
    assert root.get_command(typer.Context(root), "check") is check  # built once


def test_a_pipe_is_no_terminal_without_rich() -> None:
    assert not _may_be_terminal(io.StringIO())
    assert not _may_be_terminal(object())  # no isatty at all


def test_forced_terminals_are_left_to_rich(monkeypatch) -> None:
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        monkeypatch.setenv(name, "1")
        assert _may_be_terminal(io.StringIO())


def test_piped_check_does_not_import_rich_console() -> None:
    code = ("import sys\nfrom imsdr.cli.app import main\n"
            "sys.argv = ['imsdr', 'check', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('RICH=' + str('rich.console' in sys.modules))\n")
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "inventories" / "province.yaml")],
                            capture_output=True, text=True, timeout=120, env=env)
    assert "passed" in result.stdout
    assert result.stderr.endswith("RICH=False"), result.stderr[-300:]
