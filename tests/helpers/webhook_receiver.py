"""A real local HTTP server that receives webhooks (optionally failing the first N)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer


class Receiver:
    def __init__(self, fail_first: int = 0):
        self.requests: list[tuple[dict, bytes]] = []
        self.fail_first = fail_first
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = 500 if len(receiver.requests) <= receiver.fail_first else 204
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
