"""`imsdr graph`: Mermaid (checked by the flowchart validator) and DOT (parsed back by a small
DOT reader below), whole topology and --site; plus the Mermaid validator itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inventory_factory import PROVINCE, province_data, site, topology_from_data
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.output.mermaid_check import check_mermaid, mermaid_blocks, mermaid_errors
from imsdr.output.topology import to_dot, to_mermaid

runner = CliRunner()


@pytest.fixture(scope="module")
def topo() -> Topology:
    return Topology(*load_inventory(PROVINCE))


# --- a small DOT reader (no pydot/graphviz here): strict enough to reject broken output -----------

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<id>[A-Za-z_][A-Za-z0-9_.]*|-?[0-9.]+)|(?P<op>->|[{}\[\]=;,]))'
)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m and m.end() > pos, f"unexpected DOT text at {pos}: {text[pos : pos + 30]!r}"
        out.append(m.group(m.lastgroup))
        pos = m.end()
    return out


def _unquote(tok: str) -> str:
    if tok.startswith('"'):
        return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), tok[1:-1])
    return tok


def parse_dot(text: str) -> dict[str, Any]:
    toks = _tokens(text)
    pos = 0
    graph: dict[str, Any] = {"nodes": {}, "edges": [], "clusters": {}}

    def take(expected: str | None = None) -> str:
        nonlocal pos
        assert pos < len(toks), "unexpected end of DOT text"
        tok = toks[pos]
        assert expected is None or tok == expected, f"expected {expected!r}, got {tok!r} (token {pos})"
        pos += 1
        return tok

    def attrs() -> dict[str, str]:
        out: dict[str, str] = {}
        if pos >= len(toks) or toks[pos] != "[":
            return out
        take("[")
        while toks[pos] != "]":
            key = _unquote(take())
            take("=")
            out[key] = _unquote(take())
            if toks[pos] == ",":
                take(",")
        take("]")
        return out

    def stmts(cluster: str | None) -> None:
        while pos < len(toks) and toks[pos] != "}":
            tok = take()
            if tok in ("graph", "node", "edge"):
                attrs()
            elif tok == "subgraph":
                name = _unquote(take())
                take("{")
                graph["clusters"][name] = {"nodes": [], "label": None}
                stmts(name)
                take("}")
            elif toks[pos] == "=":
                take("=")
                value = _unquote(take())
                if cluster and tok == "label":
                    graph["clusters"][cluster]["label"] = value
            else:
                chain = [_unquote(tok)]
                while toks[pos] == "->":
                    take("->")
                    chain.append(_unquote(take()))
                a = attrs()
                if len(chain) == 1:
                    assert chain[0] not in graph["nodes"], f"node {chain[0]} declared twice"
                    graph["nodes"][chain[0]] = a
                    if cluster:
                        graph["clusters"][cluster]["nodes"].append(chain[0])
                else:
                    graph["edges"].extend((u, v, a) for u, v in zip(chain, chain[1:], strict=False))
            if toks[pos] == ";":
                take(";")

    take("digraph")
    if toks[pos] != "{":
        take()
    take("{")
    stmts(None)
    take("}")
    assert pos == len(toks), "text after the closing brace"
    return graph


# --- Mermaid ---------------------------------------------------------------------------------------


def test_mermaid_province_is_valid_and_complete(topo: Topology) -> None:
    text = to_mermaid(topo)
    assert mermaid_errors(text, require_declared=True) == []
    for site_id, elements in topo.by_site.items():
        block = text.split(f"subgraph site_{site_id.replace('-', '_')}[", 1)[1].split("\n  end", 1)[0]
        for el in elements:
            assert f"el_{el.id.replace('-', '_')}[" in block
    assert text.count(" <-->|") == sum(1 for g in topo.groups.values() if g.kind == "pair")
    dr = re.findall(r"el_(\w+) -\.->\|\"DR\"\| ln_(\w+)", text)
    assert sorted(dr) == sorted(
        (s.id.replace("-", "_"), ln.replace("-", "_")) for ln, s in topo.dr_sbc.items()
    )
    pool_edges = re.findall(r"el_(\w+) --- pool_cscf_pool", text)
    assert sorted(pool_edges) == ["cscf_a_1", "cscf_b_1", "cscf_b_2", "cscf_c_1"]


def test_mermaid_site_view(topo: Topology) -> None:
    text = to_mermaid(topo, "site-b")
    check_mermaid(text, require_declared=True)
    for el in topo.by_site["site-b"]:
        assert f"el_{el.id.replace('-', '_')}[" in text
    assert "el_mgcf_a_1[" in text  # pool peer at another site
    assert "el_hss_a_1[" in text  # pair mate
    # site-b (the whole of region south) holds a member or DR SBC of every group: nothing is left out
    assert text.count("[\"") >= len(topo.elements)
    assert "ln_harbour" in text and "ln_lake" in text


def test_mermaid_escapes_awkward_names(tmp_path: Path) -> None:
    data = province_data()
    site(data, "site-a")["name"] = 'Capital "DC1" #1 (main) [x] | end'
    topo = topology_from_data(data, tmp_path)
    text = to_mermaid(topo)
    assert mermaid_errors(text, require_declared=True) == []
    assert "#quot;DC1#quot; #35;1" in text


def test_mermaid_is_deterministic(topo: Topology, tmp_path: Path) -> None:
    again = Topology(*load_inventory(PROVINCE))
    assert to_mermaid(topo) == to_mermaid(again) and to_dot(topo, "site-c") == to_dot(again, "site-c")


# --- DOT ---------------------------------------------------------------------------------------------


def test_dot_province_parses_and_matches_the_topology(topo: Topology) -> None:
    graph = parse_dot(to_dot(topo))
    for site_id, elements in topo.by_site.items():
        cluster = graph["clusters"][f"cluster_site_{site_id}"]
        assert sorted(cluster["nodes"]) == sorted(f"el:{e.id}" for e in elements)
        assert site_id in cluster["label"] and "\n" in cluster["label"]
    declared = set(graph["nodes"])
    for u, v, _ in graph["edges"]:
        assert u in declared and v in declared, (u, v)
    pairs = {(u, v) for u, v, a in graph["edges"] if a.get("class") == "pair"}
    assert ("el:hss-a-1", "el:hss-b-1") in pairs and len(pairs) == 5
    assert all(a["dir"] == "both" for *_, a in graph["edges"] if a.get("class") == "pair")
    dr = {(u, v) for u, v, a in graph["edges"] if a.get("class") == "dr"}
    assert dr == {(f"el:{s.id}", f"ln:{ln}") for ln, s in topo.dr_sbc.items()}
    access = {(u, v) for u, v, a in graph["edges"] if a.get("class") == "access"}
    assert ("ln:capital", "el:sbc-capital") in access and len(access) == 6
    assert graph["nodes"]["el:sbc-capital"]["label"] == "sbc-capital\nSBC"


def test_dot_escapes_quotes_and_backslashes(tmp_path: Path) -> None:
    data = province_data()
    site(data, "site-b")["name"] = 'Harbour "B" \\ DC'
    graph = parse_dot(to_dot(topology_from_data(data, tmp_path)))
    assert graph["clusters"]["cluster_site_site-b"]["label"].startswith('Harbour "B" \\ DC (site-b)')


def test_dot_reader_rejects_broken_text() -> None:
    with pytest.raises(AssertionError):
        parse_dot('digraph x { "a" -> "b" [label="x"; }')
    with pytest.raises(AssertionError):
        parse_dot('digraph x { "a" [label="x"]; ')


# --- CLI ---------------------------------------------------------------------------------------------


def test_graph_cli_formats_and_site() -> None:
    result = runner.invoke(app, ["graph", str(PROVINCE)])
    assert result.exit_code == 0 and result.stdout.startswith("flowchart LR")
    check_mermaid(result.stdout)
    result = runner.invoke(app, ["graph", str(PROVINCE), "--format", "dot", "--site", "site-a"])
    assert result.exit_code == 0
    graph = parse_dot(result.stdout)
    assert "cluster_site_site-a" in graph["clusters"]


def test_graph_cli_unknown_site_exits_2() -> None:
    result = runner.invoke(app, ["graph", str(PROVINCE), "--site", "site-x"])
    assert result.exit_code == 2 and "unknown site 'site-x'" in result.stderr and result.stdout == ""


# --- the Mermaid validator -------------------------------------------------------------------------

VALID = """\
flowchart LR
  %% a comment
  subgraph s1["Site (one)"]
    direction TB
    a1["A #quot;one#quot;"]
    b_2(["B"])
    c3{{"pool"}}
    d4[(db)]
  end
  a1 --> b_2
  a1 -->|"label (x)"| c3
  b_2 <-.->|pair| d4
  c3 -- text --> a1
  a1 & b_2 --- d4
  d4 ==> a1
  a1 --x b_2
  classDef failed fill:#f8d7da,stroke:#b02a37
  class a1,b_2 failed
  style d4 fill:#fff
