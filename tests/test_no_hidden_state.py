"""No hidden state: no cache on disk, no module keeping results between calls, no code from data."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "imsdr"
ROOT = PACKAGE.parent

# Memoised pure functions of immutable arguments (text, numbers, enum names, dnspython values):
# their answers are the same with or without the memo, so no run can see another's work.
# Anything that remembers a Topology, an inventory or a report belongs on imsdr.analysis.Analysis.
PURE_MEMOS = {
    "imsdr/capacity/erlang.py": {"_erlang_b", "circuits_needed", "carried_traffic"},
    "imsdr/capacity/load.py": {"_feature", "srv_split"},
    "imsdr/scenarios/simulate.py": {"_feature"},
    "imsdr/rules/registry.py": {"all_rules", "rules_by_id"},
    "imsdr/dns/names.py": {"*"},
    "imsdr/resolve/planview.py": {"_name", "_text", "_type_text", "_rdata"},
    "imsdr/resolve/verify.py": {"_name"},
}
MEMO_DECORATORS = {"cache", "lru_cache"}


def _sources() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def test_no_module_loads_code_from_data() -> None:
    banned = {"pickle", "marshal", "shelve", "dill", "cloudpickle"}
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path}: {n}" for n in names if n.split(".")[0] in banned]
    assert found == []


def test_no_module_level_state() -> None:
    """No weak-keyed result stores, no ``global`` rebinding, and only the listed pure memos."""
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append(f"{path}:{node.lineno}: global {', '.join(node.names)}")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                if "weakref" in names:
                    found.append(f"{path}:{node.lineno}: weakref")
        for node in tree.body:  # module-level functions only: a method's memo lives with its object
            if isinstance(node, ast.FunctionDef) and any(
                    _decorator_name(d) in MEMO_DECORATORS for d in node.decorator_list):
                allowed = PURE_MEMOS.get(path, set())
                if node.name not in allowed and "*" not in allowed:
                    found.append(f"{path}:{node.lineno}: memoised {node.name}() (a pure function? list it)")
    assert found == []


def test_commands_write_no_cache(tmp_path: Path) -> None:
    """Two runs on a large inventory leave HOME and the cache directory untouched."""
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    inventory = tmp_path / "big.yaml"
    made = subprocess.run([sys.executable, "-m", "imsdr", "example", "national", "--provinces", "6"],
                          capture_output=True, text=True, check=True)
    inventory.write_text(made.stdout, encoding="utf-8")
    assert inventory.stat().st_size > 256 * 1024  # the size the old pickle cache started at
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    for _ in range(2):
        run = subprocess.run([sys.executable, "-m", "imsdr", "validate", str(inventory)],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    assert list(home.iterdir()) == [] and list(cache.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml", "cache", "home"]
