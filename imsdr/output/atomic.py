"""Atomic output: build everything in a temporary directory beside the target, then swap.

On any error the previous output stays byte-identical and no temporary files are left.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from imsdr.errors import ImsdrError


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that could leave ``root``."""
    rel = PurePosixPath(relative)
    if not rel.parts:
        raise ImsdrError(f"refusing output path {relative!r}: a file name is needed")
    if rel.is_absolute() or any(part in ("..", "") for part in rel.parts) or "\x00" in relative:
        raise ImsdrError(f"refusing output path {relative!r}: it must stay inside the output directory")
    if any(part.startswith(".") for part in rel.parts):
        raise ImsdrError(f"refusing output path {relative!r}: hidden names are not written")
    return root.joinpath(*rel.parts)


_STAGING = "tmp"  # .NAME.tmp-PID-XXXX: the tree being written
_ASIDE = "old"  # .NAME.old-PID-XXXX: the previous tree while it is being swapped out
STALE_AFTER = 3600.0  # seconds; for leftovers whose owner cannot be told (no PID in the name)
RENAME_EXCHANGE = 2  # renameat2(2) flag: swap two paths atomically (Linux 3.15+)
_AT_FDCWD = -100


def _owner_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _leftovers(parent: Path, name: str) -> list[tuple[Path, str]]:
    """Staging and set-aside directories of ``name`` left by runs that died (SIGKILL, power loss)."""
    found = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    for entry in entries:
        for kind in (_STAGING, _ASIDE):
            prefix = f".{name}.{kind}-"
            if not entry.name.startswith(prefix):
                continue
            pid_text = entry.name[len(prefix):].split("-", 1)[0]
            if pid_text.isdigit():
                stale = not _owner_alive(int(pid_text))
            else:  # an older naming scheme: judge by age
                try:
                    stale = time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
                except OSError:
                    stale = False
            if stale:
                found.append((Path(entry.path), kind))
    return found


def clean_stale(target: Path) -> list[Path]:
    """Remove what interrupted runs left beside ``target``; restore a tree lost mid-swap.

    A run killed between moving the old tree aside and moving the new one in (only possible
    where an atomic exchange is unavailable) leaves ``target`` missing and the previous tree
    in ``.NAME.old-PID-*/tree``: that tree is moved back first. Returns what was removed.
    """
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    removed = []
    for path, kind in sorted(_leftovers(parent, target.name)):
        if kind == _ASIDE and not os.path.lexists(target) and (path / "tree").is_dir():
            with contextlib.suppress(OSError):
                os.rename(path / "tree", target)
        if path.is_symlink() or not path.is_dir():
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            removed.append(path)
    return removed


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def refuse_foreign_directory(target: Path) -> None:
    """The output directory is replaced as a whole: refuse one that is plainly not imsdr's.

    That is the file system root, the home directory, the working directory or one of its
    ancestors, a git checkout, or a directory holding YAML files (inventories are YAML; imsdr
    never writes any), so that ``--out .`` or ``--out`` pointing at the inventory's own
    directory fails with a message instead of deleting the inventory.
    """
    if not target.is_dir():
        return
    try:
        real = target.resolve()
        cwd = Path.cwd().resolve()
    except (OSError, RuntimeError):
        return
    reason = None
    if real == Path(real.anchor) or real == Path.home().resolve():
        reason = "it is the root or home directory"
    elif real == cwd or real in cwd.parents:
        reason = "it is the working directory or one of its parents"
    else:
        try:
            names = [entry.name for entry in os.scandir(real)]
        except OSError:
            names = []
        if ".git" in names:
            reason = "it is a git checkout"
        else:
            yaml_files = sorted(n for n in names if n.endswith((".yaml", ".yml")))
            if yaml_files:
                reason = f"it holds {yaml_files[0]!r} (an inventory?), and imsdr never writes YAML files"
    if reason:
        raise ImsdrError(f"refusing to replace {target}: {reason}; --out must be a directory imsdr "
                         "owns, because it is replaced as a whole")


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a fresh staging directory; on success it replaces ``target`` whole.

    The staging directory sits next to ``target`` (same file system, so the final
    rename is atomic). Where the kernel can (Linux renameat2), old and new trees are
    exchanged in one step; otherwise the old tree is moved aside first and removed only
    after the swap. Leftovers of runs that were killed are cleaned up on the next run.
    """
    target = Path(target)
    if target.is_symlink():  # keep the link (e.g. /etc/bind/imsdr -> /srv/imsdr): replace what it points at
        target = target.resolve()
    parent = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_dir():
        raise ImsdrError(f"{target}: exists and is not a directory")
    refuse_foreign_directory(target)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        clean_stale(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_STAGING}-{os.getpid()}-", dir=parent))
    except OSError as exc:
        raise ImsdrError(f"{target}: cannot create output directory: {exc.strerror}") from None
    try:
        yield staging
        os.chmod(staging, 0o755)
        if target.exists():
            if _exchange(staging, target):
                shutil.rmtree(staging, ignore_errors=True)  # now holds the previous tree
            else:
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_ASIDE}-{os.getpid()}-", dir=parent))
                os.rename(target, old / "tree")
                try:
                    os.rename(staging, target)
                except OSError:
                    os.rename(old / "tree", target)
                    raise
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ImsdrError(f"{target}: cannot write output: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