"""


def test_validator_accepts_valid_flowchart() -> None:
    assert mermaid_errors(VALID, require_declared=True) == []


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("graph XY\n  a --> b\n", "expected 'flowchart LR'"),
        ('flowchart LR\n  subgraph s["x"]\n  a["a"]\n', "never closed"),
        ('flowchart LR\n  a["a"]\n  end\n', "'end' without an open subgraph"),
        ('flowchart LR\n  end["a"]\n', "reserved word"),
        ("flowchart LR\n  a[un(quoted]\n", "quote the label"),
        ('flowchart LR\n  a["say "hi""]\n', "#quot;"),
        ('flowchart LR\n  a["open\n', "unterminated"),
        ("flowchart LR\n  a --> \n", "expected a node id"),
        ("flowchart LR\n  a -> b\n", "expected an edge operator"),
        ("flowchart LR\n  a -->|x|y| b\n", "expected an edge operator"),
        ('flowchart LR\n  a -->|x| b["b"\n', "must be followed by ]"),
        ("flowchart LR\n  a -->|x| b[b\n", "missing closing"),
        ('flowchart LR\n  subgraph s["x"]\n  end\n  subgraph s["y"]\n  end\n', "already defined"),
        ('flowchart LR\n  subgraph s["x"]\n  end\n  s["node"]\n', "both a subgraph and a node"),
        ('flowchart LR\n  a["a"]\n  class a missing\n', "has no classDef"),
        ('flowchart LR\n  a["a"] --> b\n', None),  # valid unless declarations are required
        ("", "empty diagram"),
    ],
)
def test_validator_rejects(text: str, needle: str | None) -> None:
    errors = [str(e) for e in mermaid_errors(text)]
    if needle is None:
        assert errors == []
        assert any("never declared" in str(e) for e in mermaid_errors(text, require_declared=True))
    else:
        assert any(needle in e for e in errors), errors
        with pytest.raises(ValueError, match="invalid Mermaid flowchart"):
            check_mermaid(text)


def test_mermaid_blocks_from_markdown() -> None:
    md = (
        "# T\n\n```mermaid\nflowchart LR\n  a --> b\n```\n\ntext\n\n"
        "```yaml\nx: 1\n```\n```mermaid\nflowchart TB\n```\n"
    )
    blocks = mermaid_blocks(md)
    assert [line for line, _ in blocks] == [3, 13]  # lines of the opening fences
    assert blocks[0][1] == "flowchart LR\n  a --> b\n"


def test_runbook_topology_diagram_is_valid(topo: Topology) -> None:
    """The runbook's own diagrams use the same subset; the validator accepts them."""
    from imsdr.runbook.diagrams import topology_diagram

    assert mermaid_errors(topology_diagram(topo), require_declared=True) == []


