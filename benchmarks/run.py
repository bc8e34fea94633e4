#!/usr/bin/env python3
"""imsdr benchmarks at national scale — one command: ``python benchmarks/run.py``.

Every measurement runs the real ``imsdr`` command line in a fresh subprocess, several times, and
reports the median wall time and the median peak resident set size (from ``os.wait4``'s
rusage, i.e. the child's own ru_maxrss). Inputs are generated with ``imsdr example`` into
``benchmarks/.work/`` (git-ignored):

1. ``imsdr --help`` cold start;
2. ``validate``, ``check``, ``capacity`` on the national inventory (31 provinces x 4 sites,
   310 local networks, ~5,000 elements, 10 million ENUM numbers), and ``capacity``'s default
   table against its JSON;
3. ``scenarios --depth 1`` (every site, region, power feed, transmission route and element) and
   ``--depth 2`` (also every site pair) on it;
4. ``render dns`` of a 100,000- and a 1,000,000-number ENUM block, and of the whole national
   plan (bytes written per second);
5. the same records (A/AAAA, SRV, NAPTR; ~10k and ~50k) written as BIND zone files by
   ``imsdr render dns`` and by octoDNS (``octodns-sync`` with a YamlProvider source and the
   ``octodns_bind.ZoneFileProvider`` target), in octoDNS's own virtualenv
   ``benchmarks/.venv-octodns`` (created on first use; never an imsdr dependency).

Commands that do not exist (yet) are reported as "not available". Options: ``--runs N``
(default 5), ``--heavy-runs N`` for the multi-gigabyte national render and octoDNS (default 3),
``--only NAME …`` to pick benchmarks (help, plan, availability, scenarios, enum, national-dns, import, monitoring,
octodns, areas: the PyYAML C-loader parse of the national inventory as the ratio base, check and
plan as ratios to it, bytes written, views and zone statements per server, and real named loading
one province server's configuration in a network namespace it creates),
``--markdown FILE`` to also write the table as Markdown, ``--json FILE`` for raw numbers.

Every run is cold: imsdr keeps no cache, so each command reads and validates its inventory.
On a shared machine the CPU column (user + system time of the child) is the steadier one; the
verdicts are taken on wall time, as a user waits it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work"
VENV = ROOT / "benchmarks" / ".venv-octodns"
OCTODNS_REQUIREMENTS = ["octodns>=1.22,<1.23", "octodns-bind>=1.1,<1.2"]
TIMEOUT = 900.0


TRASH = WORK / ".trash"  # previous outputs set aside, deleted once the benchmarks are done


def set_aside(path: Path) -> None:
    """Move a previous output out of the way of a measured run (:func:`empty_trash` deletes it
    after the benchmarks). Deleting it just before the run would charge the run for it: on a file
    system without a journal (this machine's ext4) the kernel passes over the inodes freed in the
    last 30 s when it allocates new ones (``recently_deleted`` in ext4's ``find_inode_bit``), so
    each file the measured command creates first steps over the thousands just freed (``render
    dns`` at 50k records, three runs back to back: 0.2, 0.6, 0.9 s of system time with the output
    deleted before each run, 0.2, 0.3, 0.2 s with it set aside)."""
    if os.path.lexists(path):
        TRASH.mkdir(parents=True, exist_ok=True)
        os.rename(path, TRASH / f"{path.name}-{time.time_ns()}")


def empty_trash() -> None:
    shutil.rmtree(TRASH, ignore_errors=True)


def compile_imsdr() -> None:
    """Write the bytecode of imsdr's modules, as installing its wheel does (pip compiles them): an
    editable install run with PYTHONDONTWRITEBYTECODE=1 (as this machine's sessions run) would
    compile every module it imports from source again in every measured run (~0.1 s each)."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("imsdr")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            compileall.compile_dir(location, quiet=1)


def imsdr_argv() -> list[str]:
    script = Path(sys.executable).parent / "imsdr"
    if script.exists():
        return [str(script)]
    found = shutil.which("imsdr")
    return [found] if found else [sys.executable, "-m", "imsdr"]


# --- running one measured subprocess ---------------------------------------------------------


@dataclass
class Run:
    wall: float
    rss_kib: int
    exit_code: int
    timed_out: bool = False
    cpu: float = 0.0  # user + system seconds of the child: steadier than wall time on a busy machine


# The measured command is spawned by this small launcher, not by the benchmark process itself:
# on Linux a child's ru_maxrss also counts the peak RSS of the address space it was spawned from
# (exec accounts the old mm's high-water mark), so a benchmark process that has grown — it parses
# zone files with dnspython for the octoDNS comparison — would inflate every later measurement.
# The launcher (python -S, ~13 MB) spawns, times and waits; a child's peak is max(launcher, child).
_LAUNCHER = r"""
import json, os, signal, sys, time
argv, stdout, stderr, cwd, timeout = json.loads(sys.argv[1])
if cwd:
    os.chdir(cwd)
actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
           (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
           (os.POSIX_SPAWN_OPEN, 2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
expired = []
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, dict(os.environ), file_actions=actions)
def kill(signum, frame):
    expired.append(True)
    os.kill(pid, signal.SIGKILL)
signal.signal(signal.SIGALRM, kill)
signal.setitimer(signal.ITIMER_REAL, timeout)
_pid, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps([wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status), bool(expired),
                  usage.ru_utime + usage.ru_stime]))
"""


def run_once(argv: Sequence[str], stdout: Path, stderr: Path, cwd: Path | None = None,
             env: dict[str, str] | None = None, timeout: float = TIMEOUT) -> Run:
    """Spawn ``argv`` (through the launcher), wait with os.wait4 and return its wall time, CPU
    time, peak RSS and exit code."""
    spec = json.dumps([list(argv), str(stdout), str(stderr), str(cwd) if cwd else None, timeout])
    proc = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, spec], capture_output=True, text=True,
                          env=env if env is not None else dict(os.environ), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark launcher failed: {proc.stderr.strip()[-500:]}")
    wall, rss, code, expired, cpu = json.loads(proc.stdout)
    return Run(wall, int(rss), int(code), bool(expired), float(cpu))


@dataclass
class Result:
    group: str
    name: str
    command: str
    runs: list[Run] = field(default_factory=list)
    status: str = "ok"
    note: str = ""
    target: str = ""
    verdict: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def wall(self) -> float | None:
        ok = [r.wall for r in self.runs]
        return statistics.median(ok) if ok else None

    @property
    def cpu(self) -> float | None:
        ok = [r.cpu for r in self.runs]
        return statistics.median(ok) if ok else None

    @property
    def rss_mib(self) -> float | None:
        ok = [r.rss_kib for r in self.runs]
        return statistics.median(ok) / 1024 if ok else None

    def as_json(self) -> dict[str, Any]:
        return {"group": self.group, "name": self.name, "command": self.command, "status": self.status,
                "note": self.note, "target": self.target, "verdict": self.verdict,
                "median_wall_s": self.wall, "median_cpu_s": self.cpu, "median_peak_rss_mib": self.rss_mib,
                "runs": [r.__dict__ for r in self.runs], **self.extra}


class Bench:
    def __init__(self, runs: int, heavy_runs: int) -> None:
        self.runs = runs
        self.heavy_runs = heavy_runs
        self.imsdr = imsdr_argv()
        self.results: list[Result] = []
        self._help_cache: dict[tuple[str, ...], str | None] = {}
        WORK.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)

    # which commands exist --------------------------------------------------------------------

    def help_text(self, *sub: str) -> str | None:
        if sub not in self._help_cache:
            proc = subprocess.run([*self.imsdr, *sub, "--help"], capture_output=True, text=True,
                                  env={**os.environ, "COLUMNS": "200"})
            self._help_cache[sub] = proc.stdout if proc.returncode == 0 else None
        return self._help_cache[sub]

    def available(self, *sub: str) -> bool:
        return self.help_text(*sub) is not None

    def json_flag(self, *sub: str) -> list[str]:
        text = self.help_text(*sub) or ""
        return ["--format", "json"] if "--format" in text and "json" in text else []

    # measuring -----------------------------------------------------------------------------------

    def measure(self, group: str, name: str, argv: Sequence[str], runs: int, *,
                needs: tuple[str, ...] | None = None, ok_codes: tuple[int, ...] = (0,),
                before: Callable[[], None] | None = None, cwd: Path | None = None,
                env: dict[str, str] | None = None, shown: str | None = None) -> Result:
        result = Result(group, name, shown or " ".join(_short(a) for a in argv))
        self.results.append(result)
        if needs is not None and not self.available(*needs):
            result.status = "not available"
            print(f"  {name}: not available", file=sys.stderr)
            return result
        out, err = WORK / f"{_slug(name)}.stdout", WORK / f"{_slug(name)}.stderr"
        for i in range(runs):
            if before is not None:
                before()
            run = run_once(argv, out, err, cwd=cwd, env=env if env is not None else self.env)
            if run.timed_out:
                result.status = f"timeout after {TIMEOUT:.0f} s"
                break
            if run.exit_code not in ok_codes:
                result.status = f"failed (exit {run.exit_code})"
                tail = err.read_text(errors="replace").strip().splitlines()[-3:]
                result.note = " | ".join(tail)[:300]
                break
            if run.exit_code != 0:
                result.note = f"exit {run.exit_code} (findings)"
            result.runs.append(run)
            print(f"  {name} run {i + 1}/{runs}: {run.wall:.3f} s (cpu {run.cpu:.3f} s), "
                  f"{run.rss_kib / 1024:.1f} MiB",
                  file=sys.stderr)
        if result.status != "ok":
            result.runs.clear()
            print(f"  {name}: {result.status} {result.note}", file=sys.stderr)
        return result


def _short(arg: str) -> str:
    for base, label in ((str(WORK) + "/", ""), (str(ROOT) + "/", ""), (str(VENV) + "/bin/", "")):
        if arg.startswith(base):
            return label + arg[len(base):]
    if arg.endswith("/imsdr") or arg == sys.executable:
        return Path(arg).name
    return arg


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def count_records(path: Path, rdtype: str | None = None) -> int:
    """Resource records in the zone files under ``path`` (one record per line, as imsdr writes)."""
    total = 0
    pattern = re.compile(rf"\sIN\s+{rdtype}\s" if rdtype else r"\sIN\s+[A-Z]+\s")
    for p in path.rglob("*"):
        if p.is_file() and p.suffix in (".zone", ".db", "") and not p.name.endswith(".conf"):
            with p.open(errors="replace") as fh:
                for line in fh:
                    if not line.startswith((";", "$")) and pattern.search(line):
                        total += 1
    return total


# --- inputs ---------------------------------------------------------------------------------------


def generate(bench: Bench, name: str, args: list[str]) -> Path:
    path = WORK / f"{name}.yaml"
    with path.open("w") as fh:
        subprocess.run([*bench.imsdr, "example", *args], stdout=fh, check=True)
    return path


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // 1024
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
            "cpu": cpu, "ram_mib": mem, "python": platform.python_version(), "commit": commit,
            "platform": platform.platform()}


