"""docs/apply.md's worked example runs as written: the lab inventory's plan, the documented
targets file (its /srv/imsdr and /etc/imsdr moved under tmp_path, its keys created 0600) and
`imsdr apply --dry-run` printing exactly the documented steps (the staging directory, the day's
serials and the digests that follow from them aside)."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from imsdr.dns.keys import ensure_keys

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "apply.md"


def _blocks(kind: str) -> list[str]:
    example = DOC.read_text().split("## Worked example", 1)[1]
    return re.findall(rf"```{kind}\n(.*?)```", example, re.S)


def _normal(text: str) -> str:
    text = re.sub(r"\b20\d{8}\b", "SERIAL", text)
    return re.sub(r"sha256 [0-9a-f]{16}", "sha256 DIGEST", text)


def test_worked_example_dry_run_prints_the_documented_steps(tmp_path: Path) -> None:
    (targets_text,) = _blocks("yaml")
    (documented,) = _blocks("text")
    srv, etc = tmp_path / "srv", tmp_path / "etc"
    etc.mkdir()
    rndc_key = etc / "rndc.key"
    rndc_key.write_text('key "rndc-key" { algorithm hmac-sha256; secret "c2VjcmV0"; };\n')
    rndc_key.chmod(0o600)
    ensure_keys(etc / "tsig.keys", ["imsdr-users-lab-users", "imsdr-core-lab"])
    (etc / "tsig.keys").chmod(0o600)
    targets = tmp_path / "targets.yaml"
    targets.write_text(targets_text.replace("/srv/imsdr", str(srv)).replace("/etc/imsdr", str(etc)))
    plan = tmp_path / "plan"
    done = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(ROOT / "inventories" / "lab.yaml"), "--out",
                           str(plan), "-q", "--fail-on", "never"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    dry = subprocess.run([sys.executable, "-m", "imsdr", "apply", str(plan), "--targets", str(targets), "--state",
                          str(tmp_path / "state"), "--dry-run"], capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    printed = re.sub(re.escape(tempfile.gettempdir()) + r"/imsdr-apply-[^/\s]+", "$STAGE", dry.stdout)
    printed = printed.replace(str(srv), "/srv/imsdr").replace(str(etc), "/etc/imsdr")
    assert _normal(printed) == _normal(documented)
    assert not (tmp_path / "state").exists()  # a dry run writes nothing


def test_runbook_pages_show_the_apply_commands_beside_the_manual_steps(tmp_path: Path) -> None:
    """The drain and failback of a page carry the `imsdr apply` commands, next to the manual steps."""
    out = tmp_path / "runbooks"
    done = subprocess.run([sys.executable, "-m", "imsdr", "render", "runbook", str(ROOT / "inventories" / "lab.yaml"),
                           "--out", str(out), "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (out / "pcscf.md").read_text()
    drain = page.index("imsdr apply plan --drain lab-pcscf-1 --inventory lab.yaml --targets targets.yaml")
    assert page.index("#### Drain lab-pcscf-1") < drain < page.index("**Step 1. Render the drained state")
    back = page.index("imsdr apply plan --failback --inventory lab.yaml --targets targets.yaml")
    assert page.index("#### Fail back lab-pcscf-1") < back < page.index("**Step 1. Render the normal state")
