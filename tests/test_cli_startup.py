"""Start-up work a command does not need: rich is not imported when nothing is drawn on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from imsdr.cli.common import _may_be_terminal

ROOT = Path(__file__).resolve().parent.parent


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