# --- the benchmarks ---------------------------------------------------------------------------------


def bench_help(b: Bench) -> None:
    r = b.measure("start-up", "imsdr --help", [*b.imsdr, "--help"], max(b.runs, 10))
    _verdict(r, "< 0.15 s", 0.15)


def _verdict(r: Result, target: str, limit: float, wall: float | None = None, cpu: float | None = None) -> None:
    """``met`` when the wall time (default: the row's median) is under ``limit``; on a machine shared
    with other work the wall time can miss while the CPU time alone is under it: ``met in CPU time``."""
    r.target = target
    wall = r.wall if wall is None else wall
    cpu = r.cpu if cpu is None else cpu
    if wall is None:
        return
    if wall < limit:
        r.verdict = "met"
    elif cpu is not None and cpu < limit:
        r.verdict = f"met in CPU time ({cpu:.2f} s; wall {wall:.2f} s on a busy machine)"
    else:
        r.verdict = "missed"


def bench_plan(b: Bench, national: Path) -> None:
    """validate, check, capacity (JSON), each a cold command; capacity's default table beside it."""
    total: float | None = 0.0
    cpu = 0.0
    rss = 0.0
    results = {}
    for cmd in ("validate", "check", "capacity"):
        r = results[cmd] = b.measure("national plan", f"{cmd} national",
                                     [*b.imsdr, cmd, str(national), *b.json_flag(cmd)], b.runs, needs=(cmd,),
                                     ok_codes=(0, 1))
        if r.wall is None or total is None:
            total = None
        else:
            total += r.wall
            cpu += r.cpu or 0.0
            rss = max(rss, r.rss_mib or 0)
    r = Result("national plan", "validate+check+capacity", "sum of the three medians")
    if total is None:
        r.status = "incomplete"
    else:
        r.runs = [Run(total, int(rss * 1024), 0, cpu=cpu)]
    _verdict(r, "< 2 s together", 2)
    b.results.append(r)
    table = b.measure("national plan", "capacity national (default table)",
                      [*b.imsdr, "capacity", str(national)], b.runs, needs=("capacity",), ok_codes=(0, 1))
    json_run = results["capacity"]
    if table.wall is not None and json_run.wall is not None:
        extra = table.wall - json_run.wall
        lines = (WORK / f"{_slug(table.name)}.stdout").read_text(errors="replace").count("\n")
        table.note = f"{extra:+.3f} s against the JSON ({(table.cpu or 0) - (json_run.cpu or 0):+.3f} s CPU); " \
                     f"{lines:,} lines"
        _verdict(table, "< 1 s more than JSON", 1, extra, (table.cpu or 0) - (json_run.cpu or 0))


