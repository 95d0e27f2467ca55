"""Shared fixtures: two users and a funded account. Real database, Redis and S3 (see tests/settings.py)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest


@pytest.fixture
def user_a(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-pass-123", email="a@example.com")


@pytest.fixture
def user_b(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-pass-123", email="b@example.com")


@pytest.fixture
def funded_user(user_a):
    """user_a with 1000 credits on the default plan."""
    from billing import services as billing_services

    billing_services.account_top_up(user=user_a, amount=Decimal("1000.00"), actor=None, reason="test funding")
    return user_a


@pytest.fixture(autouse=True)
def reference_data(request):
    """Rows the data migrations create (default price plan, GPU calibration, moderator group).

    A transactional test flushes the database afterwards, migration data included, so every
    database test gets them back here instead of relying on test order.
    """
    if request.node.get_closest_marker("django_db") is None:
        yield
        return
    import importlib

    from django.apps import apps
    from django.contrib.auth.models import Group, Permission

    importlib.import_module("billing.migrations.0002_default_plan_and_calibration").create_defaults(apps, None)
    moderator = importlib.import_module("moderation.migrations.0002_moderator_group")
    group, created = Group.objects.get_or_create(name=moderator.GROUP)
    if created:
        group.permissions.add(*[
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
            for app_label, codename in moderator.PERMISSIONS
            + importlib.import_module("moderation.migrations.0004_takedown_report").PERMISSIONS
        ])
    yield


@pytest.fixture(scope="session")
def playwright_loop_set_aside():
    """Playwright's sync API leaves its event loop set as the main thread's running loop while it is
    started (its dispatcher is only suspended), and Django's test client cannot call an async view
    (the waiting job GET, the event stream) from a thread with a running loop. Each test-client
    request runs with that loop set aside and put back afterwards; nothing of Playwright runs then."""
    from django.test.client import ClientHandler

    original = ClientHandler.__call__

    def call(self, *args, **kwargs):
        loop = asyncio.events._get_running_loop()
        if loop is None:
            return original(self, *args, **kwargs)
        asyncio.events._set_running_loop(None)
        try:
            return original(self, *args, **kwargs)
        finally:
            asyncio.events._set_running_loop(loop)

    ClientHandler.__call__ = call
    yield
    ClientHandler.__call__ = original


@pytest.fixture(autouse=True)
def playwright_loop_out_of_the_way(request):
    """A test that drives no browser runs without the session's Playwright loop set as this thread's
    running loop (see playwright_loop_set_aside): asyncio.run, async views through the test client
    and async stream readers then work as in a process without Playwright."""
    loop = asyncio.events._get_running_loop()
    if loop is None or "browser" in request.fixturenames:  # (a parameter may be named "page")
        yield
        return
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(loop)


@pytest.fixture(autouse=True)
def language_back_to_default():
    """LocaleMiddleware activates each request's language and nothing switches it back: a test whose
    request asked for zh-hans would leave this thread speaking Chinese to the next test's direct
    service calls. Each test starts and ends in the default language (settings.LANGUAGE_CODE)."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()
