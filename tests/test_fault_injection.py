"""Faults while writing output: the previous output survives byte for byte, nothing is left behind.

Scenarios: a template error in the middle of a render, a full disk (a real 256 KB tmpfs when
the test runs as root and may mount, and always a writer patched to fail with ENOSPC), a
process killed with SIGKILL in the middle of a large ENUM zone (its staging directory is
cleaned up by the next run), output paths that try to leave --out, and user templates that
try to reach Python internals, the file system, or exhaust memory or the stack.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from imsdr.cli.app import app
from imsdr.errors import ImsdrError
from imsdr.output.atomic import MARKER, atomic_directory, clean_stale, safe_join

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
PROVINCE = ROOT / "inventories" / "province.yaml"
runner = CliRunner()


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args), prog_name="imsdr")


def snapshot(root: Path) -> dict[str, bytes | None]:
    tree: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        tree[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return tree


def strays(parent: Path) -> list[str]:
    """Staging or set-aside directories left beside an output directory."""
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def lab_with_numbers(count: int) -> str:
    """The lab inventory with an ENUM block of ``count`` numbers (rendered one NAPTR each)."""
    text = LAB.read_text()
    old = '{id: lab-numbers, prefix: "+8610555", length: 11, style: numbers, domain: ims.lab.example.org, ' \
          'first: "+86105550000", last: "+86105550099"}'
    assert old in text
    last = 8610000000000 + count - 1
    new = f'{{id: lab-numbers, prefix: "+861", length: 13, style: numbers, domain: ims.lab.example.org, ' \
          f'first: "+8610000000000", last: "+{last}"}}'
    return text.replace(old, new)


def previous_output(work: Path, command: list[str]) -> tuple[Path, dict[str, bytes | None]]:
    """A successful render of the lab into work/out: the output a failure must not disturb."""
    out = work / "out"
    result = invoke(*command, str(LAB), "--out", str(out))
    assert result.exit_code in (0, 1), result.output + result.stderr
    assert out.is_dir() and any(out.rglob("*"))
    return out, snapshot(out)


OUTPUT_COMMANDS = {
    "render dns": ["render", "dns"],
    "render runbook": ["render", "runbook"],
    "plan": ["plan"],
}


def assert_failed_cleanly(result: Result, out: Path, before: dict[str, bytes | None],
                          fragment: str) -> None:
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert fragment in result.stderr, result.stderr
    assert snapshot(out) == before, "the previous output changed"
    assert strays(out.parent) == [], "temporary directories were left behind"


# --- a template error in the middle of a render -----------------------------------------------------

@pytest.mark.parametrize("command", ["render runbook", "plan"])
def test_template_error_mid_render_keeps_previous_output(command: str, tmp_path: Path) -> None:
    out, before = previous_output(tmp_path, OUTPUT_COMMANDS[command])
    templates = tmp_path / "templates"
    templates.mkdir()
    # README renders first and fine; the site page fails half-way through
    (templates / "site.md.j2").write_text("# {{ page.title }}\n\nline one\n"
                                          "{{ no_such_variable.attribute }}\n")
    result = invoke(*OUTPUT_COMMANDS[command], str(LAB), "--out", str(out), "--templates", str(templates))
    assert_failed_cleanly(result, out, before, "site.md.j2")
    assert "no_such_variable" in result.stderr


@pytest.mark.parametrize("command", ["render runbook", "plan"])
def test_template_syntax_error_keeps_previous_output(command: str, tmp_path: Path) -> None:
    out, before = previous_output(tmp_path, OUTPUT_COMMANDS[command])
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "capacity.md.j2").write_text("# fine\n{% for x in %}\n")
    result = invoke(*OUTPUT_COMMANDS[command], str(LAB), "--out", str(out), "--templates", str(templates))
    assert_failed_cleanly(result, out, before, "capacity.md.j2:2")


# --- a full disk ----------------------------------------------------------------------------------

class _FullDiskFile:
    """A writable file that fails with ENOSPC once the shared byte budget is spent."""

    def __init__(self, real: Any, budget: list[int]) -> None:
        self._real = real
        self._budget = budget

    def write(self, data: Any) -> int:
        size = len(data)
        if size > self._budget[0]:
            self._budget[0] = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), getattr(self._real, "name", None))
        self._budget[0] -= size
        return self._real.write(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __enter__(self) -> _FullDiskFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._real)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture
def full_disk_after(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """Patch open(), and os.open/os.write (imsdr writes its many small files through the file
    descriptor), so writes under tmp_path fail with ENOSPC after ``budget`` bytes."""

    def arm(budget: int) -> None:
        real_open, real_os_open, real_os_write, real_os_close = builtins.open, os.open, os.write, os.close
        remaining = [budget]
        counted: set[int] = set()  # descriptors open for writing under tmp_path

        def inside(file: Any) -> bool:
            return isinstance(file, (str, os.PathLike)) and str(os.fspath(file)).startswith(str(tmp_path))

        def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = real_open(file, mode, *args, **kwargs)
            writing = any(flag in mode for flag in "wax+")
            return _FullDiskFile(handle, remaining) if writing and inside(file) else handle

        def fake_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_os_open(path, flags, *args, **kwargs)
            if flags & (os.O_WRONLY | os.O_RDWR) and inside(path):
                counted.add(fd)
            return fd

        def fake_os_write(fd: int, data: Any) -> int:
            if fd in counted:
                if len(data) > remaining[0]:
                    remaining[0] = 0
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                remaining[0] -= len(data)
            return real_os_write(fd, data)

        def fake_os_close(fd: int) -> None:
            counted.discard(fd)
            real_os_close(fd)

        monkeypatch.setattr(builtins, "open", fake_open)
        monkeypatch.setattr(io, "open", fake_open)
        monkeypatch.setattr(os, "open", fake_os_open)
        monkeypatch.setattr(os, "write", fake_os_write)
        monkeypatch.setattr(os, "close", fake_os_close)

    return arm


@pytest.mark.parametrize("command", ["render dns", "render runbook", "plan"])
@pytest.mark.parametrize("share", [0.0, 0.1, 0.6])
def test_full_disk_patched_writer_keeps_previous_output(command: str, share: float, tmp_path: Path,
                                                         full_disk_after: Any) -> None:
    out, before = previous_output(tmp_path, OUTPUT_COMMANDS[command])
    inventory = tmp_path / "bigger.yaml"
    inventory.write_text(lab_with_numbers(5_000))
    # the disk fills up after this share of what the lab's output needs (the new output is bigger)
    full_disk_after(int(share * sum(len(data or b"") for data in before.values())))
    result = invoke(*OUTPUT_COMMANDS[command], str(inventory), "--out", str(out))
    assert_failed_cleanly(result, out, before, "No space left on device")


def _can_mount_tmpfs(where: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    where.mkdir(exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                          capture_output=True)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    if not _can_mount_tmpfs(mount):
        pytest.skip("cannot mount a tmpfs here (needs root); the patched-writer test covers ENOSPC")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.mark.parametrize("command", ["render dns", "plan"])
def test_full_disk_real_tmpfs_keeps_previous_output(command: str, small_disk: Path) -> None:
    out, before = previous_output(small_disk, OUTPUT_COMMANDS[command])
    inventory = small_disk.parent / "bigger.yaml"  # outside the small disk
    inventory.write_text(lab_with_numbers(20_000))  # ~2 MB of NAPTR: cannot fit in 1 MB
    result = invoke(*OUTPUT_COMMANDS[command], str(inventory), "--out", str(out))
    assert_failed_cleanly(result, out, before, "No space left on device")
    # room again: the next run succeeds and leaves nothing behind
    shutil.rmtree(out)
    result = invoke(*OUTPUT_COMMANDS[command], str(LAB), "--out", str(out))
    assert result.exit_code in (0, 1), result.stderr
    assert strays(small_disk) == []


# --- a killed process ------------------------------------------------------------------------------

def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))


@pytest.mark.parametrize("command", ["render dns", "plan"])
def test_sigkill_mid_render_keeps_previous_output_and_next_run_cleans_up(command: str,
                                                                          tmp_path: Path) -> None:
    out, before = previous_output(tmp_path, OUTPUT_COMMANDS[command])
    fresh_lab = snapshot(out)
    inventory = tmp_path / "huge-enum.yaml"
    inventory.write_text(lab_with_numbers(5_000_000))  # hundreds of MB if it were allowed to finish
    child = subprocess.Popen(
        [sys.executable, "-m", "imsdr", *OUTPUT_COMMANDS[command], str(inventory), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_limits,
    )
    deadline = time.monotonic() + 60
    written = 0
    try:
        while time.monotonic() < deadline and child.poll() is None:
            staged = [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
            written = sum(f.stat().st_size for s in staged for f in s.rglob("*") if f.is_file())
            if written > 2 * 1024 * 1024:  # well into the ENUM zone
                break
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, "the render finished before it could be killed"
    assert written > 2 * 1024 * 1024
    assert snapshot(out) == before, "a killed render changed the previous output"
    assert strays(tmp_path), "expected the killed run's staging directory to be left behind"
    # the next run (any size) sweeps the dead run's staging directory and succeeds
    result = invoke(*OUTPUT_COMMANDS[command], str(LAB), "--out", str(out))
    assert result.exit_code in (0, 1), result.stderr
    assert strays(tmp_path) == []
    assert snapshot(out).keys() == fresh_lab.keys()


def test_stale_cleanup_spares_live_runs_and_restores_a_tree_lost_mid_swap(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a PID that no longer runs
    target = tmp_path / "out"
    (tmp_path / f".out.tmp-{dead.pid}-abc").mkdir()
    aside = tmp_path / f".out.old-{dead.pid}-def"
    (aside / "tree").mkdir(parents=True)
    (aside / "tree" / "zone.db").write_text("previous\n")
    live = tmp_path / f".out.tmp-{os.getppid()}-ghi"  # our parent is alive
    live.mkdir()
    other = tmp_path / f".other.tmp-{dead.pid}-jkl"  # another output's staging: not ours to judge
    other.mkdir()
    link = tmp_path / f".out.tmp-{dead.pid}-mno"  # a swapped-out symlink
    link.symlink_to(other)
    removed = clean_stale(target)
    assert sorted(p.name for p in removed) == sorted([f".out.tmp-{dead.pid}-abc", aside.name, link.name])
    assert (target / "zone.db").read_text() == "previous\n"  # the lost tree is back
    assert live.is_dir() and other.is_dir()


def test_atomic_directory_failure_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with atomic_directory(target) as staging:
        (staging / "keep.txt").write_text("old\n")
    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        (staging / "new.txt").write_text("new\n")
        raise RuntimeError("renderer bug")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert (target / "keep.txt").read_text() == "old\n"
    with atomic_directory(target) as staging:
        (staging / "new.txt").write_text("new\n")
    assert sorted(p.name for p in target.iterdir()) == [MARKER, "new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_symlinked_out_is_followed_only_with_force_keeping_the_link(tmp_path: Path) -> None:
    real = tmp_path / "releases" / "current"
    real.mkdir(parents=True)
    (real / "old.txt").write_text("old\n")
    link = tmp_path / "out"
    link.symlink_to(real)
    result = invoke("render", "runbook", str(LAB), "--out", str(link))
    assert result.exit_code == 2 and "symbolic link" in result.stderr and "--force" in result.stderr
    assert (real / "old.txt").read_text() == "old\n"
    result = invoke("render", "runbook", str(LAB), "--out", str(link), "--force")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert (real / "README.md").is_file() and not (real / "old.txt").exists()
    assert strays(tmp_path) == [] and strays(real.parent) == []


@pytest.mark.parametrize("command", ["render dns", "render runbook", "plan"])
def test_out_pointing_at_the_inventory_directory_is_refused(command: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """--out is replaced as a whole: pointing it at the inventory's directory (or at '.') must not
    delete the inventory."""
    home = tmp_path / "planning"
    home.mkdir()
    inventory = home / "lab.yaml"
    inventory.write_bytes(LAB.read_bytes())
    (home / "notes.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    result = invoke(*OUTPUT_COMMANDS[command], str(inventory), "--out", str(home))
    assert result.exit_code == 2 and "refusing to replace" in result.stderr and "lab.yaml" in result.stderr
    monkeypatch.chdir(home)
    result = invoke(*OUTPUT_COMMANDS[command], "lab.yaml", "--out", ".")
    assert result.exit_code == 2 and "working directory" in result.stderr
    assert snapshot(tmp_path) == before


# --- output paths stay inside --out ----------------------------------------------------------------

@pytest.mark.parametrize("relative", ["../escape.txt", "/etc/passwd", "a/../../b", "zones/../../x", "a\x00b",
                                      ".hidden", "zones/.env", "", "."])
def test_safe_join_refuses_paths_leaving_the_output(relative: str, tmp_path: Path) -> None:
    with pytest.raises(ImsdrError):
        safe_join(tmp_path, relative)


def test_plan_writes_only_inside_out(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "neighbour.txt").write_text("not to be touched\n")
    out = work / "out"
    result = invoke("plan", str(PROVINCE), "--out", str(out))
    assert result.exit_code in (0, 1), result.stderr
    assert sorted(p.name for p in work.iterdir()) == ["neighbour.txt", "out"]
    resolved = out.resolve()
    files = [p for p in out.rglob("*")]
    assert files
    for path in files:
        assert not path.is_symlink(), path
        assert path.resolve().is_relative_to(resolved), path


@pytest.mark.parametrize("command", ["render runbook", "plan"])
def test_renderers_refuse_escaping_names_even_without_validation(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: ids are validated, but even an inventory that skipped validation (a site
    id of '../../escaped', which names a runbook page) cannot make a renderer write outside --out."""
    import imsdr.inventory.build as build

    real_load = build.load_inventory

    def load_without_validation(path: Any) -> Any:
        inventory, source = real_load(path)
        evil = "../../escaped"
        site = inventory.sites[0].model_copy(update={"id": evil})
        elements = [e.model_copy(update={"site": evil}) for e in inventory.elements]
        lns = [ln.model_copy(update={"home_sites": [evil]}) for ln in inventory.local_networks]
        changed = {"sites": [site], "elements": elements, "local_networks": lns}
        return inventory.model_copy(update=changed), source

    monkeypatch.setattr(build, "load_inventory", load_without_validation)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    out = work / "out"
    result = invoke(*OUTPUT_COMMANDS[command], str(LAB), "--out", str(out))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "must stay inside the output directory" in result.stderr
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")] == ["a", "a/b"]


