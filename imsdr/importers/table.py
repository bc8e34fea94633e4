"""Import the element list planners keep in a spreadsheet (CSV or XLSX).

One row per element, one header row naming the columns (``COLUMNS``; order free, unknown columns
refused, ``id`` required). Lists inside a cell are separated by spaces or commas. Each cell is
checked by the same rules as the inventory field it fills, and a bad cell is reported as
``FILE:ROW:COLUMN`` (row and column numbers as the spreadsheet shows them). Workbooks with formulas
or merged header cells are refused: a formula's value is whatever the last program that saved the
file computed, and a merged header names no single column.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from imsdr.importers.draft import Draft
from imsdr.importers.errors import ImportProblems

MAX_ROWS = 50_000  # ten times the national example's elements
MAX_TABLE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Column:
    name: str
    field: str  # dotted path in the element, or pair/pool
    is_list: bool
    help: str


COLUMNS: tuple[Column, ...] = (
    Column("id", "id", False, "element id (DNS label, e.g. cscf-a-1)"),
    Column("type", "type", False, "enum_dns, sbc, pcscf, cscf, hss, slf, mgcf, imgw or as"),
    Column("site", "site", False, "id of the site the element is located at"),
    Column("vendor", "vendor", False, "vendor name"),
    Column("addresses", "addresses", True, "signalling addresses (IPv4/IPv6)"),
    Column("port", "port", False, "SIP port (default 5060)"),
    Column("tls_port", "tls_port", False, "SIPS port (default 5061)"),
    Column("transports", "transports", True, "udp, tcp, tls"),
    Column("fqdn", "fqdn", False, "host name when not <id>.<primary home domain>"),
    Column("roles", "roles", True, "cscf only: icscf, scscf, ecscf, bgcf"),
    Column("features", "features", True, "virtual_sbc, restoration_data, sticky_clients, passthrough"),
    Column("serves", "serves", True, "sbc only: local networks served"),
    Column("pcscfs", "pcscfs", True, "sbc only: P-CSCFs in order of preference"),
    Column("options_probing", "options_probing", False, "active, passive or off"),
    Column("registered_users", "capacity.registered_users", False, "capacity: registered users"),
    Column("subscribers", "capacity.subscribers", False, "capacity: HSS/SLF subscriber records"),
    Column("sessions", "capacity.sessions", False, "capacity: simultaneous sessions"),
    Column("busy_hour_erlangs", "capacity.busy_hour_erlangs", False, "capacity: busy-hour Erlangs"),
    Column("circuits", "capacity.circuits", False, "capacity: trunk circuits (MGCF/IM-MGW)"),
    Column("queries_per_second", "capacity.queries_per_second", False, "capacity: DNS queries per second"),
    Column("pair", "pair", False, "id of the 1+1 pair the element belongs to"),
    Column("pool", "pool", False, "id of the N+K pool the element belongs to"),
)
_BY_NAME = {c.name: c for c in COLUMNS}
_INT_FIELDS = {"port", "tls_port", "capacity.registered_users", "capacity.subscribers", "capacity.sessions",
               "capacity.circuits", "capacity.queries_per_second"}
_NUMBER = re.compile(r"[0-9]{1,13}(?:\.[0-9]{1,6})?")


def template_csv() -> str:
    """The header row and one example row: the start of a planner's element list."""
    example = {"id": "cscf-a-1", "type": "cscf", "site": "site-a", "vendor": "vendor-y",
               "addresses": "192.0.2.20 2001:db8:a::20", "roles": "icscf scscf", "registered_users": "2000000",
               "sessions": "60000", "pool": "cscf-pool"}
    header = ",".join(c.name for c in COLUMNS)
    row = ",".join(example.get(c.name, "") for c in COLUMNS)
    return f"{header}\n{row}\n"


def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _csv_rows(path: Path, problems: ImportProblems) -> Iterator[tuple[int, list[str]]]:
    from imsdr.untrusted import UntrustedFile, open_untrusted_file

    try:
        with open_untrusted_file(path, MAX_TABLE_BYTES, encoding="utf-8-sig", newline="") as fh:
            yield from enumerate(csv.reader(fh), 1)
    except UntrustedFile as exc:
        problems.add(str(path), 1, 1, exc.reason)
    except OSError as exc:
        problems.add(str(path), 1, 1, f"cannot read: {exc.strerror}")
    except UnicodeDecodeError as exc:
        problems.add(str(path), 1, 1, f"not UTF-8 text (byte {exc.start})")
    except csv.Error as exc:
        problems.add(str(path), 1, 1, f"not a CSV file: {exc}")


def _xlsx_rows(path: Path, problems: ImportProblems) -> Iterator[tuple[int, list[str]]]:
    """The first sheet's rows, streamed (:mod:`imsdr.importers.xlsx`): a row is read when the
    importer asks for it, so the row limit stops the reading, not a count after it. Whatever is
    wrong with the workbook is a problem at the row and column where reading stopped."""
    from imsdr.importers.xlsx import XlsxProblem, sheet_rows
    from imsdr.untrusted import UntrustedFile, read_untrusted

    file = str(path)
    try:
        raw = read_untrusted(path, MAX_TABLE_BYTES)
    except UntrustedFile as exc:
        problems.add(file, 1, 1, exc.reason)
        return
    try:
        for number, cells in sheet_rows(raw):
            values: list[str] = []
            for col, cell in enumerate(cells, 1):
                if cell.formula:
                    problems.add(file, number, col, f"cell {_column_letter(col - 1)}{number} holds a formula; "
                                                    "paste its value instead")
                values.append("" if cell.formula or cell.text is None else cell.text)
            yield number, values
    except XlsxProblem as exc:
        problems.add(file, exc.row, exc.column, exc.reason)


