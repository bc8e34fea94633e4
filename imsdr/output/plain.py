"""Tables as plain lines, for pipes, CI logs and ``--format text``.

A Rich table laid out for a terminal wraps at the console's width and draws boxes: in a CI log
or a pre-commit hook (80 columns, no terminal) paths and numbers are split mid-token
(``dns/kamailio/dis`` / ``patcher-pcscf-ic`` / ``scf.list``). Here a table is written as its
title on one line, its header on one line and one line per row, columns aligned with spaces and
never wrapped; a cell that holds several lines (a finding and its fix) is joined into one with
`` — ``. Nothing is drawn, nothing is coloured, so ``grep``, ``cut`` and ``awk`` read the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from imsdr.diagnostics import one_line

if TYPE_CHECKING:
    from rich.table import Table

GAP = "  "


def cell_text(value: Any) -> str:
    """One line of text for a table cell (a str, a rich Text or anything with a plain form): its
    lines joined with `` — `` by :func:`imsdr.diagnostics.one_line`, which escapes the rest."""
    text = getattr(value, "plain", None)
    if text is None:
        text = "" if value is None else str(value)
    return one_line(text, joiner=" — ")


def table_lines(table: Table) -> list[str]:
    """The plain lines of ``table``: title, header, rows, caption; no trailing spaces."""
    columns = table.columns
    rows = [[cell_text(cell) for cell in column.cells] for column in columns]
    headers = [cell_text(column.header) for column in columns]
    count = max((len(cells) for cells in rows), default=0)
    # the last column is not padded: a long message does not push every row out
    widths = [max([len(headers[i]), *(len(c) for c in rows[i])]) for i in range(len(columns))]
    justify = [column.justify for column in columns]

    def line(values: list[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            last = i == len(values) - 1
            if justify[i] == "right":
                parts.append(value.rjust(widths[i]))
            else:
                parts.append(value if last else value.ljust(widths[i]))
        return GAP.join(parts).rstrip()

    out = []
    title = cell_text(table.title) if table.title else ""
    if title:
        out.append(title)
    if table.show_header and any(headers):
        out.append(line(headers))
    out.extend(line([rows[c][r] if r < len(rows[c]) else "" for c in range(len(columns))]) for r in range(count))
    caption = cell_text(table.caption) if table.caption else ""
    if caption:
        out.append(caption)
    return out


class PlainConsole(Console):
    """A console for output that is not a terminal: tables become plain lines (:func:`table_lines`),
    everything else is printed as Rich prints it, without wrapping."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Console's own name
        from rich.table import Table

        pending: list[Any] = []
        for obj in objects:
            if isinstance(obj, Table):
                if pending:
                    super().print(*pending, **kwargs)
                    pending = []
                self.file.write("".join(f"{text}\n" for text in table_lines(obj)))
            else:
                pending.append(obj)
        if pending or not objects:
            super().print(*pending, **kwargs)
