"""imsdr render monitoring: the headroom guards are valid Prometheus rules (promtool check rules),
and promtool's own rule evaluator fires each alert exactly when the members' load is one unit
above the threshold the capacity plan gives, and stays silent one unit below."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from imsdr.analysis import Analysis
from imsdr.cli.app import app
from imsdr.model.topology import Topology
from imsdr.monitoring.headroom import headroom_guards
from imsdr.monitoring.render import HEADROOM_ALERT, HEADROOM_FILE, monitoring_files
from imsdr.plan import load_topology

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = [ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "province.yaml"]
runner = CliRunner()


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module", params=INVENTORIES, ids=lambda p: p.stem)
def rendered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("monitoring") / "monitoring"
    result = runner.invoke(app, ["render", "monitoring", str(request.param), "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    return request.param, out, json.loads(result.stdout)


def test_promtool_accepts_every_rule_file(rendered) -> None:  # type: ignore[no-untyped-def]
    _, out, summary = rendered
    rule_files = [name for name in summary["files"] if name.endswith(".rules.yml")]
    assert rule_files == ["diameter.rules.yml", "dns.rules.yml", "headroom.rules.yml", "sip.rules.yml"]
    for name in rule_files:
        done = promtool("check", "rules", "--lint=all", "--lint-fatal", name, cwd=out)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SUCCESS" in done.stdout


def test_the_scrape_and_probe_configuration_is_accepted(rendered) -> None:  # type: ignore[no-untyped-def]
    """prometheus.yml (every rule file, the exporter job, a blackbox job per view) passes promtool
    check config; blackbox.yml passes the blackbox exporter's own --config.check."""
    _, out, summary = rendered
    assert {"prometheus.yml", "blackbox.yml"} <= set(summary["files"])
    done = promtool("check", "config", "prometheus.yml", cwd=out)
    assert done.returncode == 0 and "SUCCESS: 4 rule files found" in done.stdout, done.stdout + done.stderr
    config = yaml.safe_load((out / "prometheus.yml").read_text())
    modules = yaml.safe_load((out / "blackbox.yml").read_text())["modules"]
    probes = [job for job in config["scrape_configs"] if job["job_name"].startswith("imsdr-dns-probe-")]
    assert sorted(m for job in probes for m in job["params"]["module"]) == sorted(modules)
    blackbox = shutil.which("prometheus-blackbox-exporter") or "blackbox_exporter"
    checked = subprocess.run([blackbox, "--config.file=blackbox.yml", "--config.check"], cwd=out,
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "Config file is ok" in checked.stderr, checked.stderr


def test_every_guard_carries_its_runbook_and_rule(rendered) -> None:  # type: ignore[no-untyped-def]
    inventory, out, summary = rendered
    groups = yaml.safe_load((out / HEADROOM_FILE).read_text())["groups"]
    alerts = [r for g in groups for r in g["rules"] if "alert" in r]
    guards = headroom_guards(Analysis(load_topology(inventory)))
    assert len(alerts) == len(guards) == summary["alerts"][HEADROOM_FILE] > 0
    for alert, guard in zip(alerts, guards, strict=True):
        assert alert["labels"]["check"] == guard.check and alert["labels"]["rule"] == guard.rule
        page, anchor = alert["annotations"]["runbook_url"].removeprefix("../runbooks/").split("#")
        text = (ROOT / "docs" / "sample-runbook" / page).read_text()
        headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("## ")]
        from imsdr.runbook.render import anchor as slug

        assert anchor in {slug(h) for h in headings}, (page, anchor)


def _load(g, loads: dict[tuple[str, str], float]) -> float:  # type: ignore[no-untyped-def]
    return sum(loads.get((m, g.unit), 0.0) for m in set(g.members))


def _firing(guards, loads: dict[tuple[str, str], float]) -> list:  # type: ignore[no-untyped-def]
    """The guards the plan says fire for these current loads (the oracle promtool is held to)."""
    return [g for g in guards if _load(g, loads) * g.utilisation_after / g.planned_load > g.limit]


