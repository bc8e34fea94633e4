"""The plan pipeline: validate → check → capacity → scenarios → DNS + runbooks → plan.json.

``run_plan`` renders the whole output tree into one directory (the caller makes that atomic);
``check_plan`` renders into a temporary directory and diffs it against an existing tree.
Each stage reads the output of the one before; analyses are reused by every renderer so the
runbook shows exactly what ``check``, ``capacity``, ``simulate`` and ``render dns`` produce.

One module past 600 lines: it is the pipeline, one stage per function over one ``Analysis``;
the stages' order and what each hands the next are easiest to check read top to bottom.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from imsdr.output.jsonout import dumps
from imsdr.output.plan_review import PlanReview, review
from imsdr.progress import SILENT, Stages
from imsdr.runbook.context import Analyses, build_context

if TYPE_CHECKING:
    from imsdr.analysis import Analysis
    from imsdr.capacity.engine import Outcome
    from imsdr.capacity.storm import MovedUsers
    from imsdr.model.topology import Topology
    from imsdr.output.atomic import OutputTarget, WrittenDigests
    from imsdr.output.beside import Beside
    from imsdr.runbook.sandbox import TemplateLimits
    from imsdr.untrusted import UntrustedTree

PLAN_JSON_VERSION = 1
FAIL_LEVELS = ("error", "warning", "never")


@dataclass
class Pipeline:
    """Everything computed for one inventory; renderers read it, nothing recomputes it.

    ``analysis`` is the run's computed model (failure engine, capacity report) that the check,
    capacity and scenario stages share; ``analyses`` is what the runbook templates read."""

    inventory_path: str
    topology: Topology
    analysis: Analysis
    analyses: Analyses
    check_report: Any = None
    capacity_report: Any = None
    scenarios_report: Any = None
    dns_plan: Any = None
    # the lint of dns_plan (imsdr.dns.lint.PlanLint): check's DNS-005 lints its base zones, the
    # writer of dns/ only the views on top
    dns_lint: Any = None
    raw: dict[str, Any] = field(default_factory=dict)  # the stages' JSON dicts
    drain: tuple[str, ...] = ()  # element/site ids: dns/ is rendered in their drained state
    stages: Stages = SILENT  # told of each step as it starts (the CLI shows progress)


@dataclass
class PlanTree:
    """The directory a plan is written into, and the forked children writing parts of it.

    With ``children`` (an open ExitStack; ``plan --jobs 2``) :func:`run_analyses` starts each part
    as soon as what it reads is computed, while this process goes on with the analyses: the
    availability pages and diameter/ once the model is loaded, dns/ and monitoring/ once the check
    has built the capacity report. :func:`render_tree` writes the rest and collects their digests.
    Leaving the stack stops whatever still runs."""

    root: Path
    previous: Path | None = None  # the tree being replaced (its dns/ keeps the serials of unchanged zones)
    children: contextlib.ExitStack | None = None
    # {"pages": the availability pages, "digests": rows of the files it wrote (diameter/)}
    availability: Beside[dict[str, Any]] | None = None
    # {"dns_summary": what plan.json says of dns/, "digests": rows of dns/ and monitoring/}
    dns: Beside[dict[str, Any]] | None = None


def load_topology(path: str | os.PathLike[str]) -> Topology:
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    inventory, source = load_inventory(path)
    return Topology(inventory, source)


# --- analysis stages (thin adapters over the analysis packages) --------------------------------

def _check(analysis: Analysis, today: dt.date | None, fail_on: str,
           dns_lint: Any = None) -> tuple[Any, dict[str, Any]]:
    from functools import partial

    from imsdr.dns.lint import plan_problems
    from imsdr.rules.engine import report_to_dict, run_checks

    report = run_checks(analysis.topology, today=today, analysis=analysis,
                        dns_problems=partial(plan_problems, analysis.topology, lint=dns_lint))
    raw = report_to_dict(report, fail_on)  # type: ignore[arg-type]
    raw.pop("today", None)  # keep rendered output independent of the day it was run
    return report, raw


def _capacity(pipe: Pipeline) -> None:
    """Capacity report → the capacity appendix and the per-site capacity after failover."""
    from imsdr.capacity import capacity_to_dict

    pipe.capacity_report = pipe.analysis.capacity
    raw = capacity_to_dict(pipe.capacity_report)
    pipe.raw["capacity"] = raw
    pipe.analyses.capacity_appendix = capacity_appendix(raw)
    passed = raw["verdict"] == "ok"
    shortfalls = _counted(raw["failures"], "shortfall")
    pipe.analyses.verdicts["capacity"] = ("pass" if passed else "fail") + f" ({shortfalls})"
    pipe.raw["capacity_summary"] = {
        "passed": passed,
        "verdict": raw["verdict"],
        "failures": raw["failures"],
        "details": (f"{shortfalls}; {_counted(len(raw['pools']), 'pool')}, {_counted(len(raw['pairs']), 'pair')}, "
                    f"{len(raw['hss'])} HSS, {_counted(len(raw['trunks']), 'trunk group')}, "
                    f"{_counted(len(raw['sites']), 'site check')}"),
    }


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


_ALWAYS = ("N+K pools", "1+1 pairs", "HSS sizing with dynamic restoration data", "CSCF load with restoration data",
           "Trunks (Erlang B)", "DR takeovers (SBC and P-CSCF)", "Site survivability")


def capacity_appendix(raw: dict[str, Any]) -> dict[str, Any]:
    """Normalise the capacity JSON into sections of (subject, calculation, result, verdict) rows."""

    def lines(formula: Any) -> str:
        return "; ".join(formula) if isinstance(formula, (list, tuple)) else str(formula)

    def group_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"subject": f"{g['id']} ({g['element_type']}: {', '.join(g['members'])})",
                 "calculation": lines(g["formula"]), "result": g["message"], "verdict": g["verdict"]}
                for g in items]

    sections = [
        {"title": "N+K pools",
         "formula": "spare per member = share × K / (N − K); survivors carry L / (N − K)",
         "rows": group_rows(raw["pools"])},
        {"title": "1+1 pairs", "formula": "each side carries the pair's whole load L alone",
         "rows": group_rows(raw["pairs"])},
        {"title": "HSS sizing with dynamic restoration data",
         "formula": ("required = subscribers × (1 + overhead) "
                     "+ users of the largest S-CSCF × (failover cost − 1)"),
         "rows": [{"subject": f"{h['id']} ({', '.join(h['members'])})", "calculation": lines(h["formula"]),
                   "result": h["message"], "verdict": h["verdict"]} for h in raw["hss"]]},
        {"title": "CSCF load with restoration data",
         "formula": "factor = 1 + registration share × (restoration cost − 1)",
         "rows": [{"subject": f"{c['id']} ({', '.join(c['members'])})", "calculation": lines(c["formula"]),
                   "result": f"load {c['load']:,.0f} users (factor {c['factor']})", "verdict": "info"}
                  for c in raw["cscf"]]},
        {"title": "Trunks (Erlang B)",
         "formula": "B(A,0) = 1; B(A,n) = A·B(A,n−1) / (n + A·B(A,n−1)); circuits = smallest n with B ≤ GoS",
         "rows": [{"subject": f"{t['id']} ({t['element_type']}, {t['erlangs']:,.0f} Erl)",
                   "calculation": lines(t["formula"]), "result": t["message"], "verdict": t["verdict"]}
                  for t in raw["trunks"]]},
        {"title": "DR takeovers (SBC and P-CSCF)",
         "formula": ("load after = own load + load moved from the failed element; "
                     "utilisation = load after / capacity"),
         "rows": [{"subject": f"{t['failed']} ({t['element_type']}) fails",
                   "calculation": lines(t["formula"]),
                   "result": t["message"], "verdict": t["verdict"]} for t in raw["takeovers"]]},
        {"title": "Site survivability",
         "formula": "utilisation = load to carry / capacity surviving the loss of the site",
         "rows": [{"subject": f"{s['site']} lost: {s['element_type']}", "calculation": lines(s["formula"]),
                   "result": s["message"], "verdict": s["verdict"]} for s in raw["sites"]]},
    ]
    sections += [
        {"title": "Region, power feed and transmission route losses",
         "formula": "every site depending on the shared risk fails; survivors carry the load (limit max_utilisation)",
         "rows": [{"subject": f"{r['kind']} {r['id']} ({', '.join(r['sites'])})",
                   "calculation": (f"unserved {r['unserved_users']:,.0f} users, {r['unserved_erlangs']:,.1f} E"
                                   + (f"; busiest {r['busiest']} at {r['busiest_utilisation']:.1%}"
                                      if r["busiest"] else "")),
                   "result": r["message"], "verdict": r["verdict"]} for r in raw["risks"]]},
        {"title": "Registration storm of a site or region loss",
         "formula": ("peak registrations/s = users moved × (immediate share / T + rest / refresh interval); "
                     "×2 REGISTER (IMS AKA) per SIP hop against 2 × registrations_per_second, ×4 Cx (2 UAR, MAR, "
                     "SAR) at the HSS on top of the background; served at capacity × limit − background (or the "
                     "registration limit) until everyone is registered"),
         "rows": [{"subject": s_["scenario"], "calculation": s_["formula"], "result": s_["message"],
                   "verdict": s_["verdict"]} for s_ in raw["storms"]]},
        {"title": "Sessions, DNS queries and background Diameter",
         "formula": ("sessions: users × busy-hour Erlangs per subscriber; queries/s: users × (BHCA × queries per "
                     "call attempt / 3,600 + queries per registration / refresh); Diameter/s: subscribers × "
                     "((UAR + SAR) / refresh + BHCA × on-net share / 3,600)"),
         "rows": [{"subject": f"{d['id']} ({d['dimension'].replace('_', ' ')})", "calculation": d["formula"],
                   "result": d["message"], "verdict": d["verdict"]} for d in raw["dimensions"]]},
    ]
    sections = [section for section in sections if section["rows"] or section["title"] in _ALWAYS]
    if raw["elements"]:
        sections.append({"title": "Element load", "formula": "utilisation = load / capacity",
                         "rows": [{"subject": f"{e['id']} ({e['element_type']})", "calculation": e["kind"],
                                   "result": e["message"], "verdict": e["kind"]} for e in raw["elements"]]})
    return {
        "available": True,
        "verdict": raw["verdict"],
        "failures": raw["failures"],
        "subscribers": raw["subscribers"],
        "busy_hour_erlangs": raw["busy_hour_erlangs"],
        "max_utilisation": raw["max_utilisation"],
        "sections": sections,
        "sites": raw["sites"],
    }


def _scenarios(pipe: Pipeline) -> None:
    """Depth-1 scenarios, and a simulation of every site and every element for the runbook pages."""
    from imsdr.scenarios.run import run_scenarios, scenarios_to_dict
    from imsdr.scenarios.simulate import element_simulation, failed_to_dict, simulate, simulation_to_dict

    topo, eng = pipe.topology, pipe.analysis.engine
    outcomes: dict[str, Outcome] = {}  # element id -> its failure's outcome (with detail), for its simulation
    pipe.scenarios_report = run_scenarios(topo, 1, engine=eng, element_outcomes=outcomes)
    raw = scenarios_to_dict(pipe.scenarios_report)
    pipe.raw["scenarios"] = raw
    site_rows = [r for r in raw["scenarios"] if r["kind"] == "site"]
    worst = max(site_rows, key=lambda r: (r["unserved_users"], r["switchover_s"]), default=None)
    loses = raw["depth1_loses_traffic"]
    counts = ", ".join(f"{n} {verdict}" for verdict, n in raw["counts"].items())
    pipe.raw["scenarios_summary"] = {
        "passed": not loses,
        "depth": 1,
        "counts": raw["counts"],
        "loses_traffic": loses,
        "details": f"{len(raw['scenarios'])} single failures: {counts}",
    }
    if worst is not None:
        from imsdr.runbook.render import seconds

        pipe.analyses.verdicts["scenarios"] = (
            f"{worst['failed'][0]}: {worst['verdict']}, switchover up to {seconds(worst['switchover_s'])}")
    from imsdr.capacity.storm import StormIndex
    from imsdr.scenarios.simulate import risk_sites

    storms = StormIndex(eng)  # read by every simulation's storm: built once, not per failure
    risks = risk_sites(topo)
    capacity_sites: dict[str, list[dict[str, Any]]] = {}  # site id -> its capacity rows, in order
    for c in (pipe.raw.get("capacity") or {}).get("sites", []):
        capacity_sites.setdefault(c["site"], []).append(c)
    for site_id in sorted(topo.sites):
        # the site's loss as the engine keeps it, and its storm as the capacity report computed it
        sim = simulation_to_dict(simulate(topo, [site_id], eng, storm_index=storms, risks=risks,
                                          outcome=eng.evaluate_sites((site_id,), detail=True),
                                          known_storm=pipe.analysis.storms.get(f"site:{site_id}")))
        pipe.analyses.site_failures[site_id] = site_failure(
            topo, sim, capacity_sites.get(site_id, []))
    for row in raw["scenarios"]:
        if row["kind"] == "element":
            pipe.analyses.element_rows[row["failed"][0]] = {
                "verdict": row["verdict"], "switchover_s": row["switchover_s"]}
    for el_id in simulated_elements(topo):
        # (what simulate(…, storm=False) reports of the element, without the survivors' rows)
        failed, verdict, moved = element_simulation(topo, el_id, eng, storm_index=storms, risks=risks,
                                                    outcome=outcomes.get(el_id))
        pipe.analyses.element_failures[el_id] = element_failure(failed_to_dict(failed), verdict, moved)


def simulated_elements(topo: Topology) -> list[str]:
    """Every element's failure is simulated in detail for the type pages: with one shared engine
    a simulation costs ~0.1 ms, so even national scale (~5,000 elements) takes about half a second."""
    return sorted(topo.elements)


def _timeline(failed: dict[str, Any] | None) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    elapsed = 0
    switchover = (failed or {}).get("switchover") or {}
    for part in switchover.get("parts", []):
        elapsed += part["seconds"]
        steps.append({"name": part["name"], "what": part["how"], "seconds": part["seconds"],
                      "elapsed": elapsed})
    return steps


def _formula(failed: dict[str, Any]) -> str:
    sw = failed.get("switchover")
    if not sw:
        return "nothing takes over"
    from imsdr.capacity.timing import PART_LABEL  # the words of Switchover.formula, as simulate prints

    parts = " + ".join(f"{p['seconds']} s {PART_LABEL.get(p['name'], p['name'])}" for p in sw["parts"])
    return f"{parts} = {sw['seconds']} s" if parts else "0 s"


def _slowest(failed: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The failed element whose switchover takes longest; ties go to the first in the simulation's
    (type, id) order, so the page is the same on every run."""
    best: dict[str, Any] | None = None
    for f in failed:
        if f.get("switchover") and f["load"] > 0 and (
                best is None or f["switchover"]["seconds"] > best["switchover"]["seconds"]):
            best = f
    return best


