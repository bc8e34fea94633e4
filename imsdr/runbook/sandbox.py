"""Bounds for user templates (``--templates``): what they may read, how long and how much they render.

The Jinja sandbox keeps templates away from Python internals; it does not stop a template from
running for hours or building a string of gigabytes. Here:

- template files are read from the ``--templates`` directory itself, never through a symlink,
  and only regular files of at most ``MAX_TEMPLATE_BYTES``;
- rendering has a time budget (``TemplateLimits.seconds``, default 60 s for the whole run) and an
  output budget (``TemplateLimits.output_bytes``, default 64 MiB of Markdown over every page; a
  national runbook is about 18 MiB);
- ``*`` (string/list repetition), ``**``, ``+`` and ``%`` are checked before they run, and the
  ``lipsum`` and ``range`` globals are bounded, so the usual ways to ask for gigabytes are refused
  with the template line instead of being attempted;
- as a backstop, the address space the process may grow by while rendering is capped
  (``TemplateLimits.memory_bytes``, default 512 MiB) so anything missed above ends in a clean
  out-of-memory error.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2.sandbox
import jinja2.utils

from imsdr.errors import RenderError

TEMPLATE_SUFFIX = ".j2"
MAX_TEMPLATE_BYTES = 1 << 20  # one template file
MAX_TEMPLATE_FILES = 1000
MAX_SEQUENCE = 1_000_000  # items a list/tuple built by a template may hold
MAX_INT_BITS = 4096  # results of ** (about 1,200 digits)
MAX_RANGE = 100_000  # items of one range() (the Jinja sandbox's own limit)
MAX_LIPSUM_WORDS = 10_000


@dataclass(frozen=True)
class TemplateLimits:
    """Budgets for one run of user templates (every page together)."""

    seconds: float = 60.0
    output_bytes: int = 64 << 20
    memory_bytes: int = 512 << 20


class BudgetExceeded(jinja2.sandbox.SecurityError):
    """A user template asked for more time, output or memory than its budget."""


# --- reading the templates directory ------------------------------------------------------------------

def read_user_templates(directory: Path) -> dict[str, str]:
    """name → source of every ``*.j2`` file directly in ``directory``.

    Entries are opened relative to the directory with ``O_NOFOLLOW``: a symlink (to
    /proc/self/environ, to a file elsewhere, or even to a sibling) is refused, as is anything that
    is not a regular file or is larger than MAX_TEMPLATE_BYTES.
    """
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise RenderError(f"{directory}: templates directory not found") from None
    except NotADirectoryError:
        raise RenderError(f"{directory}: --templates must be a directory") from None
    except OSError as exc:
        raise RenderError(f"{directory}: cannot open the templates directory: {exc.strerror}") from None
    try:
        names = sorted(n for n in os.listdir(dir_fd) if n.endswith(TEMPLATE_SUFFIX) and not n.startswith("."))
        if len(names) > MAX_TEMPLATE_FILES:
            raise RenderError(f"{directory}: {len(names)} templates; at most {MAX_TEMPLATE_FILES} are read")
        return {name: _read_one(directory, dir_fd, name) for name in names}
    finally:
        os.close(dir_fd)


def _read_one(directory: Path, dir_fd: int, name: str) -> str:
    from imsdr.untrusted import UntrustedFile, open_untrusted

    where = directory / name
    try:  # the one untrusted open (no link followed, no FIFO waited on, regular files only)
        fd, info = open_untrusted(name, dir_fd=dir_fd, display=str(where))
    except UntrustedFile as exc:
        if "symbolic link" in exc.reason:
            raise RenderError(f"{where}: is a symbolic link; only regular files inside the templates "
                              "directory are read (a link could expose any file)") from None
        if "not a regular file" in exc.reason:
            raise RenderError(f"{where}: is not a regular file; only regular template files are read") from None
        raise RenderError(f"{where}: cannot read template: {exc.reason}") from None
    try:
        if info.st_size > MAX_TEMPLATE_BYTES:
            raise RenderError(f"{where}: {info.st_size} bytes; a template may have at most {MAX_TEMPLATE_BYTES}")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            if sum(map(len, chunks)) > MAX_TEMPLATE_BYTES:
                raise RenderError(f"{where}: grew past {MAX_TEMPLATE_BYTES} bytes while being read")
        data = b"".join(chunks)
    except OSError as exc:
        raise RenderError(f"{where}: cannot read template: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RenderError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


# --- the bounded sandbox ------------------------------------------------------------------------------

class Budget:
    """The time and output a run of templates has left; shared by every page."""

    def __init__(self, limits: TemplateLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.written = 0

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded(self.timeout_message())

    def timeout_message(self) -> str:
        return (f"rendering took longer than its time budget of {self.limits.seconds:g} s "
                "(--template-timeout)")

    def add_output(self, text: str) -> None:
        self.written += len(text.encode("utf-8", "surrogatepass"))
        if self.written > self.limits.output_bytes:
            raise BudgetExceeded(self.size_message())
        self.check_time()

    def size_message(self) -> str:
        return (f"the rendered runbook grew past its output budget of {_mib(self.limits.output_bytes)} "
                "(--template-max-output)")

    def check_size(self, value: Any, what: str) -> None:
        if isinstance(value, str) and len(value) > self.limits.output_bytes:
            raise BudgetExceeded(f"{what} would make a string of {len(value):,} characters, over the output "
                                 f"budget of {_mib(self.limits.output_bytes)} (--template-max-output)")


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


_PRINTF_NUMBER = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d*))?")
_SPEC_NUMBER = re.compile(r"\d+")


class BoundedSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """The immutable sandbox, with operators and calls that cannot ask for unbounded memory or time."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, budget: Budget, **options: Any) -> None:
        super().__init__(**options)
        self.budget = budget
        self.globals["range"] = self._range
        self.globals["lipsum"] = self._lipsum

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        self.budget.check_time()
        limit = self.budget.limits.output_bytes
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int):
                    size = len(seq) * max(times, 0)
                    cap = limit if isinstance(seq, str) else MAX_SEQUENCE
                    if size > cap:
                        kind = "string" if isinstance(seq, str) else "sequence"
                        raise BudgetExceeded(f"{kind} repetition '*' {times:,} would make {size:,} items; at "
                                             f"most {cap:,} are allowed")
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
                bits = right * abs(left).bit_length()
                if bits > MAX_INT_BITS:
                    raise BudgetExceeded(f"'**' would make a number of about {bits:,} bits; at most "
                                         f"{MAX_INT_BITS:,} are allowed")
        elif operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                size = len(left) + len(right)
                if size > (limit if isinstance(left, str) else MAX_SEQUENCE):
                    raise BudgetExceeded(f"'+' would make {size:,} items, over the budget")
        elif operator == "%" and isinstance(left, str):
            self._check_printf(left, right)
        result = super().call_binop(context, operator, left, right)
        self.budget.check_size(result, f"'{operator}'")
        return result

    def _check_printf(self, fmt: str, values: Any) -> None:
        limit = self.budget.limits.output_bytes
        widths = [int(n) for m in _PRINTF_NUMBER.finditer(fmt) for n in m.groups() if n]
        starred = "*" in fmt and any(isinstance(v, int) and abs(v) > limit
                                     for v in (values if isinstance(values, tuple) else (values,)))
        if starred or any(w > limit for w in widths):
            raise BudgetExceeded("'%' formatting with a width or precision over the output budget")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        budget = __self.budget
        budget.check_time()
        for value in (*args, *kwargs.values()):
            budget.check_size(value, "an argument")
        target = getattr(__obj, "__wrapped__", __obj)
        if getattr(target, "__name__", "") in ("format", "format_map") and isinstance(
                getattr(target, "__self__", None), str):
            __self._check_format(target.__self__, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        budget.check_size(result, "a call")
        return result

    def _check_format(self, fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        import string

        limit = self.budget.limits.output_bytes
        try:
            specs = [spec or "" for _, _, spec, _ in string.Formatter().parse(fmt)]
        except ValueError:
            return  # str.format reports the syntax error itself
        numbers = [int(n) for spec in specs for n in _SPEC_NUMBER.findall(spec)]
        nested = any("{" in spec for spec in specs) and any(
            isinstance(v, int) and abs(v) > limit for v in (*args, *kwargs.values()))
        if nested or any(n > limit for n in numbers):
            raise BudgetExceeded("str.format with a width or precision over the output budget")

    def _range(self, *args: int) -> range:
        rng = range(*args)
        if len(rng) > MAX_RANGE:
            raise BudgetExceeded(f"range() of {len(rng):,} items; at most {MAX_RANGE:,} are allowed")
        return rng

    def _lipsum(self, n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002
        if n * max > MAX_LIPSUM_WORDS:
            raise BudgetExceeded(f"lipsum() of up to {n * max:,} words; at most {MAX_LIPSUM_WORDS:,} "
                                 "are allowed")
        return str(jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max))


def render_bounded(template: jinja2.Template, context: Any, budget: Budget) -> str:
    """Render ``template`` streaming, counting every chunk against the output and time budgets."""
    parts = []
    for chunk in template.generate(context):
        budget.add_output(chunk)
        parts.append(chunk)
    return "".join(parts)


@contextlib.contextmanager
def bounded_run(budget: Budget) -> Iterator[None]:
    """Enforce the time budget with an alarm (main thread only; elsewhere the budget is checked at
    every call, operator and output chunk) and cap the address space growth while rendering."""
    with _memory_cap(budget.limits.memory_bytes), _alarm(budget):
        yield


@contextlib.contextmanager
def _alarm(budget: Budget) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    armed = [True]

    def expired(signum: int, frame: Any) -> None:
        # raised inside the template's code, so Jinja maps the traceback to the template line
        if armed[0]:
            raise BudgetExceeded(budget.timeout_message())

    previous = signal.signal(signal.SIGALRM, expired)
    old_timer = signal.setitimer(signal.ITIMER_REAL, max(budget.deadline - time.monotonic(), 0.001))
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_timer[0]:
            signal.setitimer(signal.ITIMER_REAL, *old_timer)


@contextlib.contextmanager
def _memory_cap(extra: int) -> Iterator[None]:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm", "rb") as fh:
            in_use = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError):
        yield
        return
    cap = in_use + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        yield  # already tighter
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
