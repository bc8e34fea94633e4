"""The one way imsdr reads a file it did not write in this run.

Every file imsdr reads may be hostile: an import source, a committed plan under review, a keys
file, a template, a previous output tree. Each is read by :func:`read_untrusted`, which

* opens the path with ``O_NOFOLLOW | O_NONBLOCK`` (a symbolic link is refused, never followed,
  and a FIFO or device does not block the open),
* ``fstat``\\ s the open descriptor and requires a regular file (so what is checked is what is read),
* reads at most ``limit + 1`` bytes and refuses a file over the limit (a file that grows while it
  is read is bounded too),

and reports every refusal as an :class:`UntrustedFile` error naming the file (and, through
``named_at``, the ``FILE:LINE`` of the statement that named it).

``O_NOFOLLOW`` guards the last path component only; readers that must also keep a path inside a
tree (a committed plan, an ``include`` confined to a configuration's directory) pass ``dir_fd``
and a single-component name, or walk the tree with :func:`open_directory`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from imsdr.errors import ImsdrError

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class UntrustedFile(ImsdrError):
    """A file imsdr was asked to read cannot be read safely; ``reason`` says why in a few words."""

    def __init__(self, file: str, reason: str, named_at: str | None = None) -> None:
        self.file = file
        self.reason = reason
        self.named_at = named_at
        where = f"{named_at}: {file}" if named_at else file
        super().__init__(f"{where}: {reason}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_untrusted(path: str | os.PathLike[str], *, dir_fd: int | None = None,
                   named_at: str | None = None, display: str | None = None) -> tuple[int, os.stat_result]:
    """An open descriptor on the regular file at ``path`` and its ``fstat``; the caller closes it.

    Raises :class:`UntrustedFile` for a symbolic link, a missing file, anything that is not a
    regular file, or an open that fails.
    """
    file = display or os.fspath(path)
    try:
        fd = os.open(path, _OPEN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise UntrustedFile(file, "no such file", named_at) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFile(file, "is a symbolic link; links are never followed", named_at) from None
        if exc.errno == errno.EISDIR:
            raise UntrustedFile(file, "is a directory, not a regular file", named_at) from None
        raise UntrustedFile(file, f"cannot open: {exc.strerror or exc}", named_at) from None
    except ValueError:  # an embedded NUL in the name
        raise UntrustedFile(file, "not a usable file name", named_at) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise UntrustedFile(file, f"cannot stat: {exc.strerror or exc}", named_at) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UntrustedFile(file, f"is {_kind(info.st_mode)}, not a regular file", named_at)
    return fd, info


def read_untrusted(path: str | os.PathLike[str], limit: int, *, dir_fd: int | None = None,
                   named_at: str | None = None, display: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    ``dir_fd``: read ``path`` relative to this open directory (with a one-component ``path`` the
    file cannot lie outside it). ``named_at``: the ``FILE:LINE`` of the statement that named the
    file, shown before it in a refusal. ``display``: the name to show instead of ``path``.
    """
    file = display or os.fspath(path)
    fd, info = open_untrusted(path, dir_fd=dir_fd, named_at=named_at, display=display)
    try:
        if info.st_size > limit:
            raise UntrustedFile(file, f"is {info.st_size:,} bytes; at most {limit:,} are read", named_at)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UntrustedFile(file, f"grew past {limit:,} bytes while being read; at most {limit:,} are read",
                                named_at)
        return b"".join(chunks)
    except OSError as exc:
        raise UntrustedFile(file, f"cannot read: {exc.strerror or exc}", named_at) from None
    finally:
        os.close(fd)


