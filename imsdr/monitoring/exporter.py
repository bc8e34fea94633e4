"""``imsdr exporter``: the live check of ``verify --format prometheus``, served over HTTP.

A background thread runs the check every ``interval`` seconds and keeps the last exposition; each
``GET /metrics`` returns it at once, so a scrape never waits for a DNS run (a province asks a few
thousand questions) and Prometheus's scrape timeout stays short. Any other path is 404. The
server binds where it is told (loopback by default): the metrics name the network's servers,
views and destinations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Latest:
    """The last exposition the check loop produced (thread-safe)."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()

    def set(self, text: str) -> None:
        with self._lock:
            self._text = text
        self._ready.set()

    def get(self, wait: float) -> str | None:
        self._ready.wait(wait)
        with self._lock:
            return self._text


def check_loop(collect: Callable[[], str], latest: Latest, interval: float, stop: threading.Event) -> None:
    """Run ``collect`` now and then every ``interval`` seconds until ``stop`` is set."""
    while not stop.is_set():
        latest.set(collect())
        stop.wait(interval)


def make_server(host: str, port: int, latest: Latest, first_wait: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            text = latest.get(first_wait)
            if text is None:
                self.send_error(503, "the first check has not finished")
                return
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - scrapes are not news
            return

    return ThreadingHTTPServer((host, port), Handler)


def serve(host: str, port: int, collect: Callable[[], str], interval: float,
          ready: Callable[[int], None] | None = None) -> None:
    """Serve until interrupted; ``ready`` gets the bound port (``port`` 0: the kernel picks one)."""
    latest = Latest()
    stop = threading.Event()
    server = make_server(host, port, latest, first_wait=max(interval, 30.0))
    loop = threading.Thread(target=check_loop, args=(collect, latest, interval, stop), daemon=True)
    loop.start()
    if ready is not None:
        ready(server.server_address[1])
    try:
        server.serve_forever()
    finally:
        stop.set()
        server.server_close()
