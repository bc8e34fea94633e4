"""Every file imsdr reads goes through imsdr.untrusted: a FIFO, a device, a link or an oversize file
as named.conf, zone, dispatcher list, CSV, draft (--into, --out), previous output or template is
refused at once (exit 2, the file named, no traceback) or, for the previous output imsdr only
consults, ignored — never a hang, never read until memory runs out."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from imsdr.importers.kamailio import MAX_LIST_BYTES
from imsdr.importers.namedconf import MAX_CONFIG_BYTES
from imsdr.importers.table import MAX_TABLE_BYTES
from imsdr.importers.zonedata import MAX_ZONE_BYTES

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
HOP = ("--hop", "sbc-pcscf")


def imsdr(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"})


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("sources")
    shutil.copy(LAB, where / "lab.yaml")
    assert imsdr("render", "dns", "lab.yaml", "--out", "dns", cwd=where).returncode == 0
    return where


def fifo(path: Path, _limit: int) -> None:
    os.mkfifo(path)


def device(path: Path, _limit: int) -> None:
    os.symlink("/dev/zero", path)  # (the link itself is refused; test_dev_zero gives the device itself)


def oversize(path: Path, limit: int) -> None:
    with open(path, "wb") as fh:
        fh.write(b"# imsdr import: draft inventory\n" if path.suffix == ".yaml" else b"")
        fh.truncate(limit + 1)  # sparse: nothing more is written


KINDS: dict[str, Callable[[Path, int], None]] = {"FIFO": fifo, "link to /dev/zero": device, "oversize": oversize}
REASON = {"FIFO": ("FIFO",), "oversize": ("at most", "larger than"),
          # (a link as named.conf is resolved and refused as lying outside its directory tree)
          "link to /dev/zero": ("symbolic link", "outside the configuration's directory tree")}


def fresh(rendered: Path, tmp_path: Path) -> Path:
    shutil.copytree(rendered / "dns", tmp_path / "dns")
    shutil.copy(rendered / "lab.yaml", tmp_path / "lab.yaml")
    return tmp_path


def replace(path: Path, kind: str, limit: int) -> None:
    path.unlink()
    KINDS[kind](path, limit)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("source", ["named.conf", "zone", "dispatcher list", "csv", "xlsx", "--into draft",
                                    "--out draft"])
def test_an_import_source_that_is_not_a_bounded_regular_file_is_refused(rendered: Path, tmp_path: Path,
                                                                        source: str, kind: str) -> None:
    where = fresh(rendered, tmp_path)
    conf = where / "dns" / "named" / "lab-dns-1.conf"
    listing = where / "dns" / "kamailio" / "lab-sbc-1" / "dispatcher.list"  # (one per SBC/P-CSCF: SBC -> P-CSCF)
    if source == "named.conf":
        replace(conf, kind, MAX_CONFIG_BYTES)
        args, victim = ("import", "bind", str(conf), "--zones-dir", "dns", "--out", "d.yaml"), conf
    elif source == "zone":
        victim = sorted((where / "dns" / "zones" / "core").glob("*.zone"))[0]
        replace(victim, kind, MAX_ZONE_BYTES)
        args = ("import", "bind", str(conf), "--zones-dir", "dns", "--out", "d.yaml")
    elif source == "dispatcher list":
        replace(listing, kind, MAX_LIST_BYTES)
        args, victim = ("import", "kamailio", str(listing), *HOP, "--out", "d.yaml"), listing
    elif source in ("csv", "xlsx"):
        victim = where / f"elements.{source}"
        victim.write_text("id,type\n")
        replace(victim, kind, MAX_TABLE_BYTES)
        args = ("import", "table", str(victim), "--out", "d.yaml")
    else:
        victim = where / "draft.yaml"
        victim.write_text("# imsdr import: draft inventory\n")
        replace(victim, kind, 64 << 20)
        flag = "--into" if source == "--into draft" else "--out"
        args = ("import", "kamailio", str(listing), *HOP, flag, str(victim),
                *(("--out", "d.yaml") if flag == "--into" else ()))
    started = time.monotonic()
    result = imsdr(*args, cwd=where)
    assert time.monotonic() - started < 30, "refused at once"
    if (source, kind) == ("--out draft", "oversize"):  # a large draft of imsdr's own: replaced
        assert result.returncode == 0 and victim.stat().st_size < 1 << 20, result.stderr
        return
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert victim.name in result.stderr and any(r in result.stderr for r in REASON[kind]), result.stderr
    assert not (where / "d.yaml").exists(), "nothing written"


def test_import_bind_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = imsdr("import", "bind", "/dev/zero", "--out", "d.yaml", cwd=tmp_path, timeout=30)
    assert time.monotonic() - started < 20
    assert result.returncode == 2 and "/dev/zero" in result.stderr and "device" in result.stderr, result.stderr
    assert not (tmp_path / "d.yaml").exists()


@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero"])
@pytest.mark.parametrize("victim", ["zone", "DRAIN.md"])
def test_previous_output_that_is_not_a_regular_file_is_not_read(rendered: Path, tmp_path: Path, victim: str,
                                                                kind: str) -> None:
    where = fresh(rendered, tmp_path)
    if victim == "zone":
        path = sorted((where / "dns" / "zones" / "core").glob("*.zone"))[0]
        replace(path, kind, 0)
    else:
        assert imsdr("render", "dns", "lab.yaml", "--out", "dns", "--drain", "lab-sbc-1", cwd=where).returncode == 0
        replace(where / "dns" / "DRAIN.md", kind, 0)
    result = imsdr("render", "dns", "lab.yaml", "--out", "dns", cwd=where)
    assert result.returncode == 0, result.stderr
    assert all(p.is_file() and not p.is_symlink() for p in (where / "dns").rglob("*") if not p.is_dir())


@pytest.mark.parametrize("kind", ["FIFO", "link to /dev/zero", "oversize"])
def test_a_template_that_is_not_a_bounded_regular_file_is_refused(rendered: Path, tmp_path: Path,
                                                                  kind: str) -> None:
    from imsdr.runbook.sandbox import MAX_TEMPLATE_BYTES

    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "sbc.md.j2").write_text("x")
    replace(templates / "sbc.md.j2", kind, MAX_TEMPLATE_BYTES)
    shutil.copy(LAB, tmp_path / "lab.yaml")
    result = imsdr("plan", "lab.yaml", "--out", "plan", "--templates", "templates", cwd=tmp_path)
    assert result.returncode == 2 and "sbc.md.j2" in result.stderr and "Traceback" not in result.stderr, \
        result.stderr
    assert not (tmp_path / "plan").exists()
