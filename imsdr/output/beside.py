"""One piece of work run beside the caller, in a forked child process.

``imsdr plan`` writes two independent parts of its tree: dns/ (with diameter/ and monitoring/)
and runbooks/ (with the availability report). Each takes seconds nationally and neither reads
the other, so on a machine with a second CPU the child renders and writes runbooks/ while the
parent writes dns/. The child starts from the parent's computed model (``fork`` shares it
copy-on-write: nothing is recomputed, so both halves read the same model) and hands back only
what the parent needs — here the digests of the files it wrote.

The result travels through an anonymous pipe that only this process and its child hold, so the
pickle on it is our own memory crossing a process boundary, never data read from a file. An
exception in the child is raised again in the parent (an :class:`~imsdr.errors.ImsdrError` with
its problems, exit 2 as ever); a child that dies is reported as such. The child never returns
into the caller's code: it leaves with ``os._exit`` whatever happens, so no buffered output,
``atexit`` handler or test runner runs twice.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


class ChildFailed(RuntimeError):
    """The child died or raised something that could not be sent back as it was."""


class Beside(Generic[T]):
    """``with Beside(work) as child: …; result = child.result()`` — ``work()`` runs in a child
    process from ``__enter__`` on; leaving the block without :meth:`result` stops the child."""

    def __init__(self, work: Callable[[], T], what: str) -> None:
        self._work = work
        self._what = what  # for messages: "rendering runbooks/"
        self._pid = 0
        self._read = -1

    def __enter__(self) -> Beside[T]:
        for stream in (sys.stdout, sys.stderr):  # (or the child's copy of their buffers is written twice)
            with contextlib.suppress(AttributeError, ValueError, OSError):  # (None, closed, or a broken pipe)
                stream.flush()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                os.close(read)
                _send(write, self._work)
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read
        return self

    def result(self) -> T:
        """Wait for the child; its result, or its exception raised here."""
        chunks = []
        while chunk := os.read(self._read, 1 << 20):
            chunks.append(chunk)
        os.close(self._read)
        self._read = -1
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        if not chunks:
            code = os.waitstatus_to_exitcode(status)
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise ChildFailed(f"the process {self._what} {how} before it finished")
        outcome, value = pickle.loads(b"".join(chunks))  # (from our own child: see the module docstring)
        if outcome == "error":
            raise value
        return value

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._pid:  # left early (the parent's own part failed): stop the child, then go on failing
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGTERM)
            os.waitpid(self._pid, 0)
            self._pid = 0
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def _send(fd: int, work: Callable[[], object]) -> None:
    try:
        message = ("ok", work())
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        message = ("error", exc)
    try:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that will not pickle still reaches the parent, as text
        text = "".join(traceback.format_exception(message[1])) if message[0] == "error" else "an unpicklable result"
        data = pickle.dumps(("error", ChildFailed(text)), protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
