"""Switchover time of one failed element, broken into its parts.

* detection — SIP OPTIONS: interval × failure threshold + one response timeout (the element's own
  timer overrides, else the network's). Diameter (HSS/SLF): **2 × Tw** — RFC 3539 §3.4.1: with no
  traffic for Tw the client sends a DWR; when no DWA arrives within a further Tw the connection is
  declared failed and traffic fails over (jitter of ±2 s ignored). ENUM/DNS: one query timeout
  (``options_timeout``) before the resolver asks the other set.
* no DNS TTL — a switchover changes no DNS record: every answer already lists the backup (the DR
  SBC second, the other pool members), so clients move after detection without re-resolving.
  The TTL counts only when an operator changes the answers (``imsdr render dns --drain``); the
  runbooks' drain procedures add it there.
* re-registration — registered users move only at their next refresh, up to
  ``registration_refresh``: SBC and P-CSCF always (terminating calls fail until then); S-CSCF only
  where no dynamic restoration data exists.

Per access type (the SBC/P-CSCF a UE registered through fails):

* fixed access — as above (the seed study's model).
* PS access with P-CSCF restoration (TS 23.380 §5.4 HSS-based, §5.5 PCRF/PCF-based) — detection
  + restoration signalling (SAR with the P-CSCF restoration indication, IDR to the MME or Gx/N7 to
  the P-GW/SMF, PDN connection released and re-established with a new P-CSCF list) + one
  registration: seconds.
* PS access without it — the UE keeps its dead P-CSCF until its registration expires
  (``ps_registration_expiry``, TS 24.229 default 600000 s): terminating calls fail meanwhile.

Diameter detection is the watchdog's 2 × Tw, or a faster transport detection when declared: BFD
(RFC 5880 §6.8.4: multiplier × interval) or SCTP heartbeats (RFC 9260 §8.3: a path is down after
Path.Max.Retrans + 1 unanswered heartbeats, each waiting at most HB.interval + RTO.Max).
H.248 (IM-MGW) detection is the inactivity timer (ITU-T H.248.14) plus one transaction timeout.
Periodic (non-real-time) HSS/SLF backups add the time to restore the latest copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imsdr.capacity.load import is_scscf

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology


PART_LABEL = {"detection": "detection", "dns_ttl": "DNS TTL", "re_registration": "re-registration",
              "restoration": "restoration signalling", "restore": "restore from backup",
              "promotion": "promotion", "reconnect": "reconnect (Tc)"}
#: Diameter failure modes and what sees them: path or host loss (BFD or SCTP heartbeats when
#: declared, else the watchdog) and a hung application (its transport stays up: only 2 x Tw)
DIAMETER_FAILURE_MODES = ("host", "application")
#: freeDiameter 1.2.1 retries a closed peer after Tc - 2 s + a random 0-4 s (p_psm.c)
RECONNECT_JITTER = 2
ACCESS_TYPES = ("fixed", "ps")


@dataclass(frozen=True, slots=True)
class Part:
    name: str  # detection | dns_ttl | restoration | restore | re_registration | promotion | reconnect
    seconds: int
    how: str


@dataclass(frozen=True, slots=True)
class Switchover:
    parts: tuple[Part, ...]

    @property
    def seconds(self) -> int:
        return sum(p.seconds for p in self.parts)

    def formula(self) -> str:
        if not self.parts:
            return "0 s"
        body = " + ".join(f"{p.seconds} s {PART_LABEL.get(p.name, p.name)}" for p in self.parts)
        return f"{body} = {self.seconds} s"


def _timer(topology: Topology, el: Element, name: str) -> int:
    value = getattr(el.timers, name)
    return int(value if value is not None else getattr(topology.network.timers, name))


def diameter_detection(topology: Topology, el: Element, mode: str = "host") -> Part:
    """How fast a Diameter client notices ``el`` is gone: for path or host loss (``mode`` host) the
    faster of the watchdog and the declared transport detection; for a hung application
    (``mode`` application) the watchdog alone, since BFD and SCTP see a healthy transport."""
    tw = _timer(topology, el, "diameter_watchdog")
    best = Part("detection", 2 * tw, f"Diameter watchdog: 2 × Tw = 2 × {tw} s (RFC 3539 §3.4.1 DWR/DWA)"
                + (": a hung application keeps its transport up" if mode == "application" else ""))
    if mode == "application":
        return best
    transport = topology.network.timers.diameter_transport
    if transport.bfd is not None:
        bfd = transport.bfd
        ms = bfd.multiplier * bfd.interval_ms
        seconds = -(-ms // 1000)
        if seconds < best.seconds:
            best = Part("detection", seconds,
                        f"BFD: {bfd.multiplier} × {bfd.interval_ms} ms = {ms} ms, counted as {seconds} s "
                        "(RFC 5880 §6.8.4)")
    if transport.sctp_heartbeat is not None:
        hb = transport.sctp_heartbeat
        seconds = (hb.path_max_retrans + 1) * (hb.interval + hb.rto_max)
        if seconds < best.seconds:
            best = Part("detection", seconds,
                        f"SCTP heartbeat: ({hb.path_max_retrans} + 1) × ({hb.interval} s HB.interval + "
                        f"{hb.rto_max} s RTO.Max) (RFC 9260 §8.3)")
    return best


def active_standby_pair(topology: Topology, el: Element):  # type: ignore[no-untyped-def]
    """The active-standby pair ``el`` is in (its spec), or None."""
    for group in topology.groups_of.get(el.id, []):
        if group.kind == "pair" and getattr(group.spec, "mode", None) == "active-standby":
            return group.spec
    return None


def promotion_parts(topology: Topology, el: Element) -> tuple[Part, ...]:
    """What follows detection when the active member of an active-standby pair is lost: the
    standby's promotion, then the clients' next connection attempt (a standby refuses connections
    until promoted, so the clients reach it at their next Tc retry)."""
    pair = active_standby_pair(topology, el)
    if pair is None or pair.members[0] != el.id:
        return ()
    tc = topology.network.timers.diameter_reconnect
    return (Part("promotion", pair.promotion_seconds,
                 f"{pair.promotion} promotion of {', '.join(m for m in pair.members if m != el.id)} "
                 f"({pair.id}: {pair.promotion_seconds} s)"),
            Part("reconnect", tc + RECONNECT_JITTER,
                 f"clients retry the refused standby every Tc = {tc} s (+ up to {RECONNECT_JITTER} s jitter, "
                 "RFC 6733 §2.1, freeDiameter)"))


def diameter_failure_modes(topology: Topology, el: Element) -> dict[str, Switchover]:
    """Per failure mode (host, application) of the HSS/SLF/DRA ``el``: its switchover."""
    rest = promotion_parts(topology, el)
    return {mode: Switchover((diameter_detection(topology, el, mode), *rest)) for mode in DIAMETER_FAILURE_MODES}


def failback_time(topology: Topology, el: Element) -> Switchover:
    """Failing back to the recovered active member ``el`` of an active-standby pair: the serving
    member is demoted, ``el`` promotes itself, the clients reconnect at their next Tc retry."""
    pair = active_standby_pair(topology, el)
    if pair is None:
        return Switchover(())
    tc = topology.network.timers.diameter_reconnect
    return Switchover((Part("promotion", pair.promotion_seconds,
                            f"{pair.promotion} promotion of {el.id} ({pair.id}: {pair.promotion_seconds} s)"),
                       Part("reconnect", tc + RECONNECT_JITTER,
                            f"clients reconnect at their next Tc = {tc} s retry (+ up to {RECONNECT_JITTER} s)")))


def h248_detection(topology: Topology) -> Part:
    timers = topology.network.timers
    seconds = timers.h248_inactivity + timers.h248_transaction_timeout
    return Part("detection", seconds,
                f"H.248: {timers.h248_inactivity} s inactivity timer (H.248.14) + "
                f"{timers.h248_transaction_timeout} s transaction timeout")


def options_detection_part(topology: Topology, el: Element) -> Part:
    interval = _timer(topology, el, "options_interval")
    threshold = _timer(topology, el, "options_failure_threshold")
    timeout = _timer(topology, el, "options_timeout")
    return Part("detection", interval * threshold + timeout,
                f"SIP OPTIONS: {interval} s × {threshold} + {timeout} s timeout")


@dataclass(frozen=True, slots=True)
class BackupRecovery:
    """A periodic (non-real-time) backup: how long until the copy serves, and what it lacks."""

    group: str
    restore_time: int | None  # None: not declared
    rpo: int  # seconds of changes not in the copy (the backup interval)


def periodic_backup(topology: Topology, el: Element) -> BackupRecovery | None:
    for group in topology.groups_of.get(el.id, []):
        spec = group.spec
        if spec.sync == "periodic":
            return BackupRecovery(group.id, spec.restore_time, int(spec.backup_interval or 0))
    return None


class AccessTypes:
    """The access types (fixed, ps) of the users whose registrations go through each SBC and
    P-CSCF of ``topology``, worked out in one pass over the SBCs (the failure engine asks for every
    element; :func:`access_types` answers one)."""

    def __init__(self, topology: Topology) -> None:
        self.local_networks = topology.local_networks
        #: the common case, answered without walking the SBCs
        self.all_fixed = all(ln.access == "fixed" for ln in topology.local_networks.values())
        self.sbc_lns: dict[str, set[str]] = {}  # SBC → local networks it serves or is the DR SBC of
        self.pcscf_lns: dict[str, set[str]] = {}  # P-CSCF → local networks of the SBCs listing it
        if self.all_fixed:
            return
        from imsdr.model.selection import sbc_pcscf_targets

        memo: dict[str, list[Element]] = {}
        for sbc in topology.by_type.get("sbc", []):
            self.sbc_lns.setdefault(sbc.id, set()).update(sbc.serves)
            # users register through the SBC's first tier only: a P-CSCF listed as a backup holds
            # none of its users while the first is up (a fixed SBC's backup listing adds no fixed users)
            targets, tiers = sbc_pcscf_targets(topology, sbc, memo=memo)
            for pcscf, tier in zip(targets, tiers, strict=True):
                if tier == min(tiers):
                    self.pcscf_lns.setdefault(pcscf.id, set()).update(sbc.serves)
        for ln, dr in topology.dr_sbc.items():
            self.sbc_lns.setdefault(dr.id, set()).add(ln)

    def __call__(self, el: Element) -> tuple[str, ...]:
        if self.all_fixed:
            return ("fixed",)
        t = el.type.value
        lns = self.sbc_lns.get(el.id, ()) if t == "sbc" else self.pcscf_lns.get(el.id, ()) if t == "pcscf" else ()
        found: set[str] = set()
        for ln_id in lns:
            ln = self.local_networks.get(ln_id)
            if ln is not None:
                found.update(("fixed", "ps") if ln.access == "both" else (ln.access,))
        return tuple(a for a in ACCESS_TYPES if a in found) or ("fixed",)


def access_types(topology: Topology, el: Element, access: AccessTypes | None = None) -> tuple[str, ...]:
    """The access types (fixed, ps) of the users whose registrations go through ``el``
    (``access``: the topology's :class:`AccessTypes`, when the caller asks for many elements)."""
    return (access or AccessTypes(topology))(el)


def reregistration_window(topology: Topology, el: Element, access: str) -> Switchover:
    """Until the users of ``access`` (fixed | ps) registered through the failed SBC/P-CSCF ``el``
    are reachable again; the registration storm spreads their re-registrations over it."""
    detection = options_detection_part(topology, el)
    if access == "ps":
        restoration = topology.network.restoration
        if restoration.pcscf_restoration != "none":
            clause = "TS 23.380 §5.4 HSS-based" if restoration.pcscf_restoration == "hss" else \
                "TS 23.380 §5.5 PCRF/PCF-based"
            return Switchover((
                detection,
                Part("restoration", restoration.signalling_time,
                     f"{clause} P-CSCF restoration: the PDN connection is re-established with a new "
                     f"P-CSCF list ({restoration.signalling_time} s)"),
                Part("re_registration", restoration.registration_time,
                     f"the UE registers through the new P-CSCF ({restoration.registration_time} s)"),
            ))
        expiry = topology.network.timers.ps_registration_expiry
        return Switchover((
            detection,
            Part("re_registration", expiry,
                 f"no P-CSCF restoration: PS UEs keep the failed P-CSCF until their registration "
                 f"expires (up to {expiry} s, TS 24.229 §5.1.1.2)"),
        ))
    parts = [detection]  # no DNS TTL: the answers already list the backup (module doc)
    refresh = registration_refresh(topology, el)
    parts.append(Part("re_registration", refresh,
                      f"registered users re-register at their next refresh (up to {refresh} s)"))
    return Switchover(tuple(parts))


@dataclass(frozen=True, slots=True)
class Refresh:
    """A registration refresh interval and where it comes from (every figure using it says which)."""

    seconds: int
    basis: str  # operator (registration_refresh set) | ts24229 (derived from the expiry) | default
    how: str


def refresh_from_expiry(expiry: int) -> int:
    """TS 24.229 §5.1.1.4.1: a UE re-registers 600 s before the expiry when the registration was
    for more than 1,200 s, else when half of it has passed."""
    return expiry - 600 if expiry > 1200 else expiry // 2


def refresh_interval(topology: Topology, el: Element | None = None) -> Refresh:
    """The refresh interval of fixed-access users registered through ``el`` (network-wide when
    ``el`` is None): the element's own ``registration_refresh``, else the network's when the
    operator sets it, else the TS 24.229 interval of ``registration_expiry`` when that is given,
    else the default ``registration_refresh``."""
    timers = topology.network.timers
    own = None if el is None else el.timers.registration_refresh
    if own is not None:
        return Refresh(int(own), "operator", f"refresh interval {own} s (set on {el.id})")  # type: ignore[union-attr]
    expiry = timers.registration_expiry
    if "registration_refresh" in timers.model_fields_set or expiry is None:
        basis = "operator" if "registration_refresh" in timers.model_fields_set else "default"
        seconds = int(timers.registration_refresh)
        said = "set by the operator" if basis == "operator" else "default"
        return Refresh(seconds, basis, f"refresh interval {seconds} s ({said})")
    seconds = refresh_from_expiry(int(expiry))
    rule = f"{expiry} − 600" if expiry > 1200 else f"{expiry} / 2"
    return Refresh(seconds, "ts24229", f"refresh interval {rule} = {seconds} s from the {expiry} s expiry "
                                       "(TS 24.229 §5.1.1.4.1)")


def ps_refresh_interval(topology: Topology) -> Refresh:
    """PS (VoLTE) UEs refresh by TS 24.229 §5.1.1.4.1 from ``ps_registration_expiry``."""
    expiry = int(topology.network.timers.ps_registration_expiry)
    seconds = max(1, refresh_from_expiry(expiry))
    rule = f"{expiry} − 600" if expiry > 1200 else f"{expiry} / 2"
    return Refresh(seconds, "ts24229", f"PS refresh interval {rule} = {seconds} s from the {expiry} s expiry "
                                       "(TS 24.229 §5.1.1.4.1)")


def registration_refresh(topology: Topology, el: Element) -> int:
    """The REGISTER refresh interval of the users registered through ``el``
    (:func:`refresh_interval`): the re-registration part of a fixed-access window."""
    return refresh_interval(topology, el).seconds


def access_windows(topology: Topology, el: Element, access: AccessTypes | None = None) -> dict[str, Switchover]:
    """Per access type served by the SBC/P-CSCF ``el``: its re-registration window."""
    return {a: reregistration_window(topology, el, a) for a in access_types(topology, el, access)}


def switchover(topology: Topology, el: Element, access: AccessTypes | None = None) -> Switchover:
    """The estimated switchover time when ``el`` fails and something takes over (for an SBC or
    P-CSCF: the slowest access type it serves; ``access``: see :func:`access_types`)."""
    t = el.type.value
    if t in ("sbc", "pcscf"):
        windows = access_windows(topology, el, access).values()
        return max(windows, key=lambda w: w.seconds)
    parts: list[Part] = []
    if t in ("hss", "slf", "dra"):
        parts.append(diameter_detection(topology, el))
        parts.extend(promotion_parts(topology, el))
        backup = periodic_backup(topology, el)
        if backup is not None and backup.restore_time is not None:
            parts.append(Part("restore", backup.restore_time,
                              f"{backup.group} restores its latest copy ({backup.restore_time} s); changes of "
                              f"the last {backup.rpo} s are missing until replayed"))
    elif t == "enum_dns":
        timeout = _timer(topology, el, "options_timeout")
        parts.append(Part("detection", timeout,
                          f"one DNS query timeout ({timeout} s) before the resolver asks the other set"))
    elif t == "imgw":
        parts.append(h248_detection(topology))
    else:
        parts.append(options_detection_part(topology, el))
    if is_scscf(el) and not el.has(_restoration()):
        refresh = registration_refresh(topology, el)
        parts.append(Part("re_registration", refresh,
                          f"no restoration data: users re-register within the refresh period ({refresh} s)"))
    return Switchover(tuple(parts))


def _restoration():  # type: ignore[no-untyped-def]
    from imsdr.inventory.schema import Feature

    return Feature.RESTORATION_DATA
