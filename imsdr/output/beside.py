"""One piece of work run beside the caller, in a forked child process.

``imsdr plan`` writes independent parts of its tree: diameter/ and the availability report need
only the loaded model, dns/ and monitoring/ only the DNS plan and the capacity report. Each takes
seconds nationally, so on a machine with a second CPU a child writes each part as soon as what
it reads is computed, while the parent goes on with the analyses and the runbooks. The child
starts from the parent's computed model (``fork`` shares it copy-on-write: nothing is
recomputed, so every part reads the same model) and hands back only what the parent needs — the
availability pages, the digests of the files it wrote.

The result travels as JSON through an anonymous pipe that only this process and its child hold:
plain data both ways, never code (imsdr loads no pickle, here neither). An
:class:`~imsdr.errors.ImsdrError` in the child is raised again in the parent with its message and
problems (exit 2 as ever), an ``OSError`` (a full disk) with its errno, text and file name, an
interrupt as an interrupt; anything else, or a child that dies, is a
:class:`ChildFailed` saying what happened. The child never returns
into the caller's code: it leaves with ``os._exit`` whatever happens, so no buffered output,
``atexit`` handler or test runner runs twice.
"""

from __future__ import annotations

import contextlib
import json
import os
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
    process from ``__enter__`` on and returns what ``json`` can write (the parent gets it as
    ``json`` reads it back); leaving the block without :meth:`result` stops the child."""

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
                # its own stdio objects: a thread of the parent (the progress display) may have held
                # their locks at the fork, and stdout is the parent's data alone
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until os._exit
                sys.stderr = os.fdopen(os.dup(2), "w", errors="backslashreplace")
                _send(write, self._work)
            finally:
                with contextlib.suppress(BaseException):  # (what the child warned; it leaves with _exit)
                    sys.stderr.flush()
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
        message = json.loads(b"".join(chunks))
        if "ok" in message:
            return message["ok"]  # type: ignore[no-any-return]
        raise _exception(message)

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
    from imsdr.errors import ImsdrError

    try:
        message: dict[str, object] = {"ok": work()}
        data = json.dumps(message)
    except ImsdrError as exc:
        data = json.dumps({"error": type(exc).__name__, "message": exc.message,
                           "problems": [p.to_row() for p in exc.problems]})
    except KeyboardInterrupt:
        data = json.dumps({"interrupted": True})
    except OSError as exc:  # a full disk, say: the parent reports it as its own writes' (exit 2)
        filename = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes)) else None
        data = json.dumps({"os_error": [exc.errno, exc.strerror, filename]})
    except BaseException as exc:  # noqa: BLE001 - everything else goes back to the parent, as text
        data = json.dumps({"failed": "".join(traceback.format_exception(exc))})
    view = memoryview(data.encode("ascii"))  # (json escapes everything else)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)


def _exception(message: dict[str, object]) -> BaseException:
    from imsdr.diagnostics import Problem
    from imsdr.errors import ImsdrError, InventoryError, RenderError

    if "interrupted" in message:
        return KeyboardInterrupt()
    if "os_error" in message:
        number, text, filename = message["os_error"]  # type: ignore[misc]
        return OSError(number, text, filename) if filename is not None else OSError(number, text)
    if "error" in message:
        kind = {"InventoryError": InventoryError, "RenderError": RenderError}.get(str(message["error"]), ImsdrError)
        problems = [Problem.from_row(row) for row in message["problems"]]  # type: ignore[attr-defined]
        return kind(str(message["message"]), problems)
    return ChildFailed(str(message["failed"]))
