"""An SBC, MGCF or AS without `options_probing` probes actively (the recommended mode, domain.md §2):
no TIMER-003 warning for a default the user never chose, and the dispatcher list agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _without_probing(tmp_path: Path) -> Path:
    text = (ROOT / "inventories" / "province.yaml").read_text()
    text = re.sub(r", options_probing: active\}", "}", text).replace("    options_probing: active\n", "")
    assert "options_probing: active" not in text
    path = tmp_path / "province.yaml"  # the same name: the lists quote it
    path.write_text(text)
    return path


def test_unset_probing_earns_no_timer_003(tmp_path: Path) -> None:
    path = _without_probing(tmp_path)
    report = json.loads(runner.invoke(app, ["check", str(path), "--format", "json"]).stdout)
    assert [f for f in report["findings"] if f["rule"] == "TIMER-003"] == []
    explicit = tmp_path / "passive.yaml"
    text = path.read_text().replace("id: sbc-capital\n", "id: sbc-capital\n    options_probing: passive\n")
    explicit.write_text(text)
    report = json.loads(runner.invoke(app, ["check", str(explicit), "--format", "json"]).stdout)
    assert [f["subjects"] for f in report["findings"] if f["rule"] == "TIMER-003"] == [["sbc-capital"]]


def test_dispatcher_probes_by_the_same_default(tmp_path: Path) -> None:
    path = _without_probing(tmp_path)
    for inventory, out in ((path, tmp_path / "unset"), (ROOT / "inventories" / "province.yaml", tmp_path / "set")):
        assert runner.invoke(app, ["render", "dns", str(inventory), "--out", str(out)]).exit_code == 0
    for listed in (tmp_path / "set").rglob("dispatcher.list"):
        twin = tmp_path / "unset" / listed.relative_to(tmp_path / "set")
        assert twin.read_text() == listed.read_text()
