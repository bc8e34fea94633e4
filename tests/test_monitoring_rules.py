"""promtool's own rule evaluator on every alert family of the live rules (``dns.rules.yml``,
``sip.rules.yml``, ``diameter.rules.yml``) rendered for the lab and province samples: each alert
fires exactly when the planned condition has held for the planned time, and one unit (a step of
the series, or one second of its ``for``) earlier it is silent.

* ImsdrDnsDrift: drift 0 → silent, 1 → fires at once (``for: 0s``).
* ImsdrDnsSerialsDiffer: two servers answering different serials fire after SOA refresh + retry
  (4,200 s), not at 4,199 s; equal serials never fire.
* ImsdrDispatcherDestinationDown: the planned destination in service → silent; out of service
  (Kamailio's ``IP``) → fires at the first evaluation; ``TP`` (trying) counts as in service.
* ImsdrDiameterPeerNotOpen: a peer the plan expects open, closed at t: fires at t + 2 × Tw, not one
  second before; a peer whose series is missing fires 2 × Tw after the start.

The dispatcher and Diameter rules join the live series with the plan's expectation series
(imsdr.monitoring.expected, what the exporter publishes); the tests feed those series too.
* ImsdrDispatcherStateUnknown, ImsdrDnsViewNotMonitored, ImsdrVerifyFailed: after 5 minutes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from imsdr.analysis import Analysis
from imsdr.monitoring.live_rules import DIAMETER_FILE, DNS_FILE, SIP_FILE, transfer_seconds
from imsdr.monitoring.render import monitoring_files
from imsdr.plan import load_topology
from imsdr.runbook.alerts import expected_open_peers

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = [ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "province.yaml"]


@pytest.fixture(scope="module", params=INVENTORIES, ids=lambda p: p.stem)
def rendered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    topology = load_topology(request.param)
    files = monitoring_files(Analysis(topology))
    out = tmp_path_factory.mktemp("rules")
    for name in (DNS_FILE, SIP_FILE, DIAMETER_FILE):
        (out / name).write_text(files[name])
    rules = {name: [r for g in yaml.safe_load(files[name])["groups"] for r in g["rules"]]
             for name in (DNS_FILE, SIP_FILE, DIAMETER_FILE)}
    return {"topology": topology, "dir": out, "rules": rules}


def _expand(text: str, labels: dict[str, str], value: float) -> str:
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)
    return text.replace("{{ $value }}", f"{value:g}")


def _alert(rule: dict[str, Any], series_labels: dict[str, str], value: float) -> dict[str, Any]:
    labels = {**series_labels, **rule["labels"]}
    return {"exp_labels": {"alertname": rule["alert"], **labels},
            "exp_annotations": {k: _expand(v, labels, value) for k, v in rule["annotations"].items()}}


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def _promtool(rendered: dict[str, Any], name: str, tests: list[dict[str, Any]], interval: str) -> None:
    directory: Path = rendered["dir"]
    test_file = directory / f"{name}.test.yml"
    test_file.write_text(yaml.safe_dump({"rule_files": [name], "evaluation_interval": interval, "tests": tests},
                                        sort_keys=False))
    done = subprocess.run(["promtool", "test", "rules", test_file.name], cwd=directory, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


def _by_name(rendered: dict[str, Any], file: str, alert: str) -> list[dict[str, Any]]:
    return [r for r in rendered["rules"][file] if r.get("alert") == alert]


def test_dns_drift_fires_on_the_first_difference(rendered: dict[str, Any]) -> None:
    rules = _by_name(rendered, DNS_FILE, "ImsdrDnsDrift")
    assert rules and rules[0]["for"] == "0s"
    tests = []
    for rule in rules:
        labels = {"server": rule["labels"]["server"], "view": "users-x"}
        tests.append({"interval": "1m", "input_series": [_series("imsdr_dns_drift", labels, "0 0 1 1"),
                                                          _series("imsdr_dns_drift", {"server": "not-planned",
                                                                                      "view": "users-x"}, "5x3")],
                      "alert_rule_test": [
                          {"eval_time": "1m", "alertname": "ImsdrDnsDrift", "exp_alerts": []},
                          {"eval_time": "2m", "alertname": "ImsdrDnsDrift", "exp_alerts": [_alert(rule, labels, 1)]}]})
    _promtool(rendered, DNS_FILE, tests, "1m")


def test_serials_differing_fire_after_the_planned_transfer_time(rendered: dict[str, Any]) -> None:
    (rule,) = _by_name(rendered, DNS_FILE, "ImsdrDnsSerialsDiffer")
    seconds = transfer_seconds()
    assert rule["for"] == f"{seconds}s" and seconds == 3600 + 600
    steps = seconds + 10
    zone = {"view": "users-x", "zone": "ims.example.net"}
    skewed = [_series("imsdr_dns_soa_serial", {"server": "a", **zone}, f"5x{steps}"),
              _series("imsdr_dns_soa_serial", {"server": "b", **zone}, f"6x{steps}")]
    same = [_series("imsdr_dns_soa_serial", {"server": s, "view": "v", "zone": "z"}, f"7x{steps}") for s in "ab"]
    tests = [{"interval": "1s", "input_series": skewed + same, "alert_rule_test": [
        {"eval_time": f"{seconds - 1}s", "alertname": rule["alert"], "exp_alerts": []},
        {"eval_time": f"{seconds}s", "alertname": rule["alert"], "exp_alerts": [_alert(rule, zone, 6)]}]}]
    _promtool(rendered, DNS_FILE, tests, "1s")


def test_unmonitored_views_and_failed_checks_fire_after_five_minutes(rendered: dict[str, Any]) -> None:
    (view,) = _by_name(rendered, DNS_FILE, "ImsdrDnsViewNotMonitored")
    (failed,) = _by_name(rendered, DNS_FILE, "ImsdrVerifyFailed")
    tests = [{"interval": "1m", "input_series": [
        _series("imsdr_dns_view_checked", {"view": "users-x"}, "0x10"),
        _series("imsdr_dns_view_checked", {"view": "core-y"}, "1x10"),
        {"series": "imsdr_verify_success", "values": "0x10"}], "alert_rule_test": [
        {"eval_time": "4m", "alertname": view["alert"], "exp_alerts": []},
        {"eval_time": "5m", "alertname": view["alert"], "exp_alerts": [_alert(view, {"view": "users-x"}, 0)]},
        {"eval_time": "4m", "alertname": failed["alert"], "exp_alerts": []},
        {"eval_time": "5m", "alertname": failed["alert"], "exp_alerts": [_alert(failed, {}, 0)]}]}]
    _promtool(rendered, DNS_FILE, tests, "1m")


def _planned(rendered: dict[str, Any], steps: int) -> tuple[list[Any], list[dict[str, str]]]:
    from imsdr.monitoring.expected import planned_destinations

    planned = planned_destinations(rendered["topology"])
    return planned, [_series("imsdr_dispatcher_destination_planned",
                             {"source": d.source, "element": d.element, "page": d.page, "detection_s": d.detection_s},
                             f"1x{steps}") for d in planned]


def test_a_destination_out_of_service_fires_and_trying_does_not(rendered: dict[str, Any]) -> None:
    """For every planned destination: in service (AP, then TP) silent, IP fires at once, with the
    alert of its runbook page; a destination the plan does not have never fires."""
    planned, plan_series = _planned(rendered, 10)
    rules = {(r["annotations"]["runbook_url"], r["expr"]): r
             for r in _by_name(rendered, SIP_FILE, "ImsdrDispatcherDestinationDown")}
    assert len(rules) == len({(d.page, d.detection_s) for d in planned})
    tests = []
    for d in planned:
        (rule,) = [r for (url, expr), r in rules.items() if url == f"../runbooks/{d.page}#declare"
                   and f'detection_s="{d.detection_s}"' in expr]
        live = {"source": d.source, "element": d.element, "setid": "1", "destination": "sip:192.0.2.1:5060"}
        stranger = {**live, "element": "not-planned", "state": "IP"}
        tests.append({"interval": "1m", "input_series": [
            *plan_series,
            _series("imsdr_dispatcher_destination_up", {**live, "state": "AP"}, "1 1 _ _ _ _"),
            _series("imsdr_dispatcher_destination_up", {**live, "state": "TP"}, "_ _ 1 _ _ _"),
            _series("imsdr_dispatcher_destination_up", {**live, "state": "IP"}, "_ _ _ 0 0 0"),
            _series("imsdr_dispatcher_destination_up", stranger, "0x5")],
            "alert_rule_test": [
                {"eval_time": "2m", "alertname": rule["alert"], "exp_alerts": []},
                {"eval_time": "3m", "alertname": rule["alert"], "exp_alerts": [_alert(rule, {
                    **live, "state": "IP", "page": d.page, "detection_s": d.detection_s}, 0)]}]})
    _promtool(rendered, SIP_FILE, tests, "1m")


def test_an_unscraped_dispatcher_source_fires_after_five_minutes(rendered: dict[str, Any]) -> None:
    (rule,) = _by_name(rendered, SIP_FILE, "ImsdrDispatcherStateUnknown")
    planned, _ = _planned(rendered, 10)
    sources = list(dict.fromkeys(d.source for d in planned))
    tests = []
    for source in sources:
        series = [_series("imsdr_dispatcher_source_planned", {"source": s}, "1x10") for s in sources]
        series += [_series("imsdr_dispatcher_scrape_ok", {"source": s}, "1x10") for s in sources if s != source]
        tests.append({"interval": "1m", "input_series": series, "alert_rule_test": [
            {"eval_time": "4m", "alertname": rule["alert"], "exp_alerts": []},
            {"eval_time": "5m", "alertname": rule["alert"], "exp_alerts": [_alert(rule, {"source": source}, 1)]}]})
    _promtool(rendered, SIP_FILE, tests, "1m")


def test_a_missing_diameter_peer_fires_after_two_watchdog_intervals(rendered: dict[str, Any]) -> None:
    from imsdr.monitoring.expected import expected_peers

    topology = rendered["topology"]
    expected = expected_peers(topology)
    assert [(p.client, p.peer) for p in expected] == [(c.id, p.id) for c, p in expected_open_peers(topology)]
    assert expected
    rules = _by_name(rendered, DIAMETER_FILE, "ImsdrDiameterPeerNotOpen")
    plan_series = [_series("imsdr_diameter_peer_expected", {"client": p.client, "peer": p.peer, "page": p.page,
                                                            "for_s": str(p.for_s)}, "1x60") for p in expected]
    tests = []
    for me in expected:
        client = topology.elements[me.client]
        tw2 = 2 * int(client.timers.diameter_watchdog or topology.network.timers.diameter_watchdog)  # the inventory's
        (rule,) = [r for r in rules if r["annotations"]["runbook_url"] == f"../runbooks/{me.page}#declare"
                   and r["for"] == f"{tw2}s"]
        labels = {"client": me.client, "peer": me.peer, "page": me.page, "for_s": str(tw2)}
        others = [_series("imsdr_diameter_peer_open", {"client": p.client, "peer": p.peer}, "1x60") for p in expected
                  if p != me]
        closed_at = 10
        series = _series("imsdr_diameter_peer_open", {"client": me.client, "peer": me.peer},
                         f"1x{closed_at - 1} 0x50")
        tests.append({"interval": "1s", "input_series": [*plan_series, *others, series], "alert_rule_test": [
            {"eval_time": f"{closed_at + tw2 - 1}s", "alertname": rule["alert"], "exp_alerts": []},
            {"eval_time": f"{closed_at + tw2}s", "alertname": rule["alert"], "exp_alerts": [_alert(rule, labels, 1)]}]})
        tests.append({"interval": "1s", "input_series": [*plan_series, *others], "alert_rule_test": [  # never open
            {"eval_time": f"{tw2 - 1}s", "alertname": rule["alert"], "exp_alerts": []},
            {"eval_time": f"{tw2}s", "alertname": rule["alert"], "exp_alerts": [_alert(rule, labels, 1)]}]})
    _promtool(rendered, DIAMETER_FILE, tests, "1s")
