"""What "rendered safely" means, checked by the programs that consume imsdr's output.

* runbooks: rendered to HTML by a CommonMark parser (markdown-it-py, raw HTML enabled as in most
  Markdown viewers): a hostile text shows as the text it is - no element, attribute or entity
  comes from it, and every Mermaid block is free of directives and raw HTML and valid;
* DNS: every zone passes ``named-checkzone`` with the strict flags the DNS tests use, every
  configuration passes ``named-checkconf -z``, and a real ``named`` loads it.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

from markdown_it import MarkdownIt

from imsdr.output.mermaid_check import mermaid_blocks, mermaid_errors

# the tags imsdr's own templates produce, as markdown-it renders them
_OWN_TAGS = {"h1", "h2", "h3", "h4", "p", "a", "ul", "ol", "li", "strong", "em", "code", "pre", "table",
             "thead", "tbody", "tr", "th", "td", "hr", "br", "blockquote",
             "details", "summary"}  # (the capacity page folds its formulas under its picture)
_TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9-]*)")
# the images imsdr writes: the availability chart and the capacity headroom picture, exactly as
# markdown-it renders them
_OWN_IMAGES = {"availability.md": '<img src="availability.svg" alt="Downtime per year by contributor" />',
               "capacity.md": '<img src="capacity-headroom.svg" alt="Capacity headroom: the busiest element of each '
                              'type, normally and with each site or region lost, against the utilisation limit" />'}


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")


def _visible_text(rendered: str) -> str:
    """The text a reader sees: tags removed, entities decoded, whitespace squeezed."""
    text = html.unescape(re.sub(r"<[^>]*>", " ", rendered))
    return " ".join(text.split())


def runbook_problems(pages: dict[str, str], texts: list[str] = ()) -> list[str]:  # type: ignore[assignment]
    """Why the runbook ``pages`` (name -> Markdown) are not safe, given the hostile ``texts`` that
    went into the inventory (names, reasons, the file name)."""
    md = _markdown()
    problems = []
    visible = []
    for name, page in sorted(pages.items()):
        if name.endswith(".svg"):  # the pictures beside the pages (checked by a renderer)
            continue
        rendered = md.render(page)
        own_image = _OWN_IMAGES.get(Path(name).name)
        checked = rendered.replace(own_image, "", 1) if own_image else rendered
        for tag in {t.lower() for t in _TAG.findall(checked)} - _OWN_TAGS:
            problems.append(f"{name}: the HTML holds a <{tag}> element imsdr never writes")
        for line, block in mermaid_blocks(page):
            if "%%{" in block or "%%" in block:
                problems.append(f"{name}:{line}: a Mermaid block holds '%%' (a directive or comment)")
            if re.search(r"<(?![-=.])", block):  # '<-.->' and '<-->' are edges; any other '<' is HTML
                problems.append(f"{name}:{line}: a Mermaid block holds raw '<'")
            problems += [f"{name}:{line}: Mermaid: {e}" for e in mermaid_errors(block)]
        visible.append(_visible_text(rendered))
    everything = " ".join(visible)
    for text in texts:
        shown = " ".join(text.split())
        if shown and shown.isprintable() and shown not in everything:
            problems.append(f"the text {text!r} does not show as itself in any page")
    return problems


def named_checkzone(zone: str, path: Path) -> str | None:
    """The strict named-checkzone the DNS tests use; the output when it fails."""
    result = subprocess.run(
        ["named-checkzone", "-q", "-k", "fail", "-n", "fail", "-S", "fail", "-M", "fail", "-W", "warn",
         "-r", "fail", "-i", "full", zone, str(path)],
        capture_output=True, text=True, timeout=60,
    )
    return None if result.returncode == 0 else (result.stdout + result.stderr)[-2000:]


def named_checkconf(config: Path) -> str | None:
    result = subprocess.run(["named-checkconf", "-z", str(config)], capture_output=True, text=True,
                            timeout=120, cwd=config.parent)
    return None if result.returncode == 0 else (result.stdout + result.stderr)[-3000:]


def have_bind() -> bool:
    return bool(shutil.which("named-checkzone") or Path("/usr/sbin/named-checkzone").exists())
