"""imsdr's own reference pages, shipped in the wheel (docs/domain.md in the source tree)."""

from __future__ import annotations

import re
from importlib.resources import files


def domain_reference() -> str:
    """The domain reference that rule docs cite as ``domain.md §N``."""
    return files(__name__).joinpath("domain.md").read_text(encoding="utf-8")


_HEADING = re.compile(r"^#{2,4} (§[0-9]+(?:\.[0-9]+)*) (.*)$", re.MULTILINE)
_CITATION = re.compile(r"domain\.md (§[0-9]+(?:\.[0-9]+)*)((?:, §[0-9]+(?:\.[0-9]+)*)*)")


def domain_sections() -> dict[str, str]:
    """Each section number of the domain reference (``§4.2``) with its Markdown anchor."""
    found = {}
    for match in _HEADING.finditer(domain_reference()):
        number, title = match.groups()
        found[number] = _anchor(f"{number} {title}")
    return found


def cited_sections(text: str) -> list[str]:
    """Every ``domain.md §N`` (and ``, §M`` after it) cited in ``text``."""
    cited = []
    for match in _CITATION.finditer(text):
        cited.append(match.group(1))
        cited += [s.strip() for s in match.group(2).split(",") if s.strip()]
    return cited


def link_citations(text: str, page: str = "domain.md") -> str:
    """Turn ``domain.md §N, §M`` into Markdown links to those sections of ``page``."""
    anchors = domain_sections()

    def link(number: str) -> str:
        return f"[{number}]({page}#{anchors[number]})" if number in anchors else number

    def replace(match: re.Match[str]) -> str:
        rest = [s.strip() for s in match.group(2).split(",") if s.strip()]
        return "domain.md " + ", ".join(link(n) for n in [match.group(1), *rest])

    return _CITATION.sub(replace, text)


def _anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")
