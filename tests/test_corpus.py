"""The bad-input corpus: every command that reads an inventory, on every bad inventory.

Each ``tests/corpus/bad/NAME.yaml`` is wrong in one way (``all-problems-in-one-run`` in
many); ``NAME.expect`` lists what must be reported, one ``LINE:COL fragment`` per line.
Regenerate both with ``python3 tests/corpus/make_bad.py``. Two more cases are generated
here instead of being committed: a 50 MB file and a file with more values than the loader
accepts.

For every (case, command) the test asserts: exit code 2, each expected problem on stderr as
``FILE:LINE:COL: ...fragment...``, no traceback, nothing on stdout, and nothing written
anywhere (the output directory keeps its previous content byte for byte, no staging
directories appear). Runs are in-process (fast); a sample runs in a child process with a
timeout and an address-space limit so that time and memory are bounded for real.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import typer.main
from typer.core import TyperCommand, TyperGroup
from typer.testing import CliRunner, Result

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "bad"
MEMORY_LIMIT = 1536 * 1024 * 1024  # address space of a child process
TIMEOUT = 60  # seconds per child process

Argv = Callable[[str, str], list[str]]
CliCommand = TyperCommand | TyperGroup


@dataclass(frozen=True)
class Command:
    name: str
    argv: Argv  # (inventory, output dir) -> arguments after `imsdr`


# Every command that reads an inventory, with arguments that would otherwise make it work.
# test_every_inventory_command_is_covered fails when the CLI grows one that is not listed.
COMMANDS = [
    Command("validate", lambda inv, out: ["validate", inv]),
    Command("check", lambda inv, out: ["check", inv]),
    Command("graph", lambda inv, out: ["graph", inv]),
    Command("capacity", lambda inv, out: ["capacity", inv]),
    Command("simulate", lambda inv, out: ["simulate", inv, "--fail", "site-a"]),
    Command("scenarios", lambda inv, out: ["scenarios", inv]),
    Command("render dns", lambda inv, out: ["render", "dns", inv, "--out", out]),
    Command("render runbook", lambda inv, out: ["render", "runbook", inv, "--out", out]),
    Command("plan", lambda inv, out: ["plan", inv, "--out", out]),
    Command("resolve", lambda inv, out: ["resolve", inv, "sbc.ims.example.net"]),
    # loopback only, and a bad inventory must fail before any query is sent
    Command("verify", lambda inv, out: ["verify", inv, "--server", "127.0.0.1:9", "--timeout", "0.05",
                                        "--retries", "0"]),
    # the inventory is read (and refused) before the exceptions file, the keys or the server
    Command("enum-update", lambda inv, out: ["enum-update", inv, "--enum-exceptions", f"{out}.csv",
                                             "--server", "127.0.0.1:9", "--keys", f"{out}.keys",
                                             "--timeout", "0.1"]),
    # --inventory is read to render the failback into the plan directory, after the targets file
    Command("apply", lambda inv, out: ["apply", out, "--targets", apply_targets(Path(out).parent.parent),
                                       "--state", str(Path(out).parent.parent / "apply-state"),
                                       "--failback", "--inventory", inv]),
]


def apply_targets(base: Path) -> str:
    """A valid targets file outside the watched work directory (one Diameter client)."""
    path = base / "apply-targets.yaml"
    path.write_text(f"version: 1\nroot: {base}\ntargets:\n  cscf-a:\n    kind: diameter\n"
                    "    directory: cscf-a\n    reload: [true]\n", encoding="utf-8")
    return str(path)

runner = CliRunner()
CLI = typer.main.get_command(app)  # the command tree, walked to find every inventory command


def invoke(args: list[str]) -> Result:
    return runner.invoke(app, args, prog_name="imsdr")


@cache
def available(command: str) -> bool:
    """Ask the CLI itself: does ``imsdr COMMAND --help`` work?"""
    return invoke([*command.split(), "--help"]).exit_code == 0


def inventory_commands() -> dict[str, CliCommand]:
    """Every command of the CLI that takes an INVENTORY argument, by its full name."""
    found: dict[str, CliCommand] = {}

    def walk(group: CliCommand, prefix: str) -> None:
        for name, cmd in getattr(group, "commands", {}).items():
            if isinstance(cmd, TyperGroup):
                walk(cmd, f"{prefix}{name} ")
            elif any(p.name in ("inventory", "inventories") for p in cmd.params):
                found[f"{prefix}{name}"] = cmd

    walk(CLI, "")
    return found


def automatic(name: str, cmd: CliCommand) -> Command:
    """A spec for a command not listed above: the inventory, plus --out when it has one."""
    has_out = any(p.name == "out" for p in cmd.params)
    return Command(name, lambda inv, out: [*name.split(), inv, *(["--out", out] if has_out else [])])


def all_commands() -> list[Command]:
    """The listed commands plus any inventory command the CLI grew since (run automatically)."""
    listed = {c.name for c in COMMANDS}
    extra = [automatic(n, c) for n, c in sorted(inventory_commands().items()) if n not in listed]
    return [*COMMANDS, *extra]


def present_commands() -> list[Command]:
    return [c for c in all_commands() if available(c.name)]


# --- the cases -------------------------------------------------------------------------------

GENERATED = {
    "generated-50-megabytes": [(1, 1, "inventories larger than")],
}


def expectations(name: str) -> list[tuple[int, int, str]]:
    if name in GENERATED:
        return GENERATED[name]
    found = []
    for line in (CORPUS / f"{name}.expect").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        where, fragment = line.split(" ", 1)
        row, col = where.split(":")
        found.append((int(row), int(col), fragment))
    assert found, f"{name}.expect lists nothing"
    return found


CASES = sorted(p.stem for p in CORPUS.glob("*.yaml")) + sorted(GENERATED)


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Big inputs are written at test time, not committed."""
    where = tmp_path_factory.mktemp("generated")
    big = where / "generated-50-megabytes.yaml"
    element = "  - {id: e%07d, type: as, site: site-a, vendor: v, addresses: [192.0.2.1]}\n"
    with big.open("w") as out:
        out.write("version: 1\nelements:\n")
        size = 0
        i = 0
        while size < 50 * 1024 * 1024:
            line = element % i
            out.write(line)
            size += len(line)
            i += 1
    return {"generated-50-megabytes": big}


