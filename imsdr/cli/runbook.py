"""`imsdr render runbook`: Markdown runbooks from Jinja2 templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli import common

TemplatesOpt = Annotated[
    Path | None,
    typer.Option("--templates", "-t", file_okay=False, show_default=False,
                 help="Directory of *.md.j2 templates overriding the built-in ones by file name "
                      "(rendered in a sandbox)."),
]


def register(render_app: typer.Typer) -> None:
    render_app.command("runbook", cls=common.ImsdrCommand)(runbook)


@common.handle_errors
def runbook(inventory: common.InventoryArg, out: common.OutDirOpt, templates: TemplatesOpt = None,
            fmt: common.FormatOpt = common.Format.table, force: common.ForceOpt = False,
            template_timeout: common.TemplateTimeoutOpt = common.TEMPLATE_TIMEOUT_S,
            template_max_output: common.TemplateMaxOutputOpt = common.TEMPLATE_MAX_OUTPUT_MIB) -> None:
    """Render the DR runbook (Markdown with Mermaid diagrams) for an inventory into OUT.

    Examples: `imsdr render runbook inventory.yaml --out runbooks`; `imsdr render runbook inventory.yaml
    --out runbooks --templates my-templates/`"""
    from imsdr.plan import analyse, runbook_pages_text
    from imsdr.runbook.render import write_runbook

    target = common.output_target(out, force, inventory, templates)
    with common.stage(f"analysing {inventory}"):
        pipe = analyse(inventory)
    pages = runbook_pages_text(pipe, templates, common.template_limits(template_timeout, template_max_output))
    write_runbook(target, pages)
    if fmt is common.Format.json:
        from imsdr.output.jsonout import dumps, envelope

        common.write_stdout(dumps(envelope("render-runbook", {"out": str(out), "pages": sorted(pages),
                                                        "sandboxed": templates is not None}, str(inventory))))
        return
    from rich.table import Table

    table = Table(title=f"runbook for {pipe.topology.network.name}", caption=f"written to {out}/")
    table.add_column("page")
    table.add_column("lines", justify="right")
    for name in sorted(pages, key=lambda p: (p != "README.md", p)):
        table.add_row(name, str(pages[name].count("\n")))
    common.stdout().print(table)