def test_any_inventory_name_makes_a_valid_mermaid_label() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from imsdr.output.topology import _mlabel

    # what the inventory's Text type allows: one printable line without ; $ ` < >
    names = st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=";$`<>"),
        min_size=1,
        max_size=60,
    ).filter(str.strip)

    @settings(max_examples=300, deadline=None)
    @given(names)
    def check(name: str) -> None:
        label = _mlabel(name)
        text = f"flowchart LR\n  subgraph s[{label}]\n    a[{label}]\n  end\n  a -->|{label}| a\n"
        assert mermaid_errors(text, require_declared=True) == []

    check()


def test_json_export_matches_the_design(topo: Topology) -> None:
    import json

    result = CliRunner().invoke(app, ["graph", str(PROVINCE), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["format"] == "imsdr.graph/1" and data["site"] is None
    assert [s["id"] for s in data["sites"]] == list(topo.sites)
    drawn = {e["id"] for s in data["sites"] for e in s["elements"]}
    assert drawn == set(topo.elements)
    assert {(d["local_network"], d["sbc"]) for d in data["dr"]} == {
        (ln, sbc.id) for ln, sbc in topo.dr_sbc.items()}
    assert {p["group"] for p in data["pairs"]} == {g.id for g in topo.groups.values() if g.kind == "pair"}