def bench_availability(b: Bench, national: Path) -> None:
    """availability of the national example (< 3 s), and of half as many provinces beside it:
    peak RSS should grow with the inventory, not with the number of cut sets."""
    half = generate(b, "national-16-provinces", ["national", "--provinces", "16"])
    for name, path in (("availability national, 16 provinces", half), ("availability national", national)):
        r = b.measure("availability", name, [*b.imsdr, "availability", str(path), *b.json_flag("availability")],
                      b.runs, needs=("availability",), ok_codes=(0, 1))
        if path is national:
            _verdict(r, "< 3 s", 3)


DIAMETER_COUNT = ("import sys; from imsdr.plan import load_topology; from imsdr.diameter import peer_count; "
                  "c = peer_count(load_topology(sys.argv[1])); "
                  "print(c.clients, c.max_peers, c.max_allowed, c.connections)")


def diameter_note(stdout: str) -> str:
    """The row's note from the peer count printed by DIAMETER_COUNT."""
    clients, most, allowed, connections = (int(x) for x in stdout.split())
    return (f"{clients:,} clients, at most {most} peers each (allowed: province's HSSs + 2 = {allowed}), "
            f"{connections:,} Diameter connections network-wide")


def slfs_as_dras(data: dict[str, Any]) -> dict[str, Any]:
    """An inventory (as data) with every SLF turned into a DRA (same sites, pairs, addresses and
    Diameter load, capacity in transactions/s only): DRA routing in every province."""
    for el in data["elements"]:
        if el["type"] == "slf":
            el["type"] = "dra"
            el["capacity"] = {k: v for k, v in el.get("capacity", {}).items() if k == "transactions_per_second"}
    return data


def write_with_dras(source: Path, target: Path) -> Path:
    """``source`` with its SLFs as DRAs (:func:`slfs_as_dras`), written to ``target``."""
    import yaml

    loader, dumper = getattr(yaml, "CSafeLoader", yaml.SafeLoader), getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    data = yaml.load(source.read_text(encoding="utf-8"), Loader=loader)  # the safe loader: data only
    target.write_text(yaml.dump(slfs_as_dras(data), Dumper=dumper, sort_keys=False), encoding="utf-8")
    return target


def bench_diameter(b: Bench, national: Path) -> None:
    """Peers per Diameter client and connections network-wide, as rendered (imsdr.diameter): the
    national example (SLF routing), then the same with its SLF pairs as DRA pairs."""
    name = "diameter peers national"
    r = b.measure("diameter", name, [sys.executable, "-c", DIAMETER_COUNT, str(national)], b.runs,
                  shown="peer_count(national)")
    if r.status == "ok":
        r.note = diameter_note((WORK / f"{_slug(name)}.stdout").read_text())
        _, most, allowed, _ = (WORK / f"{_slug(name)}.stdout").read_text().split()
        r.target = "peers per client <= province's HSSs + 2"
        r.verdict = "met" if int(most) <= int(allowed) else "missed"
    with_dras = write_with_dras(national, WORK / "national-dra.yaml")
    name = "diameter peers national DRA"
    r = b.measure("diameter", name, [sys.executable, "-c", DIAMETER_COUNT, str(with_dras)], b.runs,
                  shown="peer_count(national, SLF pairs as DRA pairs)")
    if r.status == "ok":
        r.note = diameter_note((WORK / f"{_slug(name)}.stdout").read_text())
        most = int((WORK / f"{_slug(name)}.stdout").read_text().split()[1])
        r.target = "peers per client = 2 (its DRA pair)"
        r.verdict = "met" if most == 2 else "missed"


def rule_counts(directory: Path) -> tuple[int, int]:
    """(alerting rules, recording rules) of the rendered rule files in ``directory``."""
    alerts = records = 0
    for path in sorted(directory.glob("*.rules.yml")):
        text = path.read_text()
        alerts += text.count("\n      - alert: ")
        records += text.count("\n      - record: ")
    return alerts, records