def element_failure(failed: dict[str, Any], verdict: str, moved: MovedUsers) -> dict[str, Any]:
    """One element's simulation, as the type pages read it: ``failed`` the element's entry
    (:func:`~imsdr.scenarios.simulate.failed_to_dict`), the verdict, and who moves (the failback
    actions read only that of the storm: imsdr.runbook.actions.storm)."""
    from imsdr.capacity.storm import moved_to_dict

    f = failed
    timeline = _timeline(f)
    return {
        "element": f["id"],
        "by": list(f["takeover"]),
        "how": f["takeover_how"],
        "detection_s": timeline[0]["seconds"] if timeline else None,
        "switchover_s": f["switchover"]["seconds"] if f.get("switchover") else None,
        "formula": _formula(f),
        "timeline": timeline,
        "verdict": verdict,
        "unserved": f["unserved"],
        "unit": f["unit"],
        "impact": list(f["impact"]),
        "failback": list(f["failback"]),
        "load": f["load"],
        "storm": moved_to_dict(moved),  # (of the traffic model's storm, who moves)
    }


def site_failure(topo: Topology, sim: dict[str, Any], capacity_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A site's simulation, as the site page reads it (see docs/runbooks.md)."""
    from imsdr.model.topology import TYPE_LABELS
    from imsdr.output.topology import lost_local_networks

    failed = sim["failed"]
    slowest = _slowest(failed)
    lost_lns = lost_local_networks(topo, [f["id"] for f in failed if f["type"] == "sbc"])
    switchover_of: dict[str, Any] = {}  # failed element -> its switchover (the first row of it)
    for f in failed:
        switchover_of.setdefault(f["id"], f["switchover"]["seconds"] if f.get("switchover") else None)
    return {
        "verdict": sim["verdict"],
        "switchover_s": sim["switchover_s"],
        "switchover_from": slowest["id"] if slowest else None,
        "takeovers": [
            {"failed": f["id"], "type": f["type"], "type_label": TYPE_LABELS.get(f["type"], f["type"]),
             "by": list(f["takeover"]), "how": f["takeover_how"],
             "switchover_s": f["switchover"]["seconds"] if f.get("switchover") else None,
             "formula": _formula(f), "unserved": f["unserved"], "unit": f["unit"]}
            for f in failed
        ],
        "switchover_of": switchover_of,
        "timeline": _timeline(slowest),
        "loads": [
            {**row, "type_label": TYPE_LABELS.get(row["type"], row["type"])} for row in sim["loads"]
        ],
        "capacity": [
            {"what": TYPE_LABELS.get(c["element_type"], c["element_type"]), **c} for c in capacity_rows
        ],
        "impact": [{"element": f["id"], "lines": list(f["impact"])} for f in failed if f["impact"]],
        "failback": [{"element": f["id"], "lines": list(f["failback"])} for f in failed if f["failback"]],
        "unserved": [
            {"local_network": ln["id"], "users": ln["unserved_users"], "erlangs": ln["unserved_erlangs"]}
            for ln in sim["local_networks"] if ln["unserved_users"] or ln["unserved_erlangs"]
        ],
        "unserved_users": sim["unserved_users"],
        "unserved_erlangs": sim["unserved_erlangs"],
        "survivors": [{"group": g, "members": list(m)} for g, m in sorted(sim["survivors"].items())],
        "lost_local_networks": lost_lns,
        # the registration storm (imsdr.capacity.storm.storm_to_dict): users moved, window,
        # REGISTER/s and Diameter/s per surviving element, bottleneck and time to drain
        "storm": sim.get("storm"),
    }


def _write_dns(pipe: Pipeline, directory: Path, previous: Path | None,
               digests: WrittenDigests | None = None) -> None:
    """Zones, views and dispatcher lists into ``directory`` (``imsdr render dns``'s writer).

    The plan is linted first (a lint error raises, nothing is written). ``previous`` is the DNS
    tree being replaced: the renderer keeps the SOA serial of every zone whose content is unchanged.
    """
    from imsdr.analysis import cyclic_gc_paused
    from imsdr.dns.render import check_plan as lint_dns_plan
    from imsdr.dns.render import write_dns_files

    plan, changes, lint = pipe.dns_plan, None, pipe.dns_lint
    if pipe.drain:
        from imsdr.dns.drain import drain_changes, resolve_drain
        from imsdr.dns.plan import build_dns_plan
        from imsdr.dns.render import require_previous_serials

        # the plan tree's dns/ is what the servers load: a drain rendered anywhere else would
        # restart the serials (plan has no --serial; `render dns --drain --serial N` has)
        require_previous_serials(previous, "the plan directory's dns/",
                                 how="use `imsdr render dns --drain --serial N` with N above the live serials")

        drained = resolve_drain(pipe.topology, pipe.drain)
        plan = build_dns_plan(pipe.topology, excluded=drained)
        changes = drain_changes(pipe.topology, drained, normal=pipe.dns_plan, drained=plan)
        lint = None  # (another plan: linted from the start)
    with cyclic_gc_paused():  # (as render dns: the lint's memos and the files' texts, none garbage)
        lint_dns_plan(pipe.topology, plan, lint)
        directory.mkdir(parents=True, exist_ok=True)
        report = write_dns_files(pipe.topology, plan, directory, previous,
                                 Path(pipe.inventory_path).name, drain=changes, digests=digests)
    zones = [f for f in report.files if f.kind == "zone"]
    pipe.raw["dns_summary"] = {
        "views": list(report.views),
        "zone_files": len(zones),
        "files": len(report.files),
        "notes": list(report.notes),
        "details": f"{len(zones)} zone files, {len(report.views)} views",
        "drained": list(changes.drained) if changes else [],
    }


def findings_from_dict(topo: Topology, raw: dict[str, Any], today: dt.date | None = None) -> dict[str, Any]:
    """Normalise the check JSON (imsdr.check/1) into what findings.md.j2 reads."""

    def row(f: dict[str, Any]) -> dict[str, Any]:
        loc = f.get("location") or {}
        where = f"{Path(str(loc.get('file'))).name}:{loc.get('line')}" if loc.get("line") else ""
        waiver = f.get("waiver") or {}
        return {
            "rule": f.get("rule"),
            "severity": f.get("severity"),
            "message": f.get("message", ""),
            "subjects": list(f.get("subjects", [])),
            "location": where,
            "hint": f.get("hint", ""),
            "reason": waiver.get("reason", ""),
            "expires": str(waiver.get("expires", "")),
        }

    open_ = [row(f) for f in raw.get("findings", [])]
    waived = [row(f) for f in raw.get("waived", [])]
    counts = {s: sum(1 for f in open_ if f["severity"] == s) for s in ("error", "warning", "info")}
    day = today or dt.date.today()
    waivers = [
        {"rule": w.rule, "scope": list(w.scope), "reason": w.reason, "expires": w.expires.isoformat(),
         "status": "expired" if w.expires < day else "active"}
        for w in topo.inventory.waivers
    ]
    return {
        "available": True,
        "verdict": "pass" if raw.get("passed", not counts["error"]) else "fail",
        "fail_on": raw.get("fail_on", "error"),
        "counts": counts,
        "open": open_,
        "waived": waived,
        "waivers": waivers,
    }


# --- the pipeline ------------------------------------------------------------------------------------

def analyse(path: str | os.PathLike[str], *, today: dt.date | None = None,
            fail_on: str = "error", drain: tuple[str, ...] = (), stages: Stages = SILENT,
            enum_exceptions: Path | None = None) -> Pipeline:
    """Load the inventory (and the ENUM exceptions file, if given) and run every analysis the
    renderers need; ``stages`` is told of each."""
    pipe = load_pipeline(path, drain=drain, stages=stages, enum_exceptions=enum_exceptions)
    run_analyses(pipe, today=today, fail_on=fail_on)
    return pipe


def load_pipeline(path: str | os.PathLike[str], *, drain: tuple[str, ...] = (), stages: Stages = SILENT,
                  enum_exceptions: Path | None = None) -> Pipeline:
    """The loaded inventory (and ENUM exceptions), with the drained ids resolved: every input
    error is raised here, before anything is computed or written."""
    from imsdr.analysis import Analysis, cyclic_gc_paused

    with cyclic_gc_paused(), stages.stage(f"loading {path}"):  # (hundreds of thousands of objects, none garbage)
        topo = load_topology(path)
        if enum_exceptions is not None:
            from imsdr.dns.enum_exceptions import load_enum_exceptions

            topo.enum_exceptions = load_enum_exceptions(Path(enum_exceptions), topo.inventory.enum_blocks)
    if drain:
        from imsdr.dns.drain import resolve_drain

        resolve_drain(topo, drain)  # unknown ids: usage error before any analysis
    return Pipeline(str(path), topo, Analysis(topo), Analyses(), drain=drain, stages=stages)


def run_analyses(pipe: Pipeline, *, today: dt.date | None = None, fail_on: str = "error",
                 tree: PlanTree | None = None) -> None:
    """Every analysis the renderers read, in order; with ``tree.children``, the parts of the tree
    that need no more than what is computed so far are started in forked children (:class:`PlanTree`)."""
    from imsdr.analysis import cyclic_gc_paused

    with cyclic_gc_paused():  # the model, plan records and checks: none garbage
        _run_analyses(pipe, today, fail_on, tree if tree is not None and tree.children is not None else None)


def _run_analyses(pipe: Pipeline, today: dt.date | None, fail_on: str, forking: PlanTree | None) -> None:
    from imsdr.dns.lint import PlanLint
    from imsdr.dns.plan import build_dns_plan
    from imsdr.runbook.verification import dns_checks, dns_servers

    topo, analyses, stages = pipe.topology, pipe.analyses, pipe.stages
    if forking is not None:
        from imsdr.output.beside import Beside

        assert forking.children is not None
        forking.availability = forking.children.enter_context(
            Beside(lambda: _availability_and_diameter(pipe, forking.root),
                   "computing the availability report and writing diameter/"))
    with stages.stage("DNS plan"):
        pipe.dns_plan = build_dns_plan(topo)
        pipe.dns_lint = PlanLint(pipe.dns_plan)
    with stages.stage("check"):
        pipe.check_report, pipe.raw["check"] = _check(pipe.analysis, today, fail_on, pipe.dns_lint)
        analyses.findings = findings_from_dict(topo, pipe.raw["check"], today)
        analyses.verdicts["check"] = _check_verdict(pipe.raw["check"])
    with stages.stage("capacity"):
        _capacity(pipe)
    if forking is not None:  # (monitoring/ reads the capacity report; dns/ the lint the check filled)
        forking.dns = forking.children.enter_context(
            Beside(lambda: _dns_and_monitoring(pipe, forking), "writing dns/ and monitoring/"))
    with stages.stage("scenarios"):
        _scenarios(pipe)

    with stages.stage("runbook checks and actions"):
        analyses.dns_checks = dns_checks(topo, pipe.dns_plan)
        analyses.dns_servers = dns_servers(topo)
        from imsdr.runbook.actions import build_actions

        analyses.actions = build_actions(topo, pipe.dns_plan, analyses.dns_checks, Path(pipe.inventory_path).name,
                                         analyses.element_failures, analyses.site_failures)


def _availability_and_diameter(pipe: Pipeline, root: Path) -> dict[str, Any]:
    from imsdr.output.atomic import WrittenDigests

    pages = availability_pages(pipe)
    written = WrittenDigests()  # (the child's own: its rows go back to the parent)
    _write_diameter(pipe, root / "diameter", written)
    return {"pages": pages, "digests": written.rows()}


def _dns_and_monitoring(pipe: Pipeline, tree: PlanTree) -> dict[str, Any]:
    from imsdr.output.atomic import WrittenDigests

    written = WrittenDigests()
    _write_dns_and_monitoring(pipe, tree.root, tree.previous, written, SILENT)  # (stages: the parent's)
    return {"dns_summary": pipe.raw["dns_summary"], "digests": written.rows()}


def _check_verdict(raw: dict[str, Any]) -> str:
    counts = raw.get("counts", {})
    text = "pass" if raw.get("passed") else "fail"
    return (f"{text} ({counts.get('error', 0)} errors, {counts.get('warning', 0)} warnings, "
            f"{counts.get('waived', 0)} waived)")


def runbook_pages_text(pipe: Pipeline, templates_dir: Path | None = None,
                       limits: TemplateLimits | None = None) -> dict[str, str]:
    from imsdr.analysis import cyclic_gc_paused
    from imsdr.output.headroom_svg import headroom_svg
    from imsdr.runbook import runbook_pages
    from imsdr.runbook.render import render_pages
    from imsdr.runbook.split import province_pages

    with cyclic_gc_paused():  # ~100,000 rows over the whole model, none garbage
        context = build_context(pipe.topology, pipe.analyses, inventory_name=Path(pipe.inventory_path).name)
        split = province_pages(pipe.topology, pipe.analyses, context)  # national: one page per province
    pages = render_pages(runbook_pages(context, split), context, templates_dir, limits)
    if "capacity.md" in pages:  # its picture (the page shows it: templates/capacity.md.j2)
        pages[HEADROOM_PICTURE] = headroom_svg(pipe.analysis.capacity)
    return pages


HEADROOM_PICTURE = "capacity-headroom.svg"


def render_tree(pipe: Pipeline, tree: PlanTree, *, templates_dir: Path | None = None,
                limits: TemplateLimits | None = None) -> dict[str, Any]:
    """Write dns/, runbooks/, diameter/, monitoring/ and plan.json under ``tree.root`` (a fresh
    directory); return plan.json's data.

    The parts that :func:`run_analyses` started in children (``plan --jobs 2``) are collected,
    the rest written here; the files are the same either way. In one process the runbooks come
    first: a template error stops the run before dns/ is written."""
    from imsdr.output.atomic import WrittenDigests
    from imsdr.runbook.render import write_pages

    stages, root = pipe.stages, tree.root
    digests = WrittenDigests()  # every file hashed as it is written, for plan.json
    with stages.stage("availability"):
        if tree.availability is not None:
            done = tree.availability.result()
            availability, diameter_rows = done["pages"], done["digests"]
        else:
            availability, diameter_rows = availability_pages(pipe), None
    with stages.stage("runbook pages"):
        pages = runbook_pages_text(pipe, templates_dir, limits)  # render first: a template error writes nothing
    with stages.stage("writing runbooks/"):
        write_pages(root / "runbooks", {**pages, **availability}, digests)
    if tree.dns is None:
        with stages.stage("writing diameter/"):
            _write_diameter(pipe, root / "diameter", digests)
        _write_dns_and_monitoring(pipe, root, tree.previous, digests, stages)
    else:
        with stages.stage("dns/, monitoring/ and diameter/ (written alongside)"):
            done = tree.dns.result()
            pipe.raw["dns_summary"] = done["dns_summary"]
            digests.add_rows(done["digests"])
            digests.add_rows(diameter_rows or [])
    with stages.stage("writing plan.json"):
        summary = plan_summary(pipe, root, digests)
        (root / "plan.json").write_text(dumps(summary), encoding="utf-8", newline="\n")
    return summary


def _write_dns_and_monitoring(pipe: Pipeline, root: Path, previous: Path | None, digests: WrittenDigests,
                              stages: Stages) -> None:
    with stages.stage("writing dns/"):
        _write_dns(pipe, root / "dns", previous / "dns" if previous is not None else None, digests)
    with stages.stage("writing monitoring/"):
        _write_monitoring(pipe, root / "monitoring", digests)


def availability_pages(pipe: Pipeline) -> dict[str, str]:
    """runbooks/availability.md and its chart availability.svg, from the run's availability report."""
    from imsdr.output.availability import availability_markdown, availability_svg

    report = pipe.analysis.availability
    return {"availability.md": availability_markdown(report, chart="availability.svg"),
            "availability.svg": availability_svg(report)}


def _write_diameter(pipe: Pipeline, directory: Path, digests: WrittenDigests | None = None) -> None:
    """diameter/<client>/freeDiameter.conf, rt_default.conf (and cdp.xml for a CSCF) for every
    Diameter client and DRA, and diameter/dict_ims_cxsh.c (the Cx/Sh applications) once; drained
    servers (``plan --drain``) are scored NO_DELIVERY."""
    from imsdr.diameter import EXTENSION_SOURCE, extension_source, iter_diameter_configs
    from imsdr.output.atomic import safe_join, write_text

    drained: tuple[str, ...] = ()
    if pipe.drain:
        from imsdr.dns.drain import resolve_drain

        drained = resolve_drain(pipe.topology, pipe.drain)
    written = False
    made: set[Path] = set()  # directories created: one mkdir per client, not one per file
    for config in iter_diameter_configs(pipe.topology, drained):
        if not written:
            directory.mkdir(parents=True, exist_ok=True)
            write_text(safe_join(directory, EXTENSION_SOURCE), extension_source(), digests)
            written = True
        for name, text in config.files.items():
            path = safe_join(directory, f"{config.client}/{name}")
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            write_text(path, text, digests)


def _write_monitoring(pipe: Pipeline, directory: Path, digests: WrittenDigests | None = None) -> None:
    """monitoring/: the Prometheus rules derived from this run's analysis (imsdr.monitoring)."""
    from imsdr.monitoring.render import monitoring_files
    from imsdr.output.atomic import safe_join, write_text

    directory.mkdir(parents=True, exist_ok=True)
    for name, text in sorted(monitoring_files(pipe.analysis, dns_plan=pipe.dns_plan).items()):
        write_text(safe_join(directory, name), text, digests)


def plan_summary(pipe: Pipeline, root: Path, digests: WrittenDigests | None = None) -> dict[str, Any]:
    """plan.json: verdicts, counts and every file written with its SHA-256 (keys documented).

    ``digests``: the files' SHA-256 taken while they were written; a file not in it (or changed
    since) is read and hashed."""
    topo = pipe.topology
    check = pipe.raw.get("check", {})
    files = [{"path": rel, "bytes": info.st_size,
              "sha256": (digests.digest_of(info) if digests is not None else None) or _sha256(Path(full))}
             for rel, full, info in _tree_files(root) if rel != "plan.json"]
    return {
        "format": f"imsdr.plan/{PLAN_JSON_VERSION}",
        "inventory": Path(pipe.inventory_path).name,
        "network": topo.network.name,
        "counts": {
            "sites": len(topo.sites),
            "local_networks": len(topo.local_networks),
            "elements": len(topo.elements),
            "groups": len(topo.groups),
        },
        "check": {
            "passed": check.get("passed"),
            "fail_on": check.get("fail_on"),
            "counts": check.get("counts"),
            "failing": [f"{f['rule']}: {f['message']}" for f in check.get("findings", [])
                        if f["severity"] in _levels_at_or_above(check.get("fail_on", "error"))],
        },
        "capacity": pipe.raw.get("capacity_summary"),
        "scenarios": pipe.raw.get("scenarios_summary"),
        "dns": pipe.raw.get("dns_summary"),
        # the busiest element of each type normally and with each site or region lost: what
        # `plan --check` compares to show headroom and load changes
        "headroom": [{"scenario": c.scenario, "element_type": c.element_type, "unit": c.unit,
                      "element": c.element, "utilisation": c.utilisation, "limit": c.limit, "load": c.load}
                     for c in pipe.analysis.capacity.headroom],
        "element_headroom": [{"element": e.id, "element_type": e.element_type, "unit": e.unit,
                              "capacity": e.capacity, "load": e.load, "utilisation": e.utilisation,
                              "worst_utilisation": e.worst_utilisation, "worst_scenario": e.worst_scenario,
                              "limit": e.limit} for e in pipe.analysis.capacity.element_headroom],
        "runbooks": sorted(f["path"] for f in files if f["path"].startswith("runbooks/")),
        "files": files,
        "passed": plan_passed(pipe),
    }


def _levels_at_or_above(fail_on: str) -> tuple[str, ...]:
    return {"error": ("error",), "warning": ("error", "warning"),
            "info": ("error", "warning", "info")}.get(fail_on, ())


def plan_passed(pipe: Pipeline) -> bool:
    """The plan's gate: checks (CAP- capacity findings included) pass at --fail-on."""
    return bool(pipe.raw.get("check", {}).get("passed", True))


def _tree_files(root: Path) -> list[tuple[str, str, os.stat_result]]:
    """(relative posix path, path, stat) of every regular file under ``root``, in path order (as
    sorted Paths: part by part), with one stat per file."""
    import stat

    found: list[tuple[list[str], str, str, os.stat_result]] = []
    for dirpath, _dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            full = os.path.join(dirpath, name)
            info = os.stat(full)
            if stat.S_ISREG(info.st_mode):
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                found.append((rel.split("/"), rel, full, info))
    found.sort(key=lambda f: f[0])
    return [(rel, full, info) for _, rel, full, info in found]


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_plan(path: str | os.PathLike[str], out: Path | OutputTarget, *, fail_on: str = "error",
               today: dt.date | None = None, templates_dir: Path | None = None,
               limits: TemplateLimits | None = None, drain: tuple[str, ...] = (),
               stages: Stages = SILENT, enum_exceptions: Path | None = None, jobs: int = 1) -> dict[str, Any]:
    """Run the whole pipeline and replace ``out`` atomically; return plan.json's data (``jobs`` 2
    or more: parts of the tree are written by forked children, :class:`PlanTree`)."""
    from imsdr.output.atomic import as_target, atomic_directory

    pipe = load_pipeline(path, drain=drain, stages=stages, enum_exceptions=enum_exceptions)
    target = as_target(out)
    with atomic_directory(target) as staging, contextlib.ExitStack() as children:
        previous = target.path
        tree = PlanTree(staging, previous if previous.is_dir() else None, children if jobs > 1 else None)
        run_analyses(pipe, today=today, fail_on=fail_on, tree=tree)
        return render_tree(pipe, tree, templates_dir=templates_dir, limits=limits)


@dataclass
class TreeDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    diff: str = ""
    review: PlanReview | None = None  # per view and record (imsdr.output.plan_review)
    not_regular: dict[str, str] = field(default_factory=dict)  # committed entry -> what it is (never read)

    @property
    def clean(self) -> bool:
        return not (self.added or self.removed or self.changed)


MAX_DIFF_LINES_PER_FILE = 400
MAX_REVIEW_BYTES = 512 << 20  # a committed file read for its diff or review (ENUM zones: ~100 MB each)


def check_plan(
    path: str | os.PathLike[str], out: Path, *, fail_on: str = "error",
    today: dt.date | None = None, templates_dir: Path | None = None, limits: TemplateLimits | None = None,
    drain: tuple[str, ...] = (), stages: Stages = SILENT, enum_exceptions: Path | None = None,
    jobs: int = 1,
) -> tuple[dict[str, Any], TreeDiff]:
    """Render into a temporary directory and compare with ``out`` (nothing in ``out`` changes).

    The committed tree ``out`` is untrusted input (a pull request may hold anything): it is
    listed and read only through :class:`imsdr.untrusted.UntrustedTree`, so a link or any other
    entry that is not a regular file is a changed file that is never read, and nothing outside
    the tree reaches the diff or the review. Its DNS tree gives the SOA serials of unchanged zones
    only when it holds nothing but regular files.
    """
    from imsdr.untrusted import UntrustedTree

    pipe = load_pipeline(path, drain=drain, stages=stages, enum_exceptions=enum_exceptions)
    out = Path(out)
    with contextlib.ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="imsdr-plan-check-"))
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        fresh = tmp / "plan"
        fresh.mkdir()
        old = stack.enter_context(UntrustedTree(out, str(out)))
        children = stack.enter_context(contextlib.ExitStack())  # (stopped before the tree is removed)
        tree = PlanTree(fresh, _trusted_previous(old, out), children if jobs > 1 else None)
        run_analyses(pipe, today=today, fail_on=fail_on, tree=tree)
        summary = render_tree(pipe, tree, templates_dir=templates_dir, limits=limits)
        with stages.stage(f"comparing with {out}"), UntrustedTree(fresh, str(out)) as new:
            diff = _diff(old, new, str(out))
            diff.review = review(old, new, diff.added, diff.removed, diff.changed, diff.not_regular)
        return summary, diff


