"""Same inventory and flags → byte-identical output, across separate processes (compared with cmp),
and the capacity table's summary of a large network.

Two processes share nothing (no cache, no module state), so if one of them read a stale or
foreign result, or iterated a set in hash order, the trees would differ here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = [ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "province.yaml"]


def imsdr(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "random", "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd)


@pytest.fixture(scope="module")
def three_provinces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("three") / "three.yaml"
    made = imsdr("example", "national", "--provinces", "3")
    assert made.returncode == 0, made.stderr
    path.write_text(made.stdout, encoding="utf-8")
    return path


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _cmp_trees(a: Path, b: Path) -> None:
    assert _files(a) == _files(b) and _files(a)
    for name in _files(a):
        same = subprocess.run(["cmp", str(a / name), str(b / name)], capture_output=True, text=True)
        assert same.returncode == 0, same.stdout + same.stderr


@pytest.mark.parametrize("sample", [*SAMPLES, "three"], ids=["lab", "province", "three-provinces"])
def test_plan_is_byte_identical_across_processes(sample: Path | str, three_provinces: Path,
                                                 tmp_path: Path) -> None:
    inventory = three_provinces if sample == "three" else sample
    for run in ("first", "second"):
        done = imsdr("plan", inventory, "--out", tmp_path / run, "--fail-on", "never")
        assert done.returncode == 0, done.stderr
    _cmp_trees(tmp_path / "first", tmp_path / "second")


@pytest.mark.parametrize("command", [["validate", "--format", "json"], ["check", "--format", "json"],
                                     ["capacity", "--format", "json"], ["capacity", "--all"],
                                     ["scenarios", "--depth", "2", "--format", "json"], ["graph"]])
def test_reports_are_byte_identical_across_processes(command: list[str], three_provinces: Path,
                                                     tmp_path: Path) -> None:
    outputs = []
    for run in ("first", "second"):
        done = imsdr(command[0], three_provinces, *command[1:])
        assert done.returncode in (0, 1), done.stderr
        (tmp_path / run).write_text(done.stdout, encoding="utf-8")
        outputs.append(tmp_path / run)
    assert subprocess.run(["cmp", *map(str, outputs)]).returncode == 0


def test_capacity_table_summarises_a_large_network(three_provinces: Path) -> None:
    summary = imsdr("capacity", three_provinces)
    full = imsdr("capacity", three_provinces, "--all")
    report = json.loads(imsdr("capacity", three_provinces, "--format", "json").stdout)
    # the generated network may fail its checks (e.g. registration storms): exit 1 is that finding
    expected = 0 if report["verdict"] == "ok" else 1
    assert summary.returncode == full.returncode == expected, summary.stderr + full.stderr
    checks = sum(len(report[k]) for k in ("pools", "pairs", "hss", "cscf", "trunks", "takeovers", "sites",
                                           "risks", "storms", "dimensions"))
    assert f"{checks:,} checks in all; --all lists every check" in summary.stdout
    assert "Capacity checks (summary)" in summary.stdout
    verdict = re.search(r"capacity (ok|fail) \((\d+) shortfalls?\)", summary.stdout)
    assert verdict and verdict.group(1) == report["verdict"], summary.stdout[-2000:]
    assert (verdict.group(2) == "0") == (report["verdict"] == "ok")
    assert len(summary.stdout.splitlines()) < 40 < len(full.stdout.splitlines())
    for pool in report["pools"]:  # --all lists every check with its formula
        assert pool["id"] in full.stdout
    assert "Capacity checks (summary)" not in full.stdout


def test_capacity_summary_lists_the_checks_that_are_not_ok(three_provinces: Path, tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(three_provinces.read_text(encoding="utf-8"))
    small = [el for el in data["elements"] if el["type"] == "hss"][:2]
    for el in small:
        el["capacity"] = {"subscribers": 1000}
    path = tmp_path / "short.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    summary = imsdr("capacity", path)
    report = json.loads(imsdr("capacity", path, "--format", "json").stdout)
    failing = [h for h in report["hss"] if h["verdict"] == "fail"]
    assert summary.returncode == 1 and failing, summary.stderr
    assert "HSS sizing with dynamic restoration data: checks not ok" in summary.stdout
    for hss in failing:
        assert hss["id"] in summary.stdout
    n = report["failures"]
    assert f"capacity fail ({n} shortfall{'s' if n != 1 else ''})" in " ".join(summary.stdout.split())
