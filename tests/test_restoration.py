"""TS 23.380 restoration, PS access, Diameter detection, periodic HSS backups, emergency data,
H.248 control and the ENUM-outage breakout: timings computed by hand, rules, the 504 body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inventory_factory import element, group, local_network, province_data, topology_from_data

DATA = Path(__file__).resolve().parent / "data"


def _timers(data: dict[str, Any], **values: Any) -> None:
    data["network"]["timers"].update(values)


def _ps_topology(tmp_path: Path, mode: str) -> Any:
    """The province sample with round timers: OPTIONS 5 s × 3 + 2 s = 17 s detection, restoration
    signalling 4 s, one registration 3 s, PS expiry 600000 s."""
    data = province_data()
    _timers(data, options_interval=5, options_failure_threshold=3, options_timeout=2,
            ps_registration_expiry=600000)
    data["network"]["restoration"] = {"pcscf_restoration": mode, "signalling_time": 4, "registration_time": 3}
    return topology_from_data(data, tmp_path)


def test_ps_window_with_hss_based_pcscf_restoration(tmp_path: Path) -> None:
    from imsdr.capacity.timing import reregistration_window

    topo = _ps_topology(tmp_path, "hss")
    window = reregistration_window(topo, topo.elements["sbc-coast"], "ps")
    # 17 s detection + 4 s restoration signalling + 3 s registration = 24 s
    assert [(p.name, p.seconds) for p in window.parts] == [
        ("detection", 17), ("restoration", 4), ("re_registration", 3)]
    assert window.seconds == 24
    assert "TS 23.380 §5.4" in window.parts[1].how
    assert window.formula() == ("17 s detection + 4 s restoration signalling + 3 s re-registration = 24 s")


def test_ps_window_without_pcscf_restoration_lasts_until_ue_expiry(tmp_path: Path) -> None:
    from imsdr.capacity.timing import access_windows, switchover

    topo = _ps_topology(tmp_path, "none")
    coast = topo.elements["sbc-coast"]
    windows = access_windows(topo, coast)
    assert list(windows) == ["fixed", "ps"]  # coast (fixed and PS) and capital (fixed, its DR SBC)
    # 17 s detection + 600000 s until the UE's registration expires = 600017 s (almost 7 days)
    assert windows["ps"].seconds == 600017
    assert switchover(topo, coast).seconds == 600017
    # sbc-river serves fixed users (river) and is coast's DR SBC: both windows, the slower one counts
    river = topo.elements["sbc-river"]
    both = access_windows(topo, river)
    assert list(both) == ["fixed", "ps"]
    # fixed: 17 s detection + 1,200 s refresh (1,800 s expiry − 600, TS 24.229 §5.1.1.4.1) = 1217 s
    # (no DNS record changes, so no TTL part)
    assert both["fixed"].seconds == 1217
    assert switchover(topo, river).seconds == 600017


def test_fixed_access_timing_is_unchanged(tmp_path: Path) -> None:
    from imsdr.capacity.timing import access_windows, switchover

    topo = _ps_topology(tmp_path, "hss")
    capital = topo.elements["sbc-capital"]  # fixed only, DR for harbour (fixed)
    assert list(access_windows(topo, capital)) == ["fixed"]
    assert switchover(topo, capital).seconds == 17 + 1200  # the refresh of the 1,800 s expiry


def test_simulate_names_the_ps_window(tmp_path: Path) -> None:
    from imsdr.scenarios.simulate import simulate

    topo = _ps_topology(tmp_path, "hss")
    report = simulate(topo, ["sbc-coast"])
    lines = report.failed[0].impact
    assert any("restored per user, at the first terminating request that fails, by HSS-based P-CSCF restoration "
               "(TS 23.380 §5.4): " in line and "= 24 s for that user" in line for line in lines)


def _periodic_hss(tmp_path: Path, **timers: Any) -> Any:
    data = province_data()
    data["network"]["timers"].pop("diameter_transport", None)
    _timers(data, diameter_watchdog=8, **timers)
    group(data, "hss-pair").update(sync="periodic", backup_interval=3600, restore_time=900)
    return topology_from_data(data, tmp_path)


def test_periodic_hss_backup_restore_time_and_rpo(tmp_path: Path) -> None:
    from imsdr.capacity.timing import periodic_backup, switchover
    from imsdr.scenarios.simulate import simulate, simulation_to_dict

    topo = _periodic_hss(tmp_path)
    hss = topo.elements["hss-a-1"]
    # 2 × Tw = 2 × 8 s = 16 s detection + 30 s promotion + 32 s reconnect (Tc) + 900 s restore = 978 s;
    # RPO = the 3600 s backup interval
    sw = switchover(topo, hss)
    assert [(p.name, p.seconds) for p in sw.parts] == [
        ("detection", 16), ("promotion", 30), ("reconnect", 32), ("restore", 900)]
    assert sw.seconds == 978
    backup = periodic_backup(topo, hss)
    assert backup is not None and (backup.restore_time, backup.rpo) == (900, 3600)
    data = simulation_to_dict(simulate(topo, ["hss-a-1"]))
    failed = data["failed"][0]
    assert failed["switchover"]["seconds"] == 978
    assert any("RPO 3600 s" in line and "unserved" in line and "replays" in line for line in failed["impact"])


def test_diameter_detection_transport(tmp_path: Path) -> None:
    from imsdr.capacity.timing import diameter_detection

    # BFD 3 × 300 ms = 900 ms, counted as 1 s; + 900 s restore = 901 s
    topo = _periodic_hss(tmp_path, diameter_transport={"bfd": {"interval_ms": 300, "multiplier": 3}})
    part = diameter_detection(topo, topo.elements["hss-a-1"])
    assert part.seconds == 1 and "RFC 5880" in part.how
    # SCTP: (Path.Max.Retrans 2 + 1) × (HB.interval 1 s + RTO.Max 1 s) = 6 s < 16 s watchdog
    topo = _periodic_hss(tmp_path, diameter_transport={
        "sctp_heartbeat": {"interval": 1, "rto_max": 1, "path_max_retrans": 2}})
    assert diameter_detection(topo, topo.elements["hss-a-1"]).seconds == 6
    # SCTP slower than the watchdog: (5 + 1) × (30 + 3) = 198 s > 16 s, the watchdog stays
    topo = _periodic_hss(tmp_path, diameter_transport={
        "sctp_heartbeat": {"interval": 30, "rto_max": 3, "path_max_retrans": 5}})
    assert diameter_detection(topo, topo.elements["hss-a-1"]).seconds == 16


def _findings(topo: Any, rule: str) -> list[Any]:
    from imsdr.rules.engine import run_checks

    return [f for f in run_checks(topo).findings if f.rule_id == rule]


def test_rule_ps_access_without_pcscf_restoration(tmp_path: Path) -> None:
    topo = _ps_topology(tmp_path, "none")
    found = _findings(topo, "RESTO-001")
    assert len(found) == 1 and "coast" in found[0].message and "600000 s" in found[0].message
    assert found[0].severity.value == "error"
    assert not _findings(_ps_topology(tmp_path, "hss"), "RESTO-001")


def test_refresh_rule_is_for_fixed_access_and_ps_expiry_has_its_own(tmp_path: Path) -> None:
    data = province_data()
    for ln in data["local_networks"]:
        ln["access"] = "ps"
        ln["packet_gateway"] = {"id": "pgw-1"}
    _timers(data, registration_refresh=7200, ps_registration_expiry=1800)
    topo = topology_from_data(data, tmp_path)
    assert not _findings(topo, "TIMER-002")  # no fixed access left
    found = _findings(topo, "TIMER-006")
    assert len(found) == 1 and "1800 s" in found[0].message and "P-CSCF restoration" in found[0].hint
    local_network(data, "capital")["access"] = "both"
    assert _findings(topology_from_data(data, tmp_path), "TIMER-002")


def test_rule_diameter_detection_target_names_the_fix(tmp_path: Path) -> None:
    topo = _periodic_hss(tmp_path)
    found = _findings(topo, "TIMER-007")
    assert found and "16 s" in found[0].message and "10 s target" in found[0].message
    assert "2 × 6 s = 12 s" in found[0].hint and "bfd" in found[0].hint
    topo = _periodic_hss(tmp_path, diameter_transport={"bfd": {"interval_ms": 300, "multiplier": 3}})
    assert not _findings(topo, "TIMER-007")


def test_rule_dr_sbc_lacks_emergency_data(tmp_path: Path) -> None:
    data = province_data()
    del local_network(data, "harbour")["emergency"]
    found = _findings(topology_from_data(data, tmp_path), "EMERG-001")
    assert [f.subjects for f in found] == [("harbour", "sbc-capital")]


def test_rule_imgw_without_backup_mgcf(tmp_path: Path) -> None:
    data = province_data()
    element(data, "imgw-a-1")["controlled_by"] = ["mgcf-a-1"]
    found = _findings(topology_from_data(data, tmp_path), "MGCF-002")
    assert len(found) == 1 and "no backup MGCF" in found[0].message


def test_breakout_scenario_loads_the_trunks_by_hand(tmp_path: Path) -> None:
    from imsdr.capacity.erlang import erlang_b
    from imsdr.restoration.breakout import enum_outage_breakout

    data = province_data()
    topo = topology_from_data(data, tmp_path)
    result = enum_outage_breakout(topo)
    assert result is not None
    # 1800 Erl PSTN + 2 × 0.5 × 60000 Erl on-net = 61800 Erl offered to 2 × 2000 IM-MGW circuits
    assert result.offered_erlangs == 61800 and result.circuits == 4000
    assert not result.carried and result.blocking == erlang_b(61800, 4000)
    assert _findings(topo, "MGCF-004")  # sync: provisioning: a common-mode outage is plausible (warning)
    # a tiny on-net share fits: 1800 + 2 × 0.01 × 60000 = 3000 Erl on 4000 circuits
    data["network"]["capacity_model"]["onnet_share"] = 0.01
    topo = topology_from_data(data, tmp_path)
    result = enum_outage_breakout(topo)
    assert result is not None and result.offered_erlangs == pytest.approx(3000) and result.carried
    assert not _findings(topo, "MGCF-003") and not _findings(topo, "MGCF-004")


def test_504_body_validates_against_ts_24_229_schema() -> None:
    import xmlschema

    from imsdr.restoration.body import restoration_body, restoration_response

    schema = xmlschema.XMLSchema(str(DATA / "ims-3gpp.xsd"))
    body = restoration_body()
    schema.validate(body)
    tree = schema.to_dict(body)
    assert tree["@version"] == 1 or str(tree["@version"]) == "1"
    assert tree["alternative-service"]["type"] == "restoration"
    # hostile reason text is escaped, not injected
    hostile = restoration_body('</reason><type>x</type><reason a="')
    schema.validate(hostile)
    response = restoration_response("504-3gpp")
    head, _, payload = response.partition("\n\n")
    assert head.startswith("SIP/2.0 504 Server Time-out")
    assert "Content-Type: application/3gpp-ims+xml" in head
    assert f"Content-Length: {len(payload.encode())}" in head
    assert restoration_response("502").startswith("SIP/2.0 502 Bad Gateway")


def test_pcscf_lists_per_gateway_follow_the_sbc_view_order(tmp_path: Path) -> None:
    from imsdr.restoration.pco import pcscf_lists

    topo = topology_from_data(province_data(), tmp_path)
    gateways = pcscf_lists(topo)
    assert [g["id"] for g in gateways] == ["pgw-coast"]
    coast = gateways[0]["local_networks"][0]
    assert coast["id"] == "coast"
    assert [r["sbc"] for r in coast["pcscfs"]] == [s.id for s in topo.sbc_answer("coast")] == ["sbc-coast", "sbc-river"]
    assert [r["role"] for r in coast["pcscfs"]] == ["primary", "DR"]
    assert coast["ipv4"] == ["203.0.113.60", "203.0.113.40"]


def test_validation_of_new_fields(tmp_path: Path) -> None:
    from imsdr.errors import InventoryError

    data = province_data()
    local_network(data, "capital")["packet_gateway"] = {"id": "pgw-1"}  # fixed access
    local_network(data, "harbour")["emergency"]["pani"] = "x\n; evil"
    element(data, "imgw-a-1")["controlled_by"] = ["imgw-b-1"]
    element(data, "mgcf-a-1")["controlled_by"] = ["mgcf-b-1"]
    with pytest.raises(InventoryError) as exc:
        topology_from_data(data, tmp_path)
    text = str(exc.value) + json.dumps(getattr(exc.value, "issues", []), default=str)
    assert "packet_gateway" in text and "P-Access-Network-Info" in text
    assert "is a imgw, not a mgcf" in text or "not a mgcf" in text
    assert "applies to imgw elements only" in text


def test_emergency_fields_accept_only_what_they_allow() -> None:
    """Any text the PANI / phone-context validators accept is one line without Markdown-table,
    HTML or zone-file specials; anything else is refused (hypothesis generates the text)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from pydantic import TypeAdapter, ValidationError

    from imsdr.inventory.schema import Pani, PhoneContext

    pani, phone = TypeAdapter(Pani), TypeAdapter(PhoneContext)
    forbidden = set("|<>`$;\n\r\x00[]*\\\"'") - {";"}

    @settings(max_examples=300, deadline=None)
    @given(st.text(min_size=1, max_size=80))
    def check(text: str) -> None:
        for adapter in (pani, phone):
            try:
                value = adapter.validate_python(text)
            except ValidationError:
                continue
            assert value == text and not (set(value) & forbidden)

    check()
    assert pani.validate_python("3GPP-E-UTRAN-FDD; utran-cell-id-3gpp=46001A1B2C3D4E")
    assert phone.validate_python("+86-10") == "+86-10"
    assert phone.validate_python("ims.example.net") == "ims.example.net"
    for bad in ("IEEE-802.3; x=<script>", "a|b", "+86 10", "DSL\n; x=1"):
        with pytest.raises(ValidationError):
            (pani if "+" not in bad else phone).validate_python(bad)


@pytest.mark.parametrize("page", ["pcscf.md", "cscf.md"])
def test_504_body_in_the_runbook_is_valid_xml_of_the_schema(page: str) -> None:
    """The response printed in the runbook (docs/sample-runbook equals a fresh render, see
    test_runbook) parses as XML and validates against TS 24.229's schema; its Content-Length is right."""
    import re
    import xml.etree.ElementTree as ET

    import xmlschema

    text = (Path(__file__).resolve().parent.parent / "docs" / "sample-runbook" / page).read_text(encoding="utf-8")
    match = re.search(r"```text\n(SIP/2\.0 504 Server Time-out\n.*?)```", text, re.S)
    assert match, f"{page} lost the 504 restoration response"
    head, _, body = match.group(1).partition("\n\n")
    root = ET.fromstring(body.encode("utf-8"))  # well-formed
    assert root.tag == "ims-3gpp" and root.get("version") == "1"
    assert [child.tag for child in root[0]] == ["type", "reason", "action"]
    assert root.findtext("alternative-service/action") == "initial-registration"
    xmlschema.XMLSchema(str(DATA / "ims-3gpp.xsd")).validate(body)
    assert f"Content-Length: {len(body.encode('utf-8'))}" in head
