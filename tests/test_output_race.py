"""`--out` is checked again at the moment of the swap, under a lock held from the check to the swap:
two commands writing one path serialize or one refuses — never a silent loss."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from imsdr.errors import ImsdrError
from imsdr.output.atomic import MARKER, atomic_directory

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"


def imsdr(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "imsdr", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, env={"PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def lists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dispatcher list to import (from a render of the lab)."""
    where = tmp_path_factory.mktemp("lists")
    subprocess.run([sys.executable, "-m", "imsdr", "render", "dns", str(LAB), "--out", "dns"], cwd=where,
                   check=True, capture_output=True, timeout=120)
    return where / "dns" / "kamailio" / "lab-sbc-1" / "dispatcher.list"  # (one per SBC/P-CSCF: SBC -> P-CSCF)


def wait_blocked(process: subprocess.Popen[str], seconds: float = 20.0) -> None:
    """Until ``process`` has started and is waiting (it cannot finish: the lock is held)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            state = Path(f"/proc/{process.pid}/wchan").read_text()
        except OSError:
            state = ""
        if "sleep" in state or "nanosleep" in state or "hrtimer" in state:
            return
        time.sleep(0.05)


def test_an_import_to_the_same_path_while_plan_renders_is_refused(tmp_path: Path, lists: Path) -> None:
    out = tmp_path / "shared"
    with atomic_directory(out) as staging:  # as `plan` does, from its check to its swap
        (staging / "plan.json").write_text("{}\n")
        importer = imsdr("import", "kamailio", str(lists), "--hop", "sbc-pcscf", "--out", str(out), cwd=tmp_path)
        wait_blocked(importer)
        time.sleep(0.5)
        assert importer.poll() is None, "the import waits for the lock"
        assert not out.exists()
    _stdout, stderr = importer.communicate(timeout=60)
    assert importer.returncode == 2, stderr
    assert "refusing to replace" in stderr and "Traceback" not in stderr
    assert (out / "plan.json").read_text() == "{}\n" and (out / MARKER).is_file()


def test_plan_refuses_a_path_written_during_its_render(tmp_path: Path, lists: Path) -> None:
    out = tmp_path / "shared"
    subprocess.run([sys.executable, "-m", "imsdr", "import", "kamailio", str(lists), "--hop", "sbc-pcscf",
                    "--out", str(tmp_path / "draft.yaml")], check=True, capture_output=True, timeout=60)
    with pytest.raises(ImsdrError, match="not a directory"), atomic_directory(out) as staging:
        (staging / "plan.json").write_text("{}\n")
        shutil.copy(tmp_path / "draft.yaml", out)  # a writer that takes no lock, mid-render
    assert out.read_bytes() == (tmp_path / "draft.yaml").read_bytes(), "the draft is intact"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draft.yaml", "shared"], "no staging left"


INTRUDERS = {
    "a file of the user's inside": lambda out: (out.mkdir(), (out / "notes.txt").write_text("mine")),
    "a file at the path": lambda out: out.write_text("mine"),
    "a link at the path": lambda out: out.symlink_to(out.parent / "elsewhere"),
    "a foreign directory": lambda out: (out.mkdir(), (out / "sub").mkdir(), (out / "sub" / "x").write_text("mine")),
}


@pytest.mark.parametrize("intruder", list(INTRUDERS), ids=list(INTRUDERS))
@pytest.mark.parametrize("existing", [False, True], ids=["new", "replacing"])
def test_whatever_appears_during_the_render_is_never_replaced(tmp_path: Path, intruder: str, existing: bool) -> None:
    out = tmp_path / "out"
    (tmp_path / "elsewhere").mkdir()
    if existing:
        with atomic_directory(out) as staging:
            (staging / "a.txt").write_text("old")
    before = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
    with pytest.raises(ImsdrError), atomic_directory(out) as staging:
        (staging / "a.txt").write_text("new")
        if existing:
            shutil.rmtree(out)
        INTRUDERS[intruder](out)
    after = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
    assert not [p for p in after if ".tmp-" in p or ".old-" in p], after
    if intruder == "a file of the user's inside":
        assert (out / "notes.txt").read_text() == "mine"
    assert "out/a.txt" not in after or (out / "a.txt").read_text() == "old", (before, after)


def test_two_plans_on_one_out_serialize(tmp_path: Path) -> None:
    shutil.copy(LAB, tmp_path / "lab.yaml")
    runs = [imsdr("plan", "lab.yaml", "--out", "plan", cwd=tmp_path) for _ in range(2)]
    results = [(r.wait(timeout=300), r.communicate()[1]) for r in runs]
    assert [code for code, _ in results] == [0, 0], results
    check = subprocess.run([sys.executable, "-m", "imsdr", "plan", "lab.yaml", "--out", "plan", "--check"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert sorted(os.listdir(tmp_path)) == ["lab.yaml", "plan"]
