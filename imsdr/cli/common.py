"""Shared CLI plumbing: output formats, consoles, and the error boundary."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from rich.console import Console

    from imsdr.inventory.build import SourceMap
    from imsdr.inventory.schema import Inventory
    from imsdr.output.atomic import OutputTarget

F = TypeVar("F", bound=Callable[..., Any])

STATE = {"debug": False, "quiet": False, "verbose": False, "plain": False}


class Format(str, Enum):
    table = "table"
    text = "text"  # the table's content as plain lines, also on a terminal
    json = "json"


def plain_output() -> bool:
    """Whether tables are written as plain lines: stdout is not a terminal (a pipe, a CI log, a
    file) or ``--format text`` was given. Plain lines never wrap and hold no box drawing: one line
    per table row, one ``FILE:LINE:COL: SEVERITY RULE message`` line per finding. Whether stdout
    is a terminal is Rich's judgement, so ``TTY_COMPATIBLE=1`` or ``FORCE_COLOR`` keep the tables
    in a CI log that renders them."""
    if STATE["plain"]:
        return True
    if not _may_be_terminal(sys.stdout):  # (without importing rich: a pipe is no terminal to it either)
        return True
    from rich.console import Console

    return not Console(file=sys.stdout).is_terminal


def text_is_plain_table(fmt: Any) -> Any:
    """The ``--format`` callback of every command with a table: ``text`` is the table written as
    plain lines wherever stdout goes (the command then sees ``table``)."""
    if getattr(fmt, "value", None) == "text":
        STATE["plain"] = True
        return type(fmt)("table")
    return fmt


InventoryArg = Annotated[
    Path, typer.Argument(help="Inventory YAML file.", show_default=False, dir_okay=False, metavar="INVENTORY")
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format (text: the table as plain lines).",
                                           callback=text_is_plain_table)]
OutDirOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory (replaced atomically).",
                                         file_okay=False, show_default=False)]  # the render commands'
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="Replace OUT even if imsdr did not write it (its files are lost) and follow OUT if it "
    "is a symlink. Never replaces /, a system directory, HOME, the working directory or a parent, a git "
    "checkout, or the directory holding the inventory or the templates.")]


# markup=False, emoji=False: names, ids and DNS answers are printed as they are. A network named
# "Corpus [/x] IMS" is text, not a Rich tag (which crashed every table it appeared in), and
# ":bomb:" stays ":bomb:". Styling is given explicitly (rich.text.Text with a style), never as markup.

def stdout() -> Console:
    """The console tables are printed on: Rich on a terminal; on a pipe, in a CI log or with
    ``--format text``, a console that writes every table as plain lines (:mod:`imsdr.output.plain`)."""
    from rich.console import Console

    if not plain_output():
        return Console(soft_wrap=False, markup=False, emoji=False)
    from imsdr.output.plain import PlainConsole

    return PlainConsole(soft_wrap=True, markup=False, emoji=False, highlight=False, no_color=True,
                        force_terminal=False, width=100_000)


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, markup=False, emoji=False)


def styled(text: str, style: str) -> Any:
    """``text`` printed with ``style`` (a rich Text; plain text when style is empty)."""
    from rich.text import Text

    return Text(text, style=style)


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def handle_errors(fn: F) -> F:
    """Turn ImsdrError into a message on stderr and exit 2; no traceback unless --debug."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from imsdr.errors import ImsdrError

        try:
            return fn(*args, **kwargs)
        except ImsdrError as exc:
            if STATE["debug"]:
                raise
            print_error(exc)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            sys.stderr.write("interrupted\n")
            raise typer.Exit(130) from None
        except (MemoryError, RecursionError) as exc:  # e.g. a user template that builds a huge string
            if STATE["debug"]:
                raise
            what = "out of memory" if isinstance(exc, MemoryError) else "nesting or recursion too deep"
            sys.stderr.write(f"error: {what}: the input (inventory, templates or options) asks for more "
                             "than imsdr can do; nothing was written (rerun with --debug if the input "
                             "is not to blame)\n")
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


