"""`imsdr example national|province`: synthetic inventories as YAML on stdout."""

from __future__ import annotations

from pathlib import Path
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
    int, typer.Option("--enum-numbers", metavar="N", min=0, help="Mobile numbers in the ENUM blocks, in all.")
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
EnumStyleOpt = Annotated[
    str, typer.Option("--enum-style", metavar="wildcard|numbers",
                      help="Mobile blocks as the wildcards that cover them, or one NAPTR per number "
                           "(the benchmarks' stress input).")
]
ExceptionsOpt = Annotated[
    Path | None, typer.Option("--enum-exceptions", metavar="FILE", dir_okay=False, show_default=False,
                              help="Also write the ENUM exceptions provisioning file (ported numbers) to FILE.")
]
HostZoneOpt = Annotated[
    bool, typer.Option("--host-zone/--no-host-zone",
                       help="Name the elements under hosts.<home domain> (network.dns.host_zone: hosts): their "
                            "host records in one zone per side every view shares.")
]
PortedOpt = Annotated[
    float, typer.Option("--ported-share", metavar="SHARE", min=0, max=0.5,
                        help="Share of the mobile numbers in the exceptions file (ported out).")
]


def register(app: typer.Typer) -> None:
    app.add_typer(example_app, name="example")


def _emit(provinces: int, sites: int, local_networks: int, seed: int, enum_numbers: int,
          block_size: int, wildcards: bool, enum_style: str = "wildcard", exceptions: Path | None = None,
          ported_share: float = 0.02, host_zone: bool = False) -> None:
    import sys

    from imsdr.example.national import NationalParams, write_exceptions, write_yaml

    params = NationalParams(provinces=provinces, sites_per_province=sites,
                            local_networks_per_province=local_networks, seed=seed,
                            enum_numbers=enum_numbers, enum_block_size=block_size, wildcard_blocks=wildcards,
                            enum_style=enum_style, ported_share=ported_share,
                            host_zone="hosts" if host_zone else None)
    params.check()
    if exceptions is not None:
        import io

        from imsdr.errors import ImsdrError
        from imsdr.output.atomic import write_text

        if exceptions.is_symlink() or (exceptions.exists() and not exceptions.is_file()):
            raise ImsdrError(f"{exceptions}: not a regular file; refusing to write the ENUM exceptions there")
        buf = io.StringIO()
        rows = write_exceptions(params, buf)
        write_text(exceptions, buf.getvalue())
        sys.stderr.write(f"{exceptions}: {rows:,} ENUM exception(s)\n")
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
    enum_style: EnumStyleOpt = "wildcard",
    enum_exceptions: ExceptionsOpt = None,
    ported_share: PortedOpt = 0.02,
    host_zone: HostZoneOpt = False,
) -> None:
    """A national inventory: by default 31 provinces x 4 sites, 310 local networks, ~5,000 elements,
    10 million ENUM numbers as wildcard blocks (--enum-exceptions FILE: 2 % of them ported, a
    provisioning file). Addresses from 198.18.0.0/15 (RFC 2544) and 2001:db8::/32.

    Examples: `imsdr example national --enum-exceptions exceptions.csv > national.yaml`;
    `imsdr example national --provinces 3 > three.yaml`"""
    _emit(provinces, sites_per_province, local_networks_per_province, seed, enum_numbers,
          enum_block_size, wildcards, enum_style, enum_exceptions, ported_share, host_zone)


@example_app.command("province", cls=ImsdrCommand)
@handle_errors
def province(
    sites_per_province: SitesOpt = 4,
    local_networks_per_province: LocalNetworksOpt = 10,
    seed: SeedOpt = 1,
    enum_numbers: EnumNumbersOpt = 1_000_000,
    enum_block_size: BlockSizeOpt = 100_000,
    wildcards: WildcardsOpt = True,
    enum_style: EnumStyleOpt = "wildcard",
    enum_exceptions: ExceptionsOpt = None,
    ported_share: PortedOpt = 0.02,
    host_zone: HostZoneOpt = False,
) -> None:
    """One province's IMS core (the national generator with --provinces 1).

    Examples: `imsdr example province > province.yaml`"""
    _emit(1, sites_per_province, local_networks_per_province, seed, enum_numbers, enum_block_size, wildcards,
          enum_style, enum_exceptions, ported_share, host_zone)
