"""Progress on stderr: a spinner on a terminal, nothing when piped; --verbose times the stages,
--quiet silences them; stdout carries the data either way."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_piped_output_has_no_progress(tmp_path: Path) -> None:
    result = run("plan", str(LAB), "--out", "plan", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["format"] == "imsdr.plan/1"


def test_verbose_times_each_stage_and_quiet_silences_it(tmp_path: Path) -> None:
    analysis = [f"loading {LAB}", "DNS plan", "check", "capacity", "scenarios", "runbook checks and actions"]
    rendering = [*analysis, "availability", "runbook pages", "writing runbooks/"]
    for jobs, stages in (("1", [*rendering, "writing diameter/", "writing dns/", "writing monitoring/"]),
                         # 2: the children's stages are not shown (they write while the analyses go on)
                         ("2", [*rendering, "dns/, monitoring/ and diameter/ (written alongside)"])):
        verbose = run("--verbose", "plan", str(LAB), "--out", "plan", "--format", "json", "--jobs", jobs,
                      cwd=tmp_path)
        assert verbose.returncode == 0
        assert f"planning {LAB} into plan: " in verbose.stderr and verbose.stderr.rstrip().endswith(" s")
        timed = [line.strip().rsplit(": ", 1)[0] for line in verbose.stderr.splitlines() if line.startswith("  ")]
        assert timed == [*stages, "writing plan.json"]
        json.loads(verbose.stdout)
    quiet = run("--quiet", "--verbose", "validate", str(LAB), cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""
    loading = run("-v", "check", str(LAB), "--format", "json", cwd=tmp_path)
    assert f"loading {LAB}: " in loading.stderr


def test_a_terminal_gets_a_spinner_on_stderr_and_the_data_stays_clean(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin/stdout/stderr on the pseudo-terminal, stdout sent to a file
        os.chdir(tmp_path)
        with open(out, "w") as sink:
            os.dup2(sink.fileno(), 1)
        os.execv(sys.executable, [sys.executable, "-m", "imsdr", "plan", str(LAB), "--out", "plan",
                                  "--format", "json"])
    screen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"planning" in screen, screen[-500:]
    stage_names = (b"loading", b"DNS plan", b"check", b"capacity", b"scenarios", b"runbook", b"writing")
    assert any(name in screen for name in stage_names), "the stage running now is shown"
    assert json.loads(out.read_text())["format"] == "imsdr.plan/1"