def import_table(path: Path, problems: ImportProblems) -> Draft:
    from imsdr.untrusted import UntrustedFile, open_untrusted_file

    try:  # a link, FIFO, device or oversize file is refused before either reader opens it
        open_untrusted_file(path, MAX_TABLE_BYTES).close()
    except UntrustedFile as exc:
        problems.add(str(path), 1, 1, exc.reason)
        return Draft()
    rows = _xlsx_rows(path, problems) if path.suffix.lower() == ".xlsx" else _csv_rows(path, problems)
    draft = Draft()
    file = str(path)
    header: list[Column | None] = []
    validators: dict[str, Any] = {}
    # the rows are counted as they are read, before any is checked: a table over the limit is
    # refused when its first row too many is read, not after checking the rows before it
    elements: list[tuple[int, list[str]]] = []
    for number, row in rows:
        if number == 1:
            header = _header(file, row, problems)
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(elements) == MAX_ROWS:
            problems.add(file, number, 1, f"more than {MAX_ROWS} element rows: split the table")
            return draft
        elements.append((number, row))
    count = len(elements)
    for number, row in elements:
        _row(draft, file, number, header, row, problems, validators)
    _named_places(draft, file)
    if not header and not problems.problems:
        problems.add(file, 1, 1, "no header row")
    draft.sources.append(f"{file}: {count} element rows")
    return draft


def _named_places(draft: Draft, file: str) -> None:
    """The sites the rows place elements at, and the local networks their SBCs serve: entries of
    their own in the draft (their other fields placeholders), so the draft's references hold."""
    for ident, el in draft.elements.items():
        site = el.get("site")
        if isinstance(site, str) and site not in draft.sites:
            draft.entity("sites", site)
            draft.origin[f"sites[{site}]"] = draft.origin.get(f"elements[{ident}].site", file)
        for local in el.get("serves") or []:
            if local not in draft.local_networks:
                draft.entity("local_networks", local)
                draft.origin[f"local_networks[{local}]"] = draft.origin.get(f"elements[{ident}].serves", file)


def _header(file: str, row: list[str], problems: ImportProblems) -> list[Column | None]:
    out: list[Column | None] = []
    seen: set[str] = set()
    for col, text in enumerate(row, 1):
        name = text.strip().lower()
        if not name:
            out.append(None)
            continue
        column = _BY_NAME.get(name)
        if column is None:
            import difflib

            close = difflib.get_close_matches(name, _BY_NAME, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.add(file, 1, col, f"unknown column {text.strip()!r}{hint}; columns: "
                                       f"{', '.join(_BY_NAME)}")
        elif name in seen:
            problems.add(file, 1, col, f"column {name!r} appears twice")
        seen.add(name)
        out.append(column)
    if "id" not in seen:
        problems.add(file, 1, 1, "the header has no 'id' column")
    return out


def _validator(field_path: str) -> Any:
    from pydantic import TypeAdapter

    from imsdr.inventory.schema import Capacity, Element

    model, name = (Capacity, field_path.split(".", 1)[1]) if field_path.startswith("capacity.") else \
        (Element, field_path)
    info = model.model_fields[name]
    if not info.metadata:
        return TypeAdapter(info.annotation)
    from typing import Annotated

    return TypeAdapter(Annotated[info.annotation, *info.metadata])  # type: ignore[valid-type]


def _row(draft: Draft, file: str, number: int, header: list[Column | None], row: list[str],
         problems: ImportProblems, validators: dict[str, Any]) -> None:
    """One element row; ``validators``: this import's field validators, built once per field."""
    from pydantic import ValidationError

    values: dict[str, Any] = {}
    ok = True
    for col, (column, cell) in enumerate(zip(header, row, strict=False), 1):
        text = cell.strip()
        if column is None or not text:
            continue
        if column.field in ("pair", "pool"):
            raw: Any = text
            adapter = validators.get("id") or validators.setdefault("id", _validator("id"))
        else:
            raw = text.replace(",", " ").split() if column.is_list else text
            if column.field in _INT_FIELDS or column.field == "capacity.busy_hour_erlangs":
                if not _NUMBER.fullmatch(text) or (column.field in _INT_FIELDS and "." in text):
                    problems.add(file, number, col, f"{column.name}: {text!r} is not a "
                                                    f"{'whole ' if column.field in _INT_FIELDS else ''}number")
                    ok = False
                    continue
                raw = float(text) if "." in text else int(text)
            adapter = validators.get(column.field) or validators.setdefault(column.field, _validator(column.field))
        try:
            value = adapter.validate_python(raw)
        except ValidationError as exc:
            from imsdr.inventory.build import pydantic_message

            err = exc.errors(include_url=False)[0]
            reason = pydantic_message(err, (column.field, *err["loc"]), text)  # the loader's wording
            problems.add(file, number, col, f"{column.name}: {reason}")
            ok = False
            continue
        values[column.field] = [getattr(v, "value", v) for v in value] if isinstance(value, list) \
            else getattr(value, "value", value)
    ident = values.get("id")
    if not ok or not ident:
        if ok:
            problems.add(file, number, 1, "the row has no id")
        return
    if ident in draft.elements:
        problems.add(file, number, 1, f"element {ident!r} appears twice")
        return
    element = draft.entity("elements", ident)
    draft.order[ident] = number
    for key, value in values.items():
        if key == "id":
            continue
        if key in ("pair", "pool"):
            group = draft.entity("pairs" if key == "pair" else "pools", value)
            group.setdefault("members", []).append(ident)
        elif key.startswith("capacity."):
            element.setdefault("capacity", {})[key.split(".", 1)[1]] = value
        else:
            element[key] = value
        draft.origin[f"elements[{ident}].{key}"] = f"{file}:{number}"
