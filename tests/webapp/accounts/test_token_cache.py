"""API tokens are cached after a lookup, and every write that could make the copy wrong is seen at once."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.webapp.conftest import api_client_for
from webapp.accounts import selectors, services
from webapp.accounts.models import ApiToken

pytestmark = pytest.mark.django_db(transaction=True)


def token_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/me").status_code == 200
    return sum(1 for q in queries.captured_queries if ApiToken._meta.db_table in q["sql"] and q["sql"].startswith("SELECT"))


def test_a_polling_client_costs_one_token_query_not_one_per_request(user_a):
    cache.clear()
    client = api_client_for(user_a)
    assert token_queries(client) == 1
    assert [token_queries(client) for _ in range(3)] == [0, 0, 0]


def test_a_deactivated_user_is_refused_at_once(user_a):
    cache.clear()
    client = api_client_for(user_a)
    assert client.get("/api/v1/me").status_code == 200  # now cached
    user_a.is_active = False
    user_a.save()
    assert client.get("/api/v1/me").status_code == 401


def test_a_deleted_user_and_a_token_deleted_in_the_admin_are_refused_at_once(user_a, user_b):
    cache.clear()
    client_a, client_b = api_client_for(user_a), api_client_for(user_b)
    assert client_a.get("/api/v1/me").status_code == client_b.get("/api/v1/me").status_code == 200
    ApiToken.objects.get(owner=user_a).delete()
    user_b.delete()
    assert client_a.get("/api/v1/me").status_code == client_b.get("/api/v1/me").status_code == 401


def test_a_lookup_that_read_the_row_before_a_revoke_cannot_cache_it_again(user_a):
    cache.clear()
    token, key = services.api_token_create(user=user_a, name="race")
    services.forget_tokens([token.key_sha256])  # what a write does; the lookup below read the row earlier
    assert selectors.api_token_by_key(key) is not None
    assert cache.get(selectors.token_cache_key(token.key_sha256)) == selectors.STALE
    services.api_token_revoke(token=token)
    assert selectors.api_token_by_key(key) is None


def test_last_used_is_written_at_most_once_a_minute(user_a, monkeypatch):
    cache.clear()
    monkeypatch.setattr(services, "_touched", {})  # ids of earlier tests' tokens may come again
    client = api_client_for(user_a)
    with CaptureQueriesContext(connection) as queries:
        for _ in range(4):
            assert client.get("/api/v1/me").status_code == 200
    updates = [q for q in queries.captured_queries if q["sql"].startswith("UPDATE") and "last_used_at" in q["sql"]]
    assert len(updates) == 1
    assert ApiToken.objects.get(owner=user_a).last_used_at is not None


def test_the_cached_copy_holds_no_password_hash_and_saving_it_keeps_the_password(user_a):
    cache.clear()
    client = api_client_for(user_a)
    assert client.get("/api/v1/me").status_code == 200
    digest = ApiToken.objects.get(owner=user_a).key_sha256
    raw = cache._cache.get_client(write=False).get(cache.make_and_validate_key(selectors.token_cache_key(digest)))
    assert raw and user_a.password.encode() not in raw and b"pbkdf2" not in raw
    cached_user = cache.get(selectors.token_cache_key(digest)).owner
    cached_user.first_name = "Alice"
    cached_user.save()  # a deferred field is not written back
    user_a.refresh_from_db()
    assert user_a.first_name == "Alice" and user_a.check_password("alice-pass-123")
