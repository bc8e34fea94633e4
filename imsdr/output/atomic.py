"""Atomic output: build everything in a temporary directory beside the target, then swap.

On any error the previous output stays byte-identical and no temporary files are left.

One module past 600 lines: staging, the marker, the lock and the swap form one protocol whose
steps check each other's invariants (the lock held from the check of the target to the rename).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from imsdr.errors import ImsdrError


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that could leave ``root``.

    ``relative`` is read as PurePosixPath reads it (empty and '.' parts dropped), by string
    operations: a national plan joins ~17,000 paths (a property test holds the two together)."""
    parts = [part for part in relative.split("/") if part and part != "."]
    if not parts and not relative.startswith("/"):
        raise ImsdrError(f"refusing output path {relative!r}: a file name is needed")
    if relative.startswith("/") or ".." in parts or "\x00" in relative:
        raise ImsdrError(f"refusing output path {relative!r}: it must stay inside the output directory")
    if any(part.startswith(".") for part in parts):
        raise ImsdrError(f"refusing output path {relative!r}: hidden names are not written")
    return root / "/".join(parts)


class WrittenDigests:
    """The SHA-256 of each file as it was written, for one run: ``plan`` lists every file's digest
    in plan.json, and reading 1.3 GB back (a national ENUM) to hash it again costs seconds.

    Files are known by device and inode, so any spelling of their path finds them; a digest is
    given only while the file's size and modification time are still those it was written with,
    anything else is read and hashed again (:meth:`digest_of` returns None)."""

    def __init__(self) -> None:
        self._files: dict[tuple[int, int], tuple[int, int, str]] = {}  # (dev, ino) -> (size, mtime_ns, sha256)

    def record(self, fd: int, sha256: str) -> None:
        """``fd``: the written file, flushed; ``sha256``: hex digest of every byte written to it."""
        info = os.fstat(fd)
        self._files[(info.st_dev, info.st_ino)] = (info.st_size, info.st_mtime_ns, sha256)

    def rows(self) -> list[list[int | str]]:
        """What was recorded, as plain data (a child process of the run sends it to the parent)."""
        return [[dev, ino, size, mtime, sha256] for (dev, ino), (size, mtime, sha256) in self._files.items()]

    def add_rows(self, rows: list[list[int | str]]) -> None:
        """Add what :meth:`rows` of another process of the same run gave."""
        for dev, ino, size, mtime, sha256 in rows:
            self._files[(int(dev), int(ino))] = (int(size), int(mtime), str(sha256))

    def digest_of(self, info: os.stat_result) -> str | None:
        known = self._files.get((info.st_dev, info.st_ino))
        if known is None or known[:2] != (info.st_size, info.st_mtime_ns):
            return None
        return known[2]


class HashingFile:
    """A new text file written as UTF-8 (no newline translation) that hashes the bytes it writes:
    ``with HashingFile(path, digests) as fh: fh.write(text)``. ``digests`` None: no hashing.

    Written through the file descriptor (open, a write per ``write``, close): the staging tree
    of a national plan holds ~17,000 files, and a buffered file object costs three more system
    calls per file (fstat, ioctl, lseek) and its own buffer copy."""

    def __init__(self, path: Path | str, digests: WrittenDigests | None) -> None:
        self._fd = os.open(path, _WRITE_FLAGS, 0o666)
        self._digests = digests
        self._hash = hashlib.sha256() if digests is not None else None

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        if self._hash is not None:
            self._hash.update(data)
        _write_all(self._fd, data)
        return len(text)

    def __enter__(self) -> HashingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._hash is not None and self._digests is not None and exc[0] is None:
                self._digests.record(self._fd, self._hash.hexdigest())
        finally:
            os.close(self._fd)


