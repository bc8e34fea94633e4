"""``verify --kamailio``: a live Kamailio's dispatcher state against the plan's dispatcher sets.

The plan (:func:`imsdr.dns.dispatcher.dispatcher_sets`, the sets ``render dns`` writes into
``kamailio/<element>/dispatcher.list``) says which destinations each SBC and P-CSCF holds, and
that every one of them is in service in the normal state. The live state comes from Kamailio's
own RPC ``dispatcher.list``, asked with ``kamcmd -s ADDRESS dispatcher.list`` (binrpc over the
``ctl`` module's socket: ``unix:/run/kamailio/kamailio_ctl`` or ``tcp:HOST:PORT``); the command is
run without a shell, with the address as one argument.

Kamailio prints each destination's ``FLAGS`` as two letters: the state (``A`` active, ``I``
inactive, ``T`` trying, ``D`` disabled) and ``P`` (probing) or ``X`` (not probing). A planned
destination is up when its state is ``A`` or ``T`` (trying: fewer missed probes than the
threshold, still routed to; the runbook's Declare step calls it not yet a failure). Drift: a
planned destination missing from the live set or out of service, a live destination the plan does
not have.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

RPC_TIMEOUT_S = 10.0
MAX_OUTPUT = 1 << 22
_ADDRESS = re.compile(r"unix:/[^\s;|&$`'\"\\]+|tcp:[A-Za-z0-9.:\[\]-]+:\d{1,5}|udp:[A-Za-z0-9.:\[\]-]+:\d{1,5}")


@dataclass(frozen=True, slots=True)
class LiveDestination:
    setid: int
    uri: str
    flags: str
    element: str  # DUID, '' when the line has none


@dataclass(frozen=True, slots=True)
class DestinationState:
    """One planned (or unplanned live) destination of one source element."""

    setid: int
    uri: str
    element: str
    state: str  # Kamailio's FLAGS text; "absent" when the live set lacks it
    planned: bool = True

    @property
    def up(self) -> bool:
        """Still in service: active, or trying (probes missed, fewer than the threshold: Kamailio
        still routes to it, and the runbook's Declare step says it is not yet a failure)."""
        return self.planned and self.state[:1] in ("A", "T")


@dataclass
class DispatcherCheck:
    source: str  # the SBC or P-CSCF element id
    address: str
    destinations: list[DestinationState] = field(default_factory=list)
    error: str | None = None

    def drift(self) -> list[dict[str, Any]]:
        out = []
        if self.error is not None:
            return [{"source": self.source, "kind": "unreachable", "detail": self.error}]
        for d in self.destinations:
            if not d.planned:
                out.append({"source": self.source, "setid": d.setid, "destination": d.uri, "element": d.element,
                            "kind": "extra", "detail": f"live destination {d.uri} ({d.state}) is not in the plan"})
            elif d.state == "absent":
                out.append({"source": self.source, "setid": d.setid, "destination": d.uri, "element": d.element,
                            "kind": "missing", "detail": f"planned destination {d.uri} is not loaded"})
            elif not d.up:
                out.append({"source": self.source, "setid": d.setid, "destination": d.uri, "element": d.element,
                            "kind": "state", "detail": f"{d.element or d.uri} is {d.state}, the plan expects it "
                                                       "active"})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "address": self.address, "error": self.error,
                "destinations": [{"setid": d.setid, "destination": d.uri, "element": d.element,
                                  "state": d.state, "planned": d.planned, "up": d.up} for d in self.destinations]}


def parse_address(text: str) -> tuple[str, str]:
    """``ELEMENT=ADDRESS`` of ``--kamailio`` → (element, binrpc address)."""
    element, sep, address = text.partition("=")
    if not sep or not element or not _ADDRESS.fullmatch(address):
        raise ValueError(f"{text!r}: give ELEMENT=unix:/path/to/kamailio_ctl or ELEMENT=tcp:HOST:PORT")
    return element, address


def parse_dispatcher_list(text: str) -> list[LiveDestination]:
    """The destinations of ``kamcmd dispatcher.list`` output, in order."""
    out: list[LiveDestination] = []
    setid: int | None = None
    uri = flags = duid = None

    def flush() -> None:
        nonlocal uri, flags, duid
        if uri is not None and setid is not None:
            out.append(LiveDestination(setid, uri, flags or "", duid or ""))
        uri = flags = duid = None

    for raw in text.splitlines():
        line = raw.strip()
        key, _, value = line.partition(":")
        value = value.strip()
        if line.startswith("SET:"):
            flush()
            setid = None
        elif key == "ID" and value.isdigit():
            setid = int(value)
        elif line.startswith("DEST:"):
            flush()
        elif key == "URI":
            uri = value
        elif key == "FLAGS":
            flags = value
        elif key == "DUID":
            duid = value
    flush()
    return out


def kamcmd_dispatcher_list(address: str, kamcmd: str | None = None) -> str:
    """Run ``kamcmd -s ADDRESS dispatcher.list`` (no shell); its output, or raise OSError."""
    binary = kamcmd or shutil.which("kamcmd") or "/usr/sbin/kamcmd"
    try:
        done = subprocess.run([binary, "-s", address, "dispatcher.list"], capture_output=True, text=True,
                              timeout=RPC_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise OSError(f"kamcmd -s {address}: no answer in {RPC_TIMEOUT_S:g} s") from None
    except FileNotFoundError:
        raise OSError(f"kamcmd not found ({binary})") from None
    if done.returncode != 0 or "NRSETS" not in done.stdout:
        why = (done.stderr or done.stdout).strip().splitlines()[:1]
        raise OSError(f"kamcmd -s {address} dispatcher.list failed: {why[0] if why else 'no output'}")
    return done.stdout[:MAX_OUTPUT]


def compare_sets(source: str, address: str, planned: Sequence[Any], live: Sequence[LiveDestination]
                 ) -> DispatcherCheck:
    """Every planned destination of ``source``'s sets with its live state, then unplanned live ones."""
    check = DispatcherCheck(source, address)
    live_by = {(d.setid, d.uri): d for d in live}
    seen: set[tuple[int, str]] = set()
    for ds in planned:
        for dest in ds.destinations:
            found = live_by.get((ds.setid, dest.uri))
            seen.add((ds.setid, dest.uri))
            check.destinations.append(DestinationState(ds.setid, dest.uri, dest.element,
                                                       found.flags if found else "absent"))
    for d in live:
        if (d.setid, d.uri) not in seen:
            check.destinations.append(DestinationState(d.setid, d.uri, d.element, d.flags, planned=False))
    return check


def planned_sets(topology: Any, source: str) -> list[Any]:
    """The plan's dispatcher sets of element ``source`` (ImsdrError: not an element, or none)."""
    from imsdr.dns.dispatcher import dispatcher_sets
    from imsdr.errors import ImsdrError

    if source not in topology.elements:
        raise ImsdrError(f"--kamailio: no element {source!r} in the inventory")
    planned = [ds for ds in dispatcher_sets(topology) if ds.source == source]
    if not planned:
        raise ImsdrError(f"--kamailio: {source} has no dispatcher set in the plan (an SBC or P-CSCF has)")
    return planned


def check_kamailio(topology: Any, source: str, address: str, kamcmd: str | None = None) -> DispatcherCheck:
    """The live dispatcher state of element ``source`` (reached at ``address``) against the plan."""
    planned = planned_sets(topology, source)
    try:
        live = parse_dispatcher_list(kamcmd_dispatcher_list(address, kamcmd))
    except OSError as exc:
        return DispatcherCheck(source, address, error=str(exc))
    return compare_sets(source, address, planned, live)
