"""Every ```console block of README.md and docs/**/*.md runs, and prints what the page says.

The conventions (also in docs/contributing.md):

- ``$ COMMAND`` lines are run by bash, in order, in one scratch directory per page that holds a
  copy of ``inventories/``, ``examples/``, ``docs/``, ``benchmarks/`` and ``tests/corpus/`` (so pages can run what
  they ship, and whatever a command writes stays in the scratch directory);
- the lines after a command, up to the next ``$``, are its output (stdout and stderr, as a terminal
  shows them); a line ``...`` stands for any number of lines and ``...`` inside a line for any text;
- a command exits 0 unless it ends with ``# exit N``;
- shell snippets that are not to be run (installation, CI configuration) use ```sh or ```yaml.

A page added by anyone is picked up automatically.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("inventories", "examples", "docs", "benchmarks", "tests/corpus")
EXIT = re.compile(r"\s+# exit (\d+)$")
TIMEOUT = 300


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)
    exit_code: int = 0
    line: int = 0


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def console_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Each ```console block with the line number of its first line."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(text.splitlines(), 1):
        if current is None and line.strip() == "```console":
            current, start = [], number + 1
        elif current is not None and line.strip() == "```":
            blocks.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def steps(text: str) -> list[Step]:
    found: list[Step] = []
    for start, lines in console_blocks(text):
        for offset, line in enumerate(lines):
            if line.startswith("$ "):
                command = line[2:]
                code = EXIT.search(command)
                found.append(Step(EXIT.sub("", command) if code else command, [],
                                  int(code.group(1)) if code else 0, start + offset))
            elif found and found[-1].line >= start:
                found[-1].expected.append(line)
            else:
                raise AssertionError(f"line {start + offset}: a console block starts with output, not a `$ ` "
                                     "command (use ```text for a synopsis, ```sh for commands not run)")
    return found


def matches(expected: list[str], actual: str) -> bool:
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.rstrip().split("...")) + r"[ \t]*\n")
    text = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch("".join(parts), text, re.DOTALL) is not None


def scratch(tmp_path: Path) -> Path:
    for name in SHIPPED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tmp_path / name,
                            ignore=shutil.ignore_patterns("__pycache__", ".gitignore", "out"))
    return tmp_path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "FORCE_COLOR"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100",
               LINES="50", NO_COLOR="1", TERM="dumb", LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8")
    return env


PAGES = [p for p in pages() if console_blocks(p.read_text(encoding="utf-8"))]


def test_the_readme_has_runnable_examples() -> None:
    assert len(steps((ROOT / "README.md").read_text(encoding="utf-8"))) >= 8


def test_matcher() -> None:
    assert matches(["a", "...", "z"], "a\nb\nc\nz\n")
    assert matches(["took ... s"], "took 0.3 s\n")
    assert not matches(["a", "z"], "a\nb\nz\n")
    assert matches([], "")
    assert not matches([], "something\n")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_console_blocks_run_as_written(page: Path, tmp_path: Path) -> None:
    where = scratch(tmp_path)
    env = environment()
    for step in steps(page.read_text(encoding="utf-8")):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", step.command], cwd=where, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        label = f"{page.relative_to(ROOT)}:{step.line}: $ {step.command}"
        assert "Traceback" not in done.stdout, f"{label}\n{done.stdout}"
        assert done.returncode == step.exit_code, (
            f"{label}\nexit {done.returncode}, the page says {step.exit_code}\n{done.stdout}")
        assert matches(step.expected, done.stdout), (
            f"{label}\n--- the page says:\n" + "\n".join(step.expected) + f"\n--- the command printed:\n{done.stdout}")
