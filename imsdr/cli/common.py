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

STATE = {"debug": False, "quiet": False, "verbose": False}


class Format(str, Enum):
    table = "table"
    json = "json"


InventoryArg = Annotated[
    Path, typer.Argument(help="Inventory YAML file.", show_default=False, dir_okay=False, metavar="INVENTORY")
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="Replace OUT even if imsdr did not write it (its files are lost) and follow OUT if it "
    "is a symlink. Never replaces /, a system directory, HOME, the working directory or a parent, a git "
    "checkout, or the directory holding the inventory or the templates.")]


# markup=False, emoji=False: names, ids and DNS answers are printed as they are. A network named
# "Corpus [/x] IMS" is text, not a Rich tag (which crashed every table it appeared in), and
# ":bomb:" stays ":bomb:". Styling is given explicitly (rich.text.Text with a style), never as markup.

def stdout() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False, markup=False, emoji=False)


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
    """The root command group. A bad option value (an unknown --format, a number out of range) is
    reported as one plain line naming the option and what it accepts: typer converts values with
    pydantic, whose own words ("Value error, ...", "Input should be ...") are not ours to show."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            exc.message = bad_value_message(exc)
            raise


class ImsdrCommand(TyperCommand):
    """Every imsdr command (``cls=`` of each registration). Its help speaks the user's words: an
    argument is shown by its name (``INVENTORY...``), not followed by the Python type typer derives
    from the annotation (``<list[Path]>``, ``<str>``); the usage line writes required arguments bare
    and optional ones in brackets, as click does (typer writes ``{INVENTORY...}...``)."""

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
    import time

    started = time.perf_counter()
    if STATE["quiet"]:
        yield
        return
    from rich.console import Console

    from imsdr.diagnostics import one_line
    from imsdr.output.terminal import raw_stream

    # the spinner moves the cursor: it writes beneath the escaping stream, its label escaped
    console = Console(file=raw_stream(sys.stderr), soft_wrap=True, markup=False, emoji=False)
    if console.is_terminal:
        with console.status(f"{one_line(label)}...", spinner="line"):
            yield
    else:
        yield
    if STATE["verbose"]:
        sys.stderr.write(f"{label}: {time.perf_counter() - started:.2f} s\n")


def load(path: Path) -> tuple[Inventory, SourceMap]:
    from imsdr.inventory.build import load_inventory

    with stage(f"loading {path}"):
        return load_inventory(path)
