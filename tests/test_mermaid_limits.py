"""Mermaid's rendering limits (500 edges, 50,000 characters): the checker knows them and
`imsdr graph` warns above them, pointing to --site and --format dot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.output.mermaid_check import MAX_EDGES, MAX_TEXT_SIZE, count_edges, mermaid_limit_problems

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_edges_are_counted_outside_labels() -> None:
    text = 'flowchart LR\n  a --> b --> c\n  a -.->|"x --> y"| d\n  e --- f\n  g ==> h\n  %% i --> j\n'
    assert count_edges(text) == 5


def test_limits() -> None:
    small = "flowchart LR\n" + "".join(f"  n{i} --> n{i + 1}\n" for i in range(MAX_EDGES))
    assert count_edges(small) == MAX_EDGES and mermaid_limit_problems(small) == []
    many = small + "  x --> y\n"
    assert mermaid_limit_problems(many) == [f"{MAX_EDGES + 1} edges, above Mermaid's limit of {MAX_EDGES}"]
    long = "flowchart LR\n" + f'  a["{"x" * MAX_TEXT_SIZE}"]\n'
    assert "characters, above Mermaid's limit of 50,000" in mermaid_limit_problems(long)[0]


def test_graph_warns_above_the_limits_and_not_below(tmp_path: Path) -> None:
    national = tmp_path / "national.yaml"
    made = subprocess.run([sys.executable, "-m", "imsdr", "example", "national", "--provinces", "3",
                           "--enum-numbers", "0"], capture_output=True, text=True, timeout=300)
    national.write_text(made.stdout)
    big = runner.invoke(app, ["graph", str(national)])
    assert big.exit_code == 0 and big.stdout.startswith("flowchart")
    assert "above Mermaid's limit" in big.stderr and "--site" in big.stderr and "--format dot" in big.stderr
    small = runner.invoke(app, ["graph", str(ROOT / "inventories" / "province.yaml")])
    assert small.exit_code == 0 and small.stderr == ""


def test_example_province_is_named_as_one_province() -> None:
    result = runner.invoke(app, ["example", "province", "--enum-numbers", "0"])
    assert 'name: "Example Province IMS (' in result.stdout and "(1 provinces)" not in result.stdout
