"""`imsdr init` writes all its files or none: a failure at any step (creating a directory, a
temporary file, writing, renaming) leaves the project directory as it was, new or --force."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app

runner = CliRunner()


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def failing(real: Callable[..., Any], at: int, counter: list[int]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        if counter[0] == at:
            raise OSError(28, "No space left on device", str(args[0]) if args else "")
        return real(*args, **kwargs)
    return call


STEPS = ("mkdir", "open", "write", "rename")


def project_dir(root: Path, force: bool) -> Path:
    root.mkdir()
    (root / "keep.txt").write_text("the user's own file\n")
    if force:
        assert runner.invoke(app, ["init", str(root), "--lab"]).exit_code == 0
    return root


def count_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, force: bool) -> int:
    project = project_dir(tmp_path / "count", force)
    counter = [0]
    monkeypatch.setattr(os, step, failing(getattr(os, step), -1, counter))
    assert runner.invoke(app, ["init", str(project), *(["--force"] if force else [])]).exit_code == 0
    monkeypatch.undo()
    return counter[0]


@pytest.mark.parametrize("force", [False, True], ids=["new", "--force over an earlier init"])
@pytest.mark.parametrize("step", STEPS)
def test_a_failure_at_any_step_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str,
                                              force: bool) -> None:
    args = ["--force"] if force else []
    calls = count_calls(tmp_path, monkeypatch, step, force)
    assert calls >= (0 if (step, force) == ("mkdir", True) else 1), step  # (no directory to make)
    for at in range(1, calls + 1):
        project = project_dir(tmp_path / f"p{at}", force)
        before = snapshot(project)
        counter = [0]
        monkeypatch.setattr(os, step, failing(getattr(os, step), at, counter))
        result = runner.invoke(app, ["init", str(project), *args])
        monkeypatch.undo()
        assert result.exit_code == 2, (step, at, result.output)
        assert "Traceback" not in result.output  # (an early open may be the defaults file, read before)
        if step in ("write", "rename"):
            assert "nothing written" in result.output, result.output
        assert snapshot(project) == before, (step, at)


def test_a_target_that_is_a_directory_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".pre-commit-config.yaml").mkdir(parents=True)
    before = snapshot(project)
    result = runner.invoke(app, ["init", str(project), "--force"])
    assert result.exit_code == 2 and "is a directory" in result.output
    assert snapshot(project) == before
