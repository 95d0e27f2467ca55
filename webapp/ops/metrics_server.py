"""A worker's own metrics port (`visage_worker --metrics-port`), so a Kubernetes pod is scraped on
its own. It serves what the worker process recorded (plus, in multiprocess mode, its siblings in
the same directory); queue depth and job states come from the web's /metrics only, so they are
never double-counted. The same bearer key as /metrics applies."""

from __future__ import annotations

import hmac
import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app

from .metrics_endpoint import scrape_registry


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name; silent: scrapes every 15 s would flood the log
        pass


class _ThreadingServer(WSGIServer):
    daemon_threads = True


def _with_bearer(app, key: str):
    def guarded(environ, start_response):
        scheme, _, supplied = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
        if key and not (
            scheme.lower() == "bearer" and hmac.compare_digest(supplied.strip().encode(), key.encode())
        ):
            start_response(
                "401 Unauthorized", [("Content-Type", "text/plain"), ("WWW-Authenticate", "Bearer")]
            )
            return [b"metrics need Authorization: Bearer <VISAGE_METRICS_KEY>\n"]
        return app(environ, start_response)

    return guarded


def serve_worker_metrics(port: int, *, key: str = "", addr: str = "0.0.0.0") -> WSGIServer:
    """Serve /metrics on `port` from a daemon thread; returns the server (shutdown() stops it)."""
    app = _with_bearer(make_wsgi_app(scrape_registry(with_stack_state=False)), key)
    server = make_server(addr, port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    return server