def inventory_path(name: str, generated: dict[str, Path]) -> Path:
    return generated[name] if name in generated else CORPUS / f"{name}.yaml"


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for directories)."""
    tree: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        tree[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return tree


def prepare_workdir(tmp_path: Path) -> tuple[Path, Path]:
    """A work directory holding a previous output directory the command must not touch."""
    from imsdr.output.atomic import atomic_directory

    work = tmp_path / "work"
    out = work / "out"
    with atomic_directory(out) as staging:  # marked as imsdr's, like the output of an earlier run
        (staging / "dns").mkdir()
        (staging / "previous.txt").write_text("output of an earlier successful run\n")
        (staging / "dns" / "zone.db").write_bytes(b"; an earlier zone\n")
    return work, out


def assert_refused(name: str, inventory: Path, code: int, stdout: str, stderr: str) -> None:
    assert code == 2, f"exit {code}, expected 2\nstdout:\n{stdout[:2000]}\nstderr:\n{stderr[:2000]}"
    assert "Traceback" not in stderr and "Traceback" not in stdout, stderr[-3000:]
    assert stdout.strip() == "", f"nothing belongs on stdout for a refused inventory:\n{stdout[:2000]}"
    lines = stderr.splitlines()
    for row, col, fragment in expectations(name):
        prefix = f"{inventory}:{row}:{col}: "
        assert any(line.startswith(prefix) and fragment in line for line in lines), (
            f"expected a line starting {prefix!r} containing {fragment!r}; stderr was:\n{stderr[:3000]}"
        )


# --- the parametrised test -----------------------------------------------------------------------

def refusal_failures(command: Command, case: str, inventory: Path, base: Path) -> list[str]:
    """Run ``command`` in-process on one bad inventory; what went wrong, if anything."""
    work, out = prepare_workdir(base)
    before = snapshot(work)
    os.chdir(work)  # anything written relative to the working directory shows up below
    result = invoke(command.argv(str(inventory), str(out)))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return [f"{case}: raised {result.exception!r}"]
    try:
        assert_refused(case, inventory, result.exit_code, result.stdout, result.stderr)
    except AssertionError as exc:
        return [f"{case}: {exc}"]
    if snapshot(work) != before:
        return [f"{case}: files were written or changed although the input was refused"]
    return []


@pytest.mark.parametrize("command", [c.name for c in all_commands()])
def test_bad_inventory_is_refused_cleanly(
    command: str, tmp_path: Path, generated: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One command on every corpus case (every failure is listed, not just the first)."""
    spec = next(c for c in all_commands() if c.name == command)
    assert available(command), f"`imsdr {command}` is missing from the CLI"
    monkeypatch.chdir(tmp_path)
    failures: list[str] = []
    for i, case in enumerate(CASES):
        failures += refusal_failures(spec, case, inventory_path(case, generated), tmp_path / f"c{i}")
    assert not failures, f"`imsdr {command}` mishandled {len(failures)} of {len(CASES)} cases:\n" + \
        "\n\n".join(failures)


