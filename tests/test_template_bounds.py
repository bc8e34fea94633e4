"""User templates are confined to --templates and bounded in time, output and memory.

Every hostile template below would, before these bounds, have read a file outside --templates,
hung, or grown the process by gigabytes. Each must now end with exit 2, a message naming the
template (and the line where the template code was running), and the previous output untouched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from imsdr.cli import common
from imsdr.cli.app import app
from imsdr.runbook.sandbox import TemplateLimits

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="imsdr")


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rendered runbook (the output a refused render must leave alone)."""
    out = tmp_path_factory.mktemp("rb") / "out"
    assert invoke("render", "runbook", str(LAB), "--out", str(out)).exit_code == 0
    return out


def render_with(previous: Path, tmp_path: Path, template: str, *options: str) -> Result:
    templates = tmp_path / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "site.md.j2").write_text(template)
    return invoke("render", "runbook", str(LAB), "--out", str(previous), "--templates", str(templates),
                  *options)


def stopped(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


BOMBS = {
    "range": ("{{ range(10**9)|list }}", "range() of 1,000,000,000 items", "site.md.j2:1"),
    "power": ("{{ 10 ** (10 ** 8) }}", "'**' would make a number", "site.md.j2:1"),
    "power-in-loop": ("{% set n = 7 %}\n{{ n ** 99999999 }}", "'**'", "site.md.j2:2"),
    "string-repeat": ("{{ 'x' * 10**9 }}", "string repetition", "site.md.j2:1"),
    "list-repeat": ("{{ ([1] * 10**8)|length }}", "sequence repetition", "site.md.j2:1"),
    "lipsum": ("{{ lipsum(10**6) }}", "lipsum() of up to", "site.md.j2:1"),
    "lipsum-words": ("{{ lipsum(1, max=10**9) }}", "lipsum() of up to", "site.md.j2:1"),
    "printf-width": ("{{ '%0999999999d' % 1 }}", "'%' formatting", "site.md.j2:1"),
    "format-width": ("{{ '{:>999999999}'.format(1) }}", "str.format with a width", "site.md.j2:1"),
    "concat-doubling-macro": ("{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% endif %}{% endmacro %}"
                              "{{ d('x', 40) }}", "over the output budget", "site.md.j2:1"),
    "plus-doubling": ("{% set ns = namespace(s='x' * 1000) %}{% for i in range(40) %}"
                      "{% set ns.s = ns.s + ns.s %}{% endfor %}", "'+' would make", "site.md.j2:1"),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_unbounded_operations_are_refused_with_the_template_line(name: str, previous: Path,
                                                                tmp_path: Path) -> None:
    template, *fragments = BOMBS[name]
    before = snapshot(previous)
    stopped(render_with(previous, tmp_path, template), "template stopped", *fragments)
    assert snapshot(previous) == before


def test_output_budget_cuts_off_a_template_that_prints_too_much(previous: Path, tmp_path: Path) -> None:
    template = "{% for i in range(100000) %}{% for j in range(100000) %}{{ 'y' * 100 }}{% endfor %}{% endfor %}"
    before = snapshot(previous)
    stopped(render_with(previous, tmp_path, template), "output budget of 64 MiB", "--template-max-output")
    # the budget is overridable both ways
    small = "{% for i in range(3000) %}{{ 'y' * 1000 }}\n{% endfor %}"
    stopped(render_with(previous, tmp_path, small, "--template-max-output", "1"), "output budget of 1 MiB")
    assert snapshot(previous) == before
    assert render_with(previous, tmp_path, small, "--template-max-output", "8").exit_code == 0
    assert (previous / "sites").is_dir() or any(previous.rglob("*.md"))


def test_time_budget_stops_a_template_that_loops_without_output(previous: Path, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    # README is the first page rendered: the budget is not spent on built-in pages before it
    (templates / "README.md.j2").write_text(
        "# {{ page.title }}\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n")
    before = snapshot(previous)
    result = invoke("render", "runbook", str(LAB), "--out", str(previous), "--templates", str(templates),
                    "--template-timeout", "2")
    stopped(result, "time budget of 2 s", "--template-timeout", "README.md.j2:2")
    assert snapshot(previous) == before


def test_memory_backstop_ends_what_the_checks_do_not_see(previous: Path, tmp_path: Path) -> None:
    """`~` (string concatenation) is not an interceptable operator: a namespace doubling a string
    with it reaches the address-space cap instead, which ends in a clean exit 2."""
    template = ("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                "{% endfor %}{{ ns.s|length }}")
    before = snapshot(previous)
    stopped(render_with(previous, tmp_path, template), "memory budget of 512 MiB")
    assert snapshot(previous) == before
    stopped(render_with(previous, tmp_path, "{{ 'x'|center(10**9) }}"), "memory budget")


@pytest.mark.parametrize("target", ["/proc/self/environ", "/etc/passwd", "sibling"])
def test_template_symlinks_are_not_followed(target: str, previous: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMSDR_TEST_SECRET", "s3cr3t-value")
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "README.md.j2").write_text("# {{ page.title }}\n")
    link = templates / "site.md.j2"
    link.symlink_to(templates / "README.md.j2" if target == "sibling" else target)
    before = snapshot(previous)
    result = invoke("render", "runbook", str(LAB), "--out", str(previous), "--templates", str(templates))
    stopped(result, "site.md.j2: is a symbolic link")
    assert "s3cr3t-value" not in result.stdout + result.stderr and "root:" not in result.stderr
    assert snapshot(previous) == before


def test_a_fifo_or_a_directory_named_like_a_template_is_refused_without_waiting(previous: Path,
                                                                                 tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    os.mkfifo(templates / "site.md.j2")
    (templates / "capacity.md.j2").mkdir()
    # a child process: if the FIFO were opened for reading without O_NONBLOCK it would block forever
    result = subprocess.run([sys.executable, "-m", "imsdr", "render", "runbook", str(LAB), "--out",
                             str(tmp_path / "out"), "--templates", str(templates)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "is not a regular file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_oversized_template_file_is_refused(previous: Path, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "site.md.j2").write_bytes(b"x" * (2 << 20))
    result = invoke("render", "runbook", str(LAB), "--out", str(previous), "--templates", str(templates))
    stopped(result, "site.md.j2: 2097152 bytes")


def test_plan_takes_the_same_budgets(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "site.md.j2").write_text("{% for i in range(3000) %}{{ 'y' * 1000 }}\n{% endfor %}")
    result = invoke("plan", str(LAB), "--out", str(tmp_path / "out"), "--templates", str(templates),
                    "--template-max-output", "1")
    stopped(result, "output budget of 1 MiB")
    assert not (tmp_path / "out").exists()


def test_cli_defaults_are_the_documented_limits() -> None:
    limits = TemplateLimits()
    assert common.TEMPLATE_TIMEOUT_S == limits.seconds == 60
    assert common.TEMPLATE_MAX_OUTPUT_MIB * (1 << 20) == limits.output_bytes == 64 << 20
    docs = (ROOT / "docs" / "runbooks.md").read_text()
    assert "--template-timeout" in docs and "60 s" in docs
    assert "--template-max-output" in docs and "64 MiB" in docs and "512 MiB" in docs
