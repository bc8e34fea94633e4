"""Atomic output: build everything in a temporary directory beside the target, then swap.

On any error the previous output stays byte-identical and no temporary files are left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from imsdr.errors import ImsdrError


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that could leave ``root``."""
    rel = PurePosixPath(relative)
    if rel.is_absolute() or any(part in ("..", "") for part in rel.parts) or "\x00" in relative:
        raise ImsdrError(f"refusing output path {relative!r}: it must stay inside the output directory")
    if any(part.startswith(".") for part in rel.parts):
        raise ImsdrError(f"refusing output path {relative!r}: hidden names are not written")
    return root.joinpath(*rel.parts)


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a fresh staging directory; on success it replaces ``target`` whole.

    The staging directory sits next to ``target`` (same file system, so the final
    rename is atomic); the old tree is moved aside and removed only after the swap.
    """
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_dir():
        raise ImsdrError(f"{target}: exists and is not a directory")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    except OSError as exc:
        raise ImsdrError(f"{target}: cannot create output directory: {exc.strerror}") from None
    try:
        yield staging
        os.chmod(staging, 0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=parent))
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
