"""The capacity headroom picture (element type × failure scenario, coloured against the limit):
in runbooks/capacity.md and `capacity --format markdown`, deterministic, rendered by rsvg-convert."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from imsdr.analysis import Analysis
from imsdr.cli.app import app
from imsdr.output.headroom_svg import band, headroom_svg
from imsdr.plan import load_topology

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
runner = CliRunner()


def report_of(path: Path):  # type: ignore[no-untyped-def]
    return Analysis(load_topology(path)).capacity


def rendered_png(svg: Path, tmp_path: Path) -> bytes:
    rsvg = shutil.which("rsvg-convert")
    assert rsvg, "rsvg-convert (Debian librsvg2-bin) is needed"
    png = tmp_path / (svg.stem + ".png")
    result = subprocess.run([rsvg, str(svg), "-o", str(png)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and not result.stderr, result.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    return data


def cells_of(svg: str) -> list[tuple[str, str]]:
    """(colour class, tooltip) of every cell drawn."""
    return re.findall(r'class="(\w+)"><title>([^<]*)</title>', svg)


def test_cells_agree_with_the_site_checks_and_are_coloured_against_the_limit(tmp_path: Path) -> None:
    report = report_of(PROVINCE)
    by = {(c.element_type, c.scenario): c for c in report.headroom}
    assert report.sites
    for site in report.sites:  # the site survivability checks computed the same busiest element
        cell = by[(site.element_type, f"site:{site.site}")]
        assert (cell.element, cell.utilisation) == (site.worst_element, site.worst_utilisation)
        if not site.unserved:  # everything taken over: the survivors carry what the site check counts
            assert cell.load == pytest.approx(site.load), (site.site, site.element_type)
    svg = headroom_svg(report)
    drawn = cells_of(svg)
    assert len(drawn) == len(report.headroom)  # province: 7 types × (normal, 3 sites, 2 regions)
    sbc_c = by[("sbc", "site:site-c")]
    assert sbc_c.utilisation == pytest.approx(0.8333) and band(sbc_c) == "near"  # 83.3% of a limit of 85%
    assert ("near", "SBC, site-c lost: sbc-harbour at 83.3% (limit 85%)") in drawn
    assert by[("slf", "normal")].utilisation == pytest.approx(0.3) and band(by[("slf", "normal")]) == "ok"
    assert headroom_svg(report) == svg  # deterministic
    (tmp_path / "h.svg").write_text(svg, encoding="utf-8")
    rendered_png(tmp_path / "h.svg", tmp_path)


def test_a_tighter_limit_turns_cells_red(tmp_path: Path) -> None:
    data = yaml.safe_load(PROVINCE.read_text(encoding="utf-8"))
    data["network"]["capacity_model"]["max_utilisation"] = 0.8
    path = tmp_path / "tight.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = report_of(path)
    over = {(c.element_type, c.scenario) for c in report.headroom if band(c) == "over"}
    assert ("sbc", "site:site-c") in over and ("cscf", "site:site-b") in over  # 83.3%, 82.5% > 80%
    assert ("slf", "normal") not in over
    assert sum(kind == "over" for kind, _tip in cells_of(headroom_svg(report))) == len(over)


def test_runbook_capacity_page_shows_the_picture_and_folds_the_formulas(tmp_path: Path) -> None:
    out = tmp_path / "rb"
    result = runner.invoke(app, ["render", "runbook", str(PROVINCE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "capacity.md").read_text(encoding="utf-8")
    picture = page.index("](capacity-headroom.svg)")
    folded = page.index("<details>")
    assert picture < folded < page.index("## N+K pools") < page.index("</details>")
    assert (out / "capacity-headroom.svg").read_text(encoding="utf-8") == headroom_svg(report_of(PROVINCE))
    rendered_png(out / "capacity-headroom.svg", tmp_path)


def test_capacity_markdown_embeds_the_picture(tmp_path: Path) -> None:
    result = runner.invoke(app, ["capacity", str(PROVINCE), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    found = re.search(r"!\[Capacity headroom[^\]]*\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", text)
    assert found, text[:400]
    svg = base64.b64decode(found.group(1)).decode("utf-8")
    assert svg == headroom_svg(report_of(PROVINCE))
    (tmp_path / "md.svg").write_text(svg, encoding="utf-8")
    rendered_png(tmp_path / "md.svg", tmp_path)
    # the formulas are still there, folded under the tables
    assert text.index("<details>") > text.index("| pool |")
    assert "spare needed = s×K/(N−K)" in text.split("<details>", 1)[1]
    takeovers = text.split("DR SBC and P-CSCF takeovers", 1)[1]
    assert "| sbc-lake | sbc | 250,000 | sbc-hill at 81.2% | ok |" in takeovers