def read_untrusted_text(path: str | os.PathLike[str], limit: int, *, dir_fd: int | None = None,
                        named_at: str | None = None, display: str | None = None) -> str:
    """:func:`read_untrusted` decoded as UTF-8; bytes that are not UTF-8 are refused with their
    line and column."""
    raw = read_untrusted(path, limit, dir_fd=dir_fd, named_at=named_at, display=display)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        column = len(raw[start:exc.start].decode("utf-8", "replace")) + 1
        file = display or os.fspath(path)
        raise UntrustedFile(f"{file}:{line}:{column}", f"not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                            named_at) from None



def open_untrusted_file(path: str | os.PathLike[str], limit: int, *, encoding: str | None = None,
                        newline: str | None = None, named_at: str | None = None,
                        display: str | None = None) -> IO[Any]:
    """A file object (binary, or text in ``encoding``) on the regular file at ``path`` of at most
    ``limit`` bytes, for readers that stream a large file (ENUM zones, tables); as
    :func:`open_untrusted` it follows no link and never blocks on a FIFO or device. The size is
    checked when the file is opened; a streaming reader bounds what it keeps itself."""
    file = display or os.fspath(path)
    fd, info = open_untrusted(path, named_at=named_at, display=display)
    if info.st_size > limit:
        os.close(fd)
        raise UntrustedFile(file, f"is {info.st_size:,} bytes; at most {limit:,} are read", named_at)
    os.set_blocking(fd, True)
    if encoding is None:
        return os.fdopen(fd, "rb")
    return os.fdopen(fd, "r", encoding=encoding, newline=newline)

def open_directory(path: str | os.PathLike[str], *, dir_fd: int | None = None,
                   display: str | None = None) -> int:
    """An open descriptor on the directory at ``path``, never through a symbolic link."""
    file = display or os.fspath(path)
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        raise UntrustedFile(file, "no such directory") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UntrustedFile(file, "is not a directory (links are never followed)") from None
        raise UntrustedFile(file, f"cannot open directory: {exc.strerror or exc}") from None


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` itself (not what a link at it points to) is a regular file."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


# --- a tree imsdr did not write (a committed plan under review, a previous output) ---------------

MAX_TREE_ENTRIES = 1_000_000  # a national plan writes ~17,000 files
MAX_TREE_DEPTH = 32  # imsdr's own trees are at most four directories deep


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts) or "\x00" in rel:
        raise UntrustedFile(rel, "not a path inside the tree")
    return parts


@contextlib.contextmanager
def _parent_in(root_fd: int, rel: str, display: str | None) -> Iterator[tuple[int, str, str]]:
    """(the directory holding ``rel``'s last part, that part, the name shown in errors), every
    directory on the way opened without following a link and closed afterwards."""
    parts = _parts(rel)
    fds: list[int] = []
    shown = display or rel
    try:
        parent = root_fd
        for part in parts[:-1]:
            parent = open_directory(part, dir_fd=parent, display=shown)
            fds.append(parent)
        yield parent, parts[-1], shown
    finally:
        for fd in fds:
            os.close(fd)


def open_untrusted_in(root_fd: int, rel: str, *, display: str | None = None) -> tuple[int, os.stat_result]:
    """:func:`open_untrusted` on ``rel`` (``a/b/c``) inside the directory open as ``root_fd``: every
    directory on the way is opened without following a link, so the file cannot lie outside it."""
    with _parent_in(root_fd, rel, display) as (parent, name, shown):
        return open_untrusted(name, dir_fd=parent, display=shown)


def read_untrusted_in(root_fd: int, rel: str, limit: int, *, display: str | None = None) -> bytes:
    """:func:`read_untrusted` on ``rel`` inside the directory open as ``root_fd`` (see
    :func:`open_untrusted_in`)."""
    with _parent_in(root_fd, rel, display) as (parent, name, shown):
        return read_untrusted(name, limit, dir_fd=parent, display=shown)


def walk_untrusted(root_fd: int, *, display: str = ".") -> dict[str, os.stat_result]:
    """Every entry below the directory open as ``root_fd`` that is not a directory, as
    ``relative posix path → lstat``; nothing is followed (a link to a directory is an entry, not
    descended into) and nothing is opened but directories. At most :data:`MAX_TREE_ENTRIES`
    entries and :data:`MAX_TREE_DEPTH` levels; more is refused."""
    found: dict[str, os.stat_result] = {}
    seen = 0

    def walk(fd: int, prefix: str, depth: int) -> None:
        nonlocal seen
        if depth > MAX_TREE_DEPTH:
            raise UntrustedFile(f"{display}/{prefix}", f"is nested more than {MAX_TREE_DEPTH} directories deep")
        try:
            with os.scandir(fd) as listing:
                entries = list(listing)
        except OSError as exc:
            raise UntrustedFile(f"{display}/{prefix}", f"cannot list: {exc.strerror or exc}") from None
        for entry in entries:
            seen += 1
            if seen > MAX_TREE_ENTRIES:
                raise UntrustedFile(display, f"holds more than {MAX_TREE_ENTRIES:,} entries")
            rel = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                raise UntrustedFile(f"{display}/{rel}", f"cannot stat: {exc.strerror or exc}") from None
            if stat.S_ISDIR(info.st_mode):
                child = open_directory(entry.name, dir_fd=fd, display=f"{display}/{rel}")
                try:
                    walk(child, rel + "/", depth + 1)
                finally:
                    os.close(child)
            else:
                found[rel] = info

    walk(root_fd, "", 1)
    return found


def kind_of(info: os.stat_result) -> str:
    """What a non-directory entry is, in the words refusals use ("a symbolic link", "a FIFO", ...)."""
    if stat.S_ISREG(info.st_mode):
        return "a regular file"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    return _kind(info.st_mode)


class UntrustedTree:
    """A directory tree opened once, listed without following anything and read only through its
    descriptor: ``with UntrustedTree(path, display) as tree: tree.entries, tree.read(rel, limit)``.

    A missing ``path`` is an empty tree; a ``path`` that is a link or not a directory is refused.
    """

    def __init__(self, path: str | os.PathLike[str], display: str | None = None) -> None:
        self.path = Path(path)
        self.display = display or os.fspath(path)
        self.entries: dict[str, os.stat_result] = {}
        self._fd: int | None = None

    def __enter__(self) -> UntrustedTree:
        if os.path.lexists(self.path):
            self._fd = open_directory(self.path, display=self.display)
            try:
                self.entries = walk_untrusted(self._fd, display=self.display)
            except BaseException:
                os.close(self._fd)
                self._fd = None
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def is_regular(self, rel: str) -> bool:
        info = self.entries.get(rel)
        return info is not None and stat.S_ISREG(info.st_mode)

    def _root(self) -> int:
        if self._fd is None:
            raise UntrustedFile(self.display, "no such directory")
        return self._fd

    def open(self, rel: str) -> tuple[int, os.stat_result]:
        """An open descriptor on the regular file ``rel`` and its fstat; the caller closes it."""
        return open_untrusted_in(self._root(), rel, display=f"{self.display}/{rel}")

    def read(self, rel: str, limit: int) -> bytes:
        return read_untrusted_in(self._root(), rel, limit, display=f"{self.display}/{rel}")
