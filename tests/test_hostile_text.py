"""Text that reaches a terminal, a draft or Markdown is escaped for that medium, and the import
options and dispatcher fields are checked as the readers check their files.

* every command that names a file (validate, check, plan, render, resolve, init, import) run on
  file names holding ESC / OSC / BEL / C1 sequences: nothing but the escaped text reaches stdout
  or stderr (the real entry point, in a child process: the streams are wrapped there);
* a source file name with line breaks never becomes YAML structure in a draft;
* names GitHub would autolink are written with their trigger escaped;
* ``--set``, ``--enum-suffix`` and the dispatcher fields take ASCII digits and DNS names only
  ('²'.isdigit() is True), and a dispatcher list over its size limit is refused, not cut.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.importers.errors import ImportProblems
from imsdr.importers.kamailio import MAX_LIST_BYTES, import_dispatcher, set_owner
from imsdr.output.markdown import markdown_text
from imsdr.output.terminal import escape_controls

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
SEQUENCES = ["\x1b]0;pwned\x07", "\x1b[2J", "\x1b[31m", "\x9b31m", "\x07", "\x08\x08", "\r", "\x1bP+q\x1b\\"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], cwd=cwd, capture_output=True, timeout=180,
                          env={**os.environ, "COLUMNS": "200"})


def test_no_command_echoes_a_control_sequence_from_a_file_name(tmp_path: Path) -> None:
    sequence = "".join(SEQUENCES[:3])  # OSC (retitle), CSI (clear), SGR (colour) in one name
    name = f"inv{sequence}.yaml"
    shutil.copy(LAB, tmp_path / name)
    out = f"out{sequence}"
    commands = [["validate", name], ["check", name], ["plan", name, "--out", out + "-plan"],
                ["render", "dns", name, "--out", out], ["resolve", name, "sbc.ims.example.net"],
                ["init", out + "-init"], ["validate", f"missing{sequence}.yaml"]]
    (tmp_path / f"t{sequence}.csv").write_text("id,type\nx-1,sbc\n")
    commands.append(["import", "table", f"t{sequence}.csv", "--out", f"d{sequence}.yaml"])
    for command in commands:
        run = _run(*command, cwd=tmp_path)
        for stream in (run.stdout, run.stderr):
            assert b"\x1b" not in stream and b"\x07" not in stream, (command, stream[-400:])
        assert b"Traceback" not in run.stderr, (command, run.stderr[-2000:])
    assert "\\x1b" in _run("validate", f"missing{sequence}.yaml", cwd=tmp_path).stderr.decode()


@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",)), max_size=40))
def test_escaped_text_holds_no_control_but_line_feed_and_tab(text: str) -> None:
    shown = escape_controls(text)
    assert all(ch in "\n\t" or not (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F) for ch in shown)
    if all(ch in "\n\t" or ch.isprintable() for ch in text):
        assert shown == text


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["\n", "\r", "\r\n", "\x85", "\u2028", "\x0b"]),
       st.sampled_from(["rules: {GEO-001: off}", "elements: []", "network: {name: x}", "- x", "? a"]))
def test_a_file_name_with_a_line_break_is_never_yaml_structure_in_a_draft(tmp_path_factory: pytest.TempPathFactory,
                                                                          brk: str, payload: str) -> None:
    tmp = tmp_path_factory.mktemp("draft")
    name = f"t{brk}{payload}{brk}.csv"
    try:
        (tmp / name).write_text("id,type\nx-1,sbc\n")
    except (OSError, ValueError):
        return  # the file system refuses the name
    out = tmp / "draft.yaml"
    result = CliRunner().invoke(app, ["import", "table", str(tmp / name), "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(out.read_text())
    assert "rules" not in data and data["elements"] == [{"id": "x-1", "type": "sbc", **{
        k: v for k, v in data["elements"][0].items() if k not in ("id", "type")}}]
    header = [line for line in out.read_text().splitlines() if line.startswith("#")]
    assert any(payload in line for line in header)  # shown, escaped, inside a comment


@pytest.mark.parametrize("text", ["https://evil.example/x", "see http://a.example", "www.evil.example",
                                  "WWW.Evil.Example", "ops@example.net", "mailto:ops@example.net", "xmpp:a@b.example"])
def test_names_github_would_autolink_keep_no_trigger(text: str) -> None:
    shown = markdown_text(text)
    assert not re.search(r"(?<!\\)://", shown) and not re.search(r"(?i)www(?!\\)\.", shown)
    assert all(shown[i - 1] == "\\" for i, ch in enumerate(shown) if ch == "@")
    assert shown.replace("\\", "") == text  # the same text, shown literally


def test_autolink_names_in_a_rendered_runbook_are_escaped(tmp_path: Path) -> None:
    raw = yaml.safe_load(LAB.read_text())
    raw["network"]["name"] = "Lab www.evil.example https://evil.example ops@evil.example"
    inventory = tmp_path / "lab.yaml"
    inventory.write_text(yaml.safe_dump(raw, sort_keys=False))
    out = tmp_path / "runbooks"
    result = CliRunner().invoke(app, ["render", "runbook", str(inventory), "--out", str(out)])
    assert result.exit_code == 0, result.output
    texts = [p.read_text() for p in out.rglob("*.md")]
    assert any("evil" in t for t in texts)
    for text in texts:
        for line in text.splitlines():
            if "evil" in line and "`" not in line:
                assert "https://evil" not in line and "www.evil" not in line and " ops@evil" not in line, line


@pytest.mark.parametrize(("value", "ok"), [("3=sbc-coast", True), ("0=a", True), ("²=sbc-coast", False),
                                           ("3=", False), ("=x", False), ("3", False), ("-1=x", False),
                                           ("3=Sbc", False), ("3=a\nb", False), ("1234567890=x", False),
                                           ("٣=x", False), ("3=x=y", False)])
def test_set_option_values_are_checked(value: str, ok: bool) -> None:
    if ok:
        assert set_owner(value)[1] == value.split("=", 1)[1]
    else:
        with pytest.raises(ValueError):
            set_owner(value)


@pytest.mark.parametrize("suffix", ["", ".", "a..b", "e164.arpa\n", "x y", "*.arpa", "a" * 64 + ".arpa", "é.arpa"])
def test_enum_suffix_values_are_checked(tmp_path: Path, suffix: str) -> None:
    conf = ROOT / "examples" / "import" / "handwritten" / "named.conf"
    result = CliRunner().invoke(app, ["import", "bind", str(conf), "--out", str(tmp_path / "d.yaml"),
                                      "--enum-suffix", suffix])
    assert result.exit_code == 2 and "--enum-suffix" in result.output, result.output
    assert not (tmp_path / "d.yaml").exists()


@pytest.mark.parametrize(("line", "column_text"), [
    ("²  sip:192.0.2.1:5060 0 0 duid=pcscf-a", "set id"),
    ("1 sip:192.0.2.1:5060 ² 0 duid=pcscf-a", "flags"),
    ("1 sip:192.0.2.1:5060 8 -² duid=pcscf-a", "priority"),
    ("1 sip:192.0.2.1:5060 ٨ 0 duid=pcscf-a", "flags"),
])
def test_dispatcher_numbers_are_ascii_digits(tmp_path: Path, line: str, column_text: str) -> None:
    path = tmp_path / "dispatcher.list"
    path.write_text(f"# set 1: SBC sbc-a list\n{line}\n")
    problems = ImportProblems()
    import_dispatcher(path, problems, "sbc-pcscf")
    shown = [str(p) for p in problems.problems]
    assert any(p.startswith(f"{path}:2:") and column_text in p for p in shown), shown


def test_a_dispatcher_list_over_its_limit_is_refused_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "dispatcher.list"
    with path.open("wb") as fh:
        fh.write(b"# set 1: SBC sbc-a list\n1 sip:192.0.2.1:5060 8 0 duid=pcscf-a\n")
        fh.truncate(MAX_LIST_BYTES + 1)  # sparse: the size is what is refused
    problems = ImportProblems()
    draft = import_dispatcher(path, problems, "sbc-pcscf")
    assert [str(p) for p in problems.problems] == [
        f"{path}:1:1: is {MAX_LIST_BYTES + 1:,} bytes; at most {MAX_LIST_BYTES:,} are read"]
    assert not draft.elements
