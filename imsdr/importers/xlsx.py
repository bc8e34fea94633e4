"""A streaming reader for the first sheet of an XLSX workbook (SpreadsheetML, ECMA-376 part 1).

An element list is text in cells, so this reader knows only what that needs: the package's
relationships (which part is the workbook, its first sheet, its shared strings), the shared-string
table, and the sheet's rows, cells and merged ranges. The sheet is parsed as a stream of XML
events and each row is handed over as soon as it is read: a caller that stops (the importer's
row limit) stops the parsing. Every bound is checked while reading:

* the archive unpacks to at most ``MAX_UNPACKED_BYTES`` (the sizes its directory declares bound
  what :mod:`zipfile` unpacks),
* a part with a document type declaration is refused before it is parsed (spreadsheet programs
  never write one; it is where entity expansion and external entities live — expat bounds the
  expansion too, and never fetches an external entity),
* at most ``MAX_SHARED_STRINGS`` shared strings, ``MAX_SHEET_ROWS`` rows and ``MAX_SHEET_COLUMNS``
  cells in a row.

Whatever is wrong (a missing part, truncated or malformed XML, a shared-string index out of range,
a bound passed) is an :class:`XlsxProblem` with the spreadsheet row and column where reading stopped.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, Any, NamedTuple
from xml.etree.ElementTree import ParseError, iterparse

MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_SHARED_STRINGS = 2_000_000
MAX_SHEET_ROWS = 200_000
MAX_SHEET_COLUMNS = 256
_PROLOG_BYTES = 64 * 1024  # where a document type declaration would stand (before the root element)
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_STRICT = "{http://purl.oclc.org/ooxml/spreadsheetml/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_STRICT_REL_ID = "{http://purl.oclc.org/ooxml/officeDocument/relationships}id"
_CELL_REF = re.compile(r"([A-Z]{1,3})([0-9]{1,7})")
_INTEGER = re.compile(r"-?[0-9]{1,15}")


class XlsxProblem(Exception):
    """Why the workbook cannot be read, at the sheet's ``row`` and ``column`` (1 when unknown)."""

    def __init__(self, reason: str, row: int = 1, column: int = 1) -> None:
        super().__init__(reason)
        self.reason = reason
        self.row = max(row, 1)
        self.column = max(column, 1)


def _unreadable(reason: str, row: int = 1, column: int = 1) -> XlsxProblem:
    return XlsxProblem(f"not a readable XLSX workbook: {reason}", row, column)


class Cell(NamedTuple):
    text: str | None  # as the spreadsheet shows it; None: empty
    formula: bool


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - 64
    return number


class _Package:
    def __init__(self, raw: bytes) -> None:
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(raw))
            unpacked = sum(info.file_size for info in self.archive.infolist())
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise _unreadable(f"not a zip archive ({exc})") from None
        if unpacked > MAX_UNPACKED_BYTES:
            raise XlsxProblem(f"the workbook unpacks to {unpacked:,} bytes; at most {MAX_UNPACKED_BYTES:,} are read")
        self.names = set(self.archive.namelist())

    def open(self, name: str) -> IO[bytes]:
        if name not in self.names:
            raise _unreadable(f"the workbook has no part {name!r}")
        source = self.archive.open(name)
        prolog = source.read(_PROLOG_BYTES)
        if b"<!DOCTYPE" in prolog or b"<!ENTITY" in prolog:
            source.close()
            raise _unreadable(f"part {name!r} declares a document type (entities); a workbook never needs one")
        return _Rejoined(prolog, source)

    def relationships(self, part: str) -> dict[str, tuple[str, str]]:
        """Id -> (type, target part) of ``part``'s relationships."""
        folder, base = posixpath.split(part)
        name = posixpath.join(folder, "_rels", base + ".rels")
        out: dict[str, tuple[str, str]] = {}
        for element in _elements(self.open(name), "Relationship"):
            target = element.get("Target", "")
            if element.get("TargetMode") == "External":
                continue
            resolved = target.lstrip("/") if target.startswith("/") \
                else posixpath.normpath(posixpath.join(folder, target))
            out[element.get("Id", "")] = (element.get("Type", "").rsplit("/", 1)[-1], resolved)
        return out


