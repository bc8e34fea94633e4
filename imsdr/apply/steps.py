"""The steps of ``imsdr apply`` for one target: deliver, reload, verify; pre-flight; running them.

Each is an :class:`Action`: a typed runbook step (:class:`imsdr.runbook.steps.Step`: title, host,
commands as shown, expected output) and the function that performs it, so ``--dry-run`` prints the
very objects an apply runs. :mod:`imsdr.apply.executor` orders them into waves.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imsdr.apply import servers
from imsdr.apply.journal import Journal
from imsdr.apply.state import StateDir, sha256
from imsdr.apply.targets import Target, Targets
from imsdr.dns.drain import CATALOG_MEMBER_WAIT_S, RNDC_NOT_FOUND
from imsdr.errors import ImsdrError
from imsdr.output.atomic import safe_join, write_files_atomically
from imsdr.runbook.steps import Step

OWNER = {"role": "imsdr apply", "name": "", "phone": ""}
CONVERGE_POLL_S = 0.2
ROLLBACK_CONVERGE_MIN_S = 30.0
RELOAD_DELTA_WAIT_S = 12.0  # Kamailio dispatcher's reload_delta is 5 s by default
NOT_FOUND_RETRY_S = 1.0



@dataclass
class TargetPlan:
    """What the plan directory holds for one target."""

    target: Target
    files: dict[str, bytes]  # path inside the target -> content
    refs: list[servers.ZoneRef] = field(default_factory=list)
    secondary: bool = False

    @property
    def digests(self) -> dict[str, str]:
        return {rel: sha256(data) for rel, data in self.files.items()}


@dataclass
class Action:
    phase: str
    target: str
    step: Step
    perform: Callable[[], tuple[bool, str]]


class ApplyFailed(Exception):
    def __init__(self, entry: dict[str, Any]) -> None:
        super().__init__(entry["step"])
        self.entry = entry


# --- one target's change: deliver, reload, verify ------------------------------------------------

def retransfer(target: Target, ref: servers.ZoneRef) -> servers.Outcome:
    """``rndc retransfer ZONE IN VIEW``. A member zone of a catalog (RFC 9432; no file of its own in
    the fragment) exists on the secondary only once the catalog is transferred and processed: its
    "not found" is asked again once a second, at most CATALOG_MEMBER_WAIT_S times, as the DNS
    failback script does (imsdr.dns.drain). Any other failure, or a zone the fragment declares,
    fails at once."""
    assert target.rndc is not None
    argv = target.rndc.argv("retransfer", ref.zone, "IN", ref.view)
    outcome = servers.run(argv)
    retries = CATALOG_MEMBER_WAIT_S if ref.file == "" else 0
    while not outcome.ok and RNDC_NOT_FOUND in outcome.output and retries > 0:
        retries -= 1
        time.sleep(NOT_FOUND_RETRY_S)
        outcome = servers.run(argv)
    return outcome


@dataclass
class Context:
    targets: Targets
    state: StateDir
    staging: Path
    ring: dict[str, str]
    converge_s: float
    expected_serials: dict[tuple[str, str], int] = field(default_factory=dict)  # (view, zone) -> serial


def _deliver(ctx: Context, tp: TargetPlan, files: dict[str, bytes], changed: list[str], phase: str) -> Action:
    target = tp.target
    staged = ctx.staging / f"{phase.replace(' ', '-')}-{target.id}"
    if target.directory is not None:
        shown = tuple(f"install -m 0644 {shlex.quote(str(staged / rel))} {shlex.quote(str(target.directory / rel))}"
                      for rel in changed)

        def perform() -> tuple[bool, str]:
            write_files_atomically([(safe_join(staged, rel), files[rel].decode("utf-8")) for rel in changed], 0o644)
            # every file of the target at once: a target is never left on a mix of old and new files
            write_files_atomically([(safe_join(target.directory, rel), files[rel].decode("utf-8"))
                                    for rel in changed], 0o644)
            return True, f"{len(changed)} file(s) written into {target.directory}"
    else:
        argvs = [target.transfer_argv(str(staged / rel), rel) for rel in changed]
        shown = tuple(shlex.join(argv) for argv in argvs)

        def perform() -> tuple[bool, str]:
            write_files_atomically([(safe_join(staged, rel), files[rel].decode("utf-8")) for rel in changed], 0o644)
            for argv in argvs:
                outcome = servers.run(argv)
                if not outcome.ok:
                    return False, outcome.output
            return True, f"{len(changed)} file(s) transferred"
    step = Step(f"Deliver {len(changed)} file(s) to {target.id}", OWNER, target.id, shown, "manual",
                notes=tuple(f"{rel} sha256 {sha256(files[rel])[:16]}" for rel in changed))
    return Action(phase, target.id, step, perform)


def _reloads(ctx: Context, tp: TargetPlan, changed: list[str], phase: str) -> list[Action]:
    target = tp.target
    actions: list[Action] = []
    if target.kind == "bind":
        assert target.rndc is not None
        if f"named/{target.id}.conf" in changed or "named-options.conf" in changed:
            argv = target.rndc.argv("reconfig")
            actions.append(_command(phase, target, "Load the new configuration (rndc reconfig)", argv, "empty", ()))
        for ref in tp.refs:
            if ref.kind == "primary" and ref.file in changed:
                argv = target.rndc.argv("reload", ref.zone, "IN", ref.view)
                actions.append(_command(phase, target, f"Reload zone {ref.zone} in view {ref.view}", argv,
                                        "includes", servers.RNDC_OK[:1], accept=servers.RNDC_OK))
    elif target.kind == "kamailio":
        if "dispatcher.list" in changed:
            actions.append(_rpc(phase, target, "Reload the dispatcher list", "dispatcher.reload",
                                servers.KAMCMD_RELOAD_OK if target.rpc and target.rpc.kamcmd else ""))
    else:
        actions.append(_command(phase, target, "Reload the Diameter client", target.reload, "manual", ()))
    return actions


def _command(phase: str, target: Target, title: str, argv: tuple[str, ...], expect: str,
             expected: tuple[str, ...], accept: tuple[str, ...] = ()) -> Action:
    step = Step(title, OWNER, target.id, (shlex.join(argv),), expect, expected)

    def perform() -> tuple[bool, str]:
        outcome = servers.run(argv)
        if not outcome.ok:
            return False, outcome.output
        if expect == "empty" and outcome.output:
            return False, outcome.output
        if accept and not any(line in outcome.output for line in accept):
            return False, outcome.output
        return True, outcome.output
    return Action(phase, target.id, step, perform)


def _rpc(phase: str, target: Target, title: str, method: str, expected: str) -> Action:
    step = Step(title, OWNER, target.id, (servers.rpc_display(target, method),),
                "exact" if expected else "manual", (expected,) if expected else ())

    def perform() -> tuple[bool, str]:
        deadline = time.monotonic() + RELOAD_DELTA_WAIT_S
        outcome = servers.rpc(target, method)
        # the dispatcher refuses a reload within reload_delta (5 s) of the previous one: a rollback
        # right after an apply's reload waits for it rather than failing
        while not outcome.ok and "Ongoing reload" in outcome.output and time.monotonic() < deadline:
            time.sleep(0.5)
            outcome = servers.rpc(target, method)
        return outcome.ok and (not expected or outcome.output.strip() == expected), outcome.output
    return Action(phase, target.id, step, perform)


def verify_steps(ctx: Context, tp: TargetPlan, files: dict[str, bytes], phase: str) -> list[Action]:
    target = tp.target
    if target.kind == "bind":
        assert target.dns is not None
        address, port = target.dns
        if tp.secondary:
            wanted = {(ref.view, ref.zone): ctx.expected_serials.get((ref.view, ref.zone)) for ref in tp.refs}
            wanted = {k: v for k, v in wanted.items() if v is not None}
            shown = tuple(f"dig @{address} -p {port} +norec {zone} SOA  # signed with the key of view {view}"
                          for view, zone in sorted(wanted))
            going_back = phase.startswith(("rollback", "recovery"))
            # going back is never given up sooner than ROLLBACK_CONVERGE_MIN_S: a short --converge-timeout
            # is for detecting a failure, not for abandoning the way back
            limit = max(ctx.converge_s, ROLLBACK_CONVERGE_MIN_S) if going_back else ctx.converge_s
            step = Step(f"Wait for {target.id} to transfer the new serials (at most {limit:.0f} s)",
                        OWNER, target.id, shown, "includes",
                        tuple(f"{zone} serial {serial} in view {view}"
                              for (view, zone), serial in sorted(wanted.items())),
                        until_s=int(limit), poll_s=1)

            if going_back:  # a secondary never takes a lower serial by NOTIFY: it is told to transfer again
                assert target.rndc is not None
                shown = tuple(shlex.join(target.rndc.argv("retransfer", zone, "IN", view))
                              for view, zone in sorted(wanted)) + shown
                step = Step(f"Transfer {target.id}'s zones again from the primary and wait for the serials "
                            f"(at most {limit:.0f} s)", OWNER, target.id, shown, "includes",
                            step.expected, until_s=int(limit), poll_s=1,
                            notes=("rndc retransfer is sent only for the zones whose serial differs",))

            def converge() -> tuple[bool, str]:
                deadline = time.monotonic() + limit
                by_key = {(ref.view, ref.zone): ref for ref in tp.refs}
                pending = dict(wanted)
                if going_back:
                    assert target.rndc is not None
                    for (view, zone), serial in sorted(pending.items()):
                        if servers.served_serial(target, by_key[(view, zone)], ctx.ring) != serial:
                            outcome = retransfer(target, by_key[(view, zone)])
                            if not outcome.ok:
                                return False, outcome.output
                    # a member zone the catalog created late took some of the time: the transfer
                    # itself still has the whole limit
                    deadline = time.monotonic() + limit
                while pending:
                    for key, serial in list(pending.items()):
                        if servers.served_serial(target, by_key[key], ctx.ring) == serial:
                            del pending[key]
                    if not pending:
                        break
                    if time.monotonic() > deadline:
                        return False, "not converged: " + "; ".join(
                            f"{zone} in {view} (wants serial {s})" for (view, zone), s in sorted(pending.items()))
                    time.sleep(CONVERGE_POLL_S)
                return True, f"{len(wanted)} zone(s) at the primary's serial"
            return [Action(phase, target.id, step, converge)]
        refs = [ref for ref in tp.refs if ref.kind == "primary" and ref.file in files and servers.queryable(ref)]
        shown = tuple(f"dig @{address} -p {port} +norec {ref.zone} SOA  # signed with the key of view {ref.view}"
                      for ref in refs)
        expected = tuple(f"{ref.zone} serial {servers.zone_serial(files[ref.file].decode(), ref.zone)} "
                         f"in view {ref.view}" for ref in refs)
        step = Step(f"Verify {target.id}: every view answers the delivered zone files", OWNER, target.id, shown,
                    "includes", expected, notes=("every RRset of each zone file is asked too, with the view's key",))

        def verify() -> tuple[bool, str]:
            drift: list[str] = []
            for ref in refs:
                drift += servers.verify_zone(target, ref, files[ref.file].decode(), ctx.ring)
            return not drift, "; ".join(drift[:20]) if drift else f"{len(refs)} zone(s) in their views: no drift"
        return [Action(phase, target.id, step, verify)]
    if target.kind == "kamailio":
        want = servers.dispatcher_entries(files["dispatcher.list"].decode()) if "dispatcher.list" in files else set()
        step = Step(f"Verify {target.id}: the dispatcher holds the delivered list", OWNER, target.id,
                    (servers.rpc_display(target, "dispatcher.list"),), "includes",
                    tuple(f"URI: {uri}" for _s, uri in sorted(want)))

        def verify_kam() -> tuple[bool, str]:
            outcome = servers.rpc(target, "dispatcher.list")
            if not outcome.ok:
                return False, outcome.output
            live = servers.live_dispatcher(outcome.output)
            if live != want:
                return False, (f"missing {sorted(want - live)}; unexpected {sorted(live - want)}")
            return True, f"{len(want)} destination(s) as delivered"
        return [Action(phase, target.id, step, verify_kam)]
    if target.verify:
        return [_command(phase, target, f"Verify {target.id}", target.verify, "manual", ())]
    return []


def transition(ctx: Context, tp: TargetPlan, before: dict[str, str], files: dict[str, bytes],
               phase: str) -> list[Action]:
    """The steps that take one target from the files ``before`` (path -> digest) to ``files``."""
    changed = sorted(rel for rel, data in files.items() if before.get(rel) != sha256(data))
    if not changed:
        return []
    return [_deliver(ctx, tp, files, changed, phase), *_reloads(ctx, tp, changed, phase),
            *verify_steps(ctx, tp, files, phase)]


# --- pre-flight ----------------------------------------------------------------------------------

def preflight(ctx: Context, plans: list[TargetPlan]) -> list[Action]:
    actions: list[Action] = []
    for tp in plans:
        target = tp.target
        if target.kind == "bind":
            root = ctx.staging / "preflight" / target.id
            conf = root / "check.conf"
            keys = f'include "{ctx.targets.tsig_keys}";\n' if ctx.targets.tsig_keys else ""
            options = '    include "named-options.conf";\n' if "named-options.conf" in tp.files else ""
            wrapper = (f'options {{\n    directory "{root}";\n{options}}};\n{keys}'
                       f'include "{root}/named/{target.id}.conf";\n')
            argv = ("named-checkconf", "-z", str(conf))

            def check(root: Path = root, tp: TargetPlan = tp, wrapper: str = wrapper,
                      argv: tuple[str, ...] = argv) -> tuple[bool, str]:
                files = [(safe_join(root, rel), data.decode("utf-8")) for rel, data in tp.files.items()]
                write_files_atomically([*files, (root / "check.conf", wrapper)], 0o644)
                outcome = servers.run(argv, timeout=600)
                return outcome.ok, outcome.output
            actions.append(Action("pre-flight", target.id, Step(f"Check {target.id}'s staged configuration",
                                  OWNER, target.id, (shlex.join(argv),), "manual", ()), check))
            for ref in tp.refs:
                if ref.kind == "primary":
                    argv = ("named-checkzone", "-q", ref.zone, str(root / ref.file))
                    actions.append(_command("pre-flight", target, f"Check zone {ref.zone} ({ref.view})",
                                            argv, "empty", ()))
            assert target.rndc is not None
            actions.append(_command("pre-flight", target, f"{target.id} answers on its control channel",
                                    target.rndc.argv("status"), "includes", ("server is up and running",),
                                    accept=("server is up and running",)))
        elif target.kind == "kamailio":
            text = tp.files.get("dispatcher.list", b"").decode("utf-8")

            def parse(text: str = text) -> tuple[bool, str]:
                try:
                    return True, f"{len(servers.dispatcher_entries(text))} destination(s)"
                except ImsdrError as exc:
                    return False, str(exc)
            actions.append(Action("pre-flight", target.id, Step(f"Parse {target.id}'s dispatcher list", OWNER,
                                  target.id, (), "manual", ()), parse))
            actions.append(_rpc("pre-flight", target, f"{target.id} answers its RPC", "core.uptime", ""))
    return actions


# --- running -------------------------------------------------------------------------------------

def run_actions(actions: list[Action], journal: Journal, stop_on_failure: bool = True) -> list[dict[str, Any]]:
    failures = []
    for action in actions:
        start = time.monotonic()
        try:
            ok, output = action.perform()
        except (ImsdrError, OSError, UnicodeDecodeError, ValueError) as exc:
            ok, output = False, str(exc)
        entry = journal.write(action.phase, action.target, action.step.title, "\n".join(action.step.commands),
                              ok, output[: servers.OUTPUT_KEPT], time.monotonic() - start)
        if not ok:
            failures.append(entry)
            if stop_on_failure:
                raise ApplyFailed(entry)
    return failures


def drain_period_action(targets: Targets, element_id: str, step: dict[str, Any]) -> Action:
    """The page's drain-period step, run by imsdr: on a Kamailio target the registered users are
    polled over its RPC (``stats.get_statistics registered_users`` until the page's expected line,
    at most the drain period); any other element is given the whole drain period."""
    target = targets.targets.get(element_id)
    period, poll = int(step["until_s"]), max(1, int(step["poll_s"]))
    expected = tuple(step["expected"])
    if target is not None and target.kind == "kamailio":
        shown = (servers.rpc_display(target, "stats.get_statistics", "registered_users"),)
        typed = Step(step["title"], step["owner"], target.id, shown, "exact", expected, until_s=period, poll_s=poll)

        def poll_users() -> tuple[bool, str]:
            deadline = time.monotonic() + period
            while True:
                outcome = servers.rpc(target, "stats.get_statistics", "registered_users")
                if outcome.ok and any(line in outcome.output for line in expected):
                    return True, outcome.output
                if time.monotonic() >= deadline:
                    return False, f"after {period} s: {outcome.output}"
                time.sleep(poll)
        return Action("drain period", element_id, typed, poll_users)
    typed = Step(step["title"], step["owner"], element_id, (), "manual", (), until_s=period, poll_s=poll,
                 notes=(f"{element_id} is not a Kamailio target: the whole drain period ({period} s) is waited",))

    def wait() -> tuple[bool, str]:
        time.sleep(period)
        return True, f"waited {period} s"
    return Action("drain period", element_id, typed, wait)
