"""`imsdr graph` and the runbook draw one topology the same way; `imsdr graph --fail ID` draws the
failed state the way the site pages do (one function each: imsdr.output.topology)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.output.mermaid_check import mermaid_blocks, mermaid_errors

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def runbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("graph") / "rb"
    result = runner.invoke(app, ["render", "runbook", str(PROVINCE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def diagrams(page: Path) -> list[str]:
    return [body for _line, body in mermaid_blocks(page.read_text(encoding="utf-8"))]


def graph(*args: str) -> str:
    result = runner.invoke(app, ["graph", str(PROVINCE), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_graph_is_the_runbook_index_diagram(runbook: Path) -> None:
    (index,) = diagrams(runbook / "README.md")
    assert graph() == index
    assert mermaid_errors(index, require_declared=True) == []


@pytest.mark.parametrize("site", ["site-a", "site-b", "site-c"])
def test_graph_fail_site_is_the_site_page_diagram(runbook: Path, site: str) -> None:
    drawn = graph("--fail", site)
    assert drawn in diagrams(runbook / f"site-{site}.md")
    assert mermaid_errors(drawn, require_declared=True) == []
    assert f'subgraph site_{site.replace("-", "_")}["FAILED: ' in drawn


def test_graph_fail_element_marks_it_and_its_takeover() -> None:
    drawn = graph("--fail", "sbc-hill")
    assert mermaid_errors(drawn, require_declared=True) == []
    # sbc-hill's users go to its DR SBC sbc-harbour; its site is not failed as a whole
    assert "el_sbc_hill ==>|takes over| el_sbc_harbour" in drawn
    assert "ln_hill -.->|re-register| el_sbc_harbour" in drawn
    assert "class el_sbc_hill failed" in drawn and "FAILED" not in drawn
    pair = graph("--fail", "hss-a-1")  # a 1+1 pair: the mate takes over
    assert "el_hss_a_1 ==>|takes over| el_hss_b_1" in pair


def test_graph_fail_refuses_what_it_cannot_draw() -> None:
    for args in (["--fail", "nowhere"], ["--fail", "site-a", "--format", "dot"],
                 ["--fail", "site-a", "--site", "site-b"]):
        result = runner.invoke(app, ["graph", str(PROVINCE), *args])
        assert result.exit_code == 2 and "Traceback" not in result.output, args


# --- drawn by Mermaid itself (mermaid-cli on chromium) ---------------------------------------------


def test_every_runbook_diagram_is_drawn_by_mermaid(runbook: Path, tmp_path: Path) -> None:
    from mermaid_render import assert_mermaid_draws

    pages = [p for p in sorted(runbook.glob("*.md")) if diagrams(p)]
    assert runbook / "README.md" in pages and runbook / "site-site-b.md" in pages
    for page in pages:
        drawn = assert_mermaid_draws(page, tmp_path / page.name)
        assert len(drawn) == len(diagrams(page)), page.name


def test_graph_and_its_failed_state_are_drawn_by_mermaid(tmp_path: Path) -> None:
    from mermaid_render import assert_mermaid_draws, render_mermaid

    for name, args in (("topology", ()), ("site", ("--site", "site-b")), ("fail-element", ("--fail", "sbc-hill")),
                       ("fail-region", ("--fail", "region:north"))):
        source = tmp_path / f"{name}.mmd"
        source.write_text(graph(*args), encoding="utf-8")
        svg = assert_mermaid_draws(source, tmp_path / f"{name}.svg")[0]
        assert b"sbc-harbour" in svg.read_bytes()
    broken = tmp_path / "broken.mmd"  # the renderer really judges: an unclosed label is refused
    broken.write_text('flowchart LR\n  a["x" --> b\n', encoding="utf-8")
    result = render_mermaid(broken, tmp_path / "broken.svg")
    assert result.returncode != 0 and "Parse error" in result.stderr
