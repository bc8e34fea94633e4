"""`imsdr init`: start a project with an inventory to edit, pre-commit hooks and a CI example."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli.common import ImsdrCommand, handle_errors

DirArg = Annotated[Path | None, typer.Argument(
    help="Project directory (created if missing; default: the working directory).", file_okay=False,
    metavar="DIR", show_default=False)]
SitesOpt = Annotated[int, typer.Option(
    "--sites", min=1, max=8, metavar="N", help="Sites (one local network and one of each element per site).")]
LabOpt = Annotated[bool, typer.Option("--lab", help="A one-site lab (no cross-region failover) instead.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace files that already exist.")]


class CiKind(str, Enum):  # noqa: UP042 - same pattern as common.Format
    github = "github"
    gitlab = "gitlab"
    none = "none"


CiOpt = Annotated[CiKind, typer.Option(
    "--ci", help="The CI configuration to write: a GitHub Actions workflow, a .gitlab-ci.yml (its Code "
    "Quality report shows the findings in merge requests), or none.")]
TableOpt = Annotated[Path | None, typer.Option(
    "--table", dir_okay=False, metavar="FILE.csv",
    help="Write only the element-list template for `imsdr import table` (a header row and one example "
         "row) to FILE.csv; an existing file is replaced only if it is that template unchanged, or with --force.")]


def register(app: typer.Typer) -> None:
    app.command("init", cls=ImsdrCommand)(init)


@handle_errors
def init(directory: DirArg = None, sites: SitesOpt = 2, lab: LabOpt = False, force: ForceOpt = False,
         table: TableOpt = None, ci: CiOpt = CiKind.github) -> None:
    """Write a small, commented, valid inventory (with its schema), .pre-commit-config.yaml,
    .gitattributes and a CI configuration into DIR; existing files are left alone unless --force.
    With --table FILE.csv, only the element-list template to fill in and import with `imsdr import table`.

    Examples: `imsdr init mynet --sites 3`; `imsdr init mynet --ci gitlab`."""
    import os
    import sys

    from imsdr.errors import ImsdrError
    from imsdr.inventory.jsonschema import inventory_json_schema
    from imsdr.output.atomic import write_files_atomically
    from imsdr.output.jsonout import dumps
    from imsdr.starter import starter_files

    if table is not None:
        if directory is not None or sites != 2 or lab:
            raise ImsdrError("--table writes only the element-list template: give it without DIR, --sites or --lab")
        _write_table(table, force)
        return
    directory = directory or Path(".")
    if not lab and sites < 2:
        raise ImsdrError("--sites: a production design needs at least 2 sites (or use --lab)")
    files = starter_files(sites, lab, dumps(inventory_json_schema()), ci=ci.value)
    existing = [f.path for f in files if os.path.lexists(directory / f.path)]
    if existing and not force:
        raise ImsdrError(f"{directory}: {', '.join(existing)} already exist; nothing written "
                         "(--force replaces them)")
    write_files_atomically([(directory / f.path, f.text) for f in files])  # all or none
    for f in files:
        sys.stdout.write(f"wrote {directory / f.path}\n")
    inventory = directory / files[0].path
    sys.stdout.write(f"next: edit {inventory}, then `imsdr validate {inventory}` and `imsdr check {inventory}`\n")


def _write_table(path: Path, force: bool) -> None:
    """The template, unless ``path`` holds something else: a CSV has no room for a marker, so the
    file imsdr wrote is recognised by its content (the template, unchanged); rows a planner
    added are never replaced without --force."""
    import sys

    from imsdr.errors import ImsdrError
    from imsdr.importers.table import template_csv

    text = template_csv()
    if (path.exists() or path.is_symlink()) and not force:
        from imsdr.untrusted import UntrustedFile, read_untrusted

        try:
            ours = read_untrusted(path, len(text.encode("utf-8"))) == text.encode("utf-8")
        except UntrustedFile:
            ours = False
        if not ours:
            raise ImsdrError(f"{path} exists and is not the unchanged template imsdr writes: refusing to replace "
                             "it; nothing written (choose another file, or --force replaces it)")
    if path.is_dir():
        raise ImsdrError(f"{path} is a directory: give a file name for --table")
    from imsdr.output.atomic import write_files_atomically

    write_files_atomically([(path, text)])
    sys.stdout.write(f"wrote {path}\n")
    sys.stdout.write(f"next: one row per element, then `imsdr import table {path} --out draft.yaml`\n")

