"""The answer a P-CSCF gives a UE whose S-CSCF is unreachable.

Standard (TS 23.380 §4.4.3; TS 24.229 §5.2.6.3.2A, body in §7.6): **504 (Server Time-out)** with an
``application/3gpp-ims+xml`` body whose ``alternative-service`` has type ``restoration`` and action
``initial-registration``; a conforming UE then registers again (TS 24.229 §5.1.2A.1.6) and the
I-CSCF picks a working S-CSCF. The seed study's variant is a bare **502 (Bad Gateway)**, which
UEs act on only by vendor-specific behaviour.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

CONTENT_TYPE = "application/3gpp-ims+xml"
DEFAULT_REASON = "S-CSCF not reachable"


def restoration_body(reason: str = DEFAULT_REASON) -> str:
    """The ims-3gpp XML document of TS 24.229 table 7.6.1 (built with an XML library, so any text
    is escaped)."""
    root = ET.Element("ims-3gpp", {"version": "1"})
    service = ET.SubElement(root, "alternative-service")
    ET.SubElement(service, "type").text = "restoration"
    ET.SubElement(service, "reason").text = reason
    ET.SubElement(service, "action").text = "initial-registration"
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def restoration_response(mode: str, reason: str = DEFAULT_REASON, asserted: str | None = None) -> str:
    """The SIP response (status line, the headers that matter, body) for ``mode`` 504-3gpp | 502.

    ``asserted``: the P-CSCF's own SIP URI, sent as P-Asserted-Identity: a UE acts on the 504 only
    when that identity equals a URI of the Path or Service-Route it received at registration
    (TS 24.229 §5.1.2A.1.6), and the P-CSCF's Path entry is the one it can match."""
    if mode == "502":
        return "SIP/2.0 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".replace("\r\n", "\n")
    body = restoration_body(reason)
    length = len(body.encode("utf-8"))
    pai = f"P-Asserted-Identity: <{asserted}>\n" if asserted else ""
    return (f"SIP/2.0 504 Server Time-out\n{pai}Content-Type: {CONTENT_TYPE}\nContent-Length: {length}\n\n"
            + body)


def response_label(mode: str) -> str:
    if mode == "502":
        return "502 (Bad Gateway), the seed study's answer"
    return f"504 (Server Time-out) with an {CONTENT_TYPE} restoration body (TS 24.229 §5.2.6.3.2A)"
