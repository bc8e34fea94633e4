"""The journal of one apply: one JSON line per step, written (and flushed) as the step ends.

Each line: ``apply`` (its id), ``seq``, ``phase`` (pre-flight, canary, wave N, rollback, recovery),
``target``, ``step`` (the title), ``command`` (as shown, never a secret), ``result`` (ok, failed,
skipped), ``output`` (the first characters of what it printed), ``duration_s`` and ``at``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from imsdr.apply.state import now


class Journal:
    def __init__(self, directory: Path, apply_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{apply_id}.jsonl"
        self.apply_id = apply_id
        self.seq = 0
        self.entries: list[dict[str, Any]] = []

    def write(self, phase: str, target: str, step: str, command: str, ok: bool | None, output: str,
              duration_s: float) -> dict[str, Any]:
        self.seq += 1
        entry = {"apply": self.apply_id, "seq": self.seq, "phase": phase, "target": target, "step": step,
                 "command": command, "result": "skipped" if ok is None else ("ok" if ok else "failed"),
                 "output": output, "duration_s": round(duration_s, 3), "at": now()}
        self.entries.append(entry)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return entry
