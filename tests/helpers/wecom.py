"""A stand-in for the WeCom (企业微信) server API, as Alertmanager's wechat notifier calls it:
GET {api_url}gettoken?corpid=…&corpsecret=… answers an access token for the right pair (errcode
40001 otherwise), POST {api_url}message/send?access_token=… takes the message JSON (errcode 40014
for a wrong token). Anything else POSTed (a generic webhook) is recorded by its path."""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class WeComStandIn:
    corp_id: str
    corp_secret: str
    access_token: str = field(default_factory=lambda: secrets.token_hex(16))
    token_requests: list[dict] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    webhooks: dict[str, list[dict]] = field(default_factory=dict)

    def serve(self) -> ThreadingHTTPServer:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path != "/cgi-bin/gettoken":
                    self.send_error(404)
                    return
                stand_in.token_requests.append(query)
                if (query.get("corpid"), query.get("corpsecret")) != (stand_in.corp_id, stand_in.corp_secret):
                    self.answer({"errcode": 40001, "errmsg": "invalid credential"})
                    return
                self.answer(
                    {"errcode": 0, "errmsg": "ok", "access_token": stand_in.access_token, "expires_in": 7200}
                )

            def do_POST(self):
                url = urlsplit(self.path)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if url.path == "/cgi-bin/message/send":
                    if parse_qs(url.query).get("access_token") != [stand_in.access_token]:
                        self.answer({"errcode": 40014, "errmsg": "invalid access_token"})
                        return
                    stand_in.messages.append(body)
                    self.answer({"errcode": 0, "errmsg": "ok", "invaliduser": ""})
                    return
                stand_in.webhooks.setdefault(url.path, []).append(body)
                self.answer({})

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
