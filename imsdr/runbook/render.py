"""Render runbook pages from Jinja2 templates.

Built-in templates live in the top-level ``templates/`` directory, shipped in the wheel as the
package ``imsdr.templates``. They render in a normal environment (StrictUndefined, no
autoescape: the output is Markdown). When the user passes ``--templates DIR``, templates in DIR
override built-in ones by file name, and *everything* renders in an immutable sandbox with
StrictUndefined, so a user template cannot reach Python internals or the file system.

Any template problem (syntax, undefined variable, sandbox violation) becomes a
:class:`~imsdr.errors.RenderError` naming the template and line; nothing is written.
"""

from __future__ import annotations

import contextlib
import re
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox

from imsdr.errors import RenderError
from imsdr.output.atomic import OutputTarget, WrittenDigests, atomic_directory, safe_join, write_text
from imsdr.output.markdown import markdown_code, markdown_text
from imsdr.runbook.sandbox import (
    BoundedSandbox,
    Budget,
    BudgetExceeded,
    TemplateLimits,
    bounded_run,
    read_user_templates,
    render_bounded,
)

TEMPLATE_PACKAGE = "imsdr.templates"
TEMPLATE_SUFFIX = ".j2"


@dataclass(frozen=True, slots=True)
class Page:
    """One output file: where it goes, which template renders it, and page-specific variables."""

    path: str
    template: str
    title: str
    extra: Mapping[str, Any]


def builtin_templates() -> dict[str, str]:
    """name → source of every built-in template (installed package, or the checkout's templates/)."""
    sources: dict[str, str] = {}
    try:
        from importlib.resources import files

        root = files(TEMPLATE_PACKAGE)
        for entry in root.iterdir():
            if entry.name.endswith(TEMPLATE_SUFFIX) and entry.is_file():
                sources[entry.name] = entry.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        pass
    if not sources:  # running from a checkout (editable install does not map imsdr.templates)
        repo_dir = Path(__file__).resolve().parent.parent.parent / "templates"
        if repo_dir.is_dir():
            for path in sorted(repo_dir.glob(f"*{TEMPLATE_SUFFIX}")):
                sources[path.name] = path.read_text(encoding="utf-8")
    if not sources:
        raise RenderError("built-in runbook templates not found (is the imsdr.templates package installed?)")
    return sources


class _MappingLoader(jinja2.BaseLoader):
    """Templates from an in-memory mapping; ``filename`` is the display name used in errors."""

    def __init__(self, sources: Mapping[str, str], origin: str) -> None:
        self.sources = dict(sources)
        self.origin = origin

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        if template not in self.sources:
            raise jinja2.TemplateNotFound(template)
        return self.sources[template], f"{self.origin}/{template}", lambda: True

    def list_templates(self) -> list[str]:
        return sorted(self.sources)


# --- filters: plain functions, safe in the sandbox ---------------------------------------------

def md(value: Any) -> str:
    """Free text (names, reasons, messages) as literal Markdown (see imsdr.output.markdown)."""
    return markdown_text(value)


def md_code(value: Any) -> str:
    """Text as an inline code span no character of it can end (see imsdr.output.markdown)."""
    return markdown_code(value)


def thousands(value: Any) -> str:
    """1234567 → 1,234,567; floats keep up to two decimals."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    return str(value)


def percent(value: Any, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:.{digits}f}%"


def seconds(value: Any) -> str:
    """Seconds as a short human duration: 45 s, 3 min 5 s, 1 h 30 min."""
    if value is None:
        return "—"
    total = float(value)
    if total < 60:
        return f"{total:g} s"
    whole = round(total)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if hours:
        parts.append(f"{hours} h")
    if minutes:
        parts.append(f"{minutes} min")
    if secs and not hours:
        parts.append(f"{secs} s")
    return " ".join(parts)


def anchor(value: Any) -> str:
    """GitHub-style heading anchor for a heading text."""
    out = []
    for ch in str(value).strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


class _MarkdownMemo:
    """The ``md`` and ``md_cell`` filters of one renderer, each text escaped once: a national
    runbook writes the same ids, names and site names ~230,000 times. Held by the renderer (one
    run), never across runs."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def md(self, value: Any) -> str:
        text = "" if value is None else str(value)
        out = self._texts.get(text)
        if out is None:
            out = self._texts[text] = markdown_text(text)
        return out

    def md_cell(self, value: Any) -> str:
        return self.md(value) or "—"


