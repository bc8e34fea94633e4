"""imsdr.output.beside: work in a forked child, its result or its exception back in the parent."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from imsdr.diagnostics import Location, Problem
from imsdr.errors import InventoryError
from imsdr.output.beside import Beside, ChildFailed

ROOT = Path(__file__).resolve().parent.parent


def test_the_childs_result_comes_back_and_it_ran_in_another_process() -> None:
    with Beside(lambda: (os.getpid(), sum(range(1000))), "adding") as child:
        pid, total = child.result()
    assert total == 499500 and pid != os.getpid()


def test_an_imsdr_error_is_raised_again_with_its_problems() -> None:
    problem = Problem(Location("inv.yaml", 3, 5), "sites[0].id", "must be unique")

    def fail() -> None:
        raise InventoryError("bad inventory", [problem])

    with pytest.raises(InventoryError) as caught, Beside(fail, "failing") as child:
        child.result()
    assert caught.value.problems == [problem] and str(caught.value) == str(problem)
    assert caught.value.message == "bad inventory"


def test_any_other_exception_arrives_as_its_traceback_text() -> None:
    class Local(Exception):
        pass

    def fail() -> None:
        raise Local("the reason")

    with pytest.raises(ChildFailed, match=r"(?s)Traceback.*Local: the reason"), Beside(fail, "failing") as child:
        child.result()


def test_an_os_error_is_raised_again_with_its_errno_text_and_file(tmp_path: Path) -> None:
    def full(name: str | None) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *([name] if name else []))

    for name in (str(tmp_path / "dns" / "zone ç.db"), None):
        with pytest.raises(OSError) as caught, Beside(lambda n=name: full(n), "writing dns/") as child:  # type: ignore[misc]
            child.result()
        assert (caught.value.errno, caught.value.strerror, caught.value.filename) == \
            (errno.ENOSPC, os.strerror(errno.ENOSPC), name)


def test_only_plain_data_comes_back() -> None:
    with pytest.raises(ChildFailed, match="not JSON serializable"), Beside(lambda: {1, 2}, "a set") as child:
        child.result()
    with Beside(lambda: {"page.md": "ç ≥ 中文 \ud800"}, "text") as child:
        assert child.result() == {"page.md": "ç ≥ 中文 \ud800"}


def test_an_interrupt_in_the_child_is_an_interrupt_here() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), Beside(interrupted, "waiting") as child:
        child.result()


def test_a_child_that_dies_is_reported() -> None:
    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(ChildFailed, match="rendering runbooks/ was killed by signal 9"), \
            Beside(die, "rendering runbooks/") as child:
        child.result()


def test_leaving_early_stops_and_reaps_the_child() -> None:
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the parent's part failed"), \
            Beside(lambda: time.sleep(60), "sleeping") as child:
        pid = child._pid
        raise RuntimeError("the parent's part failed")
    assert time.monotonic() - started < 30
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie left


def test_buffered_output_and_exit_handlers_run_once(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import atexit, sys
        from imsdr.output.beside import Beside
        atexit.register(lambda: print("atexit"))
        sys.stdout.write("before ")  # buffered (a pipe), not yet written
        with Beside(lambda: 42, "answering") as child:
            print(child.result())
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "before 42\natexit\n"


def test_the_child_writes_nothing_on_stdout_and_its_warnings_reach_stderr(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys, warnings
        from imsdr.output.beside import Beside
        def work():
            print("from the child")
            warnings.warn("a warning of the child")
            return 1
        with Beside(work, "printing") as child:
            print(child.result())
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1\n" and "a warning of the child" in result.stderr


def test_a_large_result_does_not_deadlock() -> None:
    big = "x" * (8 << 20)  # far beyond a pipe's buffer: the child blocks until the parent reads
    with Beside(lambda: big, "copying") as child:
        assert child.result() == big