def _case(guards, loads: dict[tuple[str, str], float]) -> dict:  # type: ignore[no-untyped-def]
    series = [{"series": f'imsdr_element_load{{element="{element}",unit="{unit}"}}',
               "values": f"{value!r}x20"} for (element, unit), value in sorted(loads.items())]
    expected = []
    for g in _firing(guards, loads):
        projected = _load(g, loads) * g.factor
        expected.append({"exp_labels": {"alertname": HEADROOM_ALERT, "severity": "error", "rule": g.rule,
                                        "check": g.check, "kind": g.kind, "element_type": g.element_type},
                         "exp_annotations": None, "_projected": projected})
    return {"interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": "15m", "alertname": HEADROOM_ALERT, "exp_alerts": expected}]}


def test_alerts_fire_one_unit_above_the_threshold_and_not_one_below(rendered, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    inventory, out, _ = rendered
    analysis = Analysis(load_topology(inventory))
    guards = headroom_guards(analysis)
    files = monitoring_files(analysis)
    groups = yaml.safe_load(files[HEADROOM_FILE])["groups"]
    annotations = {r["labels"]["check"]: r["annotations"] for g in groups for r in g["rules"] if "alert" in r}
    tests = []
    for guard in guards:
        first = sorted(set(guard.members))[0]
        for delta in (+1, -1):
            case = _case(guards, {(first, guard.unit): guard.threshold + delta})
            fired = {a["exp_labels"]["check"] for a in case["alert_rule_test"][0]["exp_alerts"]}
            assert (guard.check in fired) == (delta > 0), (guard.check, delta)
            for alert in case["alert_rule_test"][0]["exp_alerts"]:
                projected = alert.pop("_projected")
                expected = dict(annotations[alert["exp_labels"]["check"]])
                expected["summary"] = expected["summary"].replace(
                    "{{ $value | humanizePercentage }}", f"{projected * 100:.4g}%")
                alert["exp_annotations"] = expected
            tests.append(case)
    shutil.copy(out / HEADROOM_FILE, tmp_path / HEADROOM_FILE)
    (tmp_path / "headroom.test.yml").write_text(yaml.safe_dump(
        {"rule_files": [HEADROOM_FILE], "evaluation_interval": "1m", "tests": tests}, sort_keys=False))
    done = promtool("test", "rules", "headroom.test.yml", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


def test_thresholds_are_the_capacity_plans(tmp_path: Path) -> None:
    """By hand, province pcscf-pair-1: 2,100,000 users planned, 70 % on the survivor after losing
    a side, limit 85 % → the guard fires above 2,100,000 × 0.85 / 0.70 = 2,550,000 users."""
    guards = {g.check: g for g in headroom_guards(Analysis(load_topology(INVENTORIES[1])))}
    pair = guards["pair:pcscf-pair-1"]
    assert (pair.planned_load, pair.utilisation_after, pair.limit) == (2_100_000, 0.7, 0.85)
    assert round(pair.threshold) == 2_550_000
    # cscf-pool: 3,300,000 users, 82.5 % after losing two members → 3,300,000 × 0.85 / 0.825 = 3,400,000
    assert round(guards["pool:cscf-pool"].threshold) == 3_400_000


def test_output_is_deterministic_and_atomic(tmp_path: Path) -> None:
    args = ["render", "monitoring", str(INVENTORIES[1]), "--out", str(tmp_path / "m")]
    assert runner.invoke(app, args).exit_code == 0
    first = (tmp_path / "m" / HEADROOM_FILE).read_bytes()
    assert runner.invoke(app, args).exit_code == 0
    assert (tmp_path / "m" / HEADROOM_FILE).read_bytes() == first
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("an operator's file")
    refused = runner.invoke(app, ["render", "monitoring", str(INVENTORIES[1]), "--out", str(mine)])
    assert refused.exit_code == 2 and (mine / "notes.txt").read_text() == "an operator's file"


@pytest.mark.parametrize("url", ["has space/", 'quote"/', "ctl\x1b/", ""])
def test_a_runbook_url_that_would_break_the_rules_is_refused(url: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["render", "monitoring", str(INVENTORIES[0]), "--out", str(tmp_path / "m"),
                                 "--runbook-url", url])
    assert result.exit_code == 2 and "--runbook-url" in result.stderr
    assert not (tmp_path / "m").exists()


def test_topology_is_not_rebuilt_for_monitoring() -> None:
    """One model: the guards read the run's Analysis (its capacity report), nothing of their own."""
    topology = load_topology(INVENTORIES[1])
    analysis = Analysis(topology)
    report = analysis.capacity
    assert headroom_guards(analysis)[0].planned_load == report.pools[0].load
    assert isinstance(topology, Topology)


def test_each_declare_step_names_an_alert_that_is_rendered_and_links_back(rendered) -> None:  # type: ignore[no-untyped-def]
    """The Declare table's last column names alerts (with their labels) that exist in the rendered
    rules, and each such alert's runbook_url is the Declare step of that same page."""
    import re

    inventory, out, _ = rendered
    rules = [r for f in sorted(out.glob("*.rules.yml")) for g in yaml.safe_load(f.read_text())["groups"]
             for r in g["rules"] if "alert" in r]
    pages = {}
    tmp = out.parent / "runbooks"
    done = runner.invoke(app, ["render", "runbook", str(inventory), "--out", str(tmp)])
    assert done.exit_code == 0, done.output
    for page in sorted(tmp.glob("*.md")):
        text = page.read_text()
        if "\n### Declare\n" not in text:
            continue
        declare = text.split("\n### Declare\n", 1)[1].split("\n### ", 1)[0]
        pages[page.name] = re.findall(r"`(Imsdr\w+)\{([^}`]*)\}`", declare)
    named = [(page, alert, dict(re.findall(r'(\w+)="([^"]*)"', labels)))
             for page, found in pages.items() for alert, labels in found]
    assert {alert for _, alert, _ in named} >= {"ImsdrDispatcherDestinationDown", "ImsdrDnsServerDown"}
    from imsdr.monitoring.expected import expected_peers, planned_destinations

    topology = load_topology(inventory)
    # the series the exporter publishes for the plan: a destination's and a peer's alert is the rule of its page
    planned = {("ImsdrDispatcherDestinationDown", d.source, d.element): d.page for d in planned_destinations(topology)}
    planned |= {("ImsdrDiameterPeerNotOpen", p.client, p.peer): p.page for p in expected_peers(topology)}
    for page, alert, labels in named:
        if alert == "ImsdrDnsServerDown":
            matching = [r for r in rules if r["alert"] == alert and r["labels"]["server"] == labels["server"]]
        else:
            key = (alert, labels.get("source") or labels["client"], labels.get("element") or labels["peer"])
            assert planned.get(key) == page, (page, alert, labels)
            matching = [r for r in rules if r["alert"] == alert
                        and f'page="{page}"' in r["expr"]]
        assert matching, (page, alert, labels)
        assert {r["annotations"]["runbook_url"] for r in matching} == {f"../runbooks/{page}#declare"}


def test_the_national_example_passes_promtool_with_lint_fatal(tmp_path: Path) -> None:
    """National scale: every rule file and prometheus.yml pass promtool, duplicate-rule lint fatal
    (one rule per runbook page and detection time must still be one distinct rule each)."""
    national = tmp_path / "national.yaml"
    made = runner.invoke(app, ["example", "national"])
    assert made.exit_code == 0
    national.write_text(made.stdout)
    out = tmp_path / "monitoring"
    assert runner.invoke(app, ["render", "monitoring", str(national), "--out", str(out)]).exit_code == 0
    rule_files = sorted(p.name for p in out.glob("*.rules.yml"))
    done = promtool("check", "rules", "--lint=all", "--lint-fatal", *rule_files, cwd=out)
    assert done.returncode == 0 and done.stdout.count("SUCCESS") == 4, (done.stdout + done.stderr)[-2000:]
    config = promtool("check", "config", "--lint=all", "--lint-fatal", "prometheus.yml", cwd=out)
    assert config.returncode == 0 and "FAILED" not in config.stdout, (config.stdout + config.stderr)[-2000:]
    # runbooks split per province: every alert links to a page and heading that exist
    from imsdr.runbook.render import anchor as slug

    runbooks = tmp_path / "runbooks"
    assert runner.invoke(app, ["render", "runbook", str(national), "--out", str(runbooks)]).exit_code == 0
    headings: dict[str, set[str]] = {}
    for path in runbooks.glob("*.md"):
        headings[path.name] = {slug(line.lstrip("#").strip()) for line in path.read_text().splitlines()
                               if line.startswith("#")}
    links = [r["annotations"]["runbook_url"].removeprefix("../runbooks/").split("#")
             for name in rule_files for g in yaml.safe_load((out / name).read_text())["groups"]
             for r in g["rules"] if "alert" in r]
    assert len(links) > 1000 and any(page.startswith("capacity-") for page, _ in links)
    assert [(page, anchor) for page, anchor in links if anchor not in headings.get(page, set())] == []


def test_probe_files_read_the_views_of_the_dns_plan_they_are_given() -> None:
    """``plan`` hands its run's DNS plan to the probe files (no second plan is built): what they
    list are that plan's views, and the run's full plan gives the files a lazy plan gives."""
    import dataclasses

    from imsdr.dns.plan import build_dns_plan
    from imsdr.monitoring.probes import BLACKBOX_FILE, PROMETHEUS_FILE

    topology = load_topology(INVENTORIES[0])
    analysis = Analysis(topology)
    plan = build_dns_plan(topology)
    assert monitoring_files(analysis, dns_plan=plan) == monitoring_files(analysis)
    kept = plan.views[-1]
    files = monitoring_files(analysis, dns_plan=dataclasses.replace(plan, views=[kept]))
    modules = yaml.safe_load(files[BLACKBOX_FILE])["modules"]
    assert list(modules) == [f"imsdr_dns_{kept.name}"]
    jobs = [j["job_name"] for j in yaml.safe_load(files[PROMETHEUS_FILE])["scrape_configs"]]
    assert jobs == ["imsdr-exporter", f"imsdr-dns-probe-{kept.name}"]


def test_each_view_is_probed_on_the_servers_that_hold_it(tmp_path: Path) -> None:
    """A hierarchy (areas): a province's views live on its own servers only, so prometheus.yml
    probes each view on exactly the servers whose rendered named.conf has it (a probe of a foreign
    server would fail and page for nothing); without areas every server holds every view."""
    import re

    three = tmp_path / "three.yaml"
    made = runner.invoke(app, ["example", "national", "--provinces", "3", "--local-networks-per-province", "2",
                               "--sites-per-province", "2", "--enum-numbers", "1000"])
    assert made.exit_code == 0, made.stderr
    three.write_text(made.stdout)
    for inventory in (three, INVENTORIES[1]):
        out = tmp_path / inventory.stem
        assert runner.invoke(app, ["render", "dns", str(inventory), "--out", str(out / "dns")]).exit_code == 0
        done = runner.invoke(app, ["render", "monitoring", str(inventory), "--out", str(out / "monitoring")])
        assert done.exit_code == 0
        rendered = {conf.stem: set(re.findall(r'^view "([^"]+)"', conf.read_text(), re.M))
                    for conf in (out / "dns" / "named").glob("*.conf")}
        probed: dict[str, set[str]] = {server: set() for server in rendered}
        config = yaml.safe_load((out / "monitoring" / "prometheus.yml").read_text())
        for job in config["scrape_configs"][1:]:
            for target in job["static_configs"]:
                probed[target["labels"]["server"]].add(target["labels"]["view"])
        assert probed == rendered
        if inventory == three:
            assert len({frozenset(views) for views in rendered.values()}) > 1  # (the areas differ)
