"""The on-disk cache of validated inventories: hits, misses, invalidation and distrust."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from imsdr.errors import InventoryError
from imsdr.example.national import NationalParams, national_yaml
from imsdr.inventory import cache
from imsdr.inventory.build import load_inventory

PARAMS = NationalParams(provinces=2, sites_per_province=2, local_networks_per_province=2, enum_numbers=1000)
MIN_BYTES = 30_000  # the real threshold is 256 KiB; a smaller file keeps these tests fast


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("IMSDR_CACHE_DIR", str(directory))
    monkeypatch.delenv("IMSDR_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "MIN_BYTES", MIN_BYTES)
    return directory


@pytest.fixture(scope="module")
def big_text() -> str:
    text = national_yaml(PARAMS)
    assert len(text.encode()) >= MIN_BYTES
    return text


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pickle")) if directory.exists() else []


def test_second_load_is_a_hit_with_the_same_inventory_and_locations(
        cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    inv1, src1 = load_inventory(path)
    assert len(_entries(cache_dir)) == 1
    assert not isinstance(src1._doc, cache.LazyDocument)
    inv2, src2 = load_inventory(path)
    assert isinstance(src2._doc, cache.LazyDocument)
    assert inv2 == inv1
    element = inv1.elements[17].id
    assert src2.locate_id(element, "site") == src1.locate_id(element, "site")
    assert src2.locate("sites", 3, "region") == src1.locate("sites", 3, "region")
    assert os.stat(cache_dir).st_mode & 0o777 == 0o700


def test_a_changed_file_misses(cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    load_inventory(path)
    path.write_text(big_text.replace("Example National IMS", "Changed National IMS", 1))
    inv, src = load_inventory(path)
    assert inv.network.name.startswith("Changed")
    assert not isinstance(src._doc, cache.LazyDocument)
    assert len(_entries(cache_dir)) == 2


def test_invalid_files_are_not_cached_and_still_fail(cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(big_text.replace("diameter_watchdog: 8", "diameter_watchdog: eight", 1))
    for _ in range(2):
        with pytest.raises(InventoryError):
            load_inventory(path)
    assert _entries(cache_dir) == []


def test_small_files_and_opt_out_bypass_the_cache(cache_dir: Path, tmp_path: Path, big_text: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    sample = Path(__file__).parent.parent / "inventories" / "province.yaml"
    assert sample.stat().st_size < MIN_BYTES
    load_inventory(sample)
    assert _entries(cache_dir) == []
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    monkeypatch.setenv("IMSDR_NO_CACHE", "1")
    load_inventory(path)
    load_inventory(path)
    assert _entries(cache_dir) == []


def test_damaged_or_foreign_entries_are_misses(cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    load_inventory(path)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(b"not a pickle")
    inv, src = load_inventory(path)
    assert not isinstance(src._doc, cache.LazyDocument)
    entry.write_bytes(pickle.dumps({"not": "an inventory"}))
    _inv, src = load_inventory(path)
    assert not isinstance(src._doc, cache.LazyDocument)
    assert len(inv.elements) > 0


def test_a_directory_others_can_write_is_not_used(cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    cache_dir.mkdir(mode=0o777)
    os.chmod(cache_dir, 0o777)
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    load_inventory(path)
    assert _entries(cache_dir) == []


def test_an_entry_others_can_write_is_not_trusted(cache_dir: Path, tmp_path: Path, big_text: str) -> None:
    path = tmp_path / "national.yaml"
    path.write_text(big_text)
    load_inventory(path)
    (entry,) = _entries(cache_dir)
    os.chmod(entry, 0o666)
    _inv, src = load_inventory(path)
    assert not isinstance(src._doc, cache.LazyDocument)