class ImsdrGroup(TyperGroup):
    """The root command group. The root options are accepted after the command's name too
    (:func:`global_flags_first`). A bad option value (an unknown --format, a number out of range) is
    reported as one plain line naming the option and what it accepts: typer converts values with
    pydantic, whose own words ("Value error, ...", "Input should be ...") are not ours to show."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, global_flags_first(args) if ctx.parent is None else args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            exc.message = bad_value_message(exc)
            raise


GLOBAL_FLAGS = frozenset({"--quiet", "-q", "--verbose", "-v", "--debug"})


def global_flags_first(args: list[str]) -> list[str]:
    """``args`` with the root options ``-q``, ``-v`` and ``--debug`` moved before the command's
    name wherever they were given (``imsdr plan INV --out DIR -v`` is ``imsdr -v plan INV --out
    DIR``); nothing after ``--`` is touched. No command has options of these names."""
    try:
        end = args.index("--")
    except ValueError:
        end = len(args)
    flags = [a for a in args[:end] if a in GLOBAL_FLAGS]
    return flags + [a for a in args[:end] if a not in GLOBAL_FLAGS] + args[end:]


class ImsdrCommand(TyperCommand):
    """Every imsdr command (``cls=`` of each registration). Its help speaks the user's words: an
    argument is shown by its name (``INVENTORY...``), not followed by the Python type typer derives
    from the annotation (``<list[Path]>``, ``<str>``); the usage line writes required arguments bare
    and optional ones in brackets, as click does (typer writes ``{INVENTORY...}...``). Options
    not given default to the team's ``imsdr.toml`` beside the inventory (:mod:`imsdr.cli.defaults`)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        if "default_map" not in extra and not any(a in ("-h", "--help") for a in args):
            from imsdr.cli.defaults import defaults_for
            from imsdr.errors import ImsdrError

            path = []
            ctx = parent
            while ctx is not None and ctx.parent is not None:
                path.insert(0, ctx.info_name)
                ctx = ctx.parent
            try:
                defaults = defaults_for(self, (*path, info_name or self.name or ""), args)
            except ImsdrError as exc:
                if STATE["debug"]:
                    raise
                print_error(exc)
                raise typer.Exit(2) from None
            if defaults:
                extra["default_map"] = defaults
        return super().make_context(info_name, args, parent, **extra)


    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), record[1]))
            else:
                options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _argument_name(param: Any) -> str:
    name = param.metavar or param.name.upper()
    return name if param.nargs == 1 or name.endswith("...") else f"{name}..."


def bad_value_message(exc: typer.BadParameter) -> str:
    """What ``exc``'s option accepts, with the value given (printable: repr escapes control
    characters); typer's own message where no conversion was involved (e.g. a missing file)."""
    descriptor = getattr(exc.param, "type_descriptor", None)
    errors = getattr(exc.__cause__, "errors", None)
    accepted = _accepted(descriptor) if descriptor is not None else None
    if accepted is None or not callable(errors) or not errors():
        return exc.message.removeprefix("Value error, ")
    value = errors()[0].get("input")
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    if descriptor.is_choice:
        choices = [str(getattr(choice, "value", choice)) for choice in descriptor.choices or ()]
        return f"{shown} is not {accepted}{_did_you_mean(str(value), choices)}"
    return f"{shown} is not {accepted}"


def _accepted(descriptor: Any) -> str | None:
    if descriptor.is_choice:
        choices = [str(getattr(choice, "value", choice)) for choice in descriptor.choices or ()]
        return "one of: " + ", ".join(choices)
    kind = {int: "a whole number", float: "a number"}.get(descriptor.annotation)
    if kind is None:
        return None
    low = getattr(descriptor.parameter_info, "min", None)
    high = getattr(descriptor.parameter_info, "max", None)
    if low is not None and high is not None:
        return f"{kind} from {low} to {high}"
    if low is not None:
        return f"{kind} of at least {low}"
    if high is not None:
        return f"{kind} of at most {high}"
    return kind


def _did_you_mean(value: str, choices: list[str]) -> str:
    import difflib

    same_letters = [choice for choice in choices if choice.lower() == value.lower()]
    close = same_letters or difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def print_error(exc: Exception) -> None:
    from imsdr.errors import ImsdrError

    problems = exc.problems if isinstance(exc, ImsdrError) else []
    if problems:
        for problem in problems:
            sys.stderr.write(f"{problem}\n")
        sys.stderr.write(f"error: {len(problems)} problem{'s' if len(problems) != 1 else ''} found\n")
    else:
        from imsdr.diagnostics import one_line

        sys.stderr.write(f"error: {one_line(str(exc))}\n")


TemplateTimeoutOpt = Annotated[float, typer.Option(
    "--template-timeout", min=0.1, max=86400, metavar="SECONDS",
    help="Time budget for rendering with --templates, all pages together; over it, exit 2.")]
TemplateMaxOutputOpt = Annotated[float, typer.Option(
    "--template-max-output", min=0.001, max=65536, metavar="MIB",
    help="Output budget for rendering with --templates: MiB of Markdown, all pages together; over it, exit 2.")]
TEMPLATE_TIMEOUT_S = 60.0  # imsdr.runbook.sandbox.TemplateLimits' defaults (kept here: the CLI imports lazily)
TEMPLATE_MAX_OUTPUT_MIB = 64.0


def default_jobs() -> int:
    """``--jobs`` when not given: 2 where this process may use two CPUs, else 1."""
    from imsdr.output.beside import available_cpus

    return min(2, available_cpus())


def template_limits(timeout: float, max_output_mib: float) -> Any:
    from imsdr.runbook.sandbox import TemplateLimits

    return TemplateLimits(seconds=timeout, output_bytes=int(max_output_mib * (1 << 20)))


