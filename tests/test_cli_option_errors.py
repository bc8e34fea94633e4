"""Bad option values: one plain line naming the option and what it accepts, exit 2.

The options are discovered from the CLI itself (every command, every option whose values are a
choice or a number), so a new option is covered without being listed here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from imsdr.cli.app import app

NOISE = ("Value error", "Input should", "pydantic", "Traceback", "unable to parse")


@dataclass(frozen=True)
class ValueCase:
    command: tuple[str, ...]
    option: Any  # the click parameter
    value: str
    expected: tuple[str, ...]  # every word of what the option accepts

    def __str__(self) -> str:
        return f"{' '.join(self.command)} {self.option.opts[0]} {self.value!r}"


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _commands(sub, (*path, name))


def _cases() -> list[ValueCase]:
    cases = []
    for path, command in _commands(typer.main.get_command(app)):
        for option in command.params:
            descriptor = getattr(option, "type_descriptor", None)
            if descriptor is None or not option.opts[0].startswith("-"):
                continue
            if descriptor.is_choice:
                choices = tuple(str(getattr(c, "value", c)) for c in descriptor.choices)
                for bad in ("no-such-value", "", "\x1b[31mred"):
                    cases.append(ValueCase(path, option, bad, choices))
            elif descriptor.annotation in (int, float):
                info = descriptor.parameter_info
                bounds = tuple(str(b) for b in (info.min, info.max) if b is not None)
                bad_values = ["abc", "1.5x"]
                if info.min is not None:
                    bad_values.append(str(info.min - 1))
                if info.max is not None:
                    bad_values.append(str(info.max + 1))
                for bad in bad_values:
                    cases.append(ValueCase(path, option, bad, bounds))
    return cases


CASES = _cases()


def test_the_discovery_finds_the_options_users_mistype() -> None:
    found = {(c.command, c.option.opts[0]) for c in CASES}
    assert (("check",), "--format") in found and (("check",), "--fail-on") in found
    assert (("render", "dns"), "--serial") in found and (("example", "national"), "--provinces") in found
    assert len({(c.command) for c in CASES}) >= 12


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_bad_option_value_is_one_clean_line(case: ValueCase) -> None:
    result = CliRunner().invoke(app, [*case.command, case.option.opts[0], case.value])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    line = errors[0]
    hint = " / ".join(f"'{opt}'" for opt in case.option.opts)
    assert line.startswith(f"Error: Invalid value for {hint}: {case.value!r} is not "), line
    for word in case.expected:
        assert word in line, line
    assert not any(noise in result.stderr for noise in NOISE), result.stderr
    assert "\x1b" not in result.stderr  # the value is shown escaped, never as a terminal control


def test_a_near_miss_gets_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["check", "--format", "JSON", "x.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--format' / '-f': 'JSON' is not one of: table, text, json, sarif, markdown, "
        "github, gitlab; did you mean 'json'?")


def test_a_missing_file_keeps_its_own_message() -> None:
    result = CliRunner().invoke(app, ["import", "bind", "x.conf", "--zones-dir", "/no/such/dir"])
    assert result.exit_code == 2
    assert "'/no/such/dir' does not exist" in result.stderr.splitlines()[-1]
