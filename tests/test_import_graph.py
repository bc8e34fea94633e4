"""The layers of imsdr (docs/layers.md): each part imports only from the parts below it, and no
module imports itself back through another. Every import counts, those inside functions and
under ``TYPE_CHECKING`` too: a lazy import is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "imsdr"

# Top to bottom; a unit is a subpackage or a top-level module of imsdr ("imsdr" is the package
# itself: __version__). Units on one line are peers and may not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("__main__",),
    ("cli",),
    ("apply", "plan", "checking", "importers"),
    ("monitoring",),
    ("runbook", "resolve"),
    ("dns", "diameter"),
    ("output",),
    ("rules", "scenarios"),
    ("analysis", "restoration"),
    ("availability",),
    ("capacity",),
    ("model",),
    ("example", "starter", "inventory"),
    ("untrusted", "progress"),
    ("diagnostics", "errors", "reference", "diameter_ext"),
    ("imsdr",),
]
# peers that may import each other in one direction only (the second one imports the first)
PEER_ORDER = {("errors", "diagnostics")}  # errors carry diagnostics' Problems


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("imsdr", *path.relative_to(PACKAGE).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = path
    return modules


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "imsdr"


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def test_every_unit_has_a_layer() -> None:
    placed = {unit for layer in LAYERS for unit in layer}
    units = {_unit(m) for m in _modules()}
    assert units <= placed, f"put {sorted(units - placed)} in LAYERS (and in docs/layers.md)"


def test_imports_go_down_the_layers_only() -> None:
    rank = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
    upward = []
    for module, imported in sorted(_graph().items()):
        for target in sorted(imported):
            a, b = _unit(module), _unit(target)
            if a == b or (a, b) in PEER_ORDER:
                continue
            if rank[b] <= rank[a]:
                upward.append(f"{module} imports {target} ({a} may not import {b})")
    assert upward == []


def test_no_import_cycles() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(root: str) -> None:  # Tarjan's strongly connected components, iteratively
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_checker_sees_upward_imports_and_cycles(tmp_path: Path) -> None:
    """The walk finds imports inside functions and under TYPE_CHECKING (what this test relies on)."""
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from imsdr.plan import Pipeline\n"
                      "def f():\n    import imsdr.cli.app\n", encoding="utf-8")
    assert _imports(source, _modules()) == {"imsdr.plan", "imsdr.cli.app"}


def test_the_layers_are_documented() -> None:
    doc = (PACKAGE.parent / "docs" / "layers.md").read_text(encoding="utf-8")
    lines = [line for line in doc.splitlines() if line.startswith("| ") and "`" in line]
    documented = [tuple(part.strip(" `") for part in line.split("|")[2].split(",")) for line in lines]
    assert documented == LAYERS