def _trusted_previous(old: UntrustedTree, out: Path) -> Path | None:
    """The committed tree as the DNS renderer's previous output (SOA serials of unchanged zones),
    or None when its dns/ part holds anything but regular files (the renderer reads it by path)."""
    dns = [info for rel, info in old.entries.items() if rel.startswith("dns/")]
    if not dns or any(not stat.S_ISREG(info.st_mode) for info in dns):
        return None
    return out


def diff_trees(old_root: Path, new_root: Path, *, label: str) -> TreeDiff:
    """Unified diff of ``old_root`` (what is on disk) → ``new_root`` (what the plan renders)."""
    from imsdr.untrusted import UntrustedTree

    with UntrustedTree(old_root, label) as old, UntrustedTree(new_root, label) as new:
        return _diff(old, new, label)


def _files(tree: UntrustedTree) -> dict[str, os.stat_result]:
    from imsdr.output.atomic import MARKER

    return {rel: info for rel, info in tree.entries.items() if rel.rpartition("/")[2] != MARKER}


def _diff(old_tree: UntrustedTree, new_tree: UntrustedTree, label: str) -> TreeDiff:
    from imsdr.untrusted import kind_of

    old, new = _files(old_tree), _files(new_tree)
    result = TreeDiff()
    chunks: list[str] = []
    for rel in sorted(set(old) | set(new)):
        a, b = old.get(rel), new.get(rel)
        name = f"{label}/{rel}"
        if a is not None and not stat.S_ISREG(a.st_mode):
            result.not_regular[rel] = kind_of(a)
            (result.changed if b is not None else result.removed).append(rel)
            chunks.append(f"{name}: not a regular file ({kind_of(a)}); not read\n")
            continue
        if a is not None and b is not None:
            if _same_bytes(old_tree, new_tree, rel):
                continue
            result.changed.append(rel)
        elif a is None:
            result.added.append(rel)
        else:
            result.removed.append(rel)
        chunks.append(_file_diff(old_tree if a is not None else None, new_tree if b is not None else None,
                                 rel, name))
    result.diff = "".join(chunks)
    return result


