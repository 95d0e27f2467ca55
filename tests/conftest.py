"""Shared fixtures: two users and a funded account. Real database, Redis and S3 (see tests/settings.py)."""

from __future__ import annotations

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
