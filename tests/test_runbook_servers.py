"""In a hierarchy every runbook query asks a server that holds the view it is asked from.

A province's views live on its own ENUM/DNS servers only, so a `dig @SERVER -b SOURCE` whose
server belongs to another province lands in that server's default view and fails during an
outage for no reason. Checked on the rendered pages against the rendered named.conf files."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.dns.plan import build_dns_plan
from imsdr.plan import load_topology

runner = CliRunner()
DIG = re.compile(r"dig(?: -p \d+)? @(\S+) -b (\S+) ")


def test_every_query_of_the_runbooks_asks_a_server_holding_its_view(tmp_path: Path) -> None:
    three = tmp_path / "three.yaml"
    made = runner.invoke(app, ["example", "national", "--provinces", "3", "--local-networks-per-province", "2",
                               "--sites-per-province", "2", "--enum-numbers", "1000"])
    assert made.exit_code == 0, made.stderr
    three.write_text(made.stdout)
    out = tmp_path / "plan"
    done = runner.invoke(app, ["plan", str(three), "--out", str(out)])
    assert done.exit_code in (0, 1), done.stderr
    views_of: dict[str, set[str]] = {}  # server address -> the views of its named.conf
    for conf in (out / "dns" / "named").glob("*.conf"):
        text = conf.read_text()
        address = re.search(r"^// named\.conf fragment for \S+ \(\S+, (\S+)\)", text, re.M)
        assert address, conf
        views_of[address.group(1)] = set(re.findall(r'^view "([^"]+)"', text, re.M))
    plan = build_dns_plan(load_topology(three), lazy=True)
    asked: dict[str, set[str]] = {}  # server -> views asked of it
    for page in (out / "runbooks").glob("*.md"):
        for server, source in DIG.findall(page.read_text()):
            view = plan.view_for_client(source).name
            assert view in views_of[server], (page.name, server, source, view)
            asked.setdefault(server, set()).add(view)
    areas = {frozenset(views) for views in views_of.values()}
    assert len(areas) > 2  # the national pair and the provinces' own
    # the queries reach more than one province's servers, each with its own province's views
    assert len({frozenset(views_of[server]) for server in asked}) >= 3, asked
