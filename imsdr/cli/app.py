"""The imsdr command line. Command modules import the core lazily to keep start-up fast."""

from __future__ import annotations

from typing import Annotated

import typer

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

app = typer.Typer(
    name="imsdr",
    cls=ImsdrGroup,  # clean messages for bad option values, every subcommand
    help="IMS core-network disaster-recovery planning: validate, check, size, simulate, render.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: typer's rich help imports rich.markdown/pygments (~120 ms)
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)
render_app = typer.Typer(help="Render DNS zones, views, runbooks and monitoring rules.", no_args_is_help=True,
                         rich_markup_mode=None)
app.add_typer(render_app, name="render")


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


init_cmd.register(app)
validate.register(app)
capacity_cmd.register(app)
availability_cmd.register(app)
check_cmd.register(app)
plan_cmd.register(app)
runbook_cmd.register(render_app)
dns_cmd.register(render_app)
monitoring_cmd.register(render_app)
example.register(app)
resolve_cmd.register(app)
enum_update_cmd.register(app)
import_cmd.register(app)
apply_cmd.register(app)


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
    _take_closed_standard_streams()
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


def _take_closed_standard_streams() -> None:
    """A standard stream the caller closed (``imsdr … >&-``) gets /dev/null on its descriptor, so
    no file imsdr opens takes descriptor 0, 1 or 2 (and receives the data, or a server's output
    in a test run). Data written to a closed stdout then fails as on a full device: exit 2,
    "cannot write output: standard output is closed"; diagnostics for a closed stderr are dropped."""
    import os
    import sys

    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        taken = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if taken != fd:
            os.dup2(taken, fd)
            os.close(taken)
        if fd == 1:
            sys.stdout = _ClosedStdout()
        elif fd == 2:
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - the process's stderr, open until exit
        else:
            sys.stdin = open(0, closefd=False)  # noqa: SIM115 - as stderr


class _ClosedStdout:
    """sys.stdout where the caller closed it: writing data fails; nothing else does."""

    def write(self, text: str) -> int:
        import errno

        if not text:
            return 0
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return 1  # (/dev/null: _silence_stdout's dup2 is harmless)

    def isatty(self) -> bool:
        return False


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
