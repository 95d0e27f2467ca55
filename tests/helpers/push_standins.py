"""Local stand-ins for the push providers that verify what they receive, as Google and Apple would.

- FcmStandIn: plain HTTP. `/token` is the OAuth 2 token endpoint (the service account JSON's
  `token_uri`): it checks the JWT-bearer assertion's RS256 signature with the account's public key,
  its issuer, audience (Google's) and scope. `/v1/projects/<project>/messages:send` checks the bearer access
  token it issued and the message's shape.
- ApnsStandIn: really HTTP/2 (the `h2` library; cleartext with prior knowledge): it checks the
  provider token's ES256 signature with the .p8 key's public half, its `kid` and `iss`, the
  `apns-topic` and `apns-push-type` headers and the payload.

Either answers like the real service for tokens named dead (FCM 404 UNREGISTERED, APNs 410
Unregistered) or malformed (FCM 400 INVALID_ARGUMENT on `message.token`, APNs 400 BadDeviceToken) and fails the next `fail_next` sends with a 503. A request that fails a check is
answered 400/403 and its reason kept in `problems`: tests assert there are none.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
# The audience Google's token endpoint requires in the assertion, whatever URL it is posted to.
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"


def _b64decode(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def verify_jwt(token: str, public_key) -> tuple[dict, dict]:
    """(header, claims) of a JWT whose signature the public key verifies (RS256 or ES256); raises
    InvalidSignature or ValueError otherwise. Written with `cryptography` alone, not the client's library."""
    header_b64, claims_b64, signature_b64 = token.split(".")
    header, claims = json.loads(_b64decode(header_b64)), json.loads(_b64decode(claims_b64))
    signed, signature = f"{header_b64}.{claims_b64}".encode(), _b64decode(signature_b64)
    if header.get("alg") == "RS256":
        public_key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    elif header.get("alg") == "ES256":
        if len(signature) != 64:
            raise ValueError("an ES256 JWT signature is r||s, 64 bytes")
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        public_key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
    else:
        raise ValueError(f"unexpected alg {header.get('alg')!r}")
    return header, claims