def test_validate_is_always_covered() -> None:
    assert available("validate")
    assert len(CASES) >= 60


def test_every_inventory_command_is_covered() -> None:
    """Every command with an INVENTORY argument runs on the corpus: listed ones with their own
    arguments, others automatically (a required option they lack then fails the corpus test)."""
    reading = set(inventory_commands())
    assert "validate" in reading
    assert reading <= {c.name for c in all_commands()}
    assert {c.name for c in present_commands()} >= reading


def test_every_case_has_expectations() -> None:
    for path in CORPUS.glob("*.yaml"):
        assert path.with_suffix(".expect").exists(), path
    for path in CORPUS.glob("*.expect"):
        assert path.with_suffix(".yaml").exists(), path


# --- bounded time and memory, in a child process ----------------------------------------------------

def _limit_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_child(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=TIMEOUT, preexec_fn=_limit_memory,
    )


# the inputs built to exhaust time or memory, plus a plain one for reference
HEAVY = ["generated-50-megabytes", "yaml-billion-laughs", "yaml-deep-nesting", "enum-trillion-numbers",
         "schema-huge-integer", "schema-text-too-long", "all-problems-in-one-run"]


SAMPLE = [(case, "validate") for case in HEAVY] + [
    ("generated-50-megabytes", "plan"), ("yaml-billion-laughs", "render dns"),
    ("enum-trillion-numbers", "plan"),
    ("schema-huge-integer", "render runbook"),
]


@pytest.mark.parametrize(("case", "command"), SAMPLE)
def test_heavy_inputs_bounded_in_a_child_process(
    case: str, command: str, tmp_path: Path, generated: dict[str, Path]
) -> None:
    spec = next(c for c in COMMANDS if c.name == command)
    assert available(command), f"`imsdr {command}` is missing from the CLI"
    inventory = inventory_path(case, generated)
    work, out = prepare_workdir(tmp_path)
    before = snapshot(work)
    result = run_child(spec.argv(str(inventory), str(out)), cwd=work)  # TimeoutExpired fails the test
    assert_refused(case, inventory, result.returncode, result.stdout, result.stderr)
    assert snapshot(work) == before


def test_too_many_values_refused_in_a_child_process(tmp_path: Path) -> None:
    """More values than the loader accepts (about 2.4 MB of YAML): refused, within limits."""
    from imsdr.inventory.loader import MAX_NODES

    path = tmp_path / "many.yaml"
    path.write_text("version: 1\nwaivers: [" + ",".join(["1"] * (MAX_NODES + 10)) + "]\n")
    result = run_child(["validate", str(path)], cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"more than {MAX_NODES:,} values" in result.stderr
    assert result.stderr.startswith(f"{path}:2:")