def output_target(out: Path, force: bool, *inputs: Path | None) -> OutputTarget:
    """The --out of a command that writes a directory, checked now (before any analysis runs) and
    again when it is replaced. ``inputs`` (inventory, --templates) are never replaced."""
    from imsdr.output.atomic import OutputTarget, check_output

    target = OutputTarget(out, force, tuple(p for p in inputs if p is not None))
    check_output(target)
    return target


@contextlib.contextmanager
def stage(label: str) -> Iterator[None]:
    """Progress for work that can take seconds at national scale, on stderr: a spinner when stderr
    is a terminal, nothing when it is piped; --verbose adds how long each stage took, --quiet
    silences both. Data on stdout is never touched."""
    with progress(label):
        yield


@contextlib.contextmanager
def progress(title: str) -> Iterator[Any]:
    """Live progress on stderr for long work whose core names its stages (an
    :class:`imsdr.progress.Stages` is yielded to hand to it): on a terminal, ``title`` and the
    stage running now, each with its elapsed time (``rich.progress``); nothing when stderr is
    piped. ``--verbose`` writes one ``STAGE: N.NN s`` line per stage and one for ``title``;
    ``--quiet`` silences both. Data on stdout is never touched."""
    import time

    started = time.perf_counter()
    from imsdr.diagnostics import one_line
    from imsdr.output.terminal import raw_stream

    verbose = STATE["verbose"] and not STATE["quiet"]
    live = None
    stream = raw_stream(sys.stderr)
    if not STATE["quiet"] and _may_be_terminal(stream):
        from rich.console import Console

        # the live display moves the cursor: it writes beneath the escaping stream, its labels escaped
        console = Console(file=stream, soft_wrap=True, markup=False, emoji=False)
        if console.is_terminal:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            live = Progress(SpinnerColumn("line"), TextColumn("{task.description}"), TimeElapsedColumn(),
                            console=console, transient=True)
    stages = _CliStages(live, verbose)
    with live if live is not None else contextlib.nullcontext():
        if live is not None:
            live.add_task(f"{one_line(title)}...", total=None)
        yield stages
    if verbose:
        sys.stderr.write(f"{title}: {time.perf_counter() - started:.2f} s\n")


def _may_be_terminal(stream: Any) -> bool:
    """False only where rich's ``Console.is_terminal`` is False too: no TTY_COMPATIBLE or
    FORCE_COLOR in the environment (which can make a pipe count as a terminal) and ``stream`` no
    tty. Output piped or to a file (every scripted run) then spares importing rich.console (~15 ms)."""
    import os

    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says no terminal too
        return False


class _CliStages:
    """The CLI's :class:`imsdr.progress.Stages`: each stage a line of the live display while it
    runs, and its time on stderr with --verbose."""

    def __init__(self, live: Any, verbose: bool) -> None:
        self._live = live
        self._verbose = verbose

    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        import time

        started = time.perf_counter()
        from imsdr.diagnostics import one_line

        task = self._live.add_task(f"  {one_line(label)}", total=None) if self._live is not None else None
        try:
            yield
        finally:
            if task is not None:
                self._live.remove_task(task)
        if self._verbose:
            line = f"  {label}: {time.perf_counter() - started:.2f} s"
            if self._live is not None:
                self._live.console.print(one_line(line), markup=False, highlight=False)
            else:
                sys.stderr.write(line + "\n")


STDIN = "-"  # an inventory argument that means standard input
STDIN_NAME = "<stdin>"  # how diagnostics name it


def load(path: Path) -> tuple[Inventory, SourceMap]:
    from imsdr.inventory.build import load_inventory, load_inventory_stream

    if str(path) == STDIN:
        with stage("loading standard input"):
            return load_inventory_stream(sys.stdin.buffer, STDIN_NAME)
    with stage(f"loading {path}"):
        return load_inventory(path)


def expand_inventories(paths: list[Path]) -> list[Path]:
    """The inventories named: a file as given, ``-`` for standard input, and for a directory every
    inventory in it and below (a YAML file whose top level has ``network:`` and ``sites:``), in
    name order; hidden directories and symbolic links are skipped."""
    from imsdr.errors import ImsdrError

    out: list[Path] = []
    for path in paths:
        if str(path) == STDIN or not path.is_dir() or path.is_symlink():
            out.append(path)
            continue
        found = sorted(_inventories_below(path))
        if not found:
            raise ImsdrError(f"{path}: no inventory in this directory (a .yaml or .yml file with top-level "
                             "'network:' and 'sites:')")
        out.extend(found)
    return out


def _inventories_below(directory: Path) -> Iterator[Path]:
    import os
    import re

    top_level = re.compile(rb"^(network|sites):", re.MULTILINE)
    for root, dirs, files in os.walk(directory):  # os.walk never follows directory links
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root, name)
            if name.startswith(".") or not name.endswith((".yaml", ".yml")) or path.is_symlink():
                continue
            try:
                with path.open("rb") as handle:
                    head = handle.read(1 << 20)
            except OSError:
                continue
            if len({m.group(1) for m in top_level.finditer(head)}) == 2:
                yield path
