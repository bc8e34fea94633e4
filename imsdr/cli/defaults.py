"""Team defaults: the options a team always passes, in ``imsdr.toml`` (or ``[tool.imsdr]`` of
``pyproject.toml``) beside the inventory.

::

    # imsdr.toml
    fail-on = "warning"          # every command that has --fail-on
    [plan]
    out = "plan"                 # paths are relative to this file's directory
    [check]
    format = "sarif"
    [render.dns]
    keys = "keys/tsig.conf"

A top-level key applies to every command that has that option; a table named after a command
(``[render.dns]`` for ``imsdr render dns``) applies to that command and wins over the top level.
An option given on the command line always wins. The file is found in the directory of the first
existing file named on the command line (the inventory), else in the working directory; it is
read as untrusted input (no links, a regular file of at most 64 KiB) and every unknown option or
table is refused with the file, line and a suggestion.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from imsdr.errors import ImsdrError

CONFIG = "imsdr.toml"
PYPROJECT = "pyproject.toml"
MAX_CONFIG_BYTES = 64 * 1024
# options that are never defaults: they change what the command is asked, not how it answers
NOT_CONFIGURABLE = frozenset({"help", "version", "force", "check", "diff", "drain", "fail", "today"})


def config_directory(args: list[str]) -> Path:
    """Where the team's defaults are looked for: beside the first existing file named in ``args``."""
    for arg in args:
        if arg.startswith("-") or "\0" in arg:
            continue
        try:
            path = Path(arg)
            if path.is_file():
                return path.resolve().parent
        except (OSError, ValueError):
            continue
    return Path.cwd()


def read_defaults(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    """The defaults file in ``directory`` and its table (imsdr.toml first, then pyproject.toml's
    ``[tool.imsdr]``); None when there is none."""
    import tomllib

    from imsdr.untrusted import read_untrusted_text

    for name in (CONFIG, PYPROJECT):
        path = directory / name
        if not os.path.lexists(path):
            continue
        text = read_untrusted_text(path, MAX_CONFIG_BYTES)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ImsdrError(f"{path}: not valid TOML: {exc}") from None
        if name == PYPROJECT:
            data = data.get("tool", {}).get("imsdr")
            if data is None:
                continue
            if not isinstance(data, dict):
                raise ImsdrError(f"{path}: [tool.imsdr] must be a table")
        return path, data
    return None


def _line_of(path: Path, key: str) -> int:
    """The first line of ``path`` that sets or opens ``key`` (1 when it cannot be told)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.split("=", 1)[0].strip().strip('"') == key or stripped.strip("[]").endswith(key):
            return number
    return 1


def defaults_for(command: Any, command_path: tuple[str, ...], args: list[str]) -> dict[str, Any]:
    """The ``default_map`` of ``command`` (its path from the root, e.g. ("render", "dns")) from
    the team's defaults file: parameter name → value; paths made relative to the file."""
    found = read_defaults(config_directory(args))
    if found is None:
        return {}
    path, data = found
    options = {opt.lstrip("-"): param for param in command.params if param.param_type_name == "option"
               for opt in param.opts if opt.startswith("--")}
    own = data
    for part in command_path:
        own = own.get(part, {}) if isinstance(own, dict) else {}
    values: dict[str, Any] = {}
    for scope, table in (("top level", data), (f"[{'.'.join(command_path)}]", own)):
        if not isinstance(table, dict):
            raise ImsdrError(f"{path}:{_line_of(path, command_path[-1])}: {scope} must be a table of options")
        for key, value in table.items():
            if isinstance(value, dict):
                continue  # another command's table
            param = options.get(key)
            if param is None or key in NOT_CONFIGURABLE:
                if scope == "top level":
                    continue  # an option of other commands
                known = sorted(k for k in options if k not in NOT_CONFIGURABLE)
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f" (it takes: {', '.join(known)})"
                raise ImsdrError(f"{path}:{_line_of(path, key)}: {scope}: 'imsdr {' '.join(command_path)}' "
                                 f"has no option --{key} to default{hint}")
            _check_value(path, scope, key, param, value)
            values[param.name] = _relative(path, param, value)
    return values


def _check_value(path: Path, scope: str, key: str, param: Any, value: Any) -> None:
    """Refuse a value the option cannot take, at its line in the defaults file (not as a
    command-line error the user never typed)."""
    from enum import Enum

    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    where = f"{path}:{_line_of(path, key)}: {scope}: {key}"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = [str(member.value) for member in annotation]
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ImsdrError(f"{where} = {value!r} is not one of: {', '.join(choices)}{hint}")
        return
    expected = {bool: bool, int: int, float: (int, float), str: str, Path: str}.get(annotation)  # type: ignore[arg-type]
    if expected is not None and (not isinstance(value, expected) or (expected is int and isinstance(value, bool))):
        kind = {bool: "true or false", int: "a whole number", float: "a number"}.get(annotation, "a string")  # type: ignore[arg-type]
        raise ImsdrError(f"{where} = {value!r}: expected {kind}")


def _relative(config: Path, param: Any, value: Any) -> Any:
    """A path option's value is relative to the defaults file's directory (not the working one)."""
    is_path = getattr(getattr(param, "type_descriptor", None), "annotation", None) is Path
    if is_path and isinstance(value, str) and value and not os.path.isabs(value):
        return str(config.parent / value)
    return value
