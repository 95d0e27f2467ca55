"""Firebase Cloud Messaging HTTP v1: a service account's OAuth 2 access token (google-auth signs
the JWT assertion and exchanges it at the key's `token_uri`), then one `messages:send` per device.

https://firebase.google.com/docs/cloud-messaging/send/v1-api
"""

from __future__ import annotations

import threading

import requests
from django.conf import settings
from google.auth.transport.requests import Request
from google.oauth2 import service_account

from .errors import PushFailed, PushTokenInvalid

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
TIMEOUT_S = (5, 10)  # connect, read
# Error codes (google.firebase.fcm.v1.FcmError) that say the token itself is dead or not this project's.
DEAD_TOKEN_CODES = {"UNREGISTERED", "SENDER_ID_MISMATCH"}

_lock = threading.Lock()
_state: dict = {}  # the credentials (their access token cached until it expires) and the HTTP session


def enabled() -> bool:
    return bool(settings.FCM_SERVICE_ACCOUNT)


def _session() -> tuple[service_account.Credentials, requests.Session]:
    """Lazily made once per process (per configured account, so tests can switch it)."""
    account = settings.FCM_SERVICE_ACCOUNT
    with _lock:
        if _state.get("account") != account:
            credentials = service_account.Credentials.from_service_account_info(account, scopes=[SCOPE])
            _state.update(account=account, credentials=credentials, session=requests.Session())
        return _state["credentials"], _state["session"]


def _access_token() -> str:
    credentials, session = _session()
    with _lock:
        if not credentials.valid:  # none yet, or expiring within google-auth's refresh margin
            try:
                credentials.refresh(Request(session))
            except Exception as exc:  # google.auth.exceptions.RefreshError, TransportError
                raise PushFailed(f"FCM access token: {exc}") from exc
        return credentials.token


def send(*, token: str, title: str, body: str, data: dict[str, str], collapse_key: str) -> None:
    """One notification to one registration token. `collapse_key` (the job id) makes a repeated
    delivery replace the first on the phone instead of showing twice."""
    credentials, session = _session()
    message = {
        "token": token,
        "notification": {"title": title, "body": body},
        "data": data,
        "android": {"collapse_key": collapse_key, "notification": {"tag": collapse_key}},
        "apns": {"headers": {"apns-collapse-id": collapse_key}},
    }
    url = f"{settings.FCM_URL.rstrip('/')}/v1/projects/{settings.FCM_SERVICE_ACCOUNT['project_id']}/messages:send"
    try:
        response = session.post(
            url,
            json={"message": message},
            headers={"authorization": f"Bearer {_access_token()}"},
            timeout=TIMEOUT_S,
        )
    except requests.RequestException as exc:
        raise PushFailed(f"FCM unreachable: {exc}") from exc
    if response.status_code == 200:
        return
    status, code, text = _error(response)
    # Only FCM's own word that the token is dead drops it: a 404 without it is a wrong URL or
    # project (or a proxy's page), which says nothing about the token, and would drop every user's.
    if code in DEAD_TOKEN_CODES:
        raise PushTokenInvalid(f"FCM {response.status_code} {code or status}: {text}")
    if status == "INVALID_ARGUMENT" and _about_token(response):
        raise PushTokenInvalid(f"FCM 400 INVALID_ARGUMENT (token): {text}")
    if response.status_code == 401:
        credentials.token = None  # revoked or expired early: the next try fetches a new one
    raise PushFailed(f"FCM answered {response.status_code} {code or status}: {text}")


def _error(response: requests.Response) -> tuple[str, str, str]:
    """(google.rpc status, FcmError code, message) of an error answer."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        return "", "", response.text[:300]
    codes = [d.get("errorCode", "") for d in error.get("details", []) if isinstance(d, dict)]
    return error.get("status", ""), next((c for c in codes if c), ""), str(error.get("message", ""))[:300]


def _about_token(response: requests.Response) -> bool:
    """INVALID_ARGUMENT is the token's fault when its field is the one named (a malformed token)."""
    error = response.json().get("error", {})
    for detail in error.get("details", []):
        for violation in detail.get("fieldViolations", []) if isinstance(detail, dict) else []:
            if violation.get("field") == "message.token":
                return True
    return "registration token" in str(error.get("message", "")).lower()
