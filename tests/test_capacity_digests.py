"""`capacity`, `scenarios --depth 2` and `simulate` print, byte for byte, what they printed before:
the samples, the region-loss example and a generated three-province example are run in every
format and each output (with its exit code) is compared with the SHA-256 digests stored in
``tests/data/capacity-digests.json`` (taken before the capacity engine, report and JSON writer were
made faster, issue 18).

A speed-up must not change one figure. When a change of the output is intended, regenerate the
digests and review the diff of the manifest with the change:

    python tests/test_capacity_digests.py --update
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "data" / "capacity-digests.json"
INVENTORIES = {
    "lab": ROOT / "inventories" / "lab.yaml",
    "province": ROOT / "inventories" / "province.yaml",
    "region-loss": ROOT / "docs" / "examples" / "province-region-loss.yaml",
}
THREE = ["example", "national", "--provinces", "3"]  # the three-province example
FAILED_SITE = {"lab": "lab", "province": "site-a", "region-loss": "site-a", "three-provinces": "beijing-s1"}
COMMANDS = {
    "capacity.json": ["capacity", "--format", "json"],
    "capacity.markdown": ["capacity", "--format", "markdown"],
    "capacity.table-all": ["capacity", "--all"],
    "capacity.table": ["capacity"],
    "scenarios.json": ["scenarios", "--depth", "2", "--format", "json"],
    "scenarios.markdown": ["scenarios", "--depth", "2", "--format", "markdown"],
    "scenarios.table-all": ["scenarios", "--depth", "2", "--all"],
    "scenarios.table": ["scenarios", "--depth", "2"],
    "simulate.json": ["simulate", "--fail", "{site}", "--format", "json"],
    "simulate.markdown": ["simulate", "--fail", "{site}", "--format", "markdown"],
}


def _imsdr(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "120", "PYTHONHASHSEED": "random"}
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, env=env, cwd=cwd)


def _inventory(name: str, work: Path) -> Path:
    """The inventory ``name`` under the same file name every time (the JSON envelope names it)."""
    path = work / f"{name}.yaml"
    if name in INVENTORIES:
        shutil.copyfile(INVENTORIES[name], path)
    else:
        made = _imsdr(*THREE, cwd=work)
        assert made.returncode == 0, made.stderr
        path.write_bytes(made.stdout)
    return path


def output_digests(name: str, work: Path) -> dict[str, str]:
    """Command -> "exit code:sha256 of stdout" for every command above on the inventory ``name``."""
    inventory = _inventory(name, work)
    digests = {}
    for label, args in COMMANDS.items():
        done = _imsdr(args[0], inventory.name, *(a.format(site=FAILED_SITE[name]) for a in args[1:]), cwd=work)
        assert done.returncode in (0, 1), done.stderr
        digests[label] = f"{done.returncode}:{hashlib.sha256(done.stdout).hexdigest()}"
    return digests


@pytest.mark.parametrize("name", [*INVENTORIES, "three-provinces"])
def test_outputs_are_byte_identical_to_the_manifest(name: str, tmp_path: Path) -> None:
    expected = json.loads(MANIFEST.read_text(encoding="utf-8"))[name]
    assert output_digests(name, tmp_path) == expected


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        manifest = {name: output_digests(name, Path(scratch)) for name in [*INVENTORIES, "three-provinces"]}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
