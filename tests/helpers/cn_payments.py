"""Alipay and WeChat Pay as the tests see them, with keys and certificates made here: Alipay's and
the app's RSA keys and notifications signed as Alipay signs them; the WeChat Pay merchant key,
a platform certificate, notifications encrypted and signed as WeChat Pay sends them, and a
stand-in API server answering Native orders (it checks the merchant's Authorization header)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

CHINA_TIME = dt.timezone(dt.timedelta(hours=8))


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def rsa_sign(key: rsa.RSAPrivateKey, message: bytes) -> str:
    return base64.b64encode(key.sign(message, padding.PKCS1v15(), hashes.SHA256())).decode()


def rsa_verify(public_key, signature_b64: str, message: bytes) -> None:
    public_key.verify(base64.b64decode(signature_b64), message, padding.PKCS1v15(), hashes.SHA256())


# --- Alipay -------------------------------------------------------------------------------------


@dataclass
class AlipayKeys:
    app_id: str = "2021000000000001"
    app_key: rsa.RSAPrivateKey = field(default_factory=rsa_key)  # ours: signs requests
    alipay_key: rsa.RSAPrivateKey = field(default_factory=rsa_key)  # Alipay's: signs notifications

    def notification(self, *, key: rsa.RSAPrivateKey | None = None, age_s: float = 0, **fields: str) -> dict:
        """A notification as Alipay posts it: sorted params (not sign/sign_type) signed with RSA2."""
        sent = dt.datetime.now(CHINA_TIME) - dt.timedelta(seconds=age_s)
        params = {
            "notify_time": sent.strftime("%Y-%m-%d %H:%M:%S"),
            "notify_type": "trade_status_sync",
            "notify_id": secrets.token_hex(16),
            "app_id": self.app_id,
            "charset": "utf-8",
            "version": "1.0",
            "trade_no": "2025010122001400000000000001",
            "buyer_id": "2088102000000001",
            "subject": "Starter: 100 Visage credits",
            **fields,
        }
        content = "&".join(f"{k}={v}" for k, v in sorted(params.items()) if v != "")
        return {**params, "sign_type": "RSA2", "sign": rsa_sign(key or self.alipay_key, content.encode())}


# --- WeChat Pay ---------------------------------------------------------------------------------


def certificate(key: rsa.RSAPrivateKey, serial: int) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Tenpay.com Root CA stand-in")])
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )


@dataclass
class WeChatPayKeys:
    mch_id: str = "1900000109"
    app_id: str = "wxd678efh567hg6787"
    mch_serial: str = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1"
    apiv3_key: str = field(default_factory=lambda: secrets.token_hex(16))  # 32 characters
    mch_key: rsa.RSAPrivateKey = field(default_factory=rsa_key)
    platform_key: rsa.RSAPrivateKey = field(default_factory=rsa_key)
    platform_serial: int = field(default_factory=lambda: secrets.randbits(120) | 1 << 120)

    @property
    def platform_cert_pem(self) -> str:
        return (
            certificate(self.platform_key, self.platform_serial)
            .public_bytes(serialization.Encoding.PEM)
            .decode()
        )

    @property
    def platform_serial_hex(self) -> str:
        return format(self.platform_serial, "X")

    def signed_headers(self, body: bytes, *, age_s: float = 0, key=None, serial: str | None = None) -> dict:
        timestamp = str(int(time.time() - age_s))
        nonce = secrets.token_hex(16)
        signature = rsa_sign(key or self.platform_key, f"{timestamp}\n{nonce}\n".encode() + body + b"\n")
        return {
            "Wechatpay-Timestamp": timestamp,
            "Wechatpay-Nonce": nonce,
            "Wechatpay-Signature": signature,
            "Wechatpay-Serial": serial or self.platform_serial_hex,
        }

    def notification(self, event_type: str, resource: dict, *, apiv3_key: str | None = None) -> bytes:
        """The notification body: `resource` encrypted with AES-256-GCM under the APIv3 key."""
        nonce = secrets.token_hex(6)  # 12 characters, as WeChat Pay sends
        associated = "transaction" if event_type.startswith("TRANSACTION") else "refund"
        ciphertext = AESGCM((apiv3_key or self.apiv3_key).encode()).encrypt(
            nonce.encode(), json.dumps(resource).encode(), associated.encode()
        )
        return json.dumps(
            {
                "id": secrets.token_hex(16),
                "create_time": dt.datetime.now(CHINA_TIME).isoformat(timespec="seconds"),
                "event_type": event_type,
                "resource_type": "encrypt-resource",
                "summary": "支付成功" if event_type == "TRANSACTION.SUCCESS" else "退款成功",
                "resource": {
                    "original_type": associated,
                    "algorithm": "AEAD_AES_256_GCM",
                    "ciphertext": base64.b64encode(ciphertext).decode(),
                    "associated_data": associated,
                    "nonce": nonce,
                },
            }
        ).encode()


AUTHORIZATION = re.compile(
    r'^WECHATPAY2-SHA256-RSA2048 mchid="(?P<mchid>[^"]+)",nonce_str="(?P<nonce>[^"]+)",'
    r'signature="(?P<signature>[^"]+)",timestamp="(?P<timestamp>\d+)",serial_no="(?P<serial>[^"]+)"$'
)


@dataclass
class WeChatPayStandIn:
    """POST /v3/pay/transactions/native as api.mch.weixin.qq.com answers it: 401 unless the
    Authorization header is the merchant's signature; the answer signed by the platform key."""

    keys: WeChatPayKeys
    orders: list[dict] = field(default_factory=list)

    def serve(self) -> ThreadingHTTPServer:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                match = AUTHORIZATION.match(self.headers.get("Authorization", ""))
                try:
                    assert (
                        match
                        and match["mchid"] == stand_in.keys.mch_id
                        and match["serial"] == stand_in.keys.mch_serial
                    )
                    message = (
                        f"POST\n{self.path}\n{match['timestamp']}\n{match['nonce']}\n".encode() + body + b"\n"
                    )
                    rsa_verify(stand_in.keys.mch_key.public_key(), match["signature"], message)
                except Exception:  # noqa: BLE001 - any failure is WeChat Pay's 401
                    self.answer(401, {"code": "SIGN_ERROR", "message": "签名错误"})
                    return
                if self.path != "/v3/pay/transactions/native":
                    self.answer(404, {"code": "NOT_FOUND", "message": self.path})
                    return
                order = json.loads(body)
                stand_in.orders.append(order)
                self.answer(200, {"code_url": f"weixin://wxpay/bizpayurl?pr={order['out_trade_no'][-8:]}"})

            def answer(self, code: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                for name, value in stand_in.keys.signed_headers(data).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
