"""Reading a draft back and writing it: one YAML file, replaced atomically, only if imsdr wrote it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from imsdr.diagnostics import one_line
from imsdr.errors import ImsdrError
from imsdr.importers.draft import ENTITY_SECTIONS, Draft, as_inventory, count_placeholders

MARKER = "# imsdr import: draft inventory"
EXCEPTIONS_MARKER = "# imsdr import: ENUM exceptions"


def read_draft(path: Path) -> Draft:
    """A draft written earlier by `imsdr import`, to merge more sources into."""
    from imsdr.inventory.loader import load_yaml_file

    _refuse_foreign(path)
    doc = load_yaml_file(path)
    data = doc.data
    draft = Draft()
    draft.network = dict(data.get("network") or {})
    for section in ENTITY_SECTIONS:
        container = data.get("redundancy", {}) if section in ("pairs", "pools") else data
        for entry in container.get(section) or []:
            fields = dict(entry)
            getattr(draft, section)[fields.pop("id")] = fields
    for attr in ("sbc_dr", "enum_dns"):
        getattr(draft, attr).update((data.get("redundancy") or {}).get(attr) or {})
    draft.order.update((ident, rank) for rank, ident in enumerate(draft.elements))
    for section in ENTITY_SECTIONS:
        for ident, fields in getattr(draft, section).items():
            for key in fields:
                draft.origin[f"{section}[{ident}].{key}"] = str(path)
    for key in draft.network:
        draft.origin[f"network.{key}"] = str(path)
    draft.sources.append(f"{path}: the earlier draft")
    return draft


def _refuse_foreign(path: Path, marker: str = MARKER) -> None:
    """Refuse to replace ``path`` unless it is missing or a regular file starting with the marker
    (opened without following a link or waiting on a FIFO, see :mod:`imsdr.untrusted`)."""
    from imsdr.untrusted import UntrustedFile, open_untrusted

    if not os.path.lexists(path):
        return
    try:
        fd, _info = open_untrusted(path)
    except UntrustedFile as exc:
        raise ImsdrError(f"refusing to replace {path}: it {exc.reason}") from None
    try:
        first = os.read(fd, len(marker.encode()))
    except OSError as exc:
        raise ImsdrError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if not first.decode("utf-8", "replace").startswith(marker):
        raise ImsdrError(f"{path} exists and was not written by imsdr import: refusing to replace it "
                         "(choose another --out, or move the file away)")


def render_draft(draft: Draft) -> tuple[str, int]:
    """The draft as YAML text with its header, and how many placeholders it holds."""
    from imsdr.analysis import cyclic_gc_paused

    with cyclic_gc_paused():  # the emitter's events and nodes: ~10^6 objects, no garbage cycles
        return _render_draft(draft)


def _render_draft(draft: Draft) -> tuple[str, int]:
    import yaml

    doc = as_inventory(draft)
    # libyaml's emitter is five times faster on a national draft, and writes the same text as
    # PyYAML's for keys and values of printable ASCII (it escapes some other characters, folds
    # escaped strings elsewhere): anything else is written by PyYAML's, as always
    dumper = getattr(yaml, "CSafeDumper", None) if _printable_ascii(doc) else None
    body = yaml.dump(doc, Dumper=dumper or yaml.SafeDumper, sort_keys=False, allow_unicode=True, width=110,
                     default_flow_style=False)
    remaining = count_placeholders(doc)
    header = [
        f"{MARKER} (rerun imsdr import to replace it; once edited, rename it)",
        "# yaml-language-server: $schema=inventory.schema.json",
        "# (editors check fields against it; write it next to this file: imsdr schema > inventory.schema.json)",
        "# imported from:",
        # a source's file name may hold a line break: escaped, it can never start a line of YAML
        *(f"#   {one_line(line)}" for line in draft.sources),
        *(f"# note: {one_line(line)}" for line in draft.notes),
        *(f"# warning: {one_line(line)}" for line in draft.warnings),
        f"# {remaining} value(s) read 'FILL IN: ...': no source could tell them. `imsdr validate` lists each",
        "# with its line; replace them with the real values.",
    ]
    return "\n".join(header) + "\n" + body, remaining


def _printable_ascii(node: Any) -> bool:
    """Every string in ``node`` (keys too) is printable ASCII, every key a string of 1 to 127 characters."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not (item.isascii() and item.isprintable()):
                return False
        elif isinstance(item, dict):
            if not all(isinstance(k, str) and 0 < len(k) < 128 and k.isascii() and k.isprintable() for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def exceptions_text(draft: Draft) -> str:
    """The draft's ENUM exceptions as an ``--enum-exceptions`` file (imsdr.dns.enum_exceptions)."""
    from imsdr.dns.enum_exceptions import HEADER

    lines = [f"{EXCEPTIONS_MARKER}: numbers whose records differ from their block's; give this file to",
             "# imsdr render dns|plan|resolve|verify --enum-exceptions (docs/dns.md, ENUM exceptions)", HEADER]
    lines += [",".join(row) for row in sorted(set(draft.enum_exceptions))]
    return "\n".join(lines) + "\n"


def exceptions_path(out: Path) -> Path:
    """Where the ENUM exceptions of the draft ``out`` are written: beside it."""
    return out.with_name(out.stem + ".enum-exceptions.csv")


def write_draft(path: Path, text: str, marker: str = MARKER) -> None:
    """Replace ``path`` atomically (a temporary file in the same directory, then rename), holding
    the output lock of its directory from the check to the rename (see
    :func:`imsdr.output.atomic.output_lock`): a ``plan`` writing the same path meanwhile is never
    silently overwritten, nor does it silently replace the draft."""
    from imsdr.output.atomic import output_lock

    directory = path.parent if str(path.parent) else Path(".")
    with output_lock(path):
        _refuse_foreign(path, marker)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def summary(draft: Draft, remaining: int) -> list[str]:
    counts: dict[str, Any] = {s: len(getattr(draft, s)) for s in ENTITY_SECTIONS}
    return [
        *(f"imported {one_line(line)}" for line in draft.sources),
        *(f"note: {line}" for line in draft.notes),
        *(f"warning: {line}" for line in draft.warnings),
        "draft: " + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items()),
        f"{remaining} placeholder(s) to fill in: `imsdr validate` lists them with their lines",
    ]
