"""The only exceptions the CLI turns into exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.diagnostics import Problem


class ImsdrError(Exception):
    """Invalid input or usage: the CLI prints it on stderr and exits 2."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.problems: list[Problem] = list(problems or [])

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        return "\n".join(str(p) for p in self.problems)


class InventoryError(ImsdrError):
    """The inventory cannot be loaded or is invalid; carries every problem found."""


class RenderError(ImsdrError):
    """A renderer refused its input (lint failure, template error); nothing was written."""