# --- user templates in the sandbox -----------------------------------------------------------------

SANDBOX_ESCAPES = {
    "python-internals": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "sandbox"),
    "function-globals": ("{{ cycler.__init__.__globals__.os.system('id') }}", "sandbox"),
    "lipsum-globals": ("{{ lipsum.__globals__['os'].popen('id').read() }}", "sandbox"),
    "format-string": ("{{ '{0.__class__}'.format('') }}", "sandbox"),
    "mutate-context": ("{% set _ = page.update({'path': '../x'}) %}{{ page }}", "sandbox"),
    "include-etc-passwd": ("{% include '/etc/passwd' %}", "not found"),
    "include-traversal": ("{% include '../../../../etc/passwd' %}", "not found"),
    "import-module": ("{% import 'os' as os %}", "not found"),
    "huge-range": ("{% for i in range(10**9) %}{% endfor %}", "range() of 1,000,000,000 items"),
    "recursion": ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "recursion too deep"),
}


@pytest.mark.parametrize("name", sorted(SANDBOX_ESCAPES))
def test_user_template_cannot_escape_the_sandbox(name: str, tmp_path: Path) -> None:
    template, fragment = SANDBOX_ESCAPES[name]
    out, before = previous_output(tmp_path, ["render", "runbook"])
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "site.md.j2").write_text(f"# {{{{ page.title }}}}\n{template}\n")
    result = invoke("render", "runbook", str(LAB), "--out", str(out), "--templates", str(templates))
    assert_failed_cleanly(result, out, before, fragment)
    assert "uid=" not in result.stdout + result.stderr
    assert "root:" not in result.stdout + result.stderr


def test_user_template_memory_bomb_is_bounded(tmp_path: Path) -> None:
    out, before = previous_output(tmp_path, ["render", "runbook"])
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "site.md.j2").write_text("{{ 'x' * 10**11 }}\n")
    result = subprocess.run(
        [sys.executable, "-m", "imsdr", "render", "runbook", str(LAB), "--out", str(out),
         "--templates", str(templates)],
        capture_output=True, text=True, timeout=120, preexec_fn=_limits,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "string repetition" in result.stderr and "site.md.j2:1" in result.stderr
    assert snapshot(out) == before
    assert strays(tmp_path) == []
