"""`imsdr validate` and `imsdr schema`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from imsdr.cli.common import Format, FormatOpt, ImsdrCommand, handle_errors, load, stdout, write_stdout


def register(app: typer.Typer) -> None:
    app.command("validate", cls=ImsdrCommand)(validate)
    app.command("schema", cls=ImsdrCommand)(schema)


InventoriesArg = Annotated[list[Path], typer.Argument(
    help="Inventory YAML files; '-' reads one from standard input, a directory every inventory in it.",
    show_default=False, metavar="INVENTORY...")]


@handle_errors
def validate(inventories: InventoriesArg, fmt: FormatOpt = Format.table) -> None:
    """Validate inventories: every problem with FILE:LINE:COL, exit 2 if any is invalid.

    Examples: `imsdr validate inventory.yaml`; `imsdr validate inventories/` (every inventory in
    the directory); `generate-inventory | imsdr validate -`."""
    from imsdr.cli.common import STDIN, STDIN_NAME, expand_inventories, print_error
    from imsdr.errors import InventoryError
    from imsdr.rules.engine import rule_id_problems

    results = []
    for inventory in expand_inventories(inventories):
        shown = STDIN_NAME if str(inventory) == STDIN else str(inventory)
        try:
            inv, source = load(inventory)
            problems = rule_id_problems(inv, source)  # the ids `check` and `plan` accept, no other
            if problems:
                raise InventoryError(f"{shown}: unknown rule id", problems)
        except InventoryError as exc:
            print_error(exc)
            results.append({"valid": False, "file": shown,
                            "problems": [p.to_dict() for p in exc.problems] or [{"message": exc.message}]})
            continue
        summary = inventory_summary(inv)
        results.append({"valid": True, "file": shown, **summary})
        if fmt is Format.table:
            _print_summary(inv, shown, summary)
    if fmt is Format.json:
        from imsdr.output.jsonout import dumps, envelope

        if len(results) == 1:
            write_stdout(dumps(envelope("validate", results[0], results[0]["file"])))
        else:
            write_stdout(dumps(envelope("validate", {"valid": all(r["valid"] for r in results), "reports": results},
                                        [r["file"] for r in results])))
    if not all(r["valid"] for r in results):
        raise typer.Exit(2)


def _print_summary(inv, inventory: str, summary: dict) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    table = Table(title=inv.network.name)
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("sites", "local_networks", "elements", "pairs", "pools", "enum_blocks", "waivers"):
        table.add_row(key.replace("_", " "), str(summary["counts"][key]))
        if key == "elements":  # the element types belong under the elements they count
            for type_, count in summary["elements_by_type"].items():
                table.add_row(f"  {type_}", str(count))
    console = stdout()
    console.print(table)
    console.print(f"{inventory}: valid", soft_wrap=True, markup=False, highlight=False)


def inventory_summary(inv) -> dict:  # type: ignore[no-untyped-def]
    by_type = Counter(e.type.value for e in inv.elements)
    return {
        "network": inv.network.name,
        "home_domains": list(inv.network.home_domains),
        "counts": {
            "sites": len(inv.sites),
            "local_networks": len(inv.local_networks),
            "elements": len(inv.elements),
            "pairs": len(inv.redundancy.pairs),
            "pools": len(inv.redundancy.pools),
            "enum_blocks": len(inv.enum_blocks),
            "waivers": len(inv.waivers),
        },
        "elements_by_type": dict(sorted(by_type.items())),
        "regions": sorted({s.region for s in inv.sites}),
    }


@handle_errors
def schema() -> None:
    """Print the inventory format's JSON Schema (for yaml-language-server and editors).

    Examples: `imsdr schema > inventory.schema.json`"""
    from imsdr.inventory.jsonschema import inventory_json_schema
    from imsdr.output.jsonout import dumps

    write_stdout(dumps(inventory_json_schema()))
