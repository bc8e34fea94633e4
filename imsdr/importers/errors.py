"""Problems found while importing: collected in one run, reported as FILE:LINE[:COLUMN]."""

from __future__ import annotations

from imsdr.diagnostics import Location, Problem
from imsdr.errors import ImsdrError


class ImportProblems:
    """Every reason an import cannot be trusted; raised once, after all sources were read."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, file: str, line: int, column: int | None, message: str, path: str = "") -> None:
        self.problems.append(Problem(Location(file, max(line, 1), max(column or 1, 1)), path, message))

    def raise_if_any(self, what: str) -> None:
        if self.problems:
            raise ImportRefused(f"{what}: nothing written", self.problems)


class ImportRefused(ImsdrError):
    """An import source that cannot be read as it stands; nothing was written."""
