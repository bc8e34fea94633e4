"""The domain reference: our own page, shipped in the package, and the only one the product cites."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.reference import cited_sections, domain_reference, domain_sections
from imsdr.rules.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
# spelled in two parts so that this file does not match its own search
OUTSIDE = ["DOMAIN" + ".md", "ARCHITECTURE" + ".md", "/work/" + "shared"]


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in listed.decode().split("\0") if name]
    return [p for p in paths if p.is_file() and not p.is_symlink() and b"\0" not in p.read_bytes()[:4096]]


def test_the_repository_cites_nothing_outside_itself() -> None:
    offenders = [f"{p.relative_to(ROOT)}: {word}" for p in tracked_text_files()
                 for word in OUTSIDE if word in p.read_text(encoding="utf-8", errors="replace")]
    assert offenders == []


def test_every_cited_section_exists() -> None:
    sections = domain_sections()
    assert {"§1", "§2", "§3", "§4.2", "§4.6", "§8.1"} <= set(sections)
    texts = {r.id: r.doc for r in all_rules()}
    texts.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in tracked_text_files()
                  if p.suffix in (".py", ".md") and p.name != "domain.md"})
    cited = {(where, number) for where, text in texts.items() for number in cited_sections(text)}
    assert len(cited) > 30
    assert [c for c in cited if c[1] not in sections] == []


def test_every_design_rule_cites_the_reference() -> None:
    design = [r for r in all_rules() if not r.id.startswith(("CAP-", "WAIVER-"))]
    assert [r.id for r in design if not cited_sections(r.doc)] == []


def test_rules_md_links_into_the_reference() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = set(domain_sections().values())
    links = [part.split(")")[0] for part in text.split("](domain.md#")[1:]]
    assert len(links) > 30 and set(links) <= anchors


def test_rules_domain_prints_the_shipped_page() -> None:
    result = runner.invoke(app, ["rules", "--domain"])
    assert result.exit_code == 0
    assert result.stdout == domain_reference() == (ROOT / "docs" / "domain.md").read_text(encoding="utf-8")
    assert "RFC 3539" in result.stdout and "## §4.6" in result.stdout
