"""The state directory of ``imsdr apply``: what each target runs now, and the files to go back.

Layout (every file written atomically)::

    STATE/lock                  flock'ed by the one apply that runs; holds its pid and start
    STATE/objects/<sha256>      every file ever delivered, by content (a rollback needs no plan dir)
    STATE/targets/<id>.json     the target's current record: plan digest, files, serials, time, version
    STATE/previous/<id>.json    the record it had before (``apply --rollback`` returns to it)
    STATE/pending.json          while an apply delivers: every target's record before and after;
                                found by the next apply after a crash, which rolls those targets back
    STATE/journal/<apply>.jsonl one line per step (:mod:`imsdr.apply.journal`)

Records hold digests and serials only; secrets never reach the state directory.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imsdr.errors import ImsdrError
from imsdr.output.atomic import write_files_atomically
from imsdr.untrusted import UntrustedFile, read_untrusted, read_untrusted_text

RECORD_LIMIT = 64 << 20
OBJECT_LIMIT = 256 << 20
STATE_VERSION = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


@dataclass
class Record:
    """What one target runs: its files (path inside the target -> sha256) and how they got there."""

    target: str
    plan_digest: str
    files: dict[str, str]
    serials: dict[str, int] = field(default_factory=dict)  # "view zone" -> SOA serial
    applied_at: str = ""
    imsdr: str = ""
    apply_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "target": self.target, "plan_digest": self.plan_digest,
                "files": dict(sorted(self.files.items())), "serials": dict(sorted(self.serials.items())),
                "applied_at": self.applied_at, "imsdr": self.imsdr, "apply_id": self.apply_id}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Record:
        try:
            files = {str(k): str(v) for k, v in data["files"].items()}
            if any(len(v) != 64 or not all(c in "0123456789abcdef" for c in v) for v in files.values()):
                raise ValueError("a file digest is not sha256")
            return cls(str(data["target"]), str(data["plan_digest"]), files,
                       {str(k): int(v) for k, v in data.get("serials", {}).items()},
                       str(data.get("applied_at", "")), str(data.get("imsdr", "")), str(data.get("apply_id", "")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ImsdrError(f"{where}: not a state record imsdr wrote ({exc})") from None


class StateDir:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    # --- files ----------------------------------------------------------------------------
    def _read_json(self, path: Path) -> Any:
        try:
            return json.loads(read_untrusted_text(path, RECORD_LIMIT))
        except ValueError as exc:
            raise ImsdrError(f"{path}: not JSON imsdr wrote ({exc})") from None

    def _write_json(self, path: Path, data: Any) -> None:
        write_files_atomically([(path, json.dumps(data, indent=1, sort_keys=True) + "\n")], mode=0o600)

    def store(self, data: bytes) -> str:
        digest = sha256(data)
        path = self.path / "objects" / digest
        if not path.exists():
            write_files_atomically([(path, data.decode("utf-8"))], mode=0o600)
        return digest

    def load(self, digest: str) -> bytes:
        data = read_untrusted(self.path / "objects" / digest, OBJECT_LIMIT)
        if sha256(data) != digest:
            raise ImsdrError(f"{self.path / 'objects' / digest}: content does not match its digest")
        return data

    def record(self, target: str, previous: bool = False) -> Record | None:
        path = self.path / ("previous" if previous else "targets") / f"{target}.json"
        try:
            return Record.from_dict(self._read_json(path), str(path))
        except UntrustedFile as exc:
            if exc.reason == "no such file":
                return None
            raise

    def records(self) -> dict[str, Record]:
        directory = self.path / "targets"
        if not directory.is_dir():
            return {}
        out = {}
        for entry in sorted(os.listdir(directory)):
            if entry.endswith(".json"):
                found = self.record(entry.removesuffix(".json"))
                if found is not None:
                    out[found.target] = found
        return out

    def commit(self, record: Record, before: Record | None) -> None:
        """``record`` becomes the target's current one; ``before`` its previous one."""
        files = [(self.path / "targets" / f"{record.target}.json", json.dumps(record.to_dict(), indent=1) + "\n")]
        if before is not None:
            files.append((self.path / "previous" / f"{record.target}.json",
                          json.dumps(before.to_dict(), indent=1) + "\n"))
        write_files_atomically(files, mode=0o600)

    def pending(self) -> dict[str, Any] | None:
        try:
            data = self._read_json(self.path / "pending.json")
        except UntrustedFile as exc:
            if exc.reason == "no such file":
                return None
            raise
        return data if isinstance(data, dict) else None

    def set_pending(self, data: dict[str, Any] | None) -> None:
        path = self.path / "pending.json"
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        self._write_json(path, data)

    # --- the lock ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One apply at a time: ``flock`` on STATE/lock, refused at once (exit 2) while held."""
        self.path.mkdir(parents=True, exist_ok=True)
        path = self.path / "lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                raise ImsdrError(f"{path}: another imsdr apply is running ({holder}); wait for it to "
                                 "finish — only one apply at a time changes the servers") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}, started {now()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)
