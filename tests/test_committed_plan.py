"""`imsdr plan --check` reads the committed plan as untrusted input.

A pull request may replace any file of the committed plan by a link (to /proc/self/environ, to a
secret outside the tree), a FIFO, a directory, garbage, or a zone with ``$INCLUDE``/``$GENERATE``.
The check then reports a changed file, never follows or reads what is not a regular file inside
the tree, never hangs, never ends in a traceback, and nothing from outside the tree reaches stdout
in any format.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
CANARY = "imsdr-canary-7f3a9c"  # an "environment secret" and the content of a file outside the tree


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin", "CI_SECRET": CANARY}
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env=env)


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding lab.yaml, its rendered plan (``pristine``) and a secret outside it."""
    where = tmp_path_factory.mktemp("committed")
    shutil.copy(LAB, where / "lab.yaml")
    assert run("plan", "lab.yaml", "--out", "pristine", cwd=where).returncode == 0
    (where / "secret.txt").write_text(f"SECRET={CANARY}\n")
    return where


def fresh_copy(committed: Path, name: str) -> Path:
    plan = committed / name
    if plan.exists():
        shutil.rmtree(plan)
    shutil.copytree(committed / "pristine", plan, symlinks=True)
    return plan


FORMATS = (("--diff",), ("--format", "json", "--diff"), ("--format", "markdown", "--diff"))


@pytest.mark.parametrize("target", ["/proc/self/environ", "../../secret.txt"])
def test_a_link_to_the_environment_or_a_secret_is_never_followed(committed: Path, target: str) -> None:
    plan = fresh_copy(committed, "linked")
    (plan / "runbooks" / "README.md").unlink()
    os.symlink(target, plan / "runbooks" / "README.md")
    for fmt in FORMATS:
        result = run("plan", "lab.yaml", "--out", "linked", "--check", *fmt, cwd=committed)
        assert result.returncode == 1, (fmt, result.stderr)
        assert CANARY not in result.stdout and CANARY not in result.stderr, fmt
        assert "Traceback" not in result.stderr
        if fmt[:2] == ("--format", "json"):
            data = json.loads(result.stdout)
            assert "runbooks/README.md" in data["changed"]
            change = [c for c in data["review"]["changes"] if c["where"] == "runbooks/README.md"]
            assert change and "not a regular file (a symbolic link)" in change[0]["what"]
        else:
            assert "not a regular file" in result.stdout


def test_include_generate_and_unparsable_zones_are_changed_files(committed: Path) -> None:
    plan = fresh_copy(committed, "zones")
    zones = sorted((plan / "dns").rglob("*.zone"))
    assert len(zones) >= 3
    zones[0].write_text(zones[0].read_text() + f"$INCLUDE {committed / 'secret.txt'}\n")
    zones[1].write_text(zones[1].read_text() + "$GENERATE 1-50000000 host$ A 192.0.2.1\n")
    zones[2].write_text("this is not { a zone\n\x00\xff")
    for fmt in FORMATS:
        result = run("plan", "lab.yaml", "--out", "zones", "--check", *fmt, cwd=committed)
        assert result.returncode == 1 and "Traceback" not in result.stderr, (fmt, result.stderr)
        assert f"SECRET={CANARY}" not in result.stdout, "an included file's records reach the review"
        if "json" in fmt:
            data = json.loads(result.stdout)
    whats = {c["where"]: c["what"] for c in data["review"]["changes"]}
    for zone in zones[:3]:
        rel = zone.relative_to(plan).as_posix()
        assert rel in data["changed"] and "does not parse" in whats[rel], (rel, whats.get(rel))


