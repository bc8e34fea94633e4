"""`imsdr example national|province`: synthetic inventories as YAML on stdout."""

from __future__ import annotations

from typing import Annotated

import typer

from imsdr.cli.common import ImsdrCommand, handle_errors

example_app = typer.Typer(
    help="Generate synthetic, valid inventories (YAML on stdout), deterministic for a seed.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help like the root app (fast start-up)
)

SeedOpt = Annotated[int, typer.Option("--seed", metavar="N", help="Random seed: same seed and options, same bytes.")]
EnumNumbersOpt = Annotated[
    int, typer.Option("--enum-numbers", metavar="N", min=0, help="Numbers in style: numbers ENUM blocks, in all.")
]
BlockSizeOpt = Annotated[
    int, typer.Option("--enum-block-size", metavar="N", min=1, help="Numbers per ENUM block (the last may be smaller).")
]
SitesOpt = Annotated[int, typer.Option("--sites-per-province", metavar="N", min=2, max=16, help="Sites per province.")]
LocalNetworksOpt = Annotated[
    int, typer.Option("--local-networks-per-province", metavar="N", min=1,
                      help="Local networks (one SBC each) per province.")
]
WildcardsOpt = Annotated[
    bool, typer.Option("--wildcards/--no-wildcards", help="Add one wildcard ENUM block per province.")
]


def register(app: typer.Typer) -> None:
    app.add_typer(example_app, name="example")


def _emit(provinces: int, sites: int, local_networks: int, seed: int, enum_numbers: int,
          block_size: int, wildcards: bool) -> None:
    import sys

    from imsdr.example.national import NationalParams, write_yaml

    params = NationalParams(provinces=provinces, sites_per_province=sites,
                            local_networks_per_province=local_networks, seed=seed,
                            enum_numbers=enum_numbers, enum_block_size=block_size, wildcard_blocks=wildcards)
    write_yaml(params, sys.stdout)
    sys.stdout.flush()


@example_app.command("national", cls=ImsdrCommand)
@handle_errors
def national(
    provinces: Annotated[
        int, typer.Option("--provinces", metavar="N", min=1, max=200, help="Provinces (one IMS core each).")
    ] = 31,
    sites_per_province: SitesOpt = 4,
    local_networks_per_province: LocalNetworksOpt = 10,
    seed: SeedOpt = 1,
    enum_numbers: EnumNumbersOpt = 10_000_000,
    enum_block_size: BlockSizeOpt = 100_000,
    wildcards: WildcardsOpt = True,
) -> None:
    """A national inventory: by default 31 provinces x 4 sites, 310 local networks, ~5,000 elements,
    10 million ENUM numbers. Addresses from 198.18.0.0/15 (RFC 2544) and 2001:db8::/32.

    Examples: `imsdr example national > national.yaml`; `imsdr example national --provinces 3 > three.yaml`"""
    _emit(provinces, sites_per_province, local_networks_per_province, seed, enum_numbers,
          enum_block_size, wildcards)


@example_app.command("province", cls=ImsdrCommand)
@handle_errors
def province(
    sites_per_province: SitesOpt = 4,
    local_networks_per_province: LocalNetworksOpt = 10,
    seed: SeedOpt = 1,
    enum_numbers: EnumNumbersOpt = 1_000_000,
    enum_block_size: BlockSizeOpt = 100_000,
    wildcards: WildcardsOpt = True,
) -> None:
    """One province's IMS core (the national generator with --provinces 1).

    Examples: `imsdr example province > province.yaml`"""
    _emit(1, sites_per_province, local_networks_per_province, seed, enum_numbers, enum_block_size, wildcards)