_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC  # as open(path, "wb")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def sync_directory(directory: Path | str) -> None:
    """Flush a directory's entries (a rename into it) to disk; file systems that cannot are let be."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text(path: Path | str, text: str, digests: WrittenDigests | None = None) -> None:
    """Write ``text`` as UTF-8 without newline translation, as ``Path.write_text(text,
    encoding="utf-8", newline="\\n")`` does, recording its digest in ``digests``."""
    with HashingFile(path, digests) as fh:
        fh.write(text)


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


# --- what may be replaced ---------------------------------------------------------------------------

MARKER = ".imsdr-output"  # in the root of every tree imsdr writes: format version and file list
MARKER_FORMAT = "imsdr.output"
MARKER_VERSION = 1
MAX_MARKER_BYTES = 64 << 20
NAMED_FILES = 10  # how many of the files that would be lost an error names
MAX_SCANNED = 100_000  # entries looked at when listing what would be lost
NAME_MAX = 255
FILE_MODE = 0o644  # named, kamailio and reviewers run as other users: every file readable, whatever the umask
DIR_MODE = 0o755

_SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
                "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
                "/var")
# Directories directly inside these are system directories too (/etc/bind, /var/named, /usr/local,
# /var/lib/bind); a level deeper (/etc/bind/imsdr, /srv/imsdr, /tmp/out) is where output belongs.
_SYSTEM_PARENTS = ("/bin", "/boot", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt",
                   "/opt", "/run", "/sbin", "/snap", "/usr", "/var", "/usr/local", "/usr/lib", "/usr/share",
                   "/var/lib", "/var/cache", "/var/log", "/var/spool", "/var/opt", "/var/named")
_VIRTUAL = ("/proc", "/sys", "/dev")  # nothing under these, at any depth


@dataclass(frozen=True)
class OutputTarget:
    """Where a command writes its directory, and how far it may go to replace what is there.

    ``force`` replaces an existing directory imsdr did not write (or that holds files it did not
    write) and follows a symlinked ``path``; it never unlocks a protected place (see
    :func:`protected_reason`). ``inputs`` are the files and directories the command reads (the
    inventory, ``--templates``): no output may replace them or a directory holding them.
    """

    path: Path
    force: bool = False
    inputs: tuple[Path, ...] = ()


def as_target(out: Path | str | os.PathLike[str] | OutputTarget) -> OutputTarget:
    return out if isinstance(out, OutputTarget) else OutputTarget(Path(out))


def _refuse(path: Path, reason: str) -> ImsdrError:
    return ImsdrError(f"refusing to replace {path}: {reason}")


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path, strict=False))
    except OSError as exc:  # e.g. ELOOP on newer Pythons
        raise _refuse(path, f"cannot resolve it: {exc.strerror}") from None


def _is_at_or_above(real: Path, protected: Path) -> bool:
    return real == protected or real in protected.parents


def _homes() -> list[Path]:
    import pwd

    found = []
    for home in (os.environ.get("HOME", ""), _passwd_home(pwd)):
        if home and os.path.isabs(home):
            found.append(Path(os.path.realpath(home)))
    return found


def _passwd_home(pwd: Any) -> str:
    try:
        return str(pwd.getpwuid(os.getuid()).pw_dir)
    except (KeyError, OSError):
        return ""


def protected_reason(real: Path, inputs: tuple[Path, ...] = ()) -> str | None:
    """Why the resolved directory ``real`` must never be replaced, ``--force`` or not; None if it may."""
    text = real.as_posix()
    if real == Path(real.anchor):
        return "it is the file system root"
    if any(text == v or text.startswith(v + "/") for v in _VIRTUAL):
        return "it is a system directory"
    try:
        cwd: Path | None = Path.cwd().resolve()
    except OSError:
        cwd = None
    if cwd is not None and _is_at_or_above(real, cwd):
        return "it is the working directory or one of its parents"
    if any(_is_at_or_above(real, home) for home in _homes()):
        return "it is your home directory or one of its parents"
    for item in inputs:
        item_real = _real(Path(item))
        if item_real.is_dir() and _is_at_or_above(real, item_real):
            return f"it is the templates directory {item} or holds it"
        if not item_real.is_dir() and _is_at_or_above(real, item_real.parent):
            return f"it holds the inventory {item_real.name}"
    if os.path.lexists(real / ".git"):
        return "it is a git checkout"
    if text in _SYSTEM_DIRS or real.parent.as_posix() in _SYSTEM_PARENTS:
        return "it is a system directory"
    if real.is_dir() and os.path.ismount(real):
        return "it is a mount point"
    return None


def _read_marker(directory: Path, strict: bool = True, owner: int | None = None) -> frozenset[str] | None:
    """The files imsdr listed in ``directory``'s marker; None if there is no readable imsdr marker.

    The marker is opened without following a symlink or waiting on a FIFO; a marker of another
    format version is an error (this imsdr cannot tell what that one wrote).
    """
    try:
        fd = os.open(directory / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MARKER_BYTES:
            return None
        if owner is not None and info.st_uid != owner:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = json.loads(fh.read(MAX_MARKER_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or not isinstance(data.get("format"), str):
        return None
    kind, _, version = data["format"].partition("/")
    if kind != MARKER_FORMAT:
        return None
    if version != str(MARKER_VERSION):
        if not strict:
            return None
        raise _refuse(directory, f"its marker is of format {data['format']!r} (this imsdr writes "
                                 f"{MARKER_FORMAT}/{MARKER_VERSION}); pass --force to replace it anyway")
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return frozenset(files)


def _listed_by_enclosing_tree(directory: Path) -> frozenset[str] | None:
    """The files below ``directory`` that the marker of a tree holding it lists (relative to
    ``directory``), or None if no directory above it carries a readable imsdr marker that lists
    any: ``render dns --out DIR/dns`` replaces the dns/ part of a ``plan`` output, whose one marker
    is at DIR.

    Only a marker of the user running imsdr counts: a directory above the output may be writable
    by others (``/tmp``), and a marker someone else put there must not vouch for files it lists."""
    real = _real(directory)
    for above in real.parents:  # the nearest marked tree decides
        listed = _read_marker(above, strict=False, owner=os.getuid())
        if listed is None:
            continue
        prefix = real.relative_to(above).as_posix() + "/"
        return frozenset(f[len(prefix):] for f in listed if f.startswith(prefix)) or None
    return None


def _unexpected(directory: Path, known: frozenset[str]) -> tuple[list[str], int]:
    """Entries under ``directory`` that replacing it would delete and that imsdr did not write:
    the first NAMED_FILES (sorted walk) and how many were found (counting stops at MAX_SCANNED).

    ``known`` are the files the directory's own marker lists; a subdirectory carrying a marker of
    its own (``render dns --out out/dns`` inside a ``plan`` output) vouches for the files it lists.
    """
    known_files = set(known)
    known_dirs = {p.as_posix() for f in known for p in PurePosixPath(f).parents} - {"."}
    found: list[str] = []
    count = 0
    scanned = 0

    def note(rel: str) -> None:
        nonlocal count
        count += 1
        if len(found) < NAMED_FILES:
            found.append(rel)

    def unreadable(exc: OSError) -> None:
        note(f"{os.path.relpath(exc.filename, directory)}/ (unreadable)")

    for dirpath, dirnames, filenames in os.walk(directory, onerror=unreadable):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, directory)
        prefix = "" if rel_dir == "." else rel_dir + "/"
        if prefix and MARKER in filenames:
            listed = _read_marker(Path(dirpath), strict=False)
            if listed is not None:
                known_dirs.add(rel_dir)
                for name in listed:
                    known_files.add(prefix + name)
                    known_dirs.update(p.as_posix() for p in PurePosixPath(prefix + name).parents)
        if prefix and not dirnames and not filenames and rel_dir not in known_dirs:
            note(prefix)  # an empty directory of the user's: named with its slash
        for name in sorted(filenames):
            scanned += 1
            rel = prefix + name
            if name != MARKER and rel not in known_files:
                note(rel)
        if scanned >= MAX_SCANNED:
            break
    return found, count


def _lost_files_text(found: list[str], count: int) -> str:
    more = count - len(found)
    text = ", ".join(found)
    if more > 0:
        text += f" and {more}{'+' if count >= MAX_SCANNED else ''} more"
    return text


def check_output(out: Path | str | os.PathLike[str] | OutputTarget) -> Path:
    """Refuse (ImsdrError) an ``--out`` whose replacement could lose data; return the directory to write.

    Replaced are only a directory that does not exist yet, an empty one, or one carrying imsdr's
    marker and nothing else than the files that marker lists. ``--force`` gets past that rule and
    follows a symlinked ``--out``; nothing gets past :func:`protected_reason`.
    """
    target = as_target(out)
    path = target.path
    try:
        name_bytes = len(os.fsencode(_real(path).name))
        if name_bytes + 32 > NAME_MAX:  # the staging directory beside it adds ".tmp-PID-XXXXXXXX"
            raise _refuse(path, f"its name is {name_bytes} bytes; imsdr needs it under {NAME_MAX - 32}")
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise _refuse(path, exc.strerror or str(exc)) from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        if not target.force:
            raise _refuse(path, f"it is a symbolic link (to {os.readlink(path)}); imsdr does not follow "
                                "it unless --force is given, which replaces the directory it points to")
        resolved = _real(path)
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse(path, "it is a symbolic link loop") from None
        path = resolved
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise _refuse(path, exc.strerror or str(exc)) from None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise ImsdrError(f"{path}: exists and is not a directory")
    reason = protected_reason(_real(path), target.inputs)
    if reason:
        raise _refuse(path, f"{reason}; --out is replaced as a whole, so it must be a directory of its own "
                            "(--force does not change this)")
    if info is None or target.force:
        return path
    known = _read_marker(path)
    if known is None:
        known = _listed_by_enclosing_tree(path)
    found, count = _unexpected(path, known or frozenset())
    if count and known is None:
        raise _refuse(path, f"imsdr did not write it (it has no {MARKER} marker), and replacing it would "
                            f"delete {_lost_files_text(found, count)}; choose a new or empty directory, "
                            "or pass --force to replace it anyway")
    if count:
        raise _refuse(path, f"it holds files imsdr did not write, which replacing it would delete: "
                            f"{_lost_files_text(found, count)}; move them away, or pass --force to "
                            "replace it anyway")
    return path


def seal(staging: Path) -> None:
    """Make the finished tree readable by the programs that load it and mark it as imsdr's.

    One marker, at the root of the tree, lists every file below it. A part of the tree
    (``DIR/dns`` of a ``plan`` output) can still be replaced on its own: :func:`check_output`
    reads the files of that part from the marker of the tree that holds it, and the part then
    carries a marker of its own (a tree holding marked parts can be replaced as a whole).
    """
    files: list[str] = []

    def walk(directory: str, prefix: str) -> None:
        # os.scandir, not os.walk: the entry types come with the listing, so a tree of ten thousand
        # files costs one chmod per file and no extra lstat (national plans write ~17,000 files)
        os.chmod(directory, DIR_MODE)
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():  # (a link to a directory is not followed)
                walk(entry.path, f"{prefix}{entry.name}/")
                continue
            if not entry.is_symlink():
                os.chmod(entry.path, FILE_MODE)
            files.append(prefix + entry.name)

    walk(os.fspath(staging), "")
    marker = {
        "format": f"{MARKER_FORMAT}/{MARKER_VERSION}",
        "about": "written by imsdr, which replaces this directory (or any directory below it) as a whole; "
                 "it refuses to when files not listed here are present",
        "files": sorted(files),
    }
    path = staging / MARKER
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(marker, indent=1, sort_keys=True) + "\n")
    os.chmod(path, FILE_MODE)


LOCK_WAIT_S = 600.0  # how long a command waits for another one writing beside the same output


@contextlib.contextmanager
def output_lock(path: Path | str) -> Iterator[None]:
    """Hold the lock of the directory holding ``path`` from the check of an output to its swap.

    Every imsdr command that replaces an output (a directory or an import draft) takes it
    (``flock`` on the parent directory itself, so nothing is left behind), so two commands
    writing the same ``--out`` serialize: the second one checks the output only once the first
    has swapped it in, and refuses what it must not replace — never a silent loss. A command
    waits up to :data:`LOCK_WAIT_S` seconds, then refuses (exit 2). Where the parent cannot be
    opened for reading no lock is taken; the re-check before the swap still holds.
    """
    import fcntl

    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ImsdrError(f"{path}: another imsdr command has been writing beside it for "
                                     f"{LOCK_WAIT_S:.0f} s; try again once it has finished") from None
                time.sleep(0.05)
            except OSError:  # a file system without flock
                break
        yield
    finally:
        os.close(fd)  # (releases the lock)


def _keep_root_attributes(staging: Path, previous: os.stat_result | None) -> None:
    """The new tree's root gets the replaced root's owner, group and mode: an operator who made
    the directory named reads group-writable (``install -d -g bind -m 0775``) keeps it so."""
    if previous is None:
        return
    with contextlib.suppress(PermissionError):
        os.chown(staging, previous.st_uid, previous.st_gid)
    os.chmod(staging, stat.S_IMODE(previous.st_mode))


@contextlib.contextmanager
def atomic_directory(out: Path | str | os.PathLike[str] | OutputTarget) -> Iterator[Path]:
    """Yield a fresh staging directory; on success it replaces the target directory whole.

    The target is checked first (:func:`check_output`): nothing is replaced that imsdr did not
    write. The staging directory sits next to the target (same file system, so the final rename
    is atomic). Where the kernel can (Linux renameat2), old and new trees are exchanged in one
    step; otherwise the old tree is moved aside first and removed only after the swap. Before
    the swap every file is made 0644 and every directory 0755 (whatever the umask; the root keeps
    the replaced root's owner, group and mode), and the marker listing the files is written.
    Leftovers of runs that were killed are cleaned up on the next run.

    From the check to the swap :func:`output_lock` is held, and the target is checked again just
    before the swap: what another command (or anyone) put there while this one rendered is never
    replaced silently.
    """
    target = check_output(out)
    with output_lock(target):
        target = check_output(out)
        parent = target.parent if str(target.parent) else Path(".")
        try:
            parent.mkdir(parents=True, exist_ok=True)
            clean_stale(target)
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_STAGING}-{os.getpid()}-", dir=parent))
        except OSError as exc:
            raise ImsdrError(f"{target}: cannot create output directory: {exc.strerror}") from None
        try:
            yield staging
            seal(staging)
            if check_output(out) != target:
                raise ImsdrError(f"{target}: changed while imsdr was writing it; nothing was replaced")
            try:
                previous: os.stat_result | None = os.lstat(target)
            except FileNotFoundError:
                previous = None
            _keep_root_attributes(staging, previous)
            if previous is not None:
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


def write_files_atomically(files: list[tuple[Path, str]], mode: int = FILE_MODE) -> None:
    """Write every ``(path, text)`` or none: each text goes to a new file beside its path first,
    then all are renamed into place; when any step fails, the paths already renamed get their
    previous files back (or are removed), directories created for them are removed, and an
    ImsdrError says what failed. A path that is a directory is refused before anything is written.
    """
    for path, _text in files:
        if os.path.isdir(path) and not os.path.islink(path):
            raise ImsdrError(f"{path}: is a directory; nothing written")
    created: list[Path] = []
    staged: list[tuple[Path, Path]] = []
    done: list[tuple[Path, Path | None]] = []
    try:
        for path, text in files:
            parent = path.parent if str(path.parent) else Path(".")
            missing = [p for p in (parent, *parent.parents) if not os.path.lexists(p)]
            for directory in reversed(missing):
                os.mkdir(directory)
                created.append(directory)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
            staged.append((Path(tmp), path))
            try:
                _write_all(fd, text.encode("utf-8"))
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
        for tmp, path in staged:
            backup = None
            if os.path.lexists(path):
                backup = path.parent / f".{path.name}.old-{os.getpid()}"
                os.rename(path, backup)
            try:
                os.rename(tmp, path)
            except OSError:
                if backup is not None:
                    os.rename(backup, path)
                raise
            done.append((path, backup))
        for _path, backup in done:
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
    except BaseException as exc:
        for path, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.rename(backup, path)
                else:
                    os.unlink(path)
        for tmp, _path in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        if isinstance(exc, OSError):
            raise ImsdrError(f"{exc.filename or ''}: cannot write: {exc.strerror or exc}; nothing written") from None
        raise
