"""The imsdr command line. Command modules import the core lazily to keep start-up fast."""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Annotated, Any

import typer
import typer.main

from imsdr import __version__
from imsdr.cli import apply as apply_cmd
from imsdr.cli import availability as availability_cmd
from imsdr.cli import capacity as capacity_cmd
from imsdr.cli import check as check_cmd
from imsdr.cli import dns as dns_cmd
from imsdr.cli import enum_update as enum_update_cmd
from imsdr.cli import example, validate
from imsdr.cli import importer as import_cmd
from imsdr.cli import init as init_cmd
from imsdr.cli import monitoring as monitoring_cmd
from imsdr.cli import plan as plan_cmd
from imsdr.cli import resolve as resolve_cmd
from imsdr.cli import runbook as runbook_cmd
from imsdr.cli.common import STATE, ImsdrGroup

# The subcommands are registered on `_commands`, not on `app`: typer would turn every one of them into
# a click command (their parameters read from the signatures, ~35 ms) before the one given runs.
# The root group builds each only when it is looked up (see _LazyCommands); the order, help, shell
# completion and docs/cli.md are those of registering on `app`.
_commands = typer.Typer(pretty_exceptions_enable=False, rich_markup_mode=None)


class _LazyCommands(MutableMapping[str, Any]):
    """The root's subcommands by name, in registration order (typer's: commands, then groups), each
    made a click command on its first lookup. Listing the names (help, completion, "no such
    command") builds none of them."""

    def __init__(self, source: typer.Typer) -> None:
        short = source.pretty_exceptions_short
        pending: dict[str, Callable[[], Any]] = {}
        for command in source.registered_commands:
            pending[command.name or typer.main.get_command_name(command.callback.__name__)] = (
                lambda info=command: typer.main.get_command_from_info(
                    info, pretty_exceptions_short=short, rich_markup_mode=source.rich_markup_mode))
        for group in source.registered_groups:
            assert group.name, "every imsdr group is named"
            pending[group.name] = lambda info=group: typer.main.get_group_from_info(
                info, pretty_exceptions_short=short, rich_markup_mode=source.rich_markup_mode,
                suggest_commands=source.suggest_commands)
        self._pending = pending
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._pending[name]()
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._pending.setdefault(name, lambda: command)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._pending[name]
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._pending

    def __iter__(self) -> Iterator[str]:
        return iter(self._pending)

    def __len__(self) -> int:
        return len(self._pending)


class _RootGroup(ImsdrGroup):
    """The `imsdr` group, its subcommands built as they are looked up."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands(_commands)


app = typer.Typer(
    name="imsdr",
    cls=_RootGroup,  # clean messages for bad option values, every subcommand
    help="IMS core-network disaster-recovery planning: validate, check, size, simulate, render.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: typer's rich help imports rich.markdown/pygments (~120 ms)
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)
render_app = typer.Typer(help="Render DNS zones, views, runbooks and monitoring rules.", no_args_is_help=True,
                         rich_markup_mode=None)
_commands.add_typer(render_app, name="render")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"imsdr {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also report how long each stage took.")] = False,
) -> None:
    STATE["debug"] = debug
    STATE["quiet"] = quiet
    STATE["verbose"] = verbose and not quiet
    STATE["plain"] = False


init_cmd.register(_commands)
validate.register(_commands)
capacity_cmd.register(_commands)
availability_cmd.register(_commands)
check_cmd.register(_commands)
plan_cmd.register(_commands)
runbook_cmd.register(render_app)
dns_cmd.register(render_app)
monitoring_cmd.register(render_app)
example.register(_commands)
resolve_cmd.register(_commands)
enum_update_cmd.register(_commands)
import_cmd.register(_commands)
apply_cmd.register(_commands)


def main() -> None:
    """The console entry point: the CLI, with the process's own streams made safe first."""
    import gc
    import os
    import sys

    # One command is one short run that builds large, mostly acyclic structures (~150,000 objects
    # for a national inventory): at the default threshold of 700 allocations a national `check`
    # ran ~300 collections (0.3 s). Young objects are collected every 50,000 instead; cycles are
    # still freed.
    gc.set_threshold(50_000, 20, 10)
    # imsdr uses no pydantic plugin; looking for them reads the metadata of every installed
    # distribution (~85 ms of each start, on the first schema pydantic builds). A setting the
    # user made is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _tolerant_streams()
    try:
        app()
    except OSError as exc:  # e.g. stdout on a full device (ENOSPC) or a closed pipe
        if STATE["debug"]:
            raise
        _silence_stdout()
        where = f": {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"error: cannot write output{where}: {exc.strerror or exc}\n")
        sys.exit(2)
    finally:
        # the interpreter's exit runs one last full collection over every object still alive -
        # the whole model, 0.25 s after a national check - to free nothing the process's end
        # does not free anyway; frozen objects are left out of it
        gc.freeze()


def _tolerant_streams() -> None:
    """Characters the terminal's encoding lacks (PYTHONIOENCODING=ascii, LANG=C) are written as
    backslash escapes (in JSON they stay valid escapes) instead of ending the run with a traceback."""
    import sys

    from imsdr.output.terminal import escaping

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    # control and escape sequences from data (a file name with ESC ] ...) are shown escaped
    sys.stdout = escaping(sys.stdout)
    sys.stderr = escaping(sys.stderr)


def _silence_stdout() -> None:
    """After stdout failed, drop what is still buffered so the interpreter's final flush cannot
    fail again (and print "Exception ignored ..." at exit)."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
