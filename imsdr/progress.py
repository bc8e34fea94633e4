"""Stages of long work, as the core reports them: the plan pipeline (and any other long run)
names each step it enters; whoever called it decides what a stage shows.

The core knows nothing of terminals: it is handed a :class:`Stages` and calls
``stages.stage("capacity")`` around each step. The CLI's implementation draws progress on stderr
and, with ``--verbose``, times each stage; :data:`SILENT` does nothing (tests, library use).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol


class Stages(Protocol):
    def stage(self, label: str) -> contextlib.AbstractContextManager[None]:
        """A context around one named step of the work."""
        ...


class _Silent:
    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        yield


SILENT: Stages = _Silent()
