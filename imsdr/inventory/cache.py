"""A private on-disk cache of validated inventories.

A pipeline runs ``validate``, ``check``, ``capacity``, ``scenarios`` and ``render`` on the same
file; at national scale (~5,000 elements, a 1.5 MB YAML file) parsing with locations and
validating costs seconds each time. This cache stores the validated ``Inventory`` (pickled)
under a key made of the file's bytes, the name it was given by, the imsdr version and the
source code of the inventory package, so any change to the file or to the code that
validates it misses the cache. Only valid inventories are stored; the source locations are
not stored but re-parsed from the same bytes the first time a finding needs one.

Small files (under ``MIN_BYTES``) never use it: they load in milliseconds anyway.
Set ``IMSDR_NO_CACHE=1`` to turn it off, ``IMSDR_CACHE_DIR`` to move it (default
``$XDG_CACHE_HOME/imsdr`` or ``~/.cache/imsdr``). The directory is created private (0700)
and is used only while it and its entries belong to the current user and nobody else can
write to them — a pickle is code, so the cache trusts nothing it did not write itself.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from imsdr.inventory.build import SourceMap
    from imsdr.inventory.loader import LoadedDocument
    from imsdr.inventory.schema import Inventory

MIN_BYTES = 256 * 1024
MAX_ENTRIES = 32
FORMAT = b"imsdr-inventory-cache-1"

Loaded = tuple["Inventory", "SourceMap"]


def cache_dir() -> Path | None:
    if os.environ.get("IMSDR_NO_CACHE", "").strip() not in ("", "0"):
        return None
    explicit = os.environ.get("IMSDR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "imsdr"


def _private_dir(path: Path) -> bool:
    """Create ``path`` (0700) if needed; true when it is ours and closed to others."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


_fingerprint: bytes | None = None


def code_fingerprint() -> bytes:
    """The version and the inventory package's source: a code change invalidates every entry."""
    global _fingerprint
    if _fingerprint is None:
        import pydantic

        from imsdr import __version__

        digest = hashlib.sha256(FORMAT)
        digest.update(f"{__version__}|{pydantic.VERSION}|{sys.version}".encode())
        package = Path(__file__).resolve().parent
        for source in sorted(package.glob("*.py")):
            digest.update(source.name.encode())
            digest.update(source.read_bytes())
        _fingerprint = digest.digest()
    return _fingerprint


def entry_key(file: str, raw: bytes) -> str:
    digest = hashlib.sha256(code_fingerprint())
    digest.update(file.encode("utf-8", "surrogateescape"))
    digest.update(b"\0")
    digest.update(raw)
    return digest.hexdigest()


class LazyDocument:
    """Stands in for the LoadedDocument of a cached inventory: parses the same bytes (with
    locations) only when something asks where a value was written."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self._text = text
        self._doc: LoadedDocument | None = None

    def _load(self) -> LoadedDocument:
        if self._doc is None:
            from imsdr.inventory.loader import load_yaml_text

            self._doc = load_yaml_text(self._text, self.file, tolerant=True)
        return self._doc

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._load(), name)


def _read(path: Path) -> tuple[bytes, tuple[int, int, int]] | None:
    """The file's bytes and identity when it is a regular file worth caching, else None."""
    from imsdr.inventory.loader import MAX_FILE_BYTES

    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or not MIN_BYTES <= info.st_size <= MAX_FILE_BYTES:
                return None
            raw = handle.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(raw) != info.st_size:
        return None
    return raw, (info.st_ino, info.st_size, info.st_mtime_ns)


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def _get(directory: Path, key: str) -> Inventory | None:
    try:
        fd = os.open(directory / f"{key}.pickle", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid()
                or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            value = pickle.load(handle)
    except Exception:  # a damaged entry is a miss, never an error
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    from imsdr.inventory.schema import Inventory

    return value if isinstance(value, Inventory) else None


def _put(directory: Path, key: str, inventory: Inventory) -> None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(inventory, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, directory / f"{key}.pickle")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        entries = sorted(directory.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[:-MAX_ENTRIES]:
            with contextlib.suppress(OSError):
                old.unlink()
    except Exception:  # a cache that cannot be written is no cache, not an error
        return


def load_cached(path: str | os.PathLike[str], load: Callable[[], Loaded]) -> Loaded:
    """``load()`` (the uncached loader of ``path``), through the cache when it applies.

    The cyclic garbage collector is paused meanwhile: loading builds ~150,000 objects and none
    of them is garbage yet, so its passes only cost time (a third of the unpickling, ~15 % of
    a cold parse at national scale)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_cached(path, load)
    finally:
        if enabled:
            gc.enable()


def _load_cached(path: str | os.PathLike[str], load: Callable[[], Loaded]) -> Loaded:
    directory = cache_dir()
    if directory is None:
        return load()
    file = str(path)
    read = _read(Path(path))
    if read is None or not _private_dir(directory):
        return load()
    raw, identity = read
    key = entry_key(file, raw)
    inventory = _get(directory, key)
    if inventory is not None:
        from imsdr.inventory.build import SourceMap

        with contextlib.suppress(OSError):  # least recently used entries are pruned first
            os.utime(directory / f"{key}.pickle")

        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        return inventory, SourceMap(LazyDocument(file, text), inventory)  # type: ignore[arg-type]
    result = load()
    if _identity(Path(path)) == identity:  # the file did not change while it was being loaded
        _put(directory, key, result[0])
    return result
