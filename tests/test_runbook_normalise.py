"""normalise_markdown works on whole segments between fences; it must give exactly what the plain
line-by-line rule gives (blank runs collapsed outside fences, trailing whitespace gone)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.runbook.render import normalise_markdown


def _line_by_line(text: str) -> str:
    """The rule, one line at a time (how the runbook renderer first did it)."""
    out: list[str] = []
    in_fence = False
    for line in text.splitlines():
        stripped = line.rstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if not in_fence and not stripped and (not out or not out[-1]):
            continue
        out.append(stripped)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


_PIECES = ["", " ", "\t", "text", "  indented", "```", "```sh", "``` ", " ```", "``", "a  ", "\u00a0",
           "\r", "\r\n", "\x0c", "\u2028", "| a | b |", "```text  "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.sampled_from(["\n", "\r\n", ""]))
def test_segments_give_the_line_by_line_result(pieces: list[str], end: str) -> None:
    text = "\n".join(pieces) + end
    assert normalise_markdown(text) == _line_by_line(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`a \t\n\r\x0b\x1c\u2029x")), max_size=80))
def test_any_text_gives_the_line_by_line_result(text: str) -> None:
    assert normalise_markdown(text) == _line_by_line(text)


def test_blank_runs_collapse_outside_fences_only() -> None:
    text = "\n\n# Title  \n\n\n\ntext\n```sh\na\n\n\nb\n```\n\n\n\nend\n\n\n"
    assert normalise_markdown(text) == "# Title\n\ntext\n```sh\na\n\n\nb\n```\n\nend\n"