class _Rejoined(io.RawIOBase):
    """The bytes already read from a part's start, then the rest of the part."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head = head
        self.rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            size = min(len(buffer), len(self.head))
            buffer[:size] = self.head[:size]
            self.head = self.head[size:]
            return size
        data = self.rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.rest.close()
        super().close()


def _elements(source: IO[bytes], local: str) -> Iterator[Any]:
    """The elements named ``local`` (any namespace) of a small part, each when it ends."""
    with source:
        for _event, element in iterparse(source):
            if _local(element.tag) == local:
                yield element


def _text(element: Any) -> str:
    """The text of a string item: its ``t`` runs, phonetic runs (``rPh``) left out."""
    parts: list[str] = []
    for child in element:
        name = _local(child.tag)
        if name == "t":
            parts.append(child.text or "")
        elif name == "r":
            parts.extend(t.text or "" for t in child if _local(t.tag) == "t")
    return "".join(parts)


def _shared_strings(package: _Package, target: str | None) -> list[str]:
    if target is None:
        return []
    strings: list[str] = []
    with package.open(target) as source:
        for _event, element in iterparse(source):
            if _local(element.tag) == "si":
                if len(strings) >= MAX_SHARED_STRINGS:
                    raise XlsxProblem(f"more than {MAX_SHARED_STRINGS:,} shared strings")
                strings.append(_text(element))
                element.clear()
    return strings


def _first_sheet(package: _Package) -> tuple[str, str | None]:
    """The first sheet's part and the shared strings' part (None if the workbook has none)."""
    workbook = next((target for kind, target in package.relationships("").values() if kind == "officeDocument"),
                    None)
    if workbook is None:
        raise _unreadable("the package names no workbook part")
    relations = package.relationships(workbook)
    for element in _elements(package.open(workbook), "sheet"):
        ident = element.get(_REL_ID) or element.get(_STRICT_REL_ID) or ""
        if ident not in relations:
            raise _unreadable(f"the first sheet's relationship {ident!r} is not in the workbook's relationships")
        shared = next((target for kind, target in relations.values() if kind == "sharedStrings"), None)
        return relations[ident][1], shared
    raise _unreadable("the workbook has no sheet")


def _cell(element: Any, strings: list[str], row: int, column: int) -> Cell:
    kind = element.get("t", "n")
    value = formula = None
    inline: Any = None
    for child in element:
        name = _local(child.tag)
        if name == "v":
            value = child.text
        elif name == "f":
            formula = True
        elif name == "is":
            inline = child
    if kind == "inlineStr":
        return Cell(_text(inline) if inline is not None else None, bool(formula))
    if value is None:
        return Cell(None, bool(formula))
    if kind == "s":
        if not value.isascii() or not value.isdigit() or int(value) >= len(strings):
            raise _unreadable(f"cell {element.get('r') or column} names shared string {value[:20]!r}; the workbook "
                              f"has {len(strings):,}", row, column)
        return Cell(strings[int(value)], bool(formula))
    if kind == "n":
        return Cell(_number(value, row, column), bool(formula))
    if kind == "b":
        return Cell("True" if value.strip() == "1" else "False", bool(formula))
    return Cell(value, bool(formula))  # str (a formula's text), e (an error such as #N/A), d (an ISO date)


def _number(text: str, row: int, column: int) -> str:
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return str(int(text))
    try:
        value = float(text)
    except ValueError:
        raise _unreadable(f"cell value {text[:20]!r} is not a number", row, column) from None
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else str(value)


def sheet_rows(raw: bytes) -> Iterator[tuple[int, list[Cell]]]:
    """(row number, its cells from column A) of the workbook's first sheet, as they are read;
    rows the sheet leaves out are not yielded. Raises :class:`XlsxProblem`."""
    row = column = 1
    try:
        package = _Package(raw)
        sheet, shared = _first_sheet(package)
        strings = _shared_strings(package, shared)
        with package.open(sheet) as source:
            yield from _rows(iterparse(source), strings)
    except XlsxProblem:
        raise
    except ParseError as exc:
        raise _unreadable(f"malformed XML: {exc}", row, column) from None
    except (KeyError, OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
        raise _unreadable(f"cannot read the workbook: {exc}", row, column) from None
    except (MemoryError, RecursionError) as exc:  # a resource limit keeps where it was reading
        raise XlsxProblem(f"{'out of memory' if isinstance(exc, MemoryError) else 'nesting too deep'} "
                          "reading the workbook", row, column) from None


def _rows(events: Iterator[tuple[str, Any]], strings: list[str]) -> Iterator[tuple[int, list[Cell]]]:
    """Rows from the sheet's ``end`` events; a row's element is emptied once read (what is left
    of it is a few dozen bytes, and at most MAX_SHEET_ROWS rows are read)."""
    row = 0  # the last row read
    column = 0
    cells: list[Cell] = []
    tags: dict[str, str] = {}  # element tag -> its local name, for the few that matter
    try:
        for _event, element in events:
            tag = element.tag
            name = tags.get(tag)
            if name is None:
                name = tags[tag] = _local(tag)
            if name == "c":
                ref = _CELL_REF.fullmatch(element.get("r") or "")
                column = _column_number(ref[1]) if ref else column + 1
                at = int(ref[2]) if ref else row + 1
                if column > MAX_SHEET_COLUMNS:
                    raise XlsxProblem(f"a cell in column {column:,}; an element list has at most "
                                      f"{MAX_SHEET_COLUMNS} columns", at, MAX_SHEET_COLUMNS + 1)
                if column > len(cells):
                    cells.extend([_EMPTY] * (column - 1 - len(cells)))
                    cells.append(_cell(element, strings, at, column))
            elif name == "row":
                number = element.get("r")
                row = int(number) if number and number.isascii() and number.isdigit() else row + 1
                if row > MAX_SHEET_ROWS:
                    raise XlsxProblem(f"more than {MAX_SHEET_ROWS:,} rows in the sheet: split the table", row)
                yield row, cells
                element.clear()
                cells, column = [], 0
            elif name == "mergeCell":
                ref = _CELL_REF.match(element.get("ref") or "")
                if ref and ref[2] == "1":
                    raise XlsxProblem(f"merged header cells {element.get('ref')}: one column per header", 1,
                                      _column_number(ref[1]))
    except ParseError as exc:
        raise _unreadable(f"malformed XML: {exc}", max(row + 1, 1), max(column, 1)) from None


_EMPTY = Cell(None, False)
