"""Problems (invalid input) and findings (DR design issues) as plain values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


def one_line(text: str, joiner: str | None = None) -> str:
    """``text`` with every non-printable character escaped ('\\n', '\\x85', '\\u2028'): a diagnostic
    is one line on a terminal or in a log, whatever the inventory (or its file name) holds.

    ``joiner``: the text's lines are first joined with it instead (blank lines dropped, each line's
    trailing and later lines' leading spaces too): a table cell holding a finding and its fix."""
    if joiner is not None:
        lines = [part.rstrip() for part in text.splitlines() if part.strip()]
        text = joiner.join([lines[0], *(line.strip() for line in lines[1:])]) if lines else ""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{one_line(self.file)}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason an inventory is invalid: where, which field, what is wrong."""

    location: Location | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        path = f"{self.path}: " if self.path else ""
        return one_line(f"{where}{path}{self.message}")

    def to_row(self) -> list[object]:
        """Plain data (JSON) that :meth:`from_row` turns back into this problem."""
        where = self.location
        return [[where.file, where.line, where.column] if where else None, self.path, self.message]

    @staticmethod
    def from_row(row: Sequence[Any]) -> Problem:
        where, path, message = row
        return Problem(Location(*where) if where else None, path, message)

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.location.file if self.location else None,
            "line": self.location.line if self.location else None,
            "column": self.location.column if self.location else None,
            "path": self.path,
            "message": self.message,
        }


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


@dataclass(frozen=True, slots=True)
class Finding:
    """A DR-design finding produced by a rule."""

    rule_id: str
    severity: Severity
    message: str
    subjects: tuple[str, ...] = ()
    location: Location | None = None
    hint: str = ""
    waived_by: str | None = field(default=None, compare=False)
