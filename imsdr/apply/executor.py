"""``imsdr apply``: change set, pre-flight, ordered waves with a canary, rollback, recovery.

One apply is a list of :class:`Action` — a typed runbook step (:class:`imsdr.runbook.steps.Step`:
title, host, commands as shown, expected output) and the function that performs it. ``--dry-run``
prints the steps with :func:`imsdr.runbook.steps.step_text`, the text the runbook pages use, and
running them executes the very same objects, so what is shown and what is done cannot differ.

Order (docs/apply.md): pre-flight of every target before any is touched; the canary wave (one DNS
primary and one SBC: the ``--canary`` ones or the first in order), each verified; the other DNS
primaries; the secondaries, whose serials must converge (bounded SOA checks); the other Kamailio
instances one at a time; the Diameter clients last, after the DNS they depend on. When a reload
fails or a verification shows drift, every target this apply touched goes back to its previous
files, is reloaded and verified, and the apply ends with exit 1.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imsdr.apply import servers
from imsdr.apply.journal import Journal
from imsdr.apply.state import Record, StateDir, now, sha256
from imsdr.apply.steps import (
    Action,
    ApplyFailed,
    Context,
    TargetPlan,
    preflight,
    run_actions,
    transition,
    verify_steps,
)
from imsdr.apply.targets import Target, Targets
from imsdr.errors import ImsdrError
from imsdr.runbook.steps import Step
from imsdr.untrusted import open_directory, read_untrusted_in, walk_untrusted

FILE_LIMIT = 256 << 20
DEFAULT_CONVERGE_S = 60.0


# --- the plan directory ------------------------------------------------------------------------

def _plan_tree(plan_dir: Path) -> dict[str, bytes]:
    fd = open_directory(plan_dir)
    try:
        entries = walk_untrusted(fd, display=str(plan_dir))
        return {rel: read_untrusted_in(fd, rel, FILE_LIMIT, display=f"{plan_dir}/{rel}")
                for rel in sorted(entries) if not rel.split("/")[-1].startswith(".")}
    finally:
        os.close(fd)


def plan_digest(tree: dict[str, bytes]) -> str:
    return sha256("".join(f"{rel}\0{sha256(data)}\n" for rel, data in sorted(tree.items())).encode())


def bind_refs(tid: str, tree: dict[str, bytes]) -> list[servers.ZoneRef]:
    """The zones of a BIND target's fragment in ``tree`` (plan paths), and the member zones its
    secondary catalogs list there: a secondary converges on those."""
    refs = servers.zone_refs(tree.get(f"dns/named/{tid}.conf", b"").decode("utf-8"))
    return refs + servers.catalog_members(refs, tree)


def delivered_tree(files: dict[str, dict[str, bytes]]) -> dict[str, bytes]:
    """The plan paths of the files delivered to BIND targets (target id -> path inside the target ->
    content): a rollback has no plan directory, and the catalogs it goes back to are the primaries'."""
    return {f"dns/{rel}": data for tid_files in files.values() for rel, data in tid_files.items()}


def target_files(tree: dict[str, bytes], target: Target) -> TargetPlan:
    """The rendered files of one target, keyed by their path inside the target's directory."""
    tid = target.id
    if target.kind == "bind":
        fragment = tree.get(f"dns/named/{tid}.conf")
        if fragment is None:
            raise ImsdrError(f"targets.{tid}: the plan has no dns/named/{tid}.conf (is {tid} a DNS server "
                             "of this inventory?)")
        refs = bind_refs(tid, tree)
        files = {f"named/{tid}.conf": fragment}
        if "dns/named-options.conf" in tree:
            files["named-options.conf"] = tree["dns/named-options.conf"]
        for ref in refs:
            if ref.kind == "primary":
                data = tree.get(f"dns/{ref.file}")
                if data is None:
                    raise ImsdrError(f"dns/named/{tid}.conf: zone {ref.zone} names {ref.file}, not in the plan")
                files[ref.file] = data
        secondary = bool(refs) and all(ref.kind == "secondary" for ref in refs)
        return TargetPlan(target, files, refs, secondary)
    prefix = f"dns/kamailio/{tid}/" if target.kind == "kamailio" else f"diameter/{tid}/"
    files = {rel.removeprefix(prefix): data for rel, data in tree.items() if rel.startswith(prefix)}
    if not files:
        raise ImsdrError(f"targets.{tid}: the plan has no files under {prefix}")
    return TargetPlan(target, files)


