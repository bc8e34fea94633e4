"""Mermaid's own renderer for the tests: @mermaid-js/mermaid-cli (``mmdc``) on Debian's chromium.

`.ci/test` installs mermaid-cli into ``.node-ci/`` (puppeteer's browser download skipped) and
exports ``IMSDR_MMDC``; a missing renderer is a failure that says how to get it, never a skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RENDER_TIMEOUT_S = 180


def mmdc() -> str:
    found = os.environ.get("IMSDR_MMDC") or str(ROOT / ".node-ci" / "node_modules" / ".bin" / "mmdc")
    if not os.access(found, os.X_OK):
        found = shutil.which("mmdc") or ""
    assert found, ("mermaid-cli is needed: PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix .node-ci "
                   "@mermaid-js/mermaid-cli (as .ci/test does)")
    return found


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "Debian's chromium is needed (mermaid-cli draws with it): apt-get install chromium"
    return found


def render_mermaid(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Draw ``source`` (a .mmd diagram, or a Markdown page: every ```mermaid block) into ``out``
    (.svg; for a page, .md with one SVG per diagram beside it). Mermaid refuses what it cannot
    parse: the exit code is not 0 and stderr says where."""
    config = out.parent / "puppeteer.json"
    config.write_text(json.dumps({"executablePath": chromium(), "args": ["--no-sandbox", "--disable-gpu"]}))
    env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"}
    return subprocess.run([mmdc(), "--quiet", "-p", str(config), "-i", str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=RENDER_TIMEOUT_S, env=env)


def assert_mermaid_draws(source: Path, out: Path) -> list[Path]:
    """Render and return the SVG files drawn (at least one)."""
    result = render_mermaid(source, out)
    assert result.returncode == 0, f"Mermaid refuses {source.name}: {result.stderr[-2000:]}"
    drawn = [out] if out.suffix == ".svg" else sorted(out.parent.glob(f"{out.stem}-*.svg"))
    assert drawn and all(p.stat().st_size > 1000 and b"<svg" in p.read_bytes()[:2000] for p in drawn), drawn
    return drawn