def test_fifo_device_socket_and_directory_do_not_hang(committed: Path, tmp_path: Path) -> None:
    plan = fresh_copy(committed, "special")
    zone = sorted((plan / "dns").rglob("*.zone"))[0]
    zone.unlink()
    os.mkfifo(zone)
    listing = sorted((plan / "dns").rglob("*.list"))[0]
    listing.unlink()
    os.symlink("/dev/zero", listing)
    (plan / "plan.json").unlink()
    (plan / "plan.json").mkdir()
    (plan / "plan.json" / "x").write_text("x")
    sock = socket.socket(socket.AF_UNIX)
    sock_path = plan / "runbooks" / "sbc.md"
    sock_path.unlink()
    try:
        sock.bind(os.fspath(sock_path))
    except OSError:  # socket paths are at most 107 bytes: bind by a short relative name
        old = os.getcwd()
        os.chdir(sock_path.parent)
        try:
            sock.bind("sbc.md")
        finally:
            os.chdir(old)
    try:
        result = run("plan", "lab.yaml", "--out", "special", "--check", "--format", "json", cwd=committed)
    finally:
        sock.close()
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    rels = {zone.relative_to(plan).as_posix(), listing.relative_to(plan).as_posix(), "runbooks/sbc.md"}
    assert rels <= set(data["changed"])
    assert "plan.json" in data["added"] and "plan.json/x" in data["removed"]


def test_the_committed_root_itself_may_not_be_a_link(committed: Path) -> None:
    link = committed / "root-link"
    if not link.is_symlink():
        os.symlink("pristine", link)
    result = run("plan", "lab.yaml", "--out", "root-link", "--check", "--diff", cwd=committed)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "links are never followed" in result.stderr


# --- every committed tree: hypothesis over links, FIFOs, directories and garbage ----------------

MUTATIONS = ("environ", "outside", "dangling", "loop", "fifo", "dir", "garbage", "include", "generate",
             "empty", "nul", "dir-link")


def _mutate(plan: Path, rel: str, how: str, outside: Path) -> None:
    path = plan / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    if how == "environ":
        os.symlink("/proc/self/environ", path)
    elif how == "outside":
        os.symlink(outside, path)
    elif how == "dangling":
        os.symlink("/nonexistent/imsdr", path)
    elif how == "loop":
        os.symlink(path.name, path)
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "dir":
        path.mkdir()
        (path / "inner.zone").write_text("$INCLUDE /proc/self/environ\n")
    elif how == "garbage":
        path.write_bytes(b"\xff\xfe{{{\x00" * 50)
    elif how == "include":
        path.write_text(f"$ORIGIN example.\n$INCLUDE {outside}\n")
    elif how == "generate":
        path.write_text("$ORIGIN example.\n$GENERATE 1-100000000 h$ A 192.0.2.1\n")
    elif how == "empty":
        path.write_text("")
    elif how == "nul":
        path.write_bytes(b"\x00")
    elif how == "dir-link":
        os.symlink(outside.parent, path)


@pytest.fixture(scope="module")
def rendered(committed: Path) -> tuple[Path, list[str]]:
    plan = committed / "pristine"
    files = sorted(p.relative_to(plan).as_posix() for p in plan.rglob("*") if p.is_file() and p.name != ".imsdr-output")
    return plan, files


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_committed_tree_is_diffed_without_leaving_it(committed: Path, rendered: tuple[Path, list[str]],
                                                         data: st.DataObject) -> None:
    from imsdr.plan import diff_trees
    from imsdr.untrusted import UntrustedTree

    pristine, files = rendered
    picks = data.draw(st.lists(st.tuples(st.sampled_from(files), st.sampled_from(MUTATIONS)),
                               min_size=1, max_size=6, unique_by=lambda t: t[0]))
    plan = fresh_copy(committed, "hyp")
    for rel, how in picks:  # (only files are picked: no mutation removes another's directory)
        _mutate(plan, rel, how, committed / "secret.txt")
    from imsdr.output.plan_review import review

    os.environ["IMSDR_TEST_CANARY"] = CANARY  # in this process's /proc/self/environ
    try:
        diff = diff_trees(plan, pristine, label="plan")
        with UntrustedTree(plan, "plan") as old, UntrustedTree(pristine, "plan") as new:
            result = review(old, new, diff.added, diff.removed, diff.changed, diff.not_regular)
    finally:
        del os.environ["IMSDR_TEST_CANARY"]
    text = diff.diff + json.dumps(result.to_dict())
    assert CANARY not in text
    for rel, how in picks:
        if how in ("environ", "outside", "dangling", "loop", "fifo", "dir-link"):
            assert rel in diff.changed and rel in diff.not_regular, (rel, how)