def evaluation_seconds(directory: Path, timeout: float = 300.0) -> tuple[float, int] | None:
    """(seconds one evaluation of every rule group takes, groups) in a real Prometheus loading the
    rendered rules (each group's ``evaluationTime`` from ``/api/v1/rules``, summed), with no series
    stored: the cost of the rules themselves, the floor of what a loaded server pays."""
    import socket
    import time
    import urllib.request

    prometheus = shutil.which("prometheus")
    if prometheus is None:
        return None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = directory / "bench-prometheus.yml"
    rule_files = "".join(f"  - {p.name}\n" for p in sorted(directory.glob("*.rules.yml")))
    config.write_text(f"global: {{evaluation_interval: 5s}}\nrule_files:\n{rule_files}")
    with open(directory / "bench-prometheus.log", "wb") as log:
        proc = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={directory / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        query = f"http://127.0.0.1:{port}/api/v1/rules"
        while time.monotonic() < deadline:
            time.sleep(2)
            try:
                with urllib.request.urlopen(query, timeout=30) as response:  # noqa: S310 - loopback
                    groups = json.loads(response.read())["data"]["groups"]
            except (OSError, ValueError):
                continue
            if groups and all(not g["lastEvaluation"].startswith("0001") for g in groups):
                return sum(float(g["evaluationTime"]) for g in groups), len(groups)
        return None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_monitoring(b: Bench, national: Path) -> None:
    """render monitoring of the national example; its rules checked by promtool, counted, and
    evaluated once by a real Prometheus."""
    out = WORK / "national-monitoring"
    r = b.measure("monitoring", "render monitoring national", [*b.imsdr, "render", "monitoring", str(national),
                                                                  "--out", str(out), "--force"], b.runs)
    if r.status != "ok":
        return
    alerts, records = rule_counts(out)
    rule_files = sorted(p.name for p in out.glob("*.rules.yml"))
    check = b.measure("monitoring", "promtool check rules national", ["promtool", "check", "rules", *rule_files],
                      1, cwd=out, shown="promtool check rules monitoring/*.rules.yml")
    config = b.measure("monitoring", "promtool check config national", ["promtool", "check", "config",
                                                                        "prometheus.yml"],
                       1, cwd=out, shown="promtool check config monitoring/prometheus.yml")
    config.note = "SUCCESS" if config.status == "ok" else config.note
    cost = evaluation_seconds(out)
    r.note = f"{alerts:,} alerts + {records:,} recording rules in {len(rule_files)} files"
    r.extra = {"alerts": alerts, "recording_rules": records}
    if cost is not None:
        seconds, groups = cost
        r.note += f"; one evaluation of all {groups} groups in prometheus: {seconds * 1000:.0f} ms (no series)"
        r.extra["evaluation_s"] = seconds
    check.note = "SUCCESS" if check.status == "ok" else check.note


def bench_scenarios(b: Bench, national: Path) -> None:
    # every site, region, power feed, transmission route and element (depth 1), and every site pair
    for depth in ("1", "2"):
        r = b.measure("scenarios", f"scenarios --depth {depth} (sites, regions, feeds, routes, elements)",
                      [*b.imsdr, "scenarios", str(national), "--depth", depth, *b.json_flag("scenarios")],
                      b.runs if depth == "1" else max(1, min(b.runs, b.heavy_runs)),
                      needs=("scenarios",), ok_codes=(0, 1))
        if depth == "2":
            _verdict(r, "< 2 s", 2)


def bench_render(b: Bench, name: str, inventory: Path, runs: int, group: str) -> Result:
    out = WORK / f"out-{_slug(name)}"

    def clean() -> None:
        set_aside(out)

    r = b.measure(group, name, [*b.imsdr, "render", "dns", str(inventory), "--out", str(out)], runs,
                  needs=("render", "dns"), before=clean)
    if r.wall is not None and out.exists():
        size = dir_bytes(out)
        naptr = count_records(out, "NAPTR")
        r.extra.update(bytes_written=size, naptr_records=naptr, records=count_records(out))
        r.note = (f"{size / 1e6:,.1f} MB, {naptr:,} NAPTR; {size / r.wall / 1e6:,.1f} MB/s, "
                  f"{naptr / r.wall:,.0f} NAPTR/s")
    return r


def bench_enum(b: Bench) -> None:
    results = []
    for numbers, label in ((100_000, "100k"), (1_000_000, "1M")):
        inv = generate(b, f"enum-{label}", ["province", "--enum-numbers", str(numbers),
                                            "--enum-block-size", str(numbers), "--no-wildcards",
                                            "--enum-style", "numbers", "--local-networks-per-province", "4"])
        r = bench_render(b, f"render dns {label}-number ENUM block", inv, b.runs, "ENUM rendering")
        results.append(r)
    r = results[-1]
    r.target = ">= 500k NAPTR/s, RSS < 150 MiB, flat"
    if r.wall is not None and results[0].rss_mib is not None:
        rate = r.extra.get("naptr_records", 0) / r.wall
        flat = abs((r.rss_mib or 0) - results[0].rss_mib) < 0.25 * results[0].rss_mib
        ok = rate >= 500_000 and (r.rss_mib or 0) < 150 and flat
        r.verdict = "met" if ok else f"missed ({rate:,.0f}/s, {r.rss_mib:.0f} MiB{'' if flat else ', grows'})"


def bench_national_dns(b: Bench, national: Path) -> None:
    bench_render(b, "render dns national plan", national, b.heavy_runs, "ENUM rendering")
    exceptions = WORK / "national-exceptions.csv"
    stress = WORK / "national-stress.yaml"  # the 10M-number ENUM stress input: one NAPTR per number
    with stress.open("w") as fh:
        subprocess.run([*b.imsdr, "example", "national", "--enum-style", "numbers"], stdout=fh, check=True)
    for label, inventory, extra in (
            ("plan national (every analysis and file)", national, ["--enum-exceptions", str(exceptions)]),
            ("plan national stress input (10M ENUM numbers, --enum-style numbers)", stress, [])):
        out = WORK / f"out-{_slug(label)}"

        def clean(out: Path = out) -> None:
            set_aside(out)

        r = b.measure("pipeline", label, [*b.imsdr, "plan", str(inventory), "--out", str(out), *extra],
                      b.heavy_runs, needs=("plan",), ok_codes=(0, 1), before=clean)
        _verdict(r, "< 4 s", 4)
        if r.wall is not None and out.exists():
            size = dir_bytes(out)
            enum = dir_bytes(out / "dns" / "zones" / "enum") if (out / "dns" / "zones" / "enum").is_dir() else 0
            pages = [p.stat().st_size for p in (out / "runbooks").glob("*.md")] or [0]
            r.note = (f"{size / 1e6:,.1f} MB in {sum(1 for p in out.rglob('*') if p.is_file()):,} files; "
                      f"ENUM zones {enum / 1e6:,.1f} MB; largest runbook page {max(pages) / 1e3:,.0f} kB")
            r.extra.update({"bytes_written": size, "enum_bytes": enum, "largest_page_bytes": max(pages)})
        clean()


_PARSE = "import sys, yaml\nwith open(sys.argv[1], 'rb') as f:\n    yaml.load(f, Loader=yaml.CSafeLoader)\n"

_NAMED_LOAD = r"""
import json, os, signal, subprocess, sys, time
conf, log, addresses = sys.argv[1], sys.argv[2], sys.argv[3:]
for address in addresses:  # inside the benchmark's own network namespace: the server's addresses
    subprocess.run(["ip", "addr", "add", address + "/32", "dev", "lo"], check=True)
start = time.monotonic()
with open(log, "wb") as out:
    proc = subprocess.Popen(["named", "-g", "-4", "-n", "1", "-c", conf], stdout=out, stderr=subprocess.STDOUT)
loaded = None
while time.monotonic() - start < 600 and proc.poll() is None:
    with open(log, "rb") as f:
        if any(line.endswith(b" running") for line in f.read().splitlines()):
            loaded = time.monotonic() - start
            break
    time.sleep(0.05)
hwm = 0
with open(f"/proc/{proc.pid}/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
os.kill(proc.pid, signal.SIGTERM)
proc.wait(timeout=30)
print(json.dumps({"loaded_s": loaded, "rss_kib": hwm}))
"""


def _views_and_zones(conf: Path) -> tuple[int, int]:
    text = conf.read_text()
    return len(re.findall(r'^view "', text, re.M)), len(re.findall(r'^    zone "', text, re.M))


def bench_areas(b: Bench, national: Path) -> None:
    """The national example with service areas: ratios to one PyYAML C-loader parse of the same
    inventory (the machine's speed varies from day to day, the ratios much less), the plan's size,
    views and zone statements per server, and one province server's configuration loaded by named."""
    base = b.measure("areas", "PyYAML CSafeLoader parse national (ratio base)",
                     [sys.executable, "-c", _PARSE, str(national)], b.runs, shown="python: yaml.load(CSafeLoader)")
    check = b.measure("areas", "check national", [*b.imsdr, "check", str(national)], b.runs, ok_codes=(0, 1))
    out = WORK / "out-plan-areas"

    def clean() -> None:
        set_aside(out)

    # the example as an operator runs it: with its provisioning file of ported numbers
    exceptions = WORK / "national-exceptions.csv"
    plan = b.measure("areas", "plan national (service areas)",
                     [*b.imsdr, "plan", str(national), "--out", str(out), "--enum-exceptions", str(exceptions)],
                     b.heavy_runs, ok_codes=(0, 1), before=clean)
    # the same plan in one process (`--jobs 1`): what the second CPU saves, and the CPU-only baseline
    serial = b.measure("areas", "plan national (service areas), one process",
                       [*b.imsdr, "plan", str(national), "--out", str(out), "--enum-exceptions", str(exceptions),
                        "--jobs", "1"], b.heavy_runs, ok_codes=(0, 1), before=clean)
    if base.wall:
        for r, limit in ((check, 1.5), (plan, 6.0), (serial, 6.0)):
            if r.wall:
                r.target = f"<= {limit}x the parse"
                r.extra["ratio_to_parse"] = r.wall / base.wall
                ratio = r.wall / base.wall
                cpu_ratio = (r.cpu or 0) / (base.cpu or 1)
                r.verdict = "met" if ratio <= limit else (
                    f"met in CPU time ({cpu_ratio:.1f}x)" if cpu_ratio <= limit else f"missed ({ratio:.1f}x)")
                r.note = f"{ratio:.2f}x the parse ({cpu_ratio:.2f}x in CPU time)"
    if plan.wall is None or not out.exists():
        return
    size = dir_bytes(out)
    files = sum(1 for p in out.rglob("*") if p.is_file())
    plan.extra.update(bytes_written=size, files=files)
    plan.note += f"; {size / 1e6:,.1f} MB in {files:,} files (target <= 250 MB)"
    confs = sorted(out.rglob("named/*.conf"))
    counts = {p.stem: _views_and_zones(p) for p in confs}
    province = [c for name, c in counts.items() if not name.startswith("national-")]
    r = Result("areas", "views / zone statements per server", f"{len(counts)} named/<server>.conf")
    if province:
        views = sorted(v for v, _ in province)
        zones = sorted(z for _, z in province)
        national_counts = [c for name, c in counts.items() if name.startswith("national-")]
        r.note = (f"province servers: views {views[0]}-{views[-1]}, zone statements {zones[0]}-{zones[-1]}; "
                  f"national: {national_counts[0] if national_counts else 'none'} (views, zones)")
        r.extra["per_server"] = counts
    b.results.append(r)
    bench_named_load(b, out, confs)
    clean()
    bench_host_zone(b, national)


def _dns_size(out: Path) -> dict[str, Any]:
    """What one rendered DNS directory weighs: bytes, zone files, and per province server its zone
    statements and the bytes of the zone files it loads (a primary holds each once)."""
    confs = [p for p in sorted(out.glob("named/*.conf")) if not p.stem.startswith("national-")]
    zones, loaded = [], []
    for conf in confs:
        text = conf.read_text()
        zones.append(_views_and_zones(conf)[1])
        loaded.append(sum((out / f).stat().st_size for f in set(re.findall(r'file "(zones/[^"]+)"', text))))
    return {"bytes": dir_bytes(out), "zone_files": sum(1 for _ in out.rglob("*.zone")),
            "zone_statements": (min(zones), max(zones)) if zones else (0, 0),
            "loaded_bytes": (min(loaded), max(loaded)) if loaded else (0, 0)}


def bench_host_zone(b: Bench, national: Path) -> None:
    """network.dns.host_zone: the national example (without it) against the same network with it
    (``imsdr example national --host-zone``): the national DNS output, rendered with the example's
    exceptions file, before and after, and what named holds loading a province server."""
    exceptions = WORK / "national-exceptions.csv"
    after_inv = generate(b, "national-host-zone", ["national", "--host-zone"])
    sizes: dict[str, dict[str, Any]] = {}
    for label, inventory in (("without host_zone", national), ("with host_zone: hosts", after_inv)):
        out = WORK / f"out-dns-{_slug(label)}"
        r = b.measure("areas", f"render dns national, {label}",
                      [*b.imsdr, "render", "dns", str(inventory), "--out", str(out), "--enum-exceptions",
                       str(exceptions), "--serial", "1"], b.heavy_runs, before=lambda o=out: shutil.rmtree(o, True))
        if r.wall is None or not out.exists():
            return
        size = sizes[label] = _dns_size(out)
        bench_named_load(b, out, sorted(out.glob("named/*.conf")))  # what a primary holds in memory
        b.results[-1].name += f", {label}"
        if b.results[-1].rss_mib:
            size["named_rss_mib"] = b.results[-1].rss_mib
        r.extra.update(size)
        r.note = (f"{size['bytes'] / 1e6:,.2f} MB, {size['zone_files']:,} zone files; per province server "
                  f"{size['zone_statements'][0]}-{size['zone_statements'][1]} zone statements, zone files "
                  f"loaded {size['loaded_bytes'][0] / 1e3:,.0f}-{size['loaded_bytes'][1] / 1e3:,.0f} KB")
        shutil.rmtree(out, ignore_errors=True)
    old, new = sizes["without host_zone"], sizes["with host_zone: hosts"]
    r = Result("areas", "host zone: national DNS output before/after", "the two render dns rows above")
    r.note = (f"bytes {old['bytes'] / 1e6:,.2f} -> {new['bytes'] / 1e6:,.2f} MB "
              f"({(new['bytes'] - old['bytes']) / old['bytes']:+.1%}); zone files {old['zone_files']:,} -> "
              f"{new['zone_files']:,}; zone statements per province server {old['zone_statements'][1]} -> "
              f"{new['zone_statements'][1]}; largest province server loads {old['loaded_bytes'][1] / 1e3:,.0f} -> "
              f"{new['loaded_bytes'][1] / 1e3:,.0f} KB of zone files")
    if "named_rss_mib" in old and "named_rss_mib" in new:
        r.note += f"; named RSS {old['named_rss_mib']:,.0f} -> {new['named_rss_mib']:,.0f} MiB"
    r.extra.update(before=old, after=new)
    b.results.append(r)


def bench_named_load(b: Bench, out: Path, confs: list[Path]) -> None:
    """Real BIND starting on the largest province server's rendered configuration, in a network
    namespace the benchmark creates (named listens only on configured addresses; the core views'
    query-source is the server's own address)."""
    from imsdr.dns.keys import ensure_keys

    r = Result("areas", "named loads one province server", "named -g -c (province server)")
    b.results.append(r)
    province = [c for c in confs if not c.stem.startswith("national-")]
    named, unshare = shutil.which("named"), shutil.which("unshare")
    if not province or not named or not unshare:
        r.status = "not available"
        return
    conf = max(province, key=lambda p: p.stat().st_size)
    dns_dir = conf.parent.parent
    work = WORK / "named-load"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    keys = work / "tsig.keys"
    ensure_keys(keys, sorted(set(re.findall(r'key "([a-z0-9.-]+)"', conf.read_text()))))
    addresses = sorted(set(re.findall(r"query-source address ([0-9.]+);", conf.read_text())))
    options = dns_dir / "named-options.conf"
    (work / "named.conf").write_text(
        f'options {{ directory "{dns_dir}"; pid-file "{work}/named.pid"; managed-keys-directory "{work}";\n'
        f'  session-keyfile "{work}/session.key"; listen-on port 53 {{ 127.0.0.1; }}; listen-on-v6 {{ none; }};\n'
        f'  recursion no; notify no;{f" include {chr(34)}{options}{chr(34)};" if options.exists() else ""} }};\n'
        f'controls {{ }};\ninclude "{keys}";\ninclude "{conf}";\n')
    samples = []
    loader = work / "named_load.py"
    loader.write_text(_NAMED_LOAD)
    for _ in range(max(1, min(b.runs, 3))):
        script = (f"ip link set lo up && exec {sys.executable} {loader} {work / 'named.conf'} "
                  f"{work / 'named.log'} {' '.join(addresses)}")
        proc = subprocess.run([unshare, "--net", "sh", "-c", script], capture_output=True, text=True, timeout=900,
                              check=False)
        if proc.returncode != 0:
            r.status = "failed"
            r.note = (proc.stderr or proc.stdout).strip()[-300:]
            return
        sample = json.loads(proc.stdout.strip().splitlines()[-1])
        if sample["loaded_s"] is None:
            r.status = "failed"
            r.note = (work / "named.log").read_text(errors="replace")[-300:]
            return
        samples.append(sample)
        print(f"  named load {conf.stem}: {sample['loaded_s']:.2f} s, {sample['rss_kib'] / 1024:.0f} MiB",
              file=sys.stderr)
    r.runs = [Run(s["loaded_s"], s["rss_kib"], 0, cpu=0.0) for s in samples]
    views, zones = _views_and_zones(conf)
    r.target = "<= 5 s, <= 300 MB RSS"
    ok = (r.wall or 99) <= 5 and (r.rss_mib or 9999) * 1.048576 <= 300
    r.verdict = "met" if ok else "missed"
    r.note = f"{conf.stem}: {views} views, {zones} zone statements; time to 'running', VmHWM"


def bench_import(b: Bench, national: Path) -> None:
    """imsdr import bind of the national stress input's rendered DNS (10 million ENUM numbers)."""
    national = WORK / "national-stress.yaml"
    if not national.exists():
        with national.open("w") as fh:
            subprocess.run([*b.imsdr, "example", "national", "--enum-style", "numbers"], stdout=fh, check=True)
    source = WORK / "out-import-source"
    if not (source / "named").is_dir():
        shutil.rmtree(source, ignore_errors=True)
        subprocess.run([*b.imsdr, "render", "dns", str(national), "--out", str(source)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    draft = WORK / "import-draft.yaml"
    confs = sorted(str(p) for p in (source / "named").glob("*.conf"))

    def clean() -> None:
        draft.unlink(missing_ok=True)

    r = b.measure("import", "import bind national (10M ENUM numbers)",
                  [*b.imsdr, "import", "bind", *confs, "--zones-dir", str(source), "--out", str(draft)],
                  b.heavy_runs, needs=("import", "bind"), before=clean)
    _verdict(r, "< 10 s", 10)
    if r.rss_mib is not None:
        r.note = f"peak RSS {r.rss_mib:,.0f} MiB (ENUM zones streamed)"


# --- octoDNS side by side --------------------------------------------------------------------------------


def octodns_python() -> Path | None:
    python = VENV / "bin" / "python"
    sync = VENV / "bin" / "octodns-sync"
    if not sync.exists():
        print(f"creating {VENV} with {' '.join(OCTODNS_REQUIREMENTS)}", file=sys.stderr)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", *OCTODNS_REQUIREMENTS], check=True)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"cannot install octoDNS: {exc}", file=sys.stderr)
            return None
    return python if sync.exists() else None


def zones_to_octodns(zone_dir: Path, config_dir: Path) -> tuple[list[str], int]:
    """Convert imsdr's zone files (one per zone name; views' copies skipped) to octoDNS YAML."""
    import dns.rdatatype
    import dns.zone
    import yaml

    config_dir.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Path] = {}
    for path in sorted(zone_dir.rglob("*.zone")) + sorted(zone_dir.rglob("*.db")):
        with path.open() as fh:
            head = fh.read(4096)
        m = re.search(r"^\$ORIGIN\s+(\S+)", head, re.M)
        if m and m.group(1) not in seen:
            seen[m.group(1)] = path
    total = 0
    names = []
    for origin, path in sorted(seen.items()):
        zone = dns.zone.from_file(str(path), origin=origin, relativize=True, check_origin=False)
        # a delegating zone (service areas) holds NS + glue for its children; octoDNS manages each
        # child itself and refuses a parent's records at or below it other than the cut's NS
        subzones = [o for o in seen if o != origin and o.endswith("." + origin)]
        data: dict[str, list[dict[str, Any]]] = {}
        for name, node in zone.nodes.items():
            label = "" if str(name) == "@" else str(name)
            absolute = f"{label}.{origin}" if label else origin
            at_cut = absolute in subzones
            if not at_cut and any(absolute.endswith("." + sub) for sub in subzones):
                continue  # glue below a managed child zone
            records = []
            for rdataset in node.rdatasets:
                rdtype = dns.rdatatype.to_text(rdataset.rdtype)
                if rdtype == "SOA" or (at_cut and rdtype != "NS"):
                    continue
                values = [_octodns_value(rdtype, rd, zone.origin) for rd in rdataset]
                records.append({"type": rdtype, "ttl": rdataset.ttl, "values": values})
                total += len(values)
            if records:
                data[label] = records if len(records) > 1 else records[0]  # type: ignore[assignment]
        # octoDNS's YamlProvider insists on keys in natural sort order (enforce_order)
        text = yaml.safe_dump(_natural_order(data), sort_keys=False, default_flow_style=False)
        (config_dir / f"{origin}yaml").write_text("---\n" + text)
        names.append(origin)
    return names, total


def _natural(text: str) -> list[Any]:
    """natsort's default key: digit runs compare as numbers (pcscf2 < pcscf10)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


def _natural_order(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _natural_order(value[k]) for k in sorted(value, key=_natural)}
    if isinstance(value, list):
        return [_natural_order(v) for v in value]
    return value


def _octodns_value(rdtype: str, rd: Any, origin: Any) -> Any:
    if rdtype in ("A", "AAAA"):
        return rd.address
    if rdtype in ("NS", "CNAME", "PTR"):
        return rd.target.derelativize(origin).to_text()
    if rdtype == "SRV":
        return {"priority": rd.priority, "weight": rd.weight, "port": rd.port,
                "target": rd.target.derelativize(origin).to_text()}
    if rdtype == "NAPTR":
        # octoDNS writes the regexp verbatim between quotes: a back-reference \1 must be \\1 here
        return {"order": rd.order, "preference": rd.preference, "flags": rd.flags.decode(),
                "service": rd.service.decode(), "regexp": rd.regexp.decode().replace("\\", "\\\\"),
                "replacement": rd.replacement.derelativize(origin).to_text()}
    if rdtype == "TXT":
        return "".join(s.decode() for s in rd.strings).replace(";", "\\;")
    raise ValueError(f"record type {rdtype} not converted")


def bench_octodns(b: Bench, sizes: list[int]) -> None:
    python = octodns_python()
    for target in sizes:
        provinces = max(1, min(31, round(target / 3_000)))
        label = f"{target // 1000}k"
        group = "vs octoDNS"
        if not b.available("render", "dns"):
            b.results.append(Result(group, f"imsdr {label} records", "imsdr render dns",
                                    status="not available"))
            continue
        # size the ENUM block so the unique zones hold about `target` records in all
        base_args = ["national", "--provinces", str(provinces), "--local-networks-per-province", "5",
                     "--enum-block-size", "1000000"]
        probe = generate(b, f"octo-{label}-probe", [*base_args, "--enum-numbers", "0", "--no-wildcards",
                                                    "--enum-style", "numbers"])
        probe_out = WORK / f"octo-{label}-probe-out"
        shutil.rmtree(probe_out, ignore_errors=True)
        subprocess.run([*b.imsdr, "render", "dns", str(probe), "--out", str(probe_out)], check=True,
                       stdout=subprocess.DEVNULL)
        cfg_probe = WORK / f"octo-{label}-probe-config"
        shutil.rmtree(cfg_probe, ignore_errors=True)
        _names, base = zones_to_octodns(probe_out, cfg_probe)
        inv = generate(b, f"octo-{label}", [*base_args, "--enum-numbers", str(max(0, target - base)),
                                            "--no-wildcards", "--enum-style", "numbers"])
        r = bench_render(b, f"imsdr {label} records", inv, b.heavy_runs, group)
        if r.wall is None:
            continue
        out = WORK / f"out-{_slug(r.name)}"
        octo = WORK / f"octo-{label}"
        shutil.rmtree(octo, ignore_errors=True)
        zones, records = zones_to_octodns(out, octo / "config")
        r.extra["octodns_records"] = records
        r.note = f"{records:,} records in {len(zones)} zones; " + r.note
        if python is None:
            b.results.append(Result(group, f"octoDNS {label} records", "octodns-sync",
                                    status="not available"))
            continue
        config = {
            "providers": {
                "config": {"class": "octodns.provider.yaml.YamlProvider", "directory": "./config",
                           "default_ttl": 3600, "enforce_order": True},
                "zonefile": {"class": "octodns_bind.ZoneFileProvider", "directory": "./zones",
                             "file_extension": ".zone"},
            },
            "zones": {z: {"sources": ["config"], "targets": ["zonefile"]} for z in zones},
        }
        (octo / "config.yaml").write_text(json.dumps(config, indent=2))

        def clean(octo: Path = octo) -> None:
            shutil.rmtree(octo / "zones", ignore_errors=True)
            (octo / "zones").mkdir()

        o = b.measure(group, f"octoDNS {label} records",
                      [str(VENV / "bin" / "octodns-sync"), "--config-file", "config.yaml", "--doit",
                       "--quiet"], b.heavy_runs, before=clean, cwd=octo,
                      shown="octodns-sync --config-file config.yaml --doit")
        if o.wall is not None:
            written = count_records(octo / "zones")
            o.extra.update(bytes_written=dir_bytes(octo / "zones"), records=written)
            o.note = f"{written:,} records written"
        if o.wall is not None and r.wall is not None:
            speed = o.wall / r.wall
            mem = (r.rss_mib or 0) / (o.rss_mib or 1)
            ratio = Result(group, f"ratio at {label}", "octoDNS time / imsdr time; imsdr RSS / octoDNS RSS")
            cpu_speed = (o.cpu or 0) / (r.cpu or 1)
            ratio.note = (f"{speed:.1f}x faster (wall; {cpu_speed:.1f}x in CPU time), "
                          f"{mem:.2f} of octoDNS's peak memory")
            ratio.extra.update(speedup=speed, cpu_speedup=cpu_speed, memory_ratio=mem)
            if target >= 50_000:
                ratio.target = ">= 30x faster, <= 1/6 memory"
                ratio.verdict = ("met" if speed >= 30 and mem <= 1 / 6 else
                                 "met in CPU time" if cpu_speed >= 30 and mem <= 1 / 6 else "missed")
            b.results.append(ratio)


# --- output ------------------------------------------------------------------------------------


def table_rows(results: list[Result]) -> list[list[str]]:
    rows = []
    for r in results:
        wall = f"{r.wall:.3f}" if r.wall is not None else "-"
        cpu = f"{r.cpu:.3f}" if r.cpu is not None else "-"
        rss = f"{r.rss_mib:.1f}" if r.rss_mib is not None else "-"
        status = r.status if r.status != "ok" else (r.verdict or "")
        runs = str(len(r.runs)) if r.runs else "-"
        rows.append([r.group, r.name, runs, wall, cpu, rss, r.target or "", status, r.note])
    return rows


HEADERS = ["group", "benchmark", "runs", "median wall s", "median CPU s", "peak RSS MiB", "target", "verdict",
           "notes"]


def print_table(results: list[Result]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover
        for row in table_rows(results):
            print(" | ".join(row))
        return
    table = Table(title="imsdr benchmarks (median of runs)")
    for h in HEADERS:
        table.add_column(h, justify="right" if h in ("runs", "median wall s", "median CPU s", "peak RSS MiB")
                         else "left")
    for row in table_rows(results):
        table.add_row(*row)
    Console(width=200).print(table)


def markdown(results: list[Result], info: dict[str, Any]) -> str:
    headers = [*HEADERS[:2], "command", *HEADERS[2:]]
    lines = [f"Measured {info['date']} at commit {info['commit']} on {info['nproc']} CPUs ({info['cpu']}), "
             f"{info['ram_mib']:,} MiB RAM, Python {info['python']}.", "",
             "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r, row in zip(results, table_rows(results), strict=True):
        command = f"`{r.command}`" if r.command.startswith(("imsdr", "IMSDR", "octodns", "/")) else r.command
        cells = [*row[:2], command, *row[2:]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per benchmark (median reported)")
    parser.add_argument("--heavy-runs", type=int, default=3, help="runs for the national render and octoDNS")
    parser.add_argument("--only", nargs="*", choices=["help", "plan", "availability", "scenarios", "enum",
                                                      "national-dns", "import", "octodns", "areas", "diameter",
                                                      "monitoring"],
                        help="benchmarks to run (default: all)")
    parser.add_argument("--octodns-sizes", default="10000,50000",
                        help="records per side-by-side octoDNS comparison (comma separated)")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown to this file")
    parser.add_argument("--json", type=Path, help="also write raw results as JSON to this file")
    args = parser.parse_args(argv)
    only = set(args.only or ["help", "plan", "availability", "scenarios", "enum", "national-dns", "import",
                             "octodns", "areas", "diameter", "monitoring"])
    compile_imsdr()
    empty_trash()  # (what an interrupted run set aside)
    bench = Bench(args.runs, args.heavy_runs)
    info = machine()
    print(f"{info['date']}  commit {info['commit']}  {info['nproc']} CPUs  {info['cpu']}  "
          f"{info['ram_mib']:,} MiB  Python {info['python']}", file=sys.stderr)
    national = None
    if only & {"plan", "availability", "scenarios", "national-dns", "import", "areas", "diameter", "monitoring"}:
        # the national example: wildcard blocks plus its provisioning file of 2 % ported numbers
        national = generate(bench, "national", ["national", "--enum-exceptions",
                                                str(WORK / "national-exceptions.csv")])
    if "help" in only:
        bench_help(bench)
    if "plan" in only and national:
        bench_plan(bench, national)
    if "availability" in only and national:
        bench_availability(bench, national)
    if "scenarios" in only and national:
        bench_scenarios(bench, national)
    if "diameter" in only and national:
        bench_diameter(bench, national)
    if "monitoring" in only and national:
        bench_monitoring(bench, national)
    if "enum" in only:
        bench_enum(bench)
    if "national-dns" in only and national:
        bench_national_dns(bench, national)
    if "import" in only and national:
        bench_import(bench, national)
    if "areas" in only and national:
        bench_areas(bench, national)
    if "octodns" in only:
        bench_octodns(bench, [int(x) for x in args.octodns_sizes.split(",") if x.strip()])
    empty_trash()
    print_table(bench.results)
    if args.markdown:
        args.markdown.write_text(markdown(bench.results, info))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": [r.as_json() for r in bench.results]},
                                        indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
