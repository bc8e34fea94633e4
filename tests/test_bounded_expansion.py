"""Bounded expansion in every reader of `imsdr import`: a source that names more than it holds
(includes, $GENERATE, entities, rows, nesting) is refused at the FILE:LINE that asks for too much.

Each class is generated: include graphs (loops through any number of files, at any block depth,
diamonds that multiply reads), $GENERATE ranges around the bound, hostile XLSX workbooks built part
by part, nesting depths around the limit. Every case ends in exit 2 with the location, no
traceback, nothing written — and in bounded time (the child-process cases run under a timeout).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.importers.errors import ImportProblems
from imsdr.importers.namedconf import MAX_INCLUDE_DEPTH, MAX_INCLUDED_FILES, MAX_NESTING, read_named_conf
from imsdr.importers.table import MAX_ROWS
from imsdr.importers.xlsx import MAX_SHEET_COLUMNS
from imsdr.importers.zonedata import MAX_GENERATED, generate_problem

VIEW = 'view "v" {\n  match-clients { any; };\n'


def refused(*args: str | Path) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.output


def _problems(conf: Path) -> list[str]:
    problems = ImportProblems()
    read_named_conf(conf, problems)
    return [str(p) for p in problems.problems]


# --- includes ------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 6), in_view=st.lists(st.booleans(), min_size=6, max_size=6),
       copies=st.integers(1, 3))
def test_an_include_loop_through_any_files_at_any_depth_is_refused_at_its_statement(
        tmp_path_factory: pytest.TempPathFactory, length: int, in_view: list[bool], copies: int) -> None:
    """named.conf -> f1 -> ... -> f<length> -> f1, each include at the top or inside a view, each
    repeated ``copies`` times (the reproducer: three self-includes, 3^16 reads before)."""
    tmp = tmp_path_factory.mktemp("loop")
    names = [f"f{i}.conf" for i in range(1, length + 1)]
    (tmp / "named.conf").write_text('include "f1.conf";\n')
    for i, name in enumerate(names):
        target = names[(i + 1) % length]
        include = "".join(f'include "{target}";\n' for _ in range(copies))
        text = f"{VIEW}{include}}};\n" if in_view[i] else include
        (tmp / name).write_text(text)
    problems = _problems(tmp / "named.conf")
    closing = names[-1]
    line = 3 if in_view[length - 1] else 1
    assert any(p.startswith(f"{tmp / closing}:{line}:") and "is a loop" in p for p in problems), problems


@pytest.mark.parametrize("where", ["top", "view", "options", "view in an included file"])
def test_one_depth_limit_for_every_include_path(tmp_path: Path, where: str) -> None:
    """A chain of distinct files one deeper than the limit; the include inside a view used to
    bypass the limit and end in an AttributeError."""
    depth = MAX_INCLUDE_DEPTH + 1
    for i in range(depth + 1):
        nxt = f'include "c{i + 1}.conf";\n' if i < depth else 'acl "deep" { 10.0.0.0/8; };\n'
        if where == "view" or (where == "view in an included file" and i == 1):
            text = f"{VIEW}{nxt}}};\n" if i < depth else ""
        elif where == "options" and i < depth:
            text = f"options {{\n{nxt}}};\n"
        else:
            text = nxt
        (tmp_path / f"c{i}.conf").write_text(text)
    problems = _problems(tmp_path / "c0.conf")
    assert any(f"includes nested deeper than {MAX_INCLUDE_DEPTH}" in p for p in problems), problems
    assert not any("Error" in p for p in problems)


def test_a_diamond_of_includes_is_bounded_in_reads(tmp_path: Path) -> None:
    """Each file includes the next one twice: no loop, but 2^20 reads without a bound on them."""
    for i in range(20):
        (tmp_path / f"d{i}.conf").write_text(f'include "d{i + 1}.conf";\ninclude "d{i + 1}.conf";\n'
                                             if i < 19 else 'acl "x" { 10.0.0.0/8; };\n')
    problems = _problems(tmp_path / "d0.conf")
    assert any(f"more than {MAX_INCLUDED_FILES:,} includes" in p for p in problems), problems[:3]


def test_include_loop_through_the_cli_is_exit_2_at_the_including_line(tmp_path: Path) -> None:
    conf = tmp_path / "named.conf"
    conf.write_text('include "named.conf";\ninclude "named.conf";\ninclude "named.conf";\n')
    out = refused("import", "bind", conf, "--out", tmp_path / "d.yaml")
    assert f"{conf}:1:1: include 'named.conf' is a loop" in out
    assert not (tmp_path / "d.yaml").exists()


@pytest.mark.parametrize("depth", [MAX_NESTING, MAX_NESTING + 1, 100_000])
def test_nested_braces_keep_their_location(tmp_path: Path, depth: int) -> None:
    conf = tmp_path / "named.conf"
    conf.write_text("options {\n" + "x {" * (depth - 1) + "\n" + "};" * depth + "\n")
    problems = _problems(conf)
    if depth <= MAX_NESTING:
        assert not any("nested deeper" in p for p in problems)
    else:
        assert problems == [f"{conf}:2:{3 * MAX_NESTING}: blocks nested deeper than {MAX_NESTING} levels; "
                            "a configuration never needs that"]


# --- $GENERATE -----------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**8), st.integers(0, 10**8), st.integers(1, 10**4)), max_size=4),
       st.sampled_from(["$GENERATE", "$generate", "$Generate"]))
def test_generate_is_bounded_at_the_line_that_passes_the_bound(ranges: list[tuple[int, int, int]],
                                                               spelling: str) -> None:
    lines = ["$TTL 60", "@ IN SOA ns h 1 2 3 4 5"]
    total, expected = 0, None
    for start, stop, step in ranges:
        lines.append(f"{spelling} {start}-{stop}/{step} h$ A 192.0.2.1")
        if expected is None:
            if start > stop:
                expected = len(lines)
            else:
                total += (stop - start) // step + 1
                if total > MAX_GENERATED:
                    expected = len(lines)
    found = generate_problem("\n".join(lines).encode())
    assert (found[0] if found else None) == expected


@pytest.mark.parametrize("kind", ["home", "enum"])
def test_one_huge_generate_is_refused_at_its_line_in_bounded_time(tmp_path: Path, kind: str) -> None:
    (tmp_path / "named.conf").write_text(
        'zone "ims.example.net" { type master; file "db"; };\n'
        'zone "1.6.8.e164.arpa" { type master; file "enum"; };\n')
    soa = "$TTL 60\n@ IN SOA ns.ims.example.net. h.ims.example.net. 1 2 3 4 5\n@ IN NS ns.ims.example.net.\n"
    home = soa + "ns IN A 192.0.2.1\n"
    enum = soa
    if kind == "home":
        home += "$GENERATE 1-50000000 h$ A 192.0.2.2\n"
    else:
        enum += '$GENERATE 0-9999999 $ NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:+1@ims.example.net!" .\n'
    (tmp_path / "db").write_text(home)
    (tmp_path / "enum").write_text(enum)
    run = subprocess.run([sys.executable, "-m", "imsdr", "import", "bind", "named.conf", "--out", "d.yaml"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    file, line = ("db", 5) if kind == "home" else ("enum", 4)
    assert f"{file}:{line}:1: $GENERATE makes" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "d.yaml").exists()


# --- XLSX ----------------------------------------------------------------------------------------

HEADER = ["id", "type", "site", "vendor", "addresses"]
ROW = ["x-1", "sbc", "a", "v", "192.0.2.1"]
_SHEET = "xl/worksheets/sheet1.xml"
_SHARED = "xl/sharedStrings.xml"
_LAUGHS = ('<!DOCTYPE worksheet [<!ENTITY l0 "lol">'
           + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)) + "]>")


def _column(index: int) -> str:
    letters = ""
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def workbook(rows: list[list[str]], *, prefix: str = "", value: str | None = None, drop: str | None = None,
             cut: str | None = None, extra_rows: int = 0, inline: bool = False) -> bytes:
    """An XLSX with shared strings (as spreadsheet programs write it), built part by part so that
    each part can be made hostile: ``prefix`` before the sheet's root (a DTD), ``value`` instead of
    the first cell's shared-string index, ``drop`` a part left out, ``cut`` a part cut in half,
    ``extra_rows`` rows of one cell after ``rows`` (streamed into the archive); ``inline``: the
    cells after the header hold their text (as openpyxl writes it), not a shared-string index."""
    import openpyxl

    base = io.BytesIO()
    openpyxl.Workbook().save(base)
    source = zipfile.ZipFile(base)
    strings: list[str] = []
    xml_rows = []
    for r, row in enumerate(rows, 1):
        cells = []
        for c, text in enumerate(row, 1):
            if inline and r > 1:
                cells.append(f'<c r="{_column(c)}{r}" t="inlineStr"><is><t>{text}</t></is></c>')
                continue
            strings.append(text)
            index = value if value is not None and r == 1 and c == 1 else str(len(strings) - 1)
            cells.append(f'<c r="{_column(c)}{r}" t="s"><v>{index}</v></c>')
        xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    parts = {info.filename: source.read(info.filename) for info in source.infolist()}
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                     b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>", b'<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/'
                             b'2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>')
    parts[_SHARED] = ('<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                      + "".join(f"<si><t>{s}</t></si>" for s in strings) + "</sst>").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            if name in (drop, _SHEET):
                continue
            archive.writestr(name, data[: len(data) // 2] if name == cut else data)
        if drop != _SHEET:
            head = (f'{prefix}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                    f'<sheetData>{"".join(xml_rows)}').encode()
            with archive.open(_SHEET, "w") as sheet:
                first = len(rows) + 1
                if cut == _SHEET:
                    head = head[: len(head) // 2]
                else:
                    head += b"</sheetData></worksheet>" if not extra_rows else b""
                sheet.write(head)
                for start in range(first, first + extra_rows, 10_000):
                    sheet.write("".join(f'<row r="{r}"><c r="A{r}" t="s"><v>1</v></c></row>'
                                        for r in range(start, min(start + 10_000, first + extra_rows))).encode())
                if extra_rows:
                    sheet.write(b"</sheetData></worksheet>")
    return out.getvalue()


XLSX_CASES = {
    # name: (workbook arguments, where the refusal must stand)
    "billion laughs": ({"prefix": _LAUGHS, "value": "&l9;"}, r":\d+:\d+: not a readable XLSX workbook"),
    "billion laughs in shared strings": ({"prefix": "", "value": "0", "cut": None}, None),
    "external entity": ({"prefix": '<!DOCTYPE worksheet [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
                         "value": "&e;"}, r":\d+:\d+: not a readable XLSX workbook"),
    "missing sheet": ({"drop": _SHEET}, r":\d+:\d+: not a readable XLSX workbook"),
    "missing shared strings": ({"drop": _SHARED}, r":\d+:\d+: not a readable XLSX workbook"),
    "truncated sheet XML": ({"cut": _SHEET}, r":\d+:\d+: not a readable XLSX workbook"),
    "truncated shared strings": ({"cut": _SHARED}, r":\d+:\d+: not a readable XLSX workbook"),
    "bad shared-string index": ({"value": "999"}, r":\d+:\d+: not a readable XLSX workbook"),
    "negative shared-string index": ({"value": "-1"}, None),
    "shared-string index not a number": ({"value": "x"}, r":\d+:\d+: not a readable XLSX workbook"),
}


@pytest.mark.parametrize("case", sorted(XLSX_CASES))
def test_hostile_workbooks_are_located_refusals(tmp_path: Path, case: str) -> None:
    arguments, where = XLSX_CASES[case]
    if case == "billion laughs in shared strings":
        data = workbook([HEADER, ROW])
        data = _replace_part(data, _SHARED, lambda xml: xml.replace(
            b"<sst", _LAUGHS.replace("worksheet", "sst").encode() + b"<sst", 1).replace(b"<t>id</t>", b"<t>&l9;</t>"))
        where = r":\d+:\d+: not a readable XLSX workbook"
    else:
        data = workbook([HEADER, ROW], **arguments)
    path = tmp_path / "elements.xlsx"
    path.write_bytes(data)
    out = refused("import", "table", path, "--out", tmp_path / "d.yaml")
    if where is not None:
        assert re.search(re.escape(str(path)) + where, out), out
    assert "lollollol" not in out and "root:" not in out  # nothing expanded, nothing read from outside
    assert not (tmp_path / "d.yaml").exists()


def _replace_part(data: bytes, name: str, edit: object) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            part = source.read(info.filename)
            archive.writestr(info.filename, edit(part) if info.filename == name else part)  # type: ignore[operator]
    return out.getvalue()


def test_a_good_shared_string_workbook_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "elements.xlsx"
    path.write_bytes(workbook([HEADER, ROW]))
    result = CliRunner().invoke(app, ["import", "table", str(path), "--out", str(tmp_path / "d.yaml")])
    assert result.exit_code == 0, result.output
    assert "id: x-1" in (tmp_path / "d.yaml").read_text()


def test_a_million_rows_stop_at_the_row_limit_while_reading(tmp_path: Path) -> None:
    """The row limit is applied as rows are streamed: the import stops at row MAX_ROWS + 2 without
    loading the rest (a child process under a timeout and an address-space limit)."""
    path = tmp_path / "elements.xlsx"
    rows = [HEADER] + [[f"x-{i}", "sbc", "a", "v", "192.0.2.1"] for i in range(MAX_ROWS + 1)]
    path.write_bytes(workbook(rows, extra_rows=1_000_000 - len(rows), inline=True))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20)); "
            "from imsdr.cli.app import main; sys.argv = ['imsdr'] + sys.argv[1:]; main()")
    run = subprocess.run([sys.executable, "-c", code, "import", "table", str(path), "--out", str(tmp_path / "d.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"{path}:{MAX_ROWS + 2}:1: more than {MAX_ROWS} element rows" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_row_wider_than_any_element_list_is_refused_at_its_row(tmp_path: Path) -> None:
    path = tmp_path / "elements.xlsx"
    path.write_bytes(workbook([HEADER, ROW, ["x"] * 300]))
    out = refused("import", "table", path, "--out", tmp_path / "d.yaml")
    assert f"{path}:3:{MAX_SHEET_COLUMNS + 1}: a cell in column {MAX_SHEET_COLUMNS + 1}" in out


def test_running_out_of_memory_keeps_the_file_and_the_including_line(tmp_path: Path) -> None:
    """A child process with a small address space reads an included file that needs more: the
    refusal names the include statement and the file, exit 2, no traceback."""
    (tmp_path / "named.conf").write_text('options {\n  directory ".";\n};\ninclude "big.conf";\n')
    (tmp_path / "big.conf").write_text("acl big {\n" + "  10.0.0.1;\n" * 1_300_000 + "};\n")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20)); "
            "from imsdr.cli.app import main; sys.argv = ['imsdr'] + sys.argv[1:]; main()")
    run = subprocess.run([sys.executable, "-c", code, "import", "bind", "named.conf", "--out", "d.yaml"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert "named.conf:4:1: big.conf: out of memory reading it" in run.stderr, run.stderr[-2000:]