class _SharedMacros:
    """The ``shared(macro, *args)`` global: a macro's text for the very same arguments rendered
    once per renderer (one run), then reused. The type pages of a national network repeat
    network-wide sections on every province's page (the HSS/SLF page's Diameter pairs, the MGCF
    page's route sets and H.248 control, the SBC page's emergency table: ~30% of the runbook's
    text); they are macros of templates imported without context, so their text depends on their
    arguments only. Keyed by the macro and the identity of each argument, held here so no id is
    reused. A user's templates (the sandbox) get no memo: ``shared`` calls the macro each time."""

    def __init__(self, memo: bool) -> None:
        self.memo = memo
        self._texts: dict[tuple[int, ...], tuple[Any, tuple[Any, ...], Any]] = {}

    def __call__(self, macro: Callable[..., Any], *args: Any) -> Any:
        if not self.memo:
            return macro(*args)
        key = (id(macro), *map(id, args))
        hit = self._texts.get(key)
        if hit is None or hit[0] is not macro or any(a is not b for a, b in zip(hit[1], args, strict=True)):
            hit = self._texts[key] = (macro, args, macro(*args))
        return hit[2]


FILTERS: dict[str, Callable[..., Any]] = {  # with ``md`` and ``md_cell``, one _MarkdownMemo per renderer
    "md_code": md_code,
    "thousands": thousands,
    "percent": percent,
    "seconds": seconds,
    "anchor": anchor,
}


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _BuiltinEnvironment(jinja2.Environment):
    """The built-in templates' environment: ``x.name`` on a plain dict (what every runbook row
    is) reads the key at once. Jinja tries ``getattr`` first and the key after the
    AttributeError, ~1.6 million times a national run; for a name no dict attribute has, the
    answer is the same."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def _environment(
    sources: Mapping[str, str], user: Mapping[str, str] | None, user_origin: str, budget: Budget
) -> jinja2.Environment:
    options: dict[str, Any] = {
        "undefined": jinja2.StrictUndefined,
        "autoescape": False,  # Markdown, not HTML
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
        "auto_reload": False,
    }
    env: jinja2.Environment
    if user is None:
        env = _BuiltinEnvironment(loader=_MappingLoader(sources, "templates"), **options)
    else:
        loader = jinja2.ChoiceLoader(
            [_MappingLoader(user, user_origin), _MappingLoader(sources, "templates")])
        env = BoundedSandbox(budget, loader=loader, **options)
    memo = _MarkdownMemo()
    env.filters.update(FILTERS, md=memo.md, md_cell=memo.md_cell)
    env.globals["shared"] = _SharedMacros(memo=user is None)
    return env


def _template_frame(exc: BaseException, origins: tuple[str, ...]) -> tuple[str, int] | None:
    """The innermost traceback frame that is a template line: (display name, line)."""
    found: tuple[str, int] | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(origins) and frame.lineno is not None:
            found = (frame.filename, frame.lineno)
    return found


class Renderer:
    """Renders pages with the built-in or the sandboxed user environment."""

    def __init__(self, templates_dir: Path | None = None, limits: TemplateLimits | None = None) -> None:
        self.builtin = builtin_templates()
        self.user = read_user_templates(Path(templates_dir)) if templates_dir is not None else None
        if self.user is not None and not self.user:
            raise RenderError(f"{templates_dir}: no *.j2 templates found")
        self.user_origin = str(templates_dir) if templates_dir is not None else ""
        self.sandboxed = self.user is not None
        self.budget = Budget(limits or TemplateLimits())
        self.env = _environment(self.builtin, self.user, self.user_origin, self.budget)

    def render(self, template: str, context: Mapping[str, Any]) -> str:
        origins = ("templates/",) + ((self.user_origin + "/",) if self.user_origin else ())
        try:
            if not self.sandboxed:  # our own templates: no budgets
                return self.env.get_template(template).render(context)
            with bounded_run(self.budget):
                return render_bounded(self.env.get_template(template), context, self.budget)
        except BudgetExceeded as exc:
            where = _template_frame(exc, origins)
            loc = f"{where[0]}:{where[1]}" if where else template
            raise RenderError(f"{loc}: template stopped: {exc}") from None
        except MemoryError:
            raise RenderError(
                f"{template}: template stopped: it needs more than its memory budget of "
                f"{self.budget.limits.memory_bytes >> 20} MiB") from None
        except jinja2.TemplateSyntaxError as exc:
            where = exc.filename or exc.name or template
            raise RenderError(f"{where}:{exc.lineno}: template syntax error: {exc.message}") from None
        except jinja2.TemplateNotFound as exc:
            raise RenderError(f"template {exc.name!r} not found (rendering {template})") from None
        except jinja2.sandbox.SecurityError as exc:
            where = _template_frame(exc, origins)
            loc = f"{where[0]}:{where[1]}" if where else template
            raise RenderError(
                f"{loc}: template refused by the sandbox: {exc} (templates may only read the runbook "
                "context; Python internals and the file system are off limits)"
            ) from None
        except jinja2.UndefinedError as exc:
            where = _template_frame(exc, origins)
            loc = f"{where[0]}:{where[1]}" if where else template
            raise RenderError(
                f"{loc}: undefined variable in template {Path(where[0]).name if where else template}"
                f"{f' line {where[1]}' if where else ''}: {exc.message}"
            ) from None
        except jinja2.TemplateError as exc:
            where = _template_frame(exc, origins)
            loc = f"{where[0]}:{where[1]}" if where else template
            raise RenderError(f"{loc}: template error: {exc}") from None
        except (TypeError, ValueError, ArithmeticError, AttributeError, KeyError, IndexError) as exc:
            where = _template_frame(exc, origins)
            loc = f"{where[0]}:{where[1]}" if where else template
            raise RenderError(f"{loc}: template failed: {type(exc).__name__}: {exc}") from None


def render_pages(
    pages: list[Page], context: Mapping[str, Any], templates_dir: Path | None = None,
    limits: TemplateLimits | None = None,
) -> dict[str, str]:
    """Render every page to text (nothing written): relative path → Markdown."""
    from imsdr.analysis import cyclic_gc_paused

    renderer = Renderer(templates_dir, limits)
    out: dict[str, str] = {}
    # our own templates make no garbage cycles worth a collection, and a full one walks the whole
    # model (~1.4 s of a national run); a user's template keeps the collector, its memory budgeted
    with cyclic_gc_paused() if not renderer.sandboxed else contextlib.nullcontext():
        for page in pages:
            text = renderer.render(page.template, {**context, **page.extra, "page": {"path": page.path,
                                                                                       "title": page.title}})
            out[page.path] = normalise_markdown(text)
    return out


def normalise_markdown(text: str) -> str:
    """Collapse runs of blank lines (templates with conditionals leave some) and end with one newline.

    Every line loses its trailing whitespace; fenced code blocks keep their blank lines. Done on
    whole segments between fence lines, not line by line: national runbooks are ~90 MB of text.
    """
    # a newline before every line, so each fence line is found by its literal prefix "\n```"
    # (an anchored pattern would be tried at every one of 90 million positions)
    # (one join with the separator: the same text as "".join("\n" + line ...), without a million
    # concatenations)
    lines = text.splitlines()
    text = "\n" + "\n".join([line.rstrip() for line in lines]) if lines else ""
    # pieces: [outside, fence line, inside, fence line, outside, ...]; no fence line is blank, so
    # a run of blank lines never crosses one
    pieces = _FENCE_LINE.split(text)
    for i in range(0, len(pieces) - 1, 2):  # the newline before each fence line, back where it was
        pieces[i] += "\n"
    pieces[0] = pieces[0][1:]
    for i in range(0, len(pieces), 4):  # the segments outside fences
        pieces[i] = _BLANK_RUN.sub("\n\n", pieces[i])
    pieces[0] = pieces[0].lstrip("\n")  # no blank line before the first line
    return "".join(pieces).rstrip("\n") + "\n"


_FENCE_LINE = re.compile(r"\n(```[^\n]*)")
_BLANK_RUN = re.compile(r"\n\n\n+")  # two or more blank lines in a row


def write_pages(root: Path, pages: Mapping[str, str], digests: WrittenDigests | None = None) -> None:
    """Write rendered pages under ``root`` (already a staging directory); ``digests`` records
    each file's SHA-256."""
    for rel, text in sorted(pages.items()):
        path = safe_join(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text, digests)


def write_runbook(out_dir: Path | OutputTarget, pages: Mapping[str, str]) -> None:
    """Replace ``out_dir`` atomically with the rendered pages."""
    with atomic_directory(out_dir) as staging:
        write_pages(staging, pages)
