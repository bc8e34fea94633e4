"""Review without noise: a two-line inventory change re-planned into the same directory changes only
the files and lines that change touches — no SOA serial churn in unchanged zones (the plan reuses
the serials of the tree it replaces), no timestamps, no reordering — and the tree has one marker."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from imsdr.output.atomic import MARKER

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
OLD_ADDRESS, NEW_ADDRESS = "192.0.2.50", "192.0.2.51"  # as-a-1's IPv4 address
OLD_CAPACITY = "{id: sbc-hill, type: sbc"  # the line whose registered_users goes 800,000 -> 900,000
# the pages and files a capacity figure of an SBC appears in
CAPACITY_FILES = re.compile(r"^(runbooks/(capacity|sbc|site-[^/]+)\.md|monitoring/headroom\.rules\.yml)$")
BOOKKEEPING = {"plan.json", "dns/README.md"}  # file digests; the serial table of the zones


def plan(inventory: Path, out: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(inventory), "--out", str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr


def tree(root: Path) -> dict[str, list[str]]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8").splitlines()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != MARKER and p.suffix != ".svg"}


def masked(line: str) -> str:
    """The line with its digests and numbers blanked: what is left must not change."""
    return re.sub(r"[0-9][0-9.,:]*", "#", re.sub(r"[0-9a-f]{64}", "DIGEST", line))


def changed_lines(old: list[str], new: list[str]) -> tuple[int, int]:
    """(lines removed, lines added) of a unified diff of the two files."""
    minus = plus = 0
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            minus += 1
        elif line.startswith("+") and not line.startswith("+++"):
            plus += 1
    return minus, plus


@pytest.fixture(scope="module")
def replanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[str]], dict[str, list[str]], Path]:
    work = tmp_path_factory.mktemp("review")
    inventory, out = work / "province.yaml", work / "plan"
    text = PROVINCE.read_text(encoding="utf-8")
    inventory.write_text(text, encoding="utf-8")
    plan(inventory, out)
    before = tree(out)
    lines = text.splitlines(keepends=True)
    edited = 0
    for i, line in enumerate(lines):
        if line.lstrip().startswith("- {id: as-a-1,") and OLD_ADDRESS in line:
            lines[i] = line.replace(f"[{OLD_ADDRESS},", f"[{NEW_ADDRESS},")
            edited += 1
        elif line.lstrip().startswith(f"- {OLD_CAPACITY}"):
            lines[i] = line.replace("registered_users: 800000", "registered_users: 900000")
            edited += 1
    new_text = "".join(lines)
    assert edited == 2 and sum(a != b for a, b in zip(text.splitlines(), new_text.splitlines(), strict=True)) == 2
    inventory.write_text(new_text, encoding="utf-8")
    plan(inventory, out)
    return before, tree(out), out


def test_a_two_line_change_touches_only_the_files_it_concerns(replanned) -> None:
    before, after, _ = replanned
    assert set(before) == set(after)  # nothing added, nothing removed
    changed = {rel for rel in before if before[rel] != after[rel]}
    about_address = {rel for rel, lines in before.items() if any(OLD_ADDRESS in line for line in lines)}
    expected = about_address | BOOKKEEPING | {rel for rel in before if CAPACITY_FILES.match(rel)}
    assert changed <= expected, sorted(changed - expected)
    assert about_address <= changed  # every file naming the address follows it
    assert not any(rel.startswith("diameter/") for rel in changed - about_address)


def test_unchanged_zones_keep_their_serial_and_changed_zones_move_three_lines(replanned) -> None:
    before, after, _ = replanned
    zones = [rel for rel in before if rel.endswith(".zone")]
    moved = [rel for rel in zones if before[rel] != after[rel]]
    assert moved == [rel for rel in zones if any(f" {OLD_ADDRESS}" in line for line in before[rel])]
    assert moved and len(moved) < len(zones)
    for rel in moved:  # the SOA serial, the content digest and the A record: nothing else
        assert changed_lines(before[rel], after[rel]) == (3, 3), rel
    readme = changed_lines(before["dns/README.md"], after["dns/README.md"])
    assert readme == (len(moved), len(moved))  # one serial row per moved zone


def test_no_reordering_and_no_churn_a_measured_bound(replanned) -> None:
    """Every changed line stays where it was and differs only in the changed values (numbers,
    digests, the address); the total is bounded by what the change concerns."""
    before, after, _ = replanned
    total = 0
    expected = 0
    for rel in before:
        old, new = before[rel], after[rel]
        if old == new:
            continue
        assert len(old) == len(new), rel  # nothing inserted, nothing dropped
        differing = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
        assert changed_lines(old, new) == (len(differing), len(differing)), rel  # positional: no moves
        for a, b in differing:
            assert masked(a.replace(OLD_ADDRESS, NEW_ADDRESS)) == masked(b), (rel, a, b)
        total += len(differing)
        address_lines = sum(OLD_ADDRESS in line for line in old)
        if rel == "plan.json":
            expected += 2 * (len([r for r in before if before[r] != after[r]]) - 1)  # sha256 and bytes
        elif rel.endswith(".zone"):
            expected += address_lines + 2
        elif rel == "dns/README.md":
            expected += sum(r.endswith(".zone") and before[r] != after[r] for r in before)
        elif CAPACITY_FILES.match(rel):  # rows sizing SBCs: the takeover of sbc-hill, site losses
            expected += address_lines + sum(("sbc" in line.lower() and "%" in line)
                                            or "users" in line for line in old)
        else:
            expected += address_lines
    assert 0 < total <= expected
    assert total <= 60  # 2 inventory lines -> a few dozen rendered lines, not hundreds


def test_re_planning_the_same_inventory_changes_nothing(replanned, tmp_path: Path) -> None:
    _, after, out = replanned
    inventory = out.parent / "province.yaml"
    plan(inventory, out)
    assert tree(out) == after  # no timestamps, no serial bump


def test_one_marker_per_output_tree(replanned) -> None:
    _, _, out = replanned
    assert [p.relative_to(out).as_posix() for p in out.rglob(MARKER)] == [MARKER]


def test_plan_check_markdown_shows_headroom_and_load_changes(replanned, tmp_path: Path) -> None:
    _, _, out = replanned
    edited = out.parent / "province.yaml"
    committed = tmp_path / "plan"
    plan(PROVINCE, committed)  # the plan before the change, as committed
    result = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(edited), "--out", str(committed),
                             "--check", "--format", "markdown"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    text = result.stdout
    capacity = text.split("#### Headroom and load", 1)[1].split("#### Files", 1)[0]
    # sbc-hill's capacity went 800,000 -> 900,000: when sbc-lake (site-b) fails it takes 650,000 users
    assert "| ~ | headroom | `sbc-hill` | `81.2% with site-b lost` | `72.2% with site-b lost` |" in capacity
    assert ("| ~ | load | `sbc-hill` | `400,000 of 800,000 users (50%)` | `400,000 of 900,000 users (44.4%)` |"
            in capacity)
    assert capacity.count("| ~ |") == 2  # the address change moves no headroom
    assert "as-a-1.ims.example.net. A" in text.split("#### Files", 1)[1]


def test_plan_check_json_with_headroom_changes_matches_its_schema(replanned, tmp_path: Path) -> None:
    from test_json_contract import validator

    _, _, out = replanned
    committed = tmp_path / "plan"
    plan(PROVINCE, committed)
    result = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(out.parent / "province.yaml"), "--out",
                             str(committed), "--check", "--format", "json"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    parts = {c["part"] for c in data["review"]["changes"]}
    assert {"headroom", "load", "dns"} <= parts
    assert list(validator("plan-check").iter_errors(data)) == []
