"""Offline: the way back of an apply under catalog zones (RFC 9432), without servers.

A secondary's member zones exist only once its catalog is transferred and processed, so
``rndc retransfer`` of one answers "not found" for a while: apply asks again once a second, at
most CATALOG_MEMBER_WAIT_S times, and fails at once on any other error. The recovery after an
apply stopped mid-way waits on the member zones the catalogs it goes back to list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from imsdr.apply import executor, servers, steps
from imsdr.apply.executor import Applier
from imsdr.apply.servers import Outcome, ZoneRef
from imsdr.apply.state import Record
from imsdr.apply.steps import Context, TargetPlan
from imsdr.apply.targets import Target, Targets, parse_targets
from imsdr.dns.catalog import CATALOG_SUFFIX
from imsdr.dns.drain import CATALOG_MEMBER_WAIT_S

CATALOG = f"cat-v1.{CATALOG_SUFFIX}"
MEMBER = ZoneRef("v1", "k1", "member.example", "secondary", "")  # listed by a catalog: no file of its own
DECLARED = ZoneRef("v1", "k1", "declared.example", "secondary", "zones/declared.example.zone")


def _targets(tmp_path: Path) -> Targets:
    key = tmp_path / "k"
    key.write_text("x")
    key.chmod(0o600)
    bind = f"kind: bind, dns: {{address: 127.0.0.1}}, rndc: {{address: 127.0.0.1, port: 953, key_file: {key}}}"
    return parse_targets(f"version: 1\nroot: {tmp_path}\ntargets:\n"
                         f"  dns-a: {{{bind}, directory: a}}\n  dns-b: {{{bind}, directory: b}}\n", "t.yaml")


class FakeRndc:
    """``servers.run`` answering a list of outcomes in turn; the seconds slept between them."""

    def __init__(self, answers: list[Outcome]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, ...]] = []
        self.slept: list[float] = []

    def run(self, argv: tuple[str, ...], timeout: float = 0) -> Outcome:
        self.calls.append(argv)
        return self.answers[min(len(self.calls), len(self.answers)) - 1]

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


@pytest.fixture
def rndc(monkeypatch: pytest.MonkeyPatch) -> Any:
    def install(answers: list[Outcome]) -> FakeRndc:
        fake = FakeRndc(answers)
        monkeypatch.setattr(servers, "run", fake.run)
        monkeypatch.setattr(steps.time, "sleep", fake.sleep)
        return fake
    return install


NOT_FOUND = Outcome(False, "rndc: 'retransfer' failed: not found\nno matching zone 'member.example' in view 'v1'", 0.0)
OK = Outcome(True, "", 0.0)


def _target(tmp_path: Path) -> Target:
    return _targets(tmp_path).targets["dns-b"]


def test_a_member_not_found_yet_is_asked_again_once_a_second(tmp_path: Path, rndc: Any) -> None:
    fake = rndc([NOT_FOUND, NOT_FOUND, OK])
    outcome = steps.retransfer(_target(tmp_path), MEMBER)
    assert outcome.ok
    assert len(fake.calls) == 3 and fake.slept == [1.0, 1.0]
    assert fake.calls[0][-4:] == ("retransfer", "member.example", "IN", "v1")


def test_a_member_never_created_fails_after_the_bound(tmp_path: Path, rndc: Any) -> None:
    fake = rndc([NOT_FOUND])
    outcome = steps.retransfer(_target(tmp_path), MEMBER)
    assert not outcome.ok and "not found" in outcome.output
    assert len(fake.calls) == CATALOG_MEMBER_WAIT_S + 1
    assert sum(fake.slept) == CATALOG_MEMBER_WAIT_S == 30


def test_any_other_error_fails_at_once(tmp_path: Path, rndc: Any) -> None:
    fake = rndc([Outcome(False, "rndc: connection to remote host closed", 0.0), OK])
    outcome = steps.retransfer(_target(tmp_path), MEMBER)
    assert not outcome.ok and "connection" in outcome.output
    assert len(fake.calls) == 1 and fake.slept == []


def test_a_zone_the_fragment_declares_is_not_waited_for(tmp_path: Path, rndc: Any) -> None:
    fake = rndc([NOT_FOUND, OK])
    assert not steps.retransfer(_target(tmp_path), DECLARED).ok
    assert len(fake.calls) == 1 and fake.slept == []


def test_the_rollback_convergence_waits_for_a_late_member(tmp_path: Path, rndc: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The convergence step of a rollback: the member answers "not found" twice, then transfers."""
    fake = rndc([NOT_FOUND, NOT_FOUND, OK])
    # the secondary serves the rolled-back serial 7 once the third retransfer went through
    monkeypatch.setattr(servers, "served_serial", lambda _t, _ref, _r: 7 if len(fake.calls) >= 3 else 9)
    targets = _targets(tmp_path)
    ctx = Context(targets, executor.StateDir(tmp_path / "state"), tmp_path, {}, 1.0,
                  {("v1", "member.example"): 7})
    tp = TargetPlan(targets.targets["dns-b"], {}, [MEMBER], True)
    [action] = steps.verify_steps(ctx, tp, {}, "rollback")
    ok, output = action.perform()
    assert ok, output
    assert len(fake.calls) == 3 and fake.slept[:2] == [1.0, 1.0]