def waves(plans: list[TargetPlan], canary: tuple[str, ...]) -> list[tuple[str, list[TargetPlan]]]:
    """The order: canary (one DNS primary, one SBC), other primaries, secondaries, the other
    Kamailio instances one by one, the Diameter clients."""
    primaries = [tp for tp in plans if tp.target.kind == "bind" and not tp.secondary]
    secondaries = [tp for tp in plans if tp.target.kind == "bind" and tp.secondary]
    kamailios = [tp for tp in plans if tp.target.kind == "kamailio"]
    diameters = [tp for tp in plans if tp.target.kind == "diameter"]
    first: list[TargetPlan] = []
    for group in (primaries, kamailios):
        chosen = [tp for tp in group if tp.target.id in canary][:1] or group[:1]
        first += chosen
    out = [("canary", first)] if first else []
    rest_primaries = [tp for tp in primaries if tp not in first]
    rest_kam = [tp for tp in kamailios if tp not in first]
    groups = [rest_primaries, secondaries, *([tp] for tp in rest_kam), diameters]
    out += [(f"wave {i}", g) for i, g in enumerate((g for g in groups if g), 1)]
    return out


@dataclass
class Result:
    outcome: str  # applied | nothing | preflight-failed | rolled-back | rollback-failed | drain-incomplete | dry-run
    apply_id: str
    journal: str
    targets: list[dict[str, Any]]
    steps: list[Step]
    failure: dict[str, Any] | None = None
    rollback_failures: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome in ("applied", "nothing", "dry-run") else 1


