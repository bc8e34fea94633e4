"""`verify --kamailio` and `imsdr exporter` refuse bad input with exit 2 and a message naming the
option, before anything is asked; an unreachable Kamailio is no verdict (exit 2), never drift."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.resolve.dispatcher_live import parse_address

ROOT = Path(__file__).resolve().parent.parent
LAB = str(ROOT / "inventories" / "lab.yaml")
runner = CliRunner()


@pytest.mark.parametrize("text", ["lab-sbc-1", "lab-sbc-1=", "=unix:/x", "lab-sbc-1=unix:/x;rm -rf /",
                                  "lab-sbc-1=tcp:host", "lab-sbc-1=http://x", "lab-sbc-1=unix:/a b"])
def test_a_kamailio_address_that_is_not_a_binrpc_socket_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_address(text)
    result = runner.invoke(app, ["verify", LAB, "--kamailio", text])
    assert result.exit_code == 2 and "--kamailio" in result.stderr


def test_an_element_without_a_dispatcher_set_is_refused() -> None:
    for element, why in (("nosuch", "no element"), ("lab-hss-1", "no dispatcher set")):
        result = runner.invoke(app, ["verify", LAB, "--kamailio", f"{element}=unix:/tmp/nowhere.ctl"])
        assert result.exit_code == 2 and why in result.stderr, result.stderr


def test_an_unreachable_kamailio_is_no_verdict(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", LAB, "--kamailio", f"lab-sbc-1=unix:{tmp_path}/absent.ctl"])
    assert result.exit_code == 2 and "nothing was compared" in result.stderr, result.output


@pytest.mark.parametrize(("args", "why"), [
    (["--listen", "nowhere"], "--listen"),
    (["--listen", "127.0.0.1:99999"], "--listen"),
    (["--no-dns"], "--no-dns"),
    (["--kamailio", "lab-sbc-1=ftp://x", "--no-dns"], "--kamailio"),
])
def test_the_exporter_refuses_bad_options_before_serving(args: list[str], why: str) -> None:
    result = runner.invoke(app, ["exporter", LAB, *args])
    assert result.exit_code == 2 and why in result.stderr, result.output
