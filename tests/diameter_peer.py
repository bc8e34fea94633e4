"""A small RFC 6733 Diameter server standing in for an HSS or an SLF in the Diameter tests.

freeDiameter 1.2.1 as packaged ships no extension that answers Cx requests or redirects them
(no test_app, no app_redirect), so the servers are this process: one per HSS/SLF, so a test can
stop one by its PID. It speaks the base protocol over TCP (CER/CEA advertising Cx 16777216 and
Sh 16777217 for vendor 3GPP, DWR/DWA, DPR/DPA) and:

* ``--role hss``: answers every Cx/Sh request with Result-Code 2001;
* ``--role slf``: answers with DIAMETER_REDIRECT_INDICATION (3006, 'E' bit) naming the HSS pair
  whose User-Name prefix matches (``--range PREFIX=host1,host2``), Redirect-Host-Usage ALL_USER;
* ``--standby PARTNER_ADDRESS``: an active-standby HSS that is not active does not listen at all
  (clients' connection attempts are refused); it watches the partner's port every 100 ms and
  promotes itself ``--promotion`` seconds after the partner stops answering;
* SIGUSR1 demotes an active server (listener and connections closed; no automatic promotion
  afterwards): the failback step's "swap the roles back".

Every event is logged as one line ``<CLOCK_MONOTONIC ms> <event> key=value...`` (``--log``).
Run: ``python3 diameter_peer.py --identity ... --realm ... --address ... --log ...``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import struct
import threading
import time

VENDOR_3GPP = 10415
APPS = (16777216, 16777217)
# AVP codes (RFC 6733 §4.5)
SESSION_ID, ORIGIN_HOST, ORIGIN_REALM, RESULT_CODE = 263, 264, 296, 268
HOST_IP, VENDOR_ID, PRODUCT_NAME, ORIGIN_STATE = 257, 266, 269, 278
AUTH_APP, ACCT_APP, VSAI, SUPPORTED_VENDOR = 258, 259, 260, 265
USER_NAME, REDIRECT_HOST, REDIRECT_USAGE, REDIRECT_MAX_CACHE = 1, 292, 261, 262
AUTH_SESSION_STATE, ERROR_MESSAGE = 277, 281
CER, DWR, DPR = 257, 280, 282
FLAG_REQUEST, FLAG_PROXIABLE, FLAG_ERROR = 0x80, 0x40, 0x20


def now_ms() -> int:
    return int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000)


def avp(code: int, data: bytes, vendor: int = 0, mandatory: bool = True) -> bytes:
    flags = (0x80 if vendor else 0) | (0x40 if mandatory else 0)
    head = 12 if vendor else 8
    body = struct.pack("!I", code) + struct.pack("!I", (flags << 24) | (head + len(data)))
    if vendor:
        body += struct.pack("!I", vendor)
    return body + data + b"\0" * (-len(data) % 4)


def u32(code: int, value: int, vendor: int = 0) -> bytes:
    return avp(code, struct.pack("!I", value), vendor)


def text(code: int, value: str, vendor: int = 0) -> bytes:
    return avp(code, value.encode(), vendor)


def parse_avps(data: bytes) -> list[tuple[int, int, bytes]]:
    """(code, vendor, data) of every AVP at this level."""
    out, at = [], 0
    while at + 8 <= len(data):
        code, word = struct.unpack_from("!II", data, at)
        flags, length = word >> 24, word & 0xFFFFFF
        vendor, head = (struct.unpack_from("!I", data, at + 8)[0], 12) if flags & 0x80 else (0, 8)
        if length < head:
            break
        out.append((code, vendor, data[at + head:at + length]))
        at += length + (-length % 4)
    return out


def message(flags: int, command: int, app: int, hbh: int, e2e: int, avps: bytes) -> bytes:
    length = 20 + len(avps)
    return struct.pack("!II", (1 << 24) | length, (flags << 24) | command) + struct.pack("!III", app, hbh, e2e) + avps


def read_message(conn: socket.socket) -> tuple[int, int, int, int, int, list[tuple[int, int, bytes]]] | None:
    head = _read(conn, 20)
    if head is None:
        return None
    word1, word2, app, hbh, e2e = struct.unpack("!IIIII", head)
    body = _read(conn, (word1 & 0xFFFFFF) - 20)
    if body is None:
        return None
    return word2 >> 24, word2 & 0xFFFFFF, app, hbh, e2e, parse_avps(body)


def _read(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        try:
            chunk = conn.recv(n - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def first(avps: list[tuple[int, int, bytes]], code: int) -> bytes | None:
    return next((d for c, _, d in avps if c == code), None)


def advertised_apps(avps: list[tuple[int, int, bytes]]) -> list[int]:
    apps = [struct.unpack("!I", d)[0] for c, _, d in avps if c in (AUTH_APP, ACCT_APP)]
    for c, _, d in avps:
        if c == VSAI:
            apps += [struct.unpack("!I", x)[0] for cc, _, x in parse_avps(d) if cc in (AUTH_APP, ACCT_APP)]
    return sorted(set(apps))


class Server:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.log_file = open(args.log, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.conns: list[socket.socket] = []
        self.ranges = [(p, hosts.split(",")) for p, _, hosts in (r.partition("=") for r in args.range)]

    def log(self, event: str, **fields: object) -> None:
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        with self.lock:
            self.log_file.write(f"{now_ms()} {event} {extra}\n".rstrip() + "\n")

    # --- roles ----------------------------------------------------------------------------------
    def listen(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.args.address, self.args.port))
        sock.listen(16)
        self.listener = sock
        self.log("active")
        threading.Thread(target=self.accept_loop, args=(sock,), daemon=True).start()

    def demote(self, *_: object) -> None:
        sock, self.listener = self.listener, None
        if sock is not None:
            sock.close()
        with self.lock:
            conns, self.conns = self.conns, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        self.log("demoted")

    def watch_partner(self) -> None:
        self.log("standby", partner=self.args.standby)
        while True:
            try:
                socket.create_connection((self.args.standby, self.args.port), timeout=0.5).close()
            except OSError:
                break
            time.sleep(0.1)
        self.log("partner-lost")
        time.sleep(self.args.promotion)
        self.listen()

    # --- protocol -------------------------------------------------------------------------------
    def accept_loop(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            if self.listener is not sock:
                conn.close()
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def base(self) -> bytes:
        return text(ORIGIN_HOST, self.args.identity) + text(ORIGIN_REALM, self.args.realm)

    def serve(self, conn: socket.socket) -> None:
        peer = "?"
        while True:
            msg = read_message(conn)
            if msg is None:
                if peer != "?":  # not the standby's probe of the port
                    self.log("closed", peer=peer)
                conn.close()
                return
            flags, command, app, hbh, e2e, avps = msg
            if not flags & FLAG_REQUEST:
                continue
            origin = (first(avps, ORIGIN_HOST) or b"?").decode()
            if command == CER:
                peer = origin
                self.log("CER", peer=origin, apps=",".join(map(str, advertised_apps(avps))))
                caps = (u32(RESULT_CODE, 2001) + self.base()
                        + avp(HOST_IP, b"\x00\x01" + socket.inet_aton(self.args.address))
                        + u32(VENDOR_ID, VENDOR_3GPP) + text(PRODUCT_NAME, "imsdr-test-peer", 0)
                        + u32(SUPPORTED_VENDOR, VENDOR_3GPP)
                        + b"".join(avp(VSAI, u32(VENDOR_ID, VENDOR_3GPP) + u32(AUTH_APP, a)) for a in APPS))
                conn.sendall(message(0, CER, 0, hbh, e2e, caps))
            elif command == DWR:
                conn.sendall(message(0, DWR, 0, hbh, e2e, u32(RESULT_CODE, 2001) + self.base()))
            elif command == DPR:
                conn.sendall(message(0, DPR, 0, hbh, e2e, u32(RESULT_CODE, 2001) + self.base()))
            else:
                self.answer(conn, flags, command, app, hbh, e2e, avps, origin, peer)

    def answer(self, conn: socket.socket, flags: int, command: int, app: int, hbh: int, e2e: int,
               avps: list[tuple[int, int, bytes]], origin: str, via: str) -> None:
        session = first(avps, SESSION_ID) or b""
        user = (first(avps, USER_NAME) or b"").decode()
        # peer: the request's Origin-Host; via: the Diameter peer it came over (a relay such as a DRA)
        self.log("request", command=command, app=app, user=user, peer=origin, via=via)
        head = avp(SESSION_ID, session) + u32(AUTH_SESSION_STATE, 1)
        if self.args.role == "slf":
            hosts = next((h for p, h in self.ranges if user.startswith(p)), None)
            if hosts:
                body = (head + u32(RESULT_CODE, 3006) + self.base()
                        + b"".join(text(REDIRECT_HOST, f"aaa://{h}") for h in hosts)
                        + u32(REDIRECT_USAGE, 6) + u32(REDIRECT_MAX_CACHE, 30))
                conn.sendall(message(FLAG_PROXIABLE | FLAG_ERROR, command, app, hbh, e2e, body))
                return
            body = head + u32(RESULT_CODE, 5001) + self.base()  # DIAMETER_ERROR_USER_UNKNOWN-like
        else:
            body = head + u32(RESULT_CODE, 2001) + self.base()
        conn.sendall(message(FLAG_PROXIABLE, command, app, hbh, e2e, body))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--identity", required=True)
    parser.add_argument("--realm", required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, default=3868)
    parser.add_argument("--role", choices=("hss", "slf"), default="hss")
    parser.add_argument("--range", action="append", default=[], help="slf: PREFIX=host1,host2")
    parser.add_argument("--standby", help="partner address: start as the standby of an active-standby pair")
    parser.add_argument("--promotion", type=float, default=2.0)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    server = Server(args)
    signal.signal(signal.SIGUSR1, server.demote)
    if args.standby:
        threading.Thread(target=server.watch_partner, daemon=True).start()
    else:
        server.listen()
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
