"""`imsdr plan`: the whole pipeline into one directory, atomically; --check; the pre-commit hook."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from imsdr.output.atomic import MARKER

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("plan") / "out"
    result = run("plan", str(PROVINCE), "--out", str(out))
    return out, result


def test_plan_writes_dns_views_dispatcher_runbooks_and_plan_json(planned) -> None:
    out, result = planned
    assert result.returncode == 0, result.stderr
    files = tree(out)
    assert "dns/named/dns-a-1.conf" in files and "dns/named/dns-b-1.conf" in files
    assert "dns/zones/core-site-a/ims.example.net.zone" in files and "dns/resolvers/capital.conf" in files
    assert any(p.startswith("dns/zones/enum/") and p.endswith(".e164.arpa.zone") for p in files)
    assert "dns/kamailio/sbc-capital/dispatcher.list" in files
    assert b"view " in files["dns/named/dns-a-1.conf"]
    assert "runbooks/README.md" in files and "runbooks/sbc.md" in files
    assert "plan.json" in files
    # the summary names the verdicts and where the files are
    for word in ("check", "capacity", "dns", "runbooks", str(out)):
        assert word in result.stdout


def test_plan_json_lists_every_file_with_its_hash(planned) -> None:
    out, _ = planned
    data = json.loads((out / "plan.json").read_text())
    assert data["format"] == "imsdr.plan/1"
    assert data["passed"] is True and data["check"]["passed"] is True
    assert data["capacity"]["verdict"] == "ok"
    listed = {f["path"]: f for f in data["files"]}
    on_disk = {k: v for k, v in tree(out).items() if k != "plan.json" and Path(k).name != MARKER}
    assert set(listed) == set(on_disk)
    for path, content in on_disk.items():
        assert listed[path]["sha256"] == hashlib.sha256(content).hexdigest()
        assert listed[path]["bytes"] == len(content)
    assert data["runbooks"] == sorted(p for p in on_disk if p.startswith("runbooks/"))
    assert data["dns"]["zone_files"] == sum(1 for p in on_disk if p.endswith(".zone"))


def test_plan_json_format_matches_stdout_json(planned, tmp_path: Path) -> None:
    out, _ = planned
    result = run("plan", str(PROVINCE), "--out", str(tmp_path / "o"), "--format", "json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    written = json.loads((tmp_path / "o" / "plan.json").read_text())
    # the JSON envelope (docs/json.md) adds the imsdr version and the inventory path as given;
    # plan.json keeps the file name only, so that the same inventory gives the same bytes anywhere
    assert printed.pop("imsdr") and printed.pop("inventory") == str(PROVINCE)
    assert written.pop("inventory") == PROVINCE.name
    assert printed == written


def test_plan_is_deterministic(planned, tmp_path: Path) -> None:
    out, _ = planned
    again = tmp_path / "again"
    result = run("plan", str(PROVINCE), "--out", str(again))
    assert result.returncode == 0
    # a fresh render (no previous tree) dates new SOA serials; zone bodies and everything else match
    first, second = tree(out), tree(again)
    assert set(first) == set(second)
    differing = [p for p in first if first[p] != second[p]]
    assert all(p.endswith(".zone") or p == "plan.json" for p in differing), differing
    # and re-planning into the same directory is byte-identical
    result = run("plan", str(PROVINCE), "--out", str(out))
    assert result.returncode == 0
    assert tree(out) == first


def test_one_or_two_processes_write_the_same_tree(planned, tmp_path: Path) -> None:
    out, _ = planned
    for jobs in ("1", "2"):
        again = tmp_path / f"jobs-{jobs}"
        shutil.copytree(out, again)  # (the previous tree keeps the SOA serials)
        result = run("plan", str(PROVINCE), "--out", str(again), "--jobs", jobs)
        assert result.returncode == 0, result.stderr
        assert tree(again) == tree(out)
    assert run("plan", str(PROVINCE), "--out", str(tmp_path / "x"), "--jobs", "0").returncode == 2


def test_check_passes_on_an_unchanged_tree(planned) -> None:
    out, _ = planned
    before = tree(out)
    result = run("plan", str(PROVINCE), "--out", str(out), "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "up to date" in result.stderr
    assert tree(out) == before


def test_check_fails_with_a_diff_after_an_inventory_change(planned, tmp_path: Path) -> None:
    out, _ = planned
    before = tree(out)
    changed = tmp_path / "province.yaml"
    changed.write_text(PROVINCE.read_text().replace(
        "{id: sbc-harbour, type: sbc, site: site-b, vendor: vendor-x, addresses: [203.0.113.20, \"2001:db8:f00::20\"], "
        "access_addresses: [203.0.113.20,",
        "{id: sbc-harbour, type: sbc, site: site-b, vendor: vendor-x, addresses: [203.0.113.21, \"2001:db8:f00::20\"], "
        "access_addresses: [203.0.113.21,"))
    assert changed.read_text() != PROVINCE.read_text()
    result = run("plan", str(changed), "--out", str(out), "--check", "--diff")
    assert result.returncode == 1
    assert "-sbc-harbour" in result.stdout or "203.0.113.20" in result.stdout
    assert "+" in result.stdout and "203.0.113.21" in result.stdout
    assert f"--- {out}/dns/zones/users-harbour/ims.example.net.zone" in result.stdout
    assert "out of date" in result.stderr
    assert tree(out) == before  # --check never writes
    data = json.loads(run("plan", str(changed), "--out", str(out), "--check", "--format", "json").stdout)
    assert data["up_to_date"] is False and "dns/zones/users-harbour/ims.example.net.zone" in data["changed"]


def test_check_reports_a_missing_tree_as_new_files(tmp_path: Path) -> None:
    result = run("plan", str(PROVINCE), "--out", str(tmp_path / "none"), "--check", "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert "plan.json" in data["added"] and "runbooks/README.md" in data["added"]
    assert not (tmp_path / "none").exists()


def test_invalid_inventory_exits_2_and_leaves_the_tree_untouched(planned, tmp_path: Path) -> None:
    out, _ = planned
    before = tree(out)
    broken = tmp_path / "broken.yaml"
    broken.write_text(PROVINCE.read_text().replace("options_interval: 10", "options_interval: -1"))
    result = run("plan", str(broken), "--out", str(out))
    assert result.returncode == 2
    assert "broken.yaml:" in result.stderr and "options_interval" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree(out) == before


@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: the runbooks are rendered by a forked child
def test_template_error_exits_2_and_leaves_the_tree_untouched(planned, tmp_path: Path, jobs: str) -> None:
    out, _ = planned
    before = tree(out)
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "site.md.j2").write_text("# {{ site.name }}\n\n{{ site.no_such_field }}\n")
    result = run("plan", str(PROVINCE), "--out", str(out), "--templates", str(templates), "--jobs", jobs)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "site.md.j2:3" in result.stderr and "no_such_field" in result.stderr
    assert tree(out) == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no staging left


def test_fail_on_warning_exits_1_but_writes_the_plan(tmp_path: Path) -> None:
    out = tmp_path / "out"
    gate = run("check", str(PROVINCE), "--format", "json")
    warnings = json.loads(gate.stdout)["counts"]["warning"]
    result = run("plan", str(PROVINCE), "--out", str(out), "--fail-on", "warning")
    assert result.returncode == (1 if warnings else 0)
    data = json.loads((out / "plan.json").read_text())
    assert data["passed"] is (warnings == 0)
    assert len(data["check"]["failing"]) == warnings
    assert (out / "runbooks" / "README.md").exists()


def test_plan_fails_on_capacity_shortfall(tmp_path: Path) -> None:
    small = tmp_path / "small.yaml"
    small.write_text(PROVINCE.read_text().replace(
        "hss-a-1, type: hss, site: site-a, vendor: vendor-z, addresses: [192.0.2.30, \"2001:db8:a::30\"], "
        "capacity: {subscribers: 6000000, transactions_per_second: 20000}",
        "hss-a-1, type: hss, site: site-a, vendor: vendor-z, addresses: [192.0.2.30, \"2001:db8:a::30\"], "
        "capacity: {subscribers: 1000000, transactions_per_second: 20000}"))
    assert small.read_text() != PROVINCE.read_text()
    result = run("plan", str(small), "--out", str(tmp_path / "out"), "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["passed"] is False and data["capacity"]["verdict"] == "fail"
    assert any(line.startswith("CAP-") for line in data["check"]["failing"])
    appendix = (tmp_path / "out" / "runbooks" / "capacity.md").read_text()
    assert "**fail**" in appendix and "| fail |" in appendix


# --- pre-commit hook ------------------------------------------------------------------------------

def test_pre_commit_hook_runs_imsdr_check_per_inventory(tmp_path: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "imsdr-check")
    assert hook["language"] == "python" and "imsdr check" in hook["entry"]
    assert hook.get("pass_filenames", True) is True
    import re

    assert re.search(hook["files"], "inventories/province.yaml")
    assert not re.search(hook["files"], ".pre-commit-config.yaml")
    entry = shlex.split(hook["entry"])
    env_bin = str(Path(sys.executable).parent)
    env = {"PATH": f"{env_bin}:/usr/bin:/bin", "COLUMNS": "300"}

    ok = subprocess.run([*entry, str(PROVINCE)], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    broken = tmp_path / "inventories" / "broken.yaml"
    broken.parent.mkdir()
    broken.write_text(PROVINCE.read_text().replace("diameter_watchdog: 8", "diameter_watchdog: 15"))
    bad = subprocess.run([*entry, str(PROVINCE), str(broken)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert bad.returncode == 1
    assert "broken.yaml" in bad.stdout + bad.stderr
    # hook args (pre-commit puts them before the file names) reach imsdr check
    strict = subprocess.run([*entry, "--fail-on", "warning", str(PROVINCE)], capture_output=True, text=True,
                            env=env, timeout=120)
    warnings = json.loads(run("check", str(PROVINCE), "--format", "json").stdout)["counts"]["warning"]
    assert strict.returncode == (1 if warnings else 0)


def test_plan_does_not_depend_on_hash_seed(planned, tmp_path: Path) -> None:
    import os

    out, _ = planned
    other = tmp_path / "seeded"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(PROVINCE), "--out", str(other)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    first, second = tree(out), tree(other)
    same = [p for p in first if not p.endswith(".zone") and p != "plan.json"]
    assert {p: first[p] for p in same} == {p: second[p] for p in same}


def test_capacity_details_count_in_the_singular_and_plural(tmp_path: Path) -> None:
    result = run("plan", str(ROOT / "inventories" / "lab.yaml"), "--out", str(tmp_path / "out"), "--format", "json")
    details = json.loads(result.stdout)["capacity"]["details"]
    # the lab has one pool, no pairs, one HSS, no trunk groups and four site checks
    assert details == "0 shortfalls; 1 pool, 0 pairs, 1 HSS, 0 trunk groups, 4 site checks"


def test_plan_lints_the_dns_base_zones_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check's DNS-005 lints the base zones; writing dns/ continues that lint with the views
    instead of linting the whole plan again (imsdr.dns.lint.PlanLint, held by the pipeline)."""
    from imsdr.dns import lint
    from imsdr.plan import write_plan

    runs: list[bool] = []

    class Counted(lint._Run):
        def __init__(self, plan, views: bool) -> None:  # type: ignore[no-untyped-def]
            runs.append(views)
            super().__init__(plan, views)

    monkeypatch.setattr(lint, "_Run", Counted)
    summary = write_plan(PROVINCE, tmp_path / "out")
    assert runs == [False]  # one base-zone lint, no second one from the start
    assert summary["dns"]["zone_files"] > 0
