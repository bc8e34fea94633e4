"""`imsdr plan --check` summarises a change per view and record (octoDNS-plan style)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed plan of the lab, and the lab with one SBC address changed."""
    where = tmp_path_factory.mktemp("review")
    shutil.copy(LAB, where / "lab.yaml")
    assert run("plan", "lab.yaml", "--out", "plan", cwd=where).returncode == 0
    text = LAB.read_text().replace("addresses: [203.0.113.10]", "addresses: [203.0.113.11]")
    assert text != LAB.read_text()
    (where / "changed.yaml").write_text(text)
    return where


def test_json_review_names_each_changed_record(changed: Path) -> None:
    result = run("plan", "changed.yaml", "--out", "plan", "--check", "--format", "json", cwd=changed)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    review = data["review"]
    dns = [c for c in review["changes"] if c["part"] == "dns" and c["what"].endswith(" A")]
    assert dns and all(c["action"] == "change" for c in dns)
    assert all(c["old"].endswith("203.0.113.10") and c["new"].endswith("203.0.113.11") for c in dns)
    assert review["counts"]["dns"]["change"] >= len(dns)
    assert any(c["part"] == "runbook" for c in review["changes"])
    assert "+" in data["diff"] and "203.0.113.11" in data["diff"], "the raw diff stays available"
    # every changed file appears in the review
    assert {c["where"] for c in review["changes"]} == set(data["changed"])


def test_table_and_markdown(changed: Path) -> None:
    table = run("plan", "changed.yaml", "--out", "plan", "--check", cwd=changed)
    assert table.returncode == 1
    assert "imsdr plan --check: " in table.stdout and "dns: +0 -0 ~" in table.stdout
    assert "203.0.113.11" in table.stdout
    assert "--- plan/" not in table.stdout, "the raw diff only with --diff"
    markdown = run("plan", "changed.yaml", "--out", "plan", "--check", "--format", "markdown", cwd=changed)
    assert markdown.stdout.startswith("### imsdr plan: ")
    assert "| ~ | dns | `dns/zones/" in markdown.stdout and "`60 203.0.113.11`" in markdown.stdout
    raw = run("plan", "changed.yaml", "--out", "plan", "--check", "--diff", cwd=changed)
    assert "--- plan/" in raw.stdout and "+++ plan/" in raw.stdout


def test_up_to_date_has_no_changes(changed: Path) -> None:
    same = run("plan", "lab.yaml", "--out", "plan", "--check", "--format", "markdown", cwd=changed)
    assert same.returncode == 0 and "is up to date" in same.stdout


def test_added_and_removed_records() -> None:
    from imsdr.output.plan_review import _zone_changes

    old = {("a.example.", "A"): "60 192.0.2.1", ("b.example.", "A"): "60 192.0.2.2"}
    new = {("a.example.", "A"): "60 192.0.2.1", ("c.example.", "AAAA"): "60 2001:db8::1"}
    changes = _zone_changes("dns/zones/v/z.zone", old, new)
    assert [(c.what, c.action) for c in changes] == [("b.example. A", "remove"), ("c.example. AAAA", "add")]
