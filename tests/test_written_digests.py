"""plan.json's SHA-256 of each file is taken while the file is written; a file changed since is
read and hashed again, so plan.json always describes the bytes on disk."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from imsdr.output.atomic import HashingFile, WrittenDigests, write_text


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_digest_of_a_written_file_is_the_hash_of_its_bytes(tmp_path: Path) -> None:
    digests = WrittenDigests()
    path = tmp_path / "a.zone"
    text = "é line\r\nsecond\n" * 1000  # no newline translation, UTF-8
    write_text(path, text, digests)
    assert path.read_bytes() == text.encode("utf-8")
    assert digests.digest_of(os.stat(path)) == _sha(path)
    streamed = tmp_path / "b.zone"
    with HashingFile(streamed, digests) as fh:
        for _ in range(100):
            fh.write("x" * 70_000 + "\n")
    assert digests.digest_of(os.stat(streamed)) == _sha(streamed)


def test_a_file_changed_after_writing_has_no_recorded_digest(tmp_path: Path) -> None:
    digests = WrittenDigests()
    path = tmp_path / "a.conf"
    write_text(path, "original\n", digests)
    assert digests.digest_of(os.stat(path)) is not None
    time.sleep(0.01)
    path.write_text("changed!\n")  # same size, later modification time
    assert digests.digest_of(os.stat(path)) is None
    other = tmp_path / "other"
    other.write_text("never recorded\n")
    assert digests.digest_of(os.stat(other)) is None


def test_a_failed_write_records_nothing(tmp_path: Path) -> None:
    digests = WrittenDigests()
    path = tmp_path / "half"
    try:
        with HashingFile(path, digests) as fh:
            fh.write("part\n")
            raise RuntimeError("stop")
    except RuntimeError:
        pass
    assert digests.digest_of(os.stat(path)) is None


def test_plan_json_lists_the_hash_of_every_file_on_disk(tmp_path: Path) -> None:
    from imsdr.plan import write_plan

    root = Path(__file__).resolve().parents[1]
    summary = write_plan(root / "inventories" / "lab.yaml", tmp_path / "plan")
    assert summary["files"]
    for entry in summary["files"]:
        path = tmp_path / "plan" / entry["path"]
        assert entry["sha256"] == _sha(path) and entry["bytes"] == path.stat().st_size
