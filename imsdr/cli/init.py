"""`imsdr init`: start a project with an inventory to edit, pre-commit hooks and a CI example."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli.common import ImsdrCommand, handle_errors

DirArg = Annotated[Path, typer.Argument(
    help="Project directory (created if missing).", file_okay=False, metavar="DIR")]
SitesOpt = Annotated[int, typer.Option(
    "--sites", min=1, max=8, metavar="N", help="Sites (one local network and one of each element per site).")]
LabOpt = Annotated[bool, typer.Option("--lab", help="A one-site lab (no cross-region failover) instead.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace files that already exist.")]


def register(app: typer.Typer) -> None:
    app.command("init", cls=ImsdrCommand)(init)


@handle_errors
def init(directory: DirArg = Path("."), sites: SitesOpt = 2, lab: LabOpt = False, force: ForceOpt = False) -> None:
    """Write a small, commented, valid inventory (with its schema), .pre-commit-config.yaml and a CI
    workflow into DIR; existing files are left alone unless --force."""
    import os
    import sys
    import tempfile

    from imsdr.errors import ImsdrError
    from imsdr.inventory.jsonschema import inventory_json_schema
    from imsdr.output.jsonout import dumps
    from imsdr.starter import starter_files

    if not lab and sites < 2:
        raise ImsdrError("--sites: a production design needs at least 2 sites (or use --lab)")
    files = starter_files(sites, lab, dumps(inventory_json_schema()))
    existing = [f.path for f in files if (directory / f.path).exists()]
    if existing and not force:
        raise ImsdrError(f"{directory}: {', '.join(existing)} already exist; nothing written "
                         "(--force replaces them)")
    for f in files:
        target = directory / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, staging = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f.text)
        os.chmod(staging, 0o644)
        os.replace(staging, target)
        sys.stdout.write(f"wrote {target}\n")
    inventory = directory / files[0].path
    sys.stdout.write(f"next: edit {inventory}, then `imsdr validate {inventory}` and `imsdr check {inventory}`\n")
