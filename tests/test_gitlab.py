"""GitLab: `imsdr check --format gitlab` writes a Code Quality report that the report's schema
accepts, and `imsdr init --ci gitlab` writes a pipeline whose script runs as written."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "schemas" / "gitlab-codequality.schema.json").read_text())
BAD = ROOT / "tests" / "corpus" / "bad" / "all-problems-in-one-run.yaml"
runner = CliRunner()


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "inventories" / "province.yaml", tmp_path / "province.yaml")
    shutil.copy(BAD, tmp_path / "bad.yaml")
    old = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def _report(*args: str) -> tuple[int, list]:
    result = runner.invoke(app, ["check", *args, "--format", "gitlab", "--today", "2026-12-01"])
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    return result.exit_code, report


def test_findings_are_code_quality_issues_at_their_line(workdir: Path) -> None:
    text = (workdir / "province.yaml").read_text()
    (workdir / "province.yaml").write_text(text.replace("diameter_watchdog: 8", "diameter_watchdog: 15"))
    code, issues = _report("province.yaml")
    assert code == 1
    by_rule = {issue["check_name"]: issue for issue in issues}
    timer = by_rule["TIMER-001"]
    line = 1 + text[:text.index("diameter_watchdog: 8")].count("\n")
    assert timer["location"] == {"path": "province.yaml", "lines": {"begin": line}}
    assert timer["severity"] == "critical" and timer["description"].startswith("TIMER-001: ")
    assert by_rule["MGCF-004"]["severity"] == "major"  # a warning


def test_fingerprints_do_not_move_with_the_line(workdir: Path) -> None:
    _, before = _report("province.yaml")
    text = (workdir / "province.yaml").read_text()
    (workdir / "province.yaml").write_text("# a comment moves every line down\n" + text)
    _, after = _report("province.yaml")
    assert [i["fingerprint"] for i in before] == [i["fingerprint"] for i in after]
    assert [i["location"]["lines"]["begin"] + 1 for i in before] == [i["location"]["lines"]["begin"] for i in after]
    assert len({i["fingerprint"] for i in after}) == len(after)


def test_invalid_input_is_reported_too(workdir: Path) -> None:
    code, issues = _report("bad.yaml")
    assert code == 2
    assert len(issues) == 9 and {i["check_name"] for i in issues} == {"INV-001"}
    assert all(i["location"]["path"] == "bad.yaml" for i in issues)


def test_init_ci_gitlab_pipeline_runs_as_written(tmp_path: Path) -> None:
    """The .gitlab-ci.yml's script, run line by line in the new project (the install line is the
    one thing replaced: this environment already has imsdr), passes on the fresh project once its
    plan is committed; its Code Quality artifact is what the job publishes."""
    project = tmp_path / "net"
    assert runner.invoke(app, ["init", str(project), "--ci", "gitlab"]).exit_code == 0
    assert not (project / ".github").exists()
    pipeline = yaml.safe_load((project / ".gitlab-ci.yml").read_text())
    job = pipeline["imsdr"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    from imsdr import __version__

    assert job["script"][0] == f'python -m pip install "${{IMSDR_PACKAGE:-imsdr=={__version__}}}"'
    assert "plan/** linguist-generated=true gitlab-generated" in (project / ".gitattributes").read_text()
    imsdr = [sys.executable, "-m", "imsdr"]
    subprocess.run([*imsdr, "plan", "inventory.yaml", "--out", "plan"], cwd=project, check=True,
                   capture_output=True, timeout=300)
    for line in job["script"][1:]:
        command = line.replace("imsdr ", shlex.join(imsdr) + " ", 1)
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=project, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    report = json.loads((project / "gl-code-quality-report.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report == [], "a fresh project earns no findings"