class Applier:
    """One run of ``imsdr apply`` over a targets file and a state directory."""

    def __init__(self, targets: Targets, state_dir: Path, converge_s: float = DEFAULT_CONVERGE_S) -> None:
        self.targets = targets
        self.state = StateDir(state_dir)
        self.converge_s = converge_s
        self._expected: dict[tuple[str, str], int] = {}
        self.journal: Journal | None = None
        self.apply_id = now().replace(":", "").replace("+0000", "Z") + "-" + uuid.uuid4().hex[:6]

    def _context(self, staging: Path) -> Context:
        ring = servers.read_keyring(self.targets.tsig_keys) if self.targets.tsig_keys else {}
        if self.targets.of_kind("bind") and not self.targets.tsig_keys:
            raise ImsdrError(f"{self.targets.path}: tsig_keys: needed to verify the views of the bind targets")
        return Context(self.targets, self.state, staging, ring, self.converge_s)

    def _plans(self, tree: dict[str, bytes]) -> list[TargetPlan]:
        return [target_files(tree, t) for t in self.targets.targets.values()]

    def _serials(self, ctx: Context, plans: list[TargetPlan],
                 files_of: Callable[[TargetPlan], dict[str, bytes]]) -> None:
        ctx.expected_serials.clear()
        self._expected = ctx.expected_serials
        for tp in plans:
            files = files_of(tp)
            for ref in tp.refs:
                if ref.kind == "primary" and ref.file in files and servers.queryable(ref):
                    ctx.expected_serials[(ref.view, ref.zone)] = servers.zone_serial(files[ref.file].decode(), ref.zone)

    def _old_files(self, record: Record | None) -> dict[str, bytes]:
        if record is None:
            return {}
        return {rel: self.state.load(digest) for rel, digest in record.files.items()}

    def _record(self, tp: TargetPlan, files: dict[str, bytes], digest: str) -> Record:
        from imsdr import __version__

        serials = {f"{ref.view} {ref.zone}": servers.zone_serial(files[ref.file].decode(), ref.zone)
                   for ref in tp.refs if ref.kind == "primary" and ref.file in files}
        if tp.secondary:  # what it transferred from its primaries
            serials = {f"{view} {zone}": serial for (view, zone), serial in self._expected.items()
                       if any(ref.view == view and ref.zone == zone for ref in tp.refs)}
        return Record(tp.target.id, digest, {rel: sha256(d) for rel, d in files.items()}, serials, now(),
                      __version__, self.apply_id)

    # --- the steps of a change, in order ----------------------------------------------------
    def _moves(self, ctx: Context, plans: list[TargetPlan], canary: tuple[str, ...],
               before: dict[str, dict[str, str]], after: dict[str, dict[str, bytes]],
               phase_prefix: str = "") -> list[tuple[str, TargetPlan, list[Action]]]:
        def steps(tp: TargetPlan, phase: str) -> list[Action]:
            actions = transition(ctx, tp, before[tp.target.id], after[tp.target.id], phase)
            if not actions and tp.secondary and self._serials_move(ctx, tp, before[tp.target.id]):
                actions = verify_steps(ctx, tp, after[tp.target.id], phase)  # only the transfer to await
            return actions

        moving = [tp for tp in plans if steps(tp, "x")]
        out = []
        for phase, group in waves(moving, canary):
            for tp in group:
                name = f"{phase_prefix}{phase}"
                out.append((name, tp, steps(tp, name)))
        return out

    def _serials_move(self, ctx: Context, tp: TargetPlan, before: dict[str, str]) -> bool:
        """Whether a secondary's zones get new serials from their primaries (its own files unchanged)."""
        record = self.state.record(tp.target.id)
        if record is None or record.files != before:
            return bool(before) or record is None
        wanted = {f"{ref.view} {ref.zone}": ctx.expected_serials.get((ref.view, ref.zone)) for ref in tp.refs}
        return any(serial is not None and record.serials.get(key) != serial for key, serial in wanted.items())

    def apply(self, plan_dir: Path, canary: tuple[str, ...] = (), dry_run: bool = False) -> Result:
        tree = _plan_tree(plan_dir)
        digest = plan_digest(tree)
        for cid in canary:
            if cid not in self.targets.targets:
                raise ImsdrError(f"--canary {cid}: not a target of {self.targets.path}")
        plans = self._plans(tree)
        with tempfile.TemporaryDirectory(prefix="imsdr-apply-") as tmp:
            ctx = self._context(Path(tmp))
            if dry_run:
                return self._dry_run(ctx, plans, canary)
            with self.state.lock():
                journal = Journal(self.state.path / "journal", self.apply_id)
                self.journal = journal
                recovered = self._recover(ctx, plans, journal)
                records = {tp.target.id: self.state.record(tp.target.id) for tp in plans}
                before = {tid: (r.files if r else {}) for tid, r in records.items()}
                after = {tp.target.id: tp.files for tp in plans}
                self._serials(ctx, plans, lambda tp: tp.files)
                moves = self._moves(ctx, plans, canary, before, after)
                if not moves:
                    result = Result("nothing", self.apply_id, str(journal.path), self._status_rows(plans, digest), [],
                                    recovered=recovered)
                    return result
                checks = preflight(ctx, [tp for _p, tp, _a in moves])
                try:
                    run_actions(checks, journal)
                except ApplyFailed as failed:
                    return Result("preflight-failed", self.apply_id, str(journal.path), [], [a.step for a in checks],
                                  failed.entry, recovered=recovered)
                for tp in plans:
                    for data in tp.files.values():
                        self.state.store(data)
                self.state.set_pending({"apply": self.apply_id, "plan_digest": digest, "targets": {
                    tp.target.id: {"from": records[tp.target.id].to_dict() if records[tp.target.id] else None,
                                   "to": self._record(tp, tp.files, digest).to_dict()}
                    for _p, tp, _a in moves}})
                touched: list[TargetPlan] = []
                try:
                    for _phase, tp, actions in moves:
                        touched.append(tp)
                        run_actions(actions, journal)
                except ApplyFailed as failed:
                    rollback_failures = self._roll_back(ctx, plans, touched, records, journal)
                    if not rollback_failures:  # else the next apply finds pending.json and tries again
                        self.state.set_pending(None)
                    return Result("rolled-back", self.apply_id, str(journal.path),
                                  [{"id": tp.target.id, "result": "rolled back"} for tp in touched], [],
                                  failed.entry, rollback_failures, recovered)
                for _p, tp, _a in moves:
                    self.state.commit(self._record(tp, tp.files, digest), records[tp.target.id])
                self.state.set_pending(None)
                return Result("applied", self.apply_id, str(journal.path), self._status_rows(plans, digest),
                              [a.step for _p, _t, acts in moves for a in acts], recovered=recovered)

    def _roll_back(self, ctx: Context, plans: list[TargetPlan], touched: list[TargetPlan],
                   records: dict[str, Record | None], journal: Journal) -> list[dict[str, Any]]:
        """Every touched target back to its previous files (those it had), reloaded and verified."""
        old = {tp.target.id: self._old_files(records[tp.target.id]) for tp in plans}
        self._serials(ctx, plans, lambda tp: {**tp.files, **old[tp.target.id]} if tp in touched else
                      (old[tp.target.id] or tp.files))
        failures: list[dict[str, Any]] = []
        for tp in touched:
            previous = old[tp.target.id]
            if not previous:
                journal.write("rollback", tp.target.id, "No previous files: left on the new files", "", None, "", 0.0)
                continue
            actions = transition(ctx, tp, {rel: sha256(d) for rel, d in tp.files.items()}, previous, "rollback")
            failures += run_actions(actions, journal, stop_on_failure=False)
        failures += run_actions(self._realign(ctx, [tp for tp in plans if tp.secondary], "rollback"), journal,
                                stop_on_failure=False)
        return failures

    @staticmethod
    def _realign(ctx: Context, plans: list[TargetPlan], phase: str) -> list[Action]:
        """The secondaries that took a serial the rollback took back (the primary loaded it and sent
        NOTIFY): transferred again and awaited. A secondary already on the right serials is left alone."""
        actions: list[Action] = []
        for tp in plans:
            if not tp.secondary:
                continue
            wanted = {(ref.view, ref.zone): ctx.expected_serials.get((ref.view, ref.zone)) for ref in tp.refs}
            if any(serial is not None and servers.served_serial(tp.target, ref, ctx.ring) != serial
                   for ref in tp.refs for serial in [wanted[(ref.view, ref.zone)]]):
                actions += verify_steps(ctx, tp, tp.files, phase)
        return actions

    def _recover(self, ctx: Context, plans: list[TargetPlan], journal: Journal) -> list[str]:
        """An apply that was stopped while delivering left ``pending.json``: each of its targets goes
        back to the files it had before (a target with none is completed), reloaded and verified."""
        pending = self.state.pending()
        if not pending:
            return []
        by_id = {tp.target.id: tp for tp in plans}
        goals: dict[str, dict[str, bytes]] = {}
        for tid, change in sorted(pending.get("targets", {}).items()):
            if tid not in by_id:
                continue
            to = Record.from_dict(change["to"], "pending.json")
            frm = Record.from_dict(change["from"], "pending.json") if change.get("from") else None
            goals[tid] = self._old_files(frm or to)
        # a secondary's zones are the members its goal catalogs list: the catalogs the primaries go
        # back to (or keep, when the stopped apply had not reached them), not the new plan's
        goal_tree = delivered_tree({tp.target.id: goals.get(tp.target.id) or self._old_files(
            self.state.record(tp.target.id)) for tp in plans if tp.target.kind == "bind"})
        done = []
        moves: list[tuple[TargetPlan, dict[str, str], dict[str, bytes]]] = []
        for tid, goal_files in goals.items():
            tp = by_id[tid]
            refs = bind_refs(tid, goal_tree) if tp.target.kind == "bind" else []
            secondary = bool(refs) and all(ref.kind == "secondary" for ref in refs)
            # the target may hold either set: every file of the goal is delivered again
            other = {rel: "0" * 64 for rel in goal_files}
            moves.append((TargetPlan(tp.target, goal_files, refs, secondary), other, goal_files))
            done.append(tid)
        recovered_plans = [m[0] for m in moves]
        self._serials(ctx, recovered_plans + [tp for tp in plans if tp.target.id not in done],
                      lambda tp: tp.files)
        for tp, before, files in sorted(moves, key=lambda m: m[0].secondary):
            actions = transition(ctx, tp, before, files, "recovery")
            if tp.secondary and not any(a.step.title.startswith("Transfer") for a in actions):
                actions += verify_steps(ctx, tp, files, "recovery")
            run_actions(actions, journal, stop_on_failure=False)
        run_actions(self._realign(ctx, [tp for tp in plans if tp.target.id not in done], "recovery"), journal,
                    stop_on_failure=False)
        self.state.set_pending(None)
        return done

    def rollback(self) -> Result:
        """``apply --rollback``: every target back to its previous record, reloaded and verified."""
        with tempfile.TemporaryDirectory(prefix="imsdr-apply-") as tmp, self.state.lock():
            ctx = self._context(Path(tmp))
            journal = Journal(self.state.path / "journal", self.apply_id)
            plans, current, previous = [], {}, {}
            for target in self.targets.targets.values():
                now_rec, prev = self.state.record(target.id), self.state.record(target.id, previous=True)
                if now_rec is None or prev is None:
                    continue
                files = self._old_files(now_rec)
                refs = servers.zone_refs(files.get(f"named/{target.id}.conf", b"").decode())
                tp = TargetPlan(target, files, refs, bool(refs) and all(r.kind == "secondary" for r in refs))
                plans.append(tp)
                current[target.id], previous[target.id] = now_rec, prev
            if not plans:
                return Result("nothing", self.apply_id, str(journal.path), [], [])
            goal = {tp.target.id: self._old_files(previous[tp.target.id]) for tp in plans}
            # a secondary's zones come from its catalogs: the members the goal's catalogs list are
            # what it must converge on (and be transferred again)
            goal_tree = delivered_tree({tp.target.id: goal[tp.target.id] for tp in plans if tp.target.kind == "bind"})
            goal_plans = [TargetPlan(tp.target, goal[tp.target.id],
                                     bind_refs(tp.target.id, goal_tree) if tp.target.kind == "bind" else [],
                                     tp.secondary) for tp in plans]
            self._serials(ctx, goal_plans, lambda tp: tp.files)
            moves = self._moves(ctx, goal_plans, (), {tp.target.id: current[tp.target.id].files for tp in plans},
                                goal, "rollback ")
            try:
                for _p, _tp, actions in moves:
                    run_actions(actions, journal)
            except ApplyFailed as failed:  # the records stay as they are: the journal says where it stopped
                return Result("rollback-failed", self.apply_id, str(journal.path), [], [], failed.entry)
            for tp in plans:
                back = previous[tp.target.id]
                back.applied_at, back.apply_id = now(), self.apply_id
                self.state.commit(back, current[tp.target.id])
            return Result("applied", self.apply_id, str(journal.path),
                          [{"id": tp.target.id, "result": "rolled back"} for tp in plans],
                          [a.step for _p, _t, acts in moves for a in acts])

    def _dry_run(self, ctx: Context, plans: list[TargetPlan], canary: tuple[str, ...]) -> Result:
        records = {tp.target.id: self.state.record(tp.target.id) for tp in plans}
        before = {tid: (r.files if r else {}) for tid, r in records.items()}
        self._serials(ctx, plans, lambda tp: tp.files)
        moves = self._moves(ctx, plans, canary, before, {tp.target.id: tp.files for tp in plans})
        steps = [a.step for a in preflight(ctx, [tp for _p, tp, _a in moves])] if moves else []
        steps += [a.step for _p, _t, acts in moves for a in acts]
        return Result("dry-run" if moves else "nothing", self.apply_id, "", [], steps)

    def _status_rows(self, plans: list[TargetPlan] | None, digest: str | None) -> list[dict[str, Any]]:
        records = self.state.records()
        rows = []
        for target in self.targets.targets.values():
            record = records.get(target.id)
            planned = next((tp for tp in plans or [] if tp.target.id == target.id), None)
            differ = None
            if planned is not None:
                differ = sorted(rel for rel, d in planned.digests.items()
                                if record is None or record.files.get(rel) != d)
            rows.append({"id": target.id, "kind": target.kind,
                         "deployed": record.plan_digest[:12] if record else None,
                         "planned": digest[:12] if digest and planned is not None else None,
                         "applied_at": record.applied_at if record else None,
                         "imsdr": record.imsdr if record else None,
                         "files": len(record.files) if record else 0,
                         "serials": record.serials if record else {},
                         "differs": differ})
        return rows

    def status(self, plan_dir: Path | None) -> list[dict[str, Any]]:
        if plan_dir is None:
            return self._status_rows(None, None)
        tree = _plan_tree(plan_dir)
        return self._status_rows(self._plans(tree), plan_digest(tree))
