"""In a hierarchy every runbook query asks, and every drain script reloads, a server that holds
the view concerned.

A province's views live on its own ENUM/DNS servers only, so a `dig @SERVER -b SOURCE` whose
server belongs to another province lands in that server's default view, and an
`rndc reload ZONE IN VIEW` there fails: during an outage, for no reason. Checked on the rendered
pages and scripts against the rendered named.conf files."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.dns.plan import build_dns_plan
from imsdr.plan import load_topology

runner = CliRunner()
DIG = re.compile(r"dig(?: -p \d+)? @(\S+) -b (\S+) ")


def three_provinces(tmp_path: Path) -> Path:
    three = tmp_path / "three.yaml"
    made = runner.invoke(app, ["example", "national", "--provinces", "3", "--local-networks-per-province", "2",
                               "--sites-per-province", "2", "--enum-numbers", "1000"])
    assert made.exit_code == 0, made.stderr
    three.write_text(made.stdout)
    return three


def views_by_server(dns: Path) -> dict[str, tuple[str, set[str]]]:
    """server id -> (its address, the views of its rendered named.conf)."""
    out = {}
    for conf in (dns / "named").glob("*.conf"):
        text = conf.read_text()
        address = re.search(r"^// named\.conf fragment for \S+ \(\S+, (\S+)\)", text, re.M)
        assert address, conf
        out[conf.stem] = (address.group(1), set(re.findall(r'^view "([^"]+)"', text, re.M)))
    return out


def test_every_query_of_the_runbooks_asks_a_server_holding_its_view(tmp_path: Path) -> None:
    three = three_provinces(tmp_path)
    out = tmp_path / "plan"
    done = runner.invoke(app, ["plan", str(three), "--out", str(out)])
    assert done.exit_code in (0, 1), done.stderr
    views_of = dict(views_by_server(out / "dns").values())  # server address -> its views
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


def test_a_drain_reloads_each_view_only_on_the_servers_holding_it(tmp_path: Path) -> None:
    three = three_provinces(tmp_path)
    out = tmp_path / "plan"
    assert runner.invoke(app, ["plan", str(three), "--out", str(out)]).exit_code in (0, 1)
    element = next(line.split("id: ", 1)[1].split(",")[0].strip() for line in three.read_text().splitlines()
                   if "type: pcscf" in line and "id: " in line)
    done = runner.invoke(app, ["plan", str(three), "--out", str(out), "--drain", element])
    assert done.exit_code in (0, 1), done.stderr
    servers = views_by_server(out / "dns")
    reloaded: dict[str, set[str]] = {}
    for script in (out / "dns" / "reload").glob("*.sh"):
        if script.stem not in servers:  # (a Kamailio's dispatcher reload)
            continue
        text = script.read_text()
        assert "rndc reconfig" in text  # every server reads the directory the render left
        views = set(re.findall(r"^out=\$\(rndc reload \S+ IN (\S+) 2>&1\)", text, re.M))
        assert views <= servers[script.stem][1], (script.name, views - servers[script.stem][1])
        reloaded[script.stem] = views
    changed = set().union(*reloaded.values())
    assert changed  # the drain changed some views, and every server holding one reloads it
    assert all(changed & servers[server][1] <= views for server, views in reloaded.items())
    assert any(not views for views in reloaded.values())  # (other provinces' servers reload none)


def test_verify_drain_asks_each_server_only_the_views_it_has(tmp_path: Path) -> None:
    """`imsdr verify --drain` asks each live server the changed answers of its own views: another
    province's server would answer from its default view, a drift that is none."""
    from imsdr.dns.drain import drained_state, first_address
    from imsdr.dns.views import server_areas
    from imsdr.resolve.drain_verify import DrainServer, drain_questions

    three = three_provinces(tmp_path)
    out = tmp_path / "plan"
    assert runner.invoke(app, ["plan", str(three), "--out", str(out)]).exit_code in (0, 1)
    topology = load_topology(three)
    element = next(e.id for e in topology.by_type["pcscf"])
    state = drained_state(topology, (element,))
    areas = server_areas(topology)
    servers = [DrainServer(s.id, first_address(s), 53, areas[s.id]) for s in state.live_servers()]
    questions = drain_questions(state, servers, None)
    rendered = views_by_server(out / "dns")
    assert questions and all(q.view in rendered[q.server.label][1] for q in questions)
    asked = {q.server.label for q in questions}
    holding = {s for s, (_a, views) in rendered.items() if views & {v for v, *_ in state.answers()}}
    assert asked == holding & {s.label for s in servers}  # each server that has a changed view, and only those
