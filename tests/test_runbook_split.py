"""Runbooks of a national network are split per province, an index page links them, and no page
of the national example is larger than 500 KB. A network of one province keeps its page set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from imsdr.runbook.split import MAX_PAGE_BYTES


@pytest.fixture(scope="module")
def national_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from imsdr.example.national import NationalParams, write_yaml
    from imsdr.plan import analyse, runbook_pages_text

    path = tmp_path_factory.mktemp("split") / "national.yaml"
    with path.open("w") as fh:  # the national example (its ENUM numbers do not reach the runbooks)
        write_yaml(NationalParams(enum_numbers=0), fh)
    return runbook_pages_text(analyse(path))


def test_no_page_of_the_national_example_is_larger_than_500_kb(national_pages: dict[str, str]) -> None:
    sizes = {path: len(text.encode()) for path, text in national_pages.items()}
    biggest = max(sizes, key=sizes.__getitem__)
    assert sizes[biggest] <= MAX_PAGE_BYTES, (biggest, sizes[biggest])
    assert len(sizes) > 31 * 9  # type pages, drill and capacity per province, plus the site pages


def test_index_pages_link_every_province_page(national_pages: dict[str, str]) -> None:
    for index in ("pcscf.md", "cscf.md", "as.md", "sbc.md", "hss-slf.md", "enum-dns.md", "mgcf-imgw.md",
                  "drill.md", "capacity.md"):
        stem = index.removesuffix(".md")
        linked = set(re.findall(rf"\]\(({re.escape(stem)}-[a-z0-9-]+\.md)\)", national_pages[index]))
        provinces = {p for p in national_pages if re.fullmatch(rf"{re.escape(stem)}-[a-z]+\.md", p)
                     and not p.startswith("site-")}
        assert linked == provinces and len(linked) == 31, index
    # every page any page links to exists
    for path, text in national_pages.items():
        for target in re.findall(r"\]\(([a-z0-9-]+\.md)\)", text):
            assert target in national_pages, (path, target)


def test_a_province_page_holds_only_its_province(national_pages: dict[str, str]) -> None:
    page = national_pages["pcscf-hebei.md"]
    assert "hebei-pcscf-01" in page and "beijing-pcscf-01" not in page and "tianjin-pcscf" not in page
    drill = national_pages["drill-hebei.md"]
    assert "## Drill: Hebei DC1 (hebei-s1)" in drill and "beijing-s1" not in drill


def test_a_network_of_one_province_is_not_split(tmp_path: Path) -> None:
    from imsdr.plan import analyse, runbook_pages_text

    root = Path(__file__).resolve().parent.parent
    pages: dict[str, Any] = runbook_pages_text(analyse(root / "inventories" / "province.yaml"))
    sample = root / "docs" / "sample-runbook"
    assert sorted(pages) == sorted([*(p.name for p in sample.glob("*.md")), "capacity-headroom.svg"])
