"""``safe_join`` reads a relative output path by string operations, with the verdicts of reading
it as a PurePosixPath (the way it was written first): same refusals, same reasons, same path."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from hypothesis import example, given, settings
from hypothesis import strategies as st

from imsdr.errors import ImsdrError
from imsdr.output.atomic import safe_join


def _reference(root: Path, relative: str) -> Path:
    rel = PurePosixPath(relative)
    if not rel.parts:
        raise ImsdrError(f"refusing output path {relative!r}: a file name is needed")
    if rel.is_absolute() or any(part in ("..", "") for part in rel.parts) or "\x00" in relative:
        raise ImsdrError(f"refusing output path {relative!r}: it must stay inside the output directory")
    if any(part.startswith(".") for part in rel.parts):
        raise ImsdrError(f"refusing output path {relative!r}: hidden names are not written")
    return root.joinpath(*rel.parts)


def _outcome(root: Path, relative: str) -> object:
    try:
        return safe_join(root, relative)
    except ImsdrError as exc:
        return str(exc)


def _reference_outcome(root: Path, relative: str) -> object:
    try:
        return _reference(root, relative)
    except ImsdrError as exc:
        return str(exc)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="/.a\x00b\\ é", max_size=14) | st.lists(st.sampled_from(
    ["", ".", "..", "a", ".a", "a.", "zones", "x.zone", "\x00", "//"]), max_size=5).map("/".join))
@example("")
@example("/")
@example("//a")
@example("./a/./b/")
@example("a//b")
def test_safe_join_reads_paths_as_purepath_does(relative: str) -> None:
    root = Path("/srv/out/.out.tmp-1-x")
    assert _outcome(root, relative) == _reference_outcome(root, relative)