# --- recovery after an apply stopped mid-way -------------------------------------------------------

def _catalog(members: list[str]) -> bytes:
    lines = [f"$ORIGIN {CATALOG}.", "@ 0 IN SOA invalid. invalid. 1 3600 600 86400 0", "@ 0 IN NS invalid.",
             'version 0 IN TXT "2"']
    lines += [f"m{i}.zones 0 IN PTR {member}." for i, member in enumerate(members)]
    return ("\n".join(lines) + "\n").encode()


def _primary_files(members: list[str]) -> dict[str, bytes]:
    conf = (f'view "v1" {{\n  match-clients {{ key "k1"; }};\n'
            f'  zone "{CATALOG}" {{ type primary; file "catalogs/{CATALOG}.zone"; }};\n}};\n')
    return {"named/dns-a.conf": conf.encode(), f"catalogs/{CATALOG}.zone": _catalog(members)}


SECONDARY = {"named/dns-b.conf": (f'view "v1" {{\n  match-clients {{ key "k1"; }};\n'
                                  f'  zone "{CATALOG}" {{ type secondary; file "cat/{CATALOG}.db"; }};\n'
                                  '};\n').encode()}


def test_recovery_waits_on_the_members_of_the_catalogs_it_goes_back_to(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    targets = _targets(tmp_path)
    applier = Applier(targets, tmp_path / "state")
    old, new = {"dns-a": _primary_files(["old.example"]), "dns-b": SECONDARY}, \
        {"dns-a": _primary_files(["new.example"]), "dns-b": SECONDARY}

    def record(tid: str, files: dict[str, bytes]) -> Record:
        return Record(tid, "d", {rel: applier.state.store(data) for rel, data in files.items()})

    applier.state.set_pending({"apply": "x", "plan_digest": "d", "targets": {
        tid: {"from": record(tid, old[tid]).to_dict(), "to": record(tid, new[tid]).to_dict()} for tid in old}})
    new_tree = executor.delivered_tree(new)
    plans = [executor.target_files(new_tree, t) for t in targets.targets.values()]
    assert [r.zone for r in plans[1].refs] == [CATALOG, "new.example"]  # what the new plan would wait on

    seen: dict[str, list[str]] = {}

    def capture(_ctx: Context, tp: TargetPlan, *_a: Any) -> list[Any]:
        seen.setdefault(tp.target.id, [ref.zone for ref in tp.refs])
        assert tp.secondary == (tp.target.id == "dns-b")
        assert tp.files == old[tp.target.id]
        return []
    monkeypatch.setattr(executor, "transition", capture)
    monkeypatch.setattr(executor, "verify_steps", capture)
    ctx = Context(targets, applier.state, tmp_path, {}, 1.0)
    journal = executor.Journal(tmp_path / "journal", "x")
    assert applier._recover(ctx, plans, journal) == ["dns-a", "dns-b"]
    assert seen["dns-b"] == [CATALOG, "old.example"]
    assert applier.state.pending() is None
