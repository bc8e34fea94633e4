"""The order of an apply and its state directory, without servers: waves (canary by flag or first
in order, primaries before secondaries, Kamailio one at a time, Diameter last), content-addressed
records, the lock's message, and a journal line per step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from imsdr.apply.executor import waves
from imsdr.apply.journal import Journal
from imsdr.apply.servers import ZoneRef
from imsdr.apply.state import Record, StateDir, sha256
from imsdr.apply.steps import TargetPlan
from imsdr.apply.targets import parse_targets
from imsdr.errors import ImsdrError


def _plans(tmp_path: Path) -> list[TargetPlan]:
    key = tmp_path / "k"
    key.write_text("x")
    key.chmod(0o600)
    bind = f"kind: bind, dns: {{address: 127.0.0.1}}, rndc: {{address: 127.0.0.1, port: 953, key_file: {key}}}"
    text = (f"version: 1\nroot: {tmp_path}\ntargets:\n"
            f"  cscf-1: {{kind: diameter, directory: c1, reload: [true]}}\n"
            f"  dns-b: {{{bind}, directory: b}}\n  dns-a: {{{bind}, directory: a}}\n  dns-c: {{{bind}, directory: c}}\n"
            f"  sbc-1: {{kind: kamailio, directory: s1, rpc: {{kamcmd: /k1}}}}\n"
            f"  sbc-2: {{kind: kamailio, directory: s2, rpc: {{kamcmd: /k2}}}}\n"
            f"  sbc-3: {{kind: kamailio, directory: s3, rpc: {{kamcmd: /k3}}}}\n")
    targets = parse_targets(text, "t.yaml").targets
    secondary = [ZoneRef("v", "k", "z", "secondary", "s/z.zone")]
    return [TargetPlan(t, {}, secondary if t.id == "dns-b" else [], t.id == "dns-b") for t in targets.values()]


def _ids(order: list[tuple[str, list[TargetPlan]]]) -> list[tuple[str, list[str]]]:
    return [(phase, [tp.target.id for tp in group]) for phase, group in order]


def test_waves_in_order_first_primary_and_first_sbc_are_the_canary(tmp_path: Path) -> None:
    assert _ids(waves(_plans(tmp_path), ())) == [
        ("canary", ["dns-a", "sbc-1"]), ("wave 1", ["dns-c"]), ("wave 2", ["dns-b"]), ("wave 3", ["sbc-2"]),
        ("wave 4", ["sbc-3"]), ("wave 5", ["cscf-1"])]


def test_canary_by_flag(tmp_path: Path) -> None:
    assert _ids(waves(_plans(tmp_path), ("dns-c", "sbc-3")))[:2] == [
        ("canary", ["dns-c", "sbc-3"]), ("wave 1", ["dns-a"])]


def test_records_and_content_addressed_files(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    digest = state.store(b"zone text\n")
    assert digest == sha256(b"zone text\n") and state.load(digest) == b"zone text\n"
    assert (tmp_path / "state" / "objects" / digest).stat().st_mode & 0o777 == 0o600
    before = Record("dns-a", "p1", {"zones/z.zone": digest}, {"v z": 1})
    after = Record("dns-a", "p2", {"zones/z.zone": digest}, {"v z": 2})
    state.commit(after, before)
    assert state.record("dns-a") == after and state.record("dns-a", previous=True) == before
    (tmp_path / "state" / "objects" / digest).write_bytes(b"changed behind imsdr's back\n")
    with pytest.raises(ImsdrError, match="does not match its digest"):
        state.load(digest)


def test_one_apply_at_a_time(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    refused = pytest.raises(ImsdrError, match=r"another imsdr apply is running \(pid \d+")
    with state.lock(), refused, StateDir(tmp_path / "state").lock():
        pass
    with state.lock():  # released: taken again
        pass


def test_journal_line_per_step(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j", "A1")
    journal.write("canary", "dns-a", "Reload zone z", "rndc reload z IN v", True, "zone reload queued", 0.01)
    journal.write("canary", "dns-a", "Verify dns-a", "dig", False, "drift", 0.5)
    lines = [json.loads(line) for line in (tmp_path / "j" / "A1.jsonl").read_text().splitlines()]
    assert [(e["seq"], e["result"], e["phase"]) for e in lines] == [(1, "ok", "canary"), (2, "failed", "canary")]
    assert set(lines[0]) == {"apply", "seq", "phase", "target", "step", "command", "result", "output",
                             "duration_s", "at"}
