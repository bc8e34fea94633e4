"""--out never deletes what imsdr did not write.

imsdr marks the root of every directory it writes (``.imsdr-output``: a format version and the
files it wrote) and replaces only a directory that does not exist, is empty, or carries that
marker and nothing else. ``--force`` gets past that rule and follows a symlinked --out, but never
replaces the file system root, a system directory, HOME, the working directory or a parent, a git
checkout, or the directory holding the inventory or the templates. Every case here uses real files.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from imsdr.cli.app import app
from imsdr.errors import ImsdrError
from imsdr.output.atomic import MARKER, OutputTarget, atomic_directory, check_output, protected_reason

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
COMMANDS = {"plan": ["plan"], "render dns": ["render", "dns"], "render runbook": ["render", "runbook"]}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="imsdr")


def snapshot(root: Path) -> dict[str, bytes | str | None]:
    tree: dict[str, bytes | str | None] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        tree[rel] = os.readlink(path) if path.is_symlink() else None if path.is_dir() else path.read_bytes()
    return tree


def refused(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_existing_directory_imsdr_did_not_write_is_refused_until_force(command: str, tmp_path: Path) -> None:
    out = tmp_path / "D"
    out.mkdir()
    (out / "notes.txt").write_text("my notes\n")
    before = snapshot(tmp_path)
    result = invoke(*COMMANDS[command], str(LAB), "--out", str(out))
    refused(result, "refusing to replace", "notes.txt", MARKER, "--force")
    assert snapshot(tmp_path) == before
    result = invoke(*COMMANDS[command], str(LAB), "--out", str(out), "--force")
    assert result.exit_code in (0, 1), result.stderr
    assert not (out / "notes.txt").exists() and (out / MARKER).is_file()
    # now it is imsdr's: the next run replaces it without --force
    result = invoke(*COMMANDS[command], str(LAB), "--out", str(out))
    assert result.exit_code in (0, 1), result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_added_to_imsdr_output_stops_the_next_run(command: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke(*COMMANDS[command], str(LAB), "--out", str(out)).exit_code in (0, 1)
    marker = json.loads((out / MARKER).read_text())
    assert marker["format"] == "imsdr.output/1"
    assert marker["files"] == sorted(str(p.relative_to(out)) for p in out.rglob("*")
                                     if p.is_file() and p.name != MARKER)
    sub = next(p for p in sorted(out.iterdir()) if p.is_dir()) if command != "render runbook" else out
    (sub / "local-override.txt").write_text("mine\n")
    (out / "empty-dir-of-mine").mkdir()
    before = snapshot(tmp_path)
    result = invoke(*COMMANDS[command], str(LAB), "--out", str(out))
    rel = str((sub / "local-override.txt").relative_to(out))
    refused(result, "files imsdr did not write", rel, "empty-dir-of-mine/")
    assert snapshot(tmp_path) == before


def test_at_most_ten_files_are_named(tmp_path: Path) -> None:
    out = tmp_path / "D"
    (out / "deep" / "er").mkdir(parents=True)
    for i in range(12):
        (out / f"f{i:02}.txt").write_text("x")
    (out / "deep" / "er" / "z.txt").write_text("x")
    result = invoke("render", "dns", str(LAB), "--out", str(out))
    refused(result, "f00.txt", "f09.txt", "and 3 more")
    assert "f10.txt" not in result.stderr and "z.txt" not in result.stderr


def test_an_empty_or_missing_directory_is_written(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert invoke("render", "runbook", str(LAB), "--out", str(empty)).exit_code == 0
    assert (empty / MARKER).is_file()
    missing = tmp_path / "a" / "b" / "c"
    assert invoke("render", "runbook", str(LAB), "--out", str(missing)).exit_code == 0
    assert (missing / "README.md").is_file()


@pytest.mark.parametrize("command", ["plan", "render runbook"])
def test_out_equal_to_templates_is_refused_even_with_force(command: str, tmp_path: Path) -> None:
    templates = tmp_path / "T"
    templates.mkdir()
    (templates / "site.md.j2").write_text("# {{ page.title }}\n")
    before = snapshot(tmp_path)
    for extra in ([], ["--force"]):
        result = invoke(*COMMANDS[command], str(LAB), "--out", str(templates), "--templates", str(templates),
                        *extra)
        refused(result, "templates directory")
        result = invoke(*COMMANDS[command], str(LAB), "--out", str(tmp_path), "--templates", str(templates),
                        *extra)
        refused(result, "templates directory")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_inventory_directory_is_refused_even_with_force(command: str, tmp_path: Path) -> None:
    home = tmp_path / "planning"
    home.mkdir()
    inventory = home / "lab.yaml"
    inventory.write_bytes(LAB.read_bytes())
    before = snapshot(tmp_path)
    for out in (home, tmp_path):
        refused(invoke(*COMMANDS[command], str(inventory), "--out", str(out), "--force"), "inventory lab.yaml")
    assert snapshot(tmp_path) == before


def test_home_cwd_and_parents_are_refused_even_with_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home" / "planner"
    home.mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    work = tmp_path / "work" / "today"
    work.mkdir(parents=True)
    inventory = tmp_path / "lab.yaml"
    inventory.write_bytes(LAB.read_bytes())
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    before = snapshot(tmp_path)
    for out, reason in ((str(home), "home directory"), (str(tmp_path / "home"), "home directory"),
                        (".", "working directory"), ("..", "working directory"),
                        (str(work), "working directory")):
        refused(invoke("plan", str(inventory), "--out", out, "--force"), reason)
    # a symlink whose target is protected is judged by its target
    link = tmp_path / "innocent-looking"
    link.symlink_to(home)
    refused(invoke("plan", str(inventory), "--out", str(link), "--force"), "home directory")
    link.unlink()
    assert snapshot(tmp_path) == before


def test_a_git_checkout_is_refused_even_with_force(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "README").write_text("mine\n")
    before = snapshot(tmp_path)
    refused(invoke("render", "dns", str(LAB), "--out", str(repo), "--force"), "git checkout")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("system", ["/", "/etc", "/etc/bind", "/usr/local", "/var/lib", "/var/lib/bind",
                                    "/proc/self", "/tmp", "/home", "/dev/shm"])
def test_system_directories_are_refused_even_with_force(system: str, tmp_path: Path) -> None:
    # a missing inventory: if the guard ever let the path through, the command would still stop
    # at loading the inventory (exit 2 too, but without this message) instead of writing
    result = invoke("plan", str(tmp_path / "missing.yaml"), "--out", system, "--force")
    refused(result, "refusing to replace", "must be a directory of its own")
    assert protected_reason(Path(os.path.realpath(system))) is not None


def test_directories_for_output_below_system_ones_are_allowed(tmp_path: Path) -> None:
    for fine in ("/etc/bind/imsdr", "/srv/imsdr", "/var/lib/imsdr/out", str(tmp_path / "out")):
        assert protected_reason(Path(fine)) is None, fine


def test_symlinked_out_is_refused_and_followed_only_with_force(tmp_path: Path) -> None:
    real = tmp_path / "releases" / "current"
    assert invoke("render", "runbook", str(LAB), "--out", str(real)).exit_code == 0
    link = tmp_path / "out"
    link.symlink_to(real)
    before = snapshot(tmp_path)
    refused(invoke("render", "runbook", str(LAB), "--out", str(link)), "symbolic link", "--force")
    assert snapshot(tmp_path) == before
    assert invoke("render", "runbook", str(LAB), "--out", str(link), "--force").exit_code == 0
    assert link.is_symlink() and (real / MARKER).is_file()


def test_symlink_loop_and_over_long_names_exit_cleanly(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    refused(invoke("plan", str(LAB), "--out", str(loop)), "symbolic link")
    refused(invoke("plan", str(LAB), "--out", str(loop), "--force"), "loop")
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    refused(invoke("render", "dns", str(LAB), "--out", str(a), "--force"), "loop")
    for long_name in ("n" * 300, "n" * 250, "x" * 100 + "/" + "y" * 256):
        refused(invoke("render", "dns", str(LAB), "--out", str(tmp_path / long_name)), "refusing to replace")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "loop"]


def test_an_existing_file_is_not_replaced_even_with_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("a file\n")
    result = invoke("render", "dns", str(LAB), "--out", str(out), "--force")
    assert result.exit_code == 2 and "is a file" in result.stderr, result.stderr
    with pytest.raises(ImsdrError, match="not a directory"):  # without the CLI's check of the option
        check_output(OutputTarget(out, force=True))
    assert out.read_text() == "a file\n"


def test_a_marker_of_another_format_or_a_fake_marker_is_not_trusted(tmp_path: Path) -> None:
    future = tmp_path / "future"
    future.mkdir()
    (future / MARKER).write_text(json.dumps({"format": "imsdr.output/2", "files": ["a.txt"]}))
    (future / "a.txt").write_text("x")
    with pytest.raises(ImsdrError, match="imsdr.output/2"):
        check_output(future)
    check_output(OutputTarget(future, force=True))

    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"format": "imsdr.output/1", "files": ["a.txt"]}))
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / MARKER).symlink_to(elsewhere)  # a marker must be a regular file of its own
    (linked / "a.txt").write_text("x")
    with pytest.raises(ImsdrError, match="no .imsdr-output marker"):
        check_output(linked)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / MARKER).write_text("{not json")
    (damaged / "a.txt").write_text("x")
    with pytest.raises(ImsdrError, match="no .imsdr-output marker"):
        check_output(damaged)


@pytest.mark.parametrize("umask", [0o077, 0o000, 0o027])
def test_files_are_0644_and_directories_0755_whatever_the_umask(umask: int, tmp_path: Path) -> None:
    """named, Kamailio and reviewers read the output as other users: the umask must not decide."""
    out = tmp_path / "out"
    old = os.umask(umask)
    try:
        result = invoke("plan", str(LAB), "--out", str(out))
    finally:
        os.umask(old)
    assert result.exit_code in (0, 1), result.stderr
    modes = {str(p.relative_to(out)): stat.S_IMODE(p.stat().st_mode) for p in [out, *out.rglob("*")]}
    zones = [p for p in modes if p.endswith(".zone")]
    assert zones
    for rel, mode in modes.items():
        expected = 0o755 if (out / rel).is_dir() else 0o644
        assert mode == expected, f"{rel}: {oct(mode)} under umask {oct(umask)}"


def test_a_library_caller_gets_the_same_protection(tmp_path: Path) -> None:
    out = tmp_path / "D"
    out.mkdir()
    (out / "keep.txt").write_text("keep\n")
    with pytest.raises(ImsdrError, match="keep.txt"), atomic_directory(out) as staging:
        (staging / "x").write_text("x")
    assert (out / "keep.txt").read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["D"]


def test_parts_of_a_plan_output_and_a_tree_of_parts_are_imsdr_s(tmp_path: Path) -> None:
    """One marker per output tree, at its root: `render dns --out DIR/dns` may replace the dns/ of a
    plan output (its files are those DIR's marker lists under dns/), `plan --out DIR` may replace a
    DIR made of such parts, and a file of the user's anywhere below still stops both."""
    out = tmp_path / "out"
    assert invoke("render", "dns", str(LAB), "--out", str(out / "dns")).exit_code == 0
    assert invoke("plan", str(LAB), "--out", str(out)).exit_code in (0, 1)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob(MARKER)) == [MARKER]
    assert invoke("render", "dns", str(LAB), "--out", str(out / "dns")).exit_code == 0
    assert invoke("render", "runbook", str(LAB), "--out", str(out / "runbooks")).exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob(MARKER)) == [
        MARKER, f"dns/{MARKER}", f"runbooks/{MARKER}"]
    assert invoke("plan", str(LAB), "--out", str(out)).exit_code in (0, 1)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob(MARKER)) == [MARKER]
    listed = json.loads((out / MARKER).read_text())["files"]
    assert listed == sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                            if p.is_file() and p.name != MARKER)
    (out / "dns" / "zones" / "by-hand.zone").write_text("; mine\n")
    before = snapshot(tmp_path)
    refused(invoke("plan", str(LAB), "--out", str(out)), "dns/zones/by-hand.zone")
    refused(invoke("render", "dns", str(LAB), "--out", str(out / "dns")), "zones/by-hand.zone")
    assert snapshot(tmp_path) == before


def test_a_marker_above_the_output_counts_only_when_it_is_the_user_s(tmp_path: Path) -> None:
    """Anyone may write into /tmp: a marker there listing the files of a directory below it must not
    let imsdr replace that directory (the files would be lost)."""
    out = tmp_path / "mine" / "out"
    out.mkdir(parents=True)
    (out / "notes.txt").write_text("keep\n")
    marker = tmp_path / MARKER
    marker.write_text(json.dumps({"format": "imsdr.output/1", "files": ["mine/out/notes.txt"]}))
    check_output(out)  # the user's own marker vouches for it
    os.chown(marker, 54321, 54321)  # now someone else's (the tests run as root, as .ci/test does)
    with pytest.raises(ImsdrError, match="notes.txt"):
        check_output(out)
    assert (out / "notes.txt").read_text() == "keep\n"
