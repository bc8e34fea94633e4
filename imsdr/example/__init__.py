"""Synthetic, valid, realistic inventories for demonstrations, tests and benchmarks."""

from imsdr.example.national import NationalParams, generate_national, national_yaml, write_yaml

__all__ = ["NationalParams", "generate_national", "national_yaml", "write_yaml"]
