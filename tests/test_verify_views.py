"""`verify` without false drift, against two real `named` serving the rendered province views.

* By default every view is checked, each signed with its TSIG key (``--keys``) or from an address
  inside it; the default view, which refuses every name, is asked from the host's own address and
  its REFUSED answers are no drift (before, the host's address landed in the default view and every
  planned name was reported: 55 false drifts on an operator's network).
* Without keys, views no local address reaches are reported as not checked, with the reason.
* ``--from`` narrows the check to the views its addresses pick.
* Two servers, the second with one zone's SOA serial ahead: the zone and both serials are reported
  (exit 1), and nothing else is drift.
* ``--format prometheus`` prints what ``promtool check metrics`` accepts, per server and view.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import named_harness
import pytest
from test_verify_named import make_inventory, render
from typer.testing import CliRunner

from imsdr.cli.app import app

runner = CliRunner()
SKEWED = ("users-harbour", "ims.example.net")


def _bump_serial(zone: Path) -> int:
    lines = zone.read_text().splitlines()
    for i, line in enumerate(lines):
        tokens = line.split()
        if len(tokens) >= 7 and tokens[0] == "@" and tokens[3] == "SOA":
            tokens[6] = str(int(tokens[6]) + 1)
            lines[i] = " ".join(tokens)
            zone.write_text("\n".join(lines) + "\n")
            return int(tokens[6])
    raise AssertionError(f"no SOA line in {zone}")


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("verify-views")
    inventory = make_inventory(tmp)
    out_a = tmp / "dns-a"
    render(inventory, out_a)
    out_b = tmp / "dns-b"
    shutil.copytree(out_a, out_b)
    serial_b = _bump_serial(out_b / "zones" / SKEWED[0] / f"{SKEWED[1]}.zone")
    a = named_harness.start_named(out_a, "named/dns-a-1.conf", probe=("ims.example.net", "SOA"))
    try:
        b = named_harness.start_named(out_b, "named/dns-b-1.conf", probe=("ims.example.net", "SOA"), keys=a.keys)
    except Exception:
        a.stop()
        raise
    try:
        yield {"inventory": inventory, "a": a, "b": b, "serial_b": serial_b}
    finally:
        b.stop()
        a.stop()


def _verify(two: dict[str, Any], *args: str) -> tuple[int, Any, str]:
    result = runner.invoke(app, ["verify", str(two["inventory"]), *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout, result.stderr


def _server(two: dict[str, Any], name: str) -> list[str]:
    return ["--server", f"127.0.0.1:{two[name].port}"]


def _plan_views(inventory: Path) -> list[str]:
    from imsdr.cli.resolve import _plan

    return [v.name for v in _plan(inventory)[1].views]


def test_every_view_is_checked_by_key_and_the_default_view_as_refused(two: dict[str, Any]) -> None:
    code, out, _ = _verify(two, *_server(two, "a"), "--keys", str(two["a"].keys), "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["drift"] == [], report["drift"][:5]
    assert [v["view"] for v in report["views"]] == _plan_views(two["inventory"])
    assert report["unchecked"] == []
    default = next(v for v in report["views"] if v["view"] == "default")
    assert default["key"] is None and default["source"] == "127.0.0.1" and default["checked"] > 100
    signed = [v for v in report["views"] if v["view"] != "default"]
    assert all(v["key"] == f"imsdr-{v['view']}" and v["checked"] > 100 for v in signed)
    # each served view's zones report their live serial; the default view serves none
    assert all(v["serials"] and all(s is not None for s in v["serials"].values()) for v in signed)


def test_views_no_local_address_reaches_are_reported_not_guessed(two: dict[str, Any]) -> None:
    code, out, err = _verify(two, *_server(two, "a"), "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["drift"] == []
    assert [v["view"] for v in report["views"]] == ["default"]
    unchecked = {u["view"]: u["reason"] for u in report["unchecked"]}
    assert set(unchecked) == set(_plan_views(two["inventory"])) - {"default"}
    assert all("--keys" in reason and "not configured on this host" in reason for reason in unchecked.values())
    assert "warning: view users-harbour not checked" in err


def test_from_narrows_to_the_views_its_sources_pick(two: dict[str, Any]) -> None:
    code, out, _ = _verify(two, *_server(two, "a"), "--from", "127.0.0.2", "--from", "127.0.0.4",
                           "--format", "json")
    report = json.loads(out)
    assert code == 0 and [(v["view"], v["source"]) for v in report["views"]] == [
        ("users-harbour", "127.0.0.2"), ("core-site-a", "127.0.0.4")]


def test_a_serial_that_differs_across_servers_is_reported(two: dict[str, Any]) -> None:
    code, out, _ = _verify(two, *_server(two, "a"), *_server(two, "b"), "--keys", str(two["a"].keys),
                           "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["drift"] == [] and not report["ok"]
    a, b = (f"127.0.0.1:{two[n].port}" for n in ("a", "b"))
    assert report["serials_differ"] == [{"view": SKEWED[0], "zone": SKEWED[1],
                                         "serials": {a: two["serial_b"] - 1, b: two["serial_b"]}}]
    table = runner.invoke(app, ["verify", str(two["inventory"]), *_server(two, "a"), *_server(two, "b"),
                                "--keys", str(two["a"].keys), "--format", "text"])
    assert table.exit_code == 1
    assert (f"SOA serial differs across servers: {SKEWED[1]} in view {SKEWED[0]}: {a} {two['serial_b'] - 1}, "
            f"{b} {two['serial_b']}") in table.stdout


def test_prometheus_output_is_accepted_by_promtool(two: dict[str, Any]) -> None:
    code, out, _ = _verify(two, *_server(two, "a"), *_server(two, "b"), "--keys", str(two["a"].keys),
                           "--format", "prometheus")
    assert code == 1  # the skewed serial
    lint = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    b = f"127.0.0.1:{two['b'].port}"
    assert (f'imsdr_dns_soa_serial{{server="{b}",view="{SKEWED[0]}",zone="{SKEWED[1]}"}} '
            f"{two['serial_b']}") in out.splitlines()
    assert f'imsdr_dns_drift{{server="{b}",view="users-harbour"}} 0' in out.splitlines()
    assert "imsdr_verify_success 1" in out.splitlines()