def _same_bytes(a: UntrustedTree, b: UntrustedTree, rel: str) -> bool:
    """Whether ``rel`` holds the same bytes in both trees, read 1 MiB at a time (ENUM zones are
    ~100 MB each); an entry that cannot be opened as a regular file differs."""
    from imsdr.untrusted import UntrustedFile

    try:
        fa, ia = a.open(rel)
    except UntrustedFile:
        return False
    try:
        fb, ib = b.open(rel)
        try:
            if ia.st_size != ib.st_size:
                return False
            while True:
                chunk = os.read(fa, 1 << 20)
                if chunk != _read_exactly(fb, len(chunk) or 1):
                    return False
                if not chunk:
                    return True
        finally:
            os.close(fb)
    finally:
        os.close(fa)


def _read_exactly(fd: int, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        chunk = os.read(fd, size - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _lines(tree: UntrustedTree | None, rel: str) -> list[str]:
    from imsdr.untrusted import UntrustedFile

    if tree is None:
        return []
    try:
        data = tree.read(rel, MAX_REVIEW_BYTES)
    except UntrustedFile as exc:
        return [f"<not read: {exc.reason}>\n"]
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return [f"<binary file, {len(data)} bytes>\n"]


def _file_diff(a: UntrustedTree | None, b: UntrustedTree | None, rel: str, name: str) -> str:
    lines = list(difflib.unified_diff(_lines(a, rel), _lines(b, rel), fromfile=name if a else "/dev/null",
                                      tofile=name if b else "/dev/null"))
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    if len(lines) > MAX_DIFF_LINES_PER_FILE:
        hidden = len(lines) - MAX_DIFF_LINES_PER_FILE
        lines = lines[:MAX_DIFF_LINES_PER_FILE] + [f"... {hidden} more diff lines for {name}\n"]
    return "".join(lines)