class FcmStandIn:
    def __init__(self, *, project_id: str = "visage-test"):
        self.project_id = project_id
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.dead_tokens: set[str] = set()
        self.malformed_tokens: set[str] = set()
        self.fail_next = 0
        self.sends: list[dict] = []  # every send request's message (also the failed ones)
        self.delivered: list[dict] = []  # the messages answered 200
        self.token_requests = 0
        self.problems: list[str] = []
        self._access_tokens: set[str] = set()
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with stand_in._lock:
                    if self.path == "/token":
                        status, answer = stand_in._token(self.headers, body)
                    elif self.path == f"/v1/projects/{stand_in.project_id}/messages:send":
                        status, answer = stand_in._send(self.headers, body)
                    else:
                        stand_in.problems.append(f"unexpected path {self.path}")
                        status, answer = 404, {"error": {"code": 404, "status": "NOT_FOUND"}}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.service_account = {
            "type": "service_account",
            "project_id": project_id,
            "private_key_id": "test-key-1",
            "private_key": self.key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ).decode(),
            "client_email": f"push-sender@{project_id}.iam.gserviceaccount.com",
            "client_id": "1234567890",
            "token_uri": f"{self.url}/token",
        }
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _token(self, headers, body: bytes) -> tuple[int, dict]:
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            self.problems.append(f"token: grant_type {form.get('grant_type')!r}")
            return 400, {"error": "unsupported_grant_type"}
        try:
            header, claims = verify_jwt(form.get("assertion", ""), self.key.public_key())
        except (InvalidSignature, ValueError) as exc:
            self.problems.append(f"token: assertion not signed by the service account's key: {exc!r}")
            return 400, {"error": "invalid_grant"}
        now = time.time()
        checks = {
            "alg": header.get("alg") == "RS256",
            "kid": header.get("kid") == self.service_account["private_key_id"],
            "iss": claims.get("iss") == self.service_account["client_email"],
            "aud": claims.get("aud") == GOOGLE_TOKEN_AUDIENCE,
            "scope": FCM_SCOPE in str(claims.get("scope", "")).split(),
            "iat/exp": claims.get("iat", 0) <= now + 60
            and claims.get("exp", 0) > now
            and claims["exp"] - claims["iat"] <= 3600,
        }
        if not all(checks.values()):
            self.problems.append(f"token: claims fail {[k for k, ok in checks.items() if not ok]}: {header} {claims}")
            return 400, {"error": "invalid_grant"}
        self.token_requests += 1
        access_token = f"ya29.stand-in-{self.token_requests}"
        self._access_tokens.add(access_token)
        return 200, {"access_token": access_token, "expires_in": 3599, "token_type": "Bearer"}

    def _send(self, headers, body: bytes) -> tuple[int, dict]:
        authorization = headers.get("Authorization", "")
        if authorization.removeprefix("Bearer ") not in self._access_tokens:
            self.problems.append(f"send: unknown access token {authorization!r}")
            return 401, {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": "bad credentials"}}
        try:
            message = json.loads(body)["message"]
        except (ValueError, KeyError):
            self.problems.append(f"send: not a message: {body[:200]!r}")
            return 400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "no message"}}
        self.sends.append(message)
        shape = (
            isinstance(message.get("token"), str)
            and set(message.get("notification", {})) == {"title", "body"}
            and all(isinstance(v, str) for v in message.get("data", {}).values())  # FCM data values are strings
        )
        if not shape:
            self.problems.append(f"send: malformed message {message}")
            return 400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "malformed"}}
        if self.fail_next > 0:
            self.fail_next -= 1
            return 503, {"error": {"code": 503, "status": "UNAVAILABLE", "message": "The service is unavailable."}}
        if message["token"] in self.dead_tokens:
            return 404, {"error": {
                "code": 404, "status": "NOT_FOUND", "message": "Requested entity was not found.",
                "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}],
            }}
        if message["token"] in self.malformed_tokens:
            return 400, {"error": {
                "code": 400, "status": "INVALID_ARGUMENT",
                "message": "The registration token is not a valid FCM registration token",
                "details": [
                    {"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
                    {"@type": "type.googleapis.com/google.rpc.BadRequest",
                     "fieldViolations": [{"field": "message.token", "description": "Invalid registration token"}]},
                ],
            }}
        self.delivered.append(message)
        return 200, {"name": f"projects/{self.project_id}/messages/{len(self.delivered)}"}

    def delivered_to(self, token: str) -> list[dict]:
        return [m for m in self.delivered if m["token"] == token]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ApnsStandIn:
    def __init__(self, *, topic: str = "com.example.visage", team_id: str = "TEAM123456", key_id: str = "KEY1234567"):
        self.topic, self.team_id, self.key_id = topic, team_id, key_id
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.p8 = self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.dead_tokens: set[str] = set()
        self.malformed_tokens: set[str] = set()
        self.fail_next = 0
        self.requests: list[tuple[dict, dict]] = []  # (headers, payload) of every request, failed ones too
        self.delivered: list[tuple[str, dict, dict]] = []  # (device token, headers, payload) answered 200
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # closed
            self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        """One HTTP/2 connection (h2 refuses anything that does not start with the HTTP/2 preface)."""
        h2_connection = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        h2_connection.initiate_connection()
        streams: dict[int, tuple[dict, bytearray]] = {}
        # close() shuts the connections when a test ends, maybe while an answer is being sent.
        with connection, contextlib.suppress(OSError):
            connection.sendall(h2_connection.data_to_send())
            while True:
                try:
                    data = connection.recv(65535)
                except OSError:
                    return
                if not data:
                    return
                try:
                    events = h2_connection.receive_data(data)
                except h2.exceptions.ProtocolError as exc:
                    self.problems.append(f"not HTTP/2: {exc}")
                    return
                for event in events:
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        h2_connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        with self._lock:
                            status, answer = self._answer(headers, bytes(body))
                        response_headers = [(":status", str(status)), ("apns-id", headers.get("apns-id", ""))]
                        if answer is None:
                            h2_connection.send_headers(event.stream_id, response_headers, end_stream=True)
                        else:
                            data = json.dumps(answer).encode()
                            h2_connection.send_headers(
                                event.stream_id,
                                [*response_headers, ("content-type", "application/json"),
                                 ("content-length", str(len(data)))],
                            )
                            h2_connection.send_data(event.stream_id, data, end_stream=True)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        connection.sendall(h2_connection.data_to_send())
                        return
                connection.sendall(h2_connection.data_to_send())

    def _answer(self, headers: dict, body: bytes) -> tuple[int, dict | None]:
        try:
            payload = json.loads(body)
        except ValueError:
            self.problems.append(f"payload not JSON: {body[:200]!r}")
            return 400, {"reason": "PayloadEmpty"}
        self.requests.append((headers, payload))
        path = headers.get(":path", "")
        if headers.get(":method") != "POST" or not path.startswith("/3/device/"):
            self.problems.append(f"unexpected {headers.get(':method')} {path}")
            return 405, {"reason": "MethodNotAllowed"}
        try:
            header, claims = verify_jwt(headers.get("authorization", "").removeprefix("bearer "), self.key.public_key())
        except (InvalidSignature, ValueError) as exc:
            self.problems.append(f"provider token not signed by the .p8 key: {exc!r}")
            return 403, {"reason": "InvalidProviderToken"}
        if header.get("kid") != self.key_id or claims.get("iss") != self.team_id:
            self.problems.append(f"provider token names kid {header.get('kid')} iss {claims.get('iss')}")
            return 403, {"reason": "InvalidProviderToken"}
        if not time.time() - 3600 < claims.get("iat", 0) <= time.time() + 60:
            self.problems.append(f"provider token iat {claims.get('iat')} is more than an hour old")
            return 403, {"reason": "ExpiredProviderToken"}
        if headers.get("apns-topic") != self.topic:
            self.problems.append(f"apns-topic {headers.get('apns-topic')!r}")
            return 400, {"reason": "BadTopic"}
        if headers.get("apns-push-type") != "alert":
            self.problems.append(f"apns-push-type {headers.get('apns-push-type')!r}")
            return 400, {"reason": "InvalidPushType"}
        alert = payload.get("aps", {}).get("alert", {})
        if not (isinstance(alert, dict) and alert.get("title") and alert.get("body")):
            self.problems.append(f"no alert title and body: {payload}")
            return 400, {"reason": "PayloadEmpty"}
        if self.fail_next > 0:
            self.fail_next -= 1
            return 503, {"reason": "ServiceUnavailable"}
        token = path.removeprefix("/3/device/")
        if token in self.dead_tokens:
            return 410, {"reason": "Unregistered", "timestamp": int(time.time() * 1000)}
        if token in self.malformed_tokens:
            return 400, {"reason": "BadDeviceToken"}
        self.delivered.append((token, headers, payload))
        return 200, None

    def delivered_to(self, token: str) -> list[dict]:
        return [payload for device_token, _, payload in self.delivered if device_token == token]

    def close(self) -> None:
        """Stop listening and drop open connections (shutdown wakes the threads blocked on them)."""
        for sock in [self._listener, *self._connections]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
