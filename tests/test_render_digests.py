"""`render dns` writes, byte for byte, what it wrote before: the two samples and a generated
three-province example are rendered and every file is compared with the SHA-256 digests stored in
``tests/data/render-digests.json`` (taken before the DNS writer was made faster, issue 18).

A speed-up must not change one byte. When a change of the output is intended (a new record, a
different layout), regenerate the digests and review the diff of the manifest with the change:

    python tests/test_render_digests.py --update

Rendering is deterministic (no cache, no clock: ``SOURCE_DATE_EPOCH`` fixes the serial date), so
the digests of a second process are the same as the first's (tests/test_output_stable.py).
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
MANIFEST = ROOT / "tests" / "data" / "render-digests.json"
EPOCH = "1764460800"  # 2025-11-30: the serial date of every zone
SAMPLES = {"lab": ROOT / "inventories" / "lab.yaml", "province": ROOT / "inventories" / "province.yaml"}
# the three-province example: every DNS feature of the national generator, 3,000 ENUM numbers
# (one record per number, as when the digests were taken: the writer's layout is what is compared)
THREE = ["example", "national", "--provinces", "3", "--enum-numbers", "3000", "--enum-block-size", "1000",
         "--enum-style", "numbers"]
MARKER = ".imsdr-output"  # written by the output layer around the DNS files, not by the DNS writer


def _imsdr(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PYTHONHASHSEED": "random"}
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd)


def _inventory(name: str, work: Path) -> Path:
    """The inventory ``name`` under the same file name every time (README.md names it)."""
    path = work / f"{name}.yaml"
    if name in SAMPLES:
        shutil.copyfile(SAMPLES[name], path)
    else:
        made = _imsdr(*THREE, cwd=work)
        assert made.returncode == 0, made.stderr
        path.write_text(made.stdout, encoding="utf-8")
    return path


def render_digests(name: str, work: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file `imsdr render dns` writes for the inventory ``name``."""
    inventory = _inventory(name, work)
    out = work / f"{name}-dns"
    done = _imsdr("render", "dns", inventory.name, "--out", out.name, cwd=work)
    assert done.returncode == 0, done.stderr
    digests = {}
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.name != MARKER:
            digests[path.relative_to(out).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.mark.parametrize("name", ["lab", "province", "three-provinces"])
def test_render_dns_is_byte_identical_to_the_stored_digests(name: str, tmp_path: Path) -> None:
    expected = json.loads(MANIFEST.read_text(encoding="utf-8"))[name]
    got = render_digests(name, tmp_path)
    assert sorted(got) == sorted(expected), "files added or missing"
    changed = [path for path in expected if got[path] != expected[path]]
    assert not changed, (f"{len(changed)} file(s) differ from the stored digests, e.g. {changed[:5]} "
                         "(intended? python tests/test_render_digests.py --update)")


def main(argv: list[str]) -> int:
    import tempfile

    if argv != ["--update"]:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as work:
        manifest = {name: render_digests(name, Path(work)) for name in ("lab", "province", "three-provinces")}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{MANIFEST}: {sum(len(d) for d in manifest.values())} digests")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
