"""Sign-in brute force: trusted proxies, per-username and per-address limits on the API token
endpoint, the site's /login/ and the admin login, the lockout answers, the unlocks, and Redis down."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient

from webapp.accounts import login_limits
from webapp.accounts.client_ip import client_ip

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN_URL = "/api/v1/auth/token"


def token_attempt(username: str, password: str, *, ip: str = "203.0.113.7", xff: str | None = None):
    extra = {"REMOTE_ADDR": ip}
    if xff is not None:
        extra["HTTP_X_FORWARDED_FOR"] = xff
    return APIClient().post(TOKEN_URL, {"username": username, "password": password}, format="json", **extra)


def assert_locked(response) -> dict:
    assert response.status_code == 429, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "too_many_failed_logins"
    assert "Try again in" in body["detail"]
    assert int(response["Retry-After"]) > 0
    return body


# --- client address -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proxies", "xff", "expected"),
    [
        (0, "1.1.1.1", "10.0.0.9"),  # no trusted proxy: the header is the client's own words
        (1, "1.1.1.1", "1.1.1.1"),
        (1, "6.6.6.6, 1.1.1.1", "1.1.1.1"),  # what the client wrote itself is left of the proxy's entry
        (2, "6.6.6.6, 1.1.1.1, 172.16.0.2", "1.1.1.1"),
        (3, "1.1.1.1", "1.1.1.1"),  # fewer entries than proxies: the leftmost
        (1, None, "10.0.0.9"),
    ],
)
def test_client_ip_trusts_only_the_configured_proxies(settings, proxies, xff, expected):
    from rest_framework.settings import api_settings
    from rest_framework.throttling import SimpleRateThrottle

    settings.TRUSTED_PROXIES = proxies
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": proxies}
    meta = {"REMOTE_ADDR": "10.0.0.9"} | ({"HTTP_X_FORWARDED_FOR": xff} if xff else {})
    request = RequestFactory().get("/", **meta)
    assert client_ip(request) == expected
    # The API throttles (DRF's NUM_PROXIES rule) key on the same address.
    assert api_settings.NUM_PROXIES == proxies
    from rest_framework.request import Request

    assert SimpleRateThrottle.get_ident(SimpleRateThrottle.__new__(SimpleRateThrottle), Request(request)) == expected


def test_rotating_x_forwarded_for_does_not_dodge_the_auth_throttle(user_a):
    """A brute-force attack: 50 wrong passwords with a new X-Forwarded-For each time."""
    statuses = [
        token_attempt(f"nobody{i}", "wrong", xff=f"198.51.100.{i}").status_code for i in range(25)
    ]
    assert statuses[:20] == [401] * 20
    assert set(statuses[20:]) == {429}


# --- per username ---------------------------------------------------------------------------------


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=5, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_username_locks_after_its_limit_from_any_address(user_a, user_b):
    for i in range(4):
        assert token_attempt("alice", "wrong", ip=f"192.0.2.{i}").status_code == 401
    # The attempt that reaches the limit already says so.
    body = assert_locked(token_attempt("alice", "wrong", ip="192.0.2.50"))
    assert "this account" in body["detail"]
    # Locked: even the right password is refused, without being checked, from a new address.
    assert_locked(token_attempt("ALICE ", "alice-pass-123", ip="192.0.2.99"))
    assert_locked(token_attempt("alice", "alice-pass-123", ip="192.0.2.99"))
    # Another account is not affected.
    assert token_attempt("bob", "bob-pass-123", ip="192.0.2.99").status_code == 201
    # The admin's unlock lets the owner in again.
    assert login_limits.login_unlock(username="alice") == 5  # refused attempts are not counted
    assert token_attempt("alice", "alice-pass-123", ip="192.0.2.99").status_code == 201


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=3, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_success_clears_the_username_count(user_a):
    for _ in range(2):
        assert token_attempt("alice", "wrong").status_code == 401
    assert token_attempt("alice", "alice-pass-123").status_code == 201
    assert login_limits.login_failures(username="alice") == 0
    for _ in range(2):
        assert token_attempt("alice", "wrong").status_code == 401  # a fresh window


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=3, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_unknown_usernames_lock_the_same_way(db):
    """A lockout says nothing about whether the account exists."""
    for _ in range(2):
        assert token_attempt("ghost", "wrong").status_code == 401
    assert_locked(token_attempt("ghost", "wrong"))


# --- per address ----------------------------------------------------------------------------------


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=1000, LOGIN_MAX_FAILURES_PER_IP=4)
def test_address_locks_after_its_limit_across_usernames(user_a):
    for i in range(3):
        assert token_attempt(f"user{i}", "wrong", ip="198.51.100.1").status_code == 401
    body = assert_locked(token_attempt("user9", "wrong", ip="198.51.100.1"))
    assert "network address" in body["detail"]
    assert_locked(token_attempt("alice", "alice-pass-123", ip="198.51.100.1"))
    assert token_attempt("alice", "alice-pass-123", ip="198.51.100.2").status_code == 201
    call_command("visage_unlock_login", ip="198.51.100.1")
    assert token_attempt("alice", "alice-pass-123", ip="198.51.100.1").status_code == 201


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=1000, LOGIN_MAX_FAILURES_PER_IP=3, TRUSTED_PROXIES=1)
def test_behind_a_proxy_the_forwarded_address_is_limited_not_the_proxy(user_a):
    proxy = "10.0.0.2"
    for i in range(2):
        assert token_attempt(f"u{i}", "wrong", ip=proxy, xff=f"{i}.{i}.{i}.{i}, 198.51.100.5").status_code == 401
    assert_locked(token_attempt("u3", "wrong", ip=proxy, xff="9.9.9.9, 198.51.100.5"))
    # Another client behind the same proxy still signs in.
    assert token_attempt("alice", "alice-pass-123", ip=proxy, xff="198.51.100.6").status_code == 201


# --- the site and the admin -----------------------------------------------------------------------


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=3, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_site_login_locks_with_a_message_and_429(user_a):
    client = Client()
    for _ in range(2):
        response = client.post("/login/", {"username": "alice", "password": "wrong"})
        assert response.status_code == 200
        assert "Too many failed sign-in attempts" not in response.content.decode()
    response = client.post("/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "Too many failed sign-in attempts for this account" in page and "Try again in 15 minutes" in page
    # The right password is refused while locked, and no session is made.
    response = client.post("/login/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 429 and "_auth_user_id" not in client.session
    login_limits.login_unlock(username="alice")
    response = client.post("/login/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(user_a.pk)


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=3, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_api_site_and_admin_share_one_count(django_user_model):
    django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123")
    assert token_attempt("root", "wrong").status_code == 401
    assert Client().post("/login/", {"username": "root", "password": "wrong"}).status_code == 200
    response = Client().post("/admin/login/", {"username": "root", "password": "wrong", "next": "/admin/"})
    assert "Too many failed sign-in attempts" in response.content.decode()
    response = Client().post("/admin/login/", {"username": "root", "password": "root-pass-123", "next": "/admin/"})
    assert response.status_code == 200 and "Too many failed sign-in attempts" in response.content.decode()


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=2, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_admin_action_unlocks_a_user(user_a, django_user_model):
    staff = django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123")
    for _ in range(2):
        token_attempt("alice", "wrong")
    assert_locked(token_attempt("alice", "alice-pass-123"))
    admin = Client()
    admin.force_login(staff)
    response = admin.post(
        "/admin/auth/user/", {"action": "unlock_sign_in", "_selected_action": [user_a.pk]}, follow=True
    )
    assert "lice: 2 failed sign-in attempts cleared." in response.content.decode()  # the admin capitalises
    assert token_attempt("alice", "alice-pass-123").status_code == 201


@pytest.mark.parametrize(
    "backend", ["webapp.ops.cache.FailOpenRedisCache", "django.core.cache.backends.redis.RedisCache"]
)
def test_redis_down_fails_open(user_a, caplog, backend):
    """With the cache down the password is still checked, and nobody is locked out by an outage."""
    dead = {"default": {"BACKEND": backend, "LOCATION": "redis://127.0.0.1:9/0",
                        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.1")
    with override_settings(CACHES=dead):
        for _ in range(3):
            assert login_limits.authenticate_limited(request, username="alice", password="wrong") is None
        assert login_limits.authenticate_limited(request, username="alice", password="alice-pass-123") == user_a
    if backend.endswith(".RedisCache"):  # the fail-open cache logs for itself, at most every 30 s
        assert "login limits unavailable" in caplog.text


# --- passwords and cookies --------------------------------------------------------------------------


@pytest.mark.parametrize("password", ["short1", "password123", "12345678901", "alice-example"])
def test_signup_refuses_weak_passwords(password):
    response = Client().post(
        "/signup/",
        {"username": "alice", "email": "alice@example.com", "password1": password, "password2": password},
    )
    assert response.status_code == 200  # the form again, with the validator's message
    from django.contrib.auth import get_user_model

    assert not get_user_model().objects.filter(username="alice").exists()


@override_settings(LOGIN_MAX_FAILURES_PER_USERNAME=3, LOGIN_MAX_FAILURES_PER_IP=1000)
def test_the_old_password_of_a_password_change_counts_against_the_limits(user_a):
    """A session left open (or taken) could guess the old password without limit: 40 wrong
    guesses were all answered 200, around the sign-in lockout."""
    client = Client()
    client.force_login(user_a)
    change = {"new_password1": "N3w-Secret-pass!x", "new_password2": "N3w-Secret-pass!x"}
    for _ in range(2):
        assert client.post("/account/password/", {"old_password": "wrong", **change}).status_code == 200
    locked = client.post("/account/password/", {"old_password": "wrong", **change})
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0
    # Locked: the right one is refused too, and sign-in for the account is locked the same way.
    assert client.post("/account/password/", {"old_password": "alice-pass-123", **change}).status_code == 429
    assert_locked(token_attempt("alice", "alice-pass-123"))
    user_a.refresh_from_db()
    assert user_a.check_password("alice-pass-123")
