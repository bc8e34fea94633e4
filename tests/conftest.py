"""Shared pytest fixtures. Keep this file to fixtures only; append new ones surgically."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def start_named() -> Iterator[Callable[..., Any]]:
    """Factory: ``start_named(config_dir, include="named/<server>.conf")`` starts a real BIND on
    127.0.0.1 (free high port) with the rendered config and returns a ``NamedServer``
    (``.query(qname, rdtype, source=...)``, ``.answer(...)``, ``.port``, ``.pid``); every server
    started is stopped by pid at teardown."""
    import named_harness

    servers: list[Any] = []

    def factory(config_dir: Path | str, **kwargs: Any) -> Any:
        assert shutil.which("named") or Path("/usr/sbin/named").exists(), (
            "BIND 'named' is not installed: run the test command, bash .ci/test, which installs bind9")
        server = named_harness.start_named(config_dir, **kwargs)
        servers.append(server)
        return server

    factory.servers = servers  # type: ignore[attr-defined]

    yield factory
    for server in servers:
        server.stop()


@pytest.fixture
def make_inventory(tmp_path: Path) -> Callable[..., Path]:
    """Factory: ``make_inventory(mutate, base="province")`` loads ``inventories/<base>.yaml`` as
    plain data, lets ``mutate(data)`` change it in place, writes it under tmp_path and returns
    the new file's path (load it with ``load_inventory``)."""
    import yaml

    root = Path(__file__).resolve().parent.parent
    counter = [0]

    def factory(mutate: Callable[[dict[str, Any]], None] | None = None, base: str = "province") -> Path:
        data = yaml.safe_load((root / "inventories" / f"{base}.yaml").read_text())
        if mutate is not None:
            mutate(data)
        counter[0] += 1
        path = tmp_path / f"{base}-variant-{counter[0]}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return factory
