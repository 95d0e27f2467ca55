"""Parallel submissions for one user can never overdraw (PostgreSQL row locks; see services.hold_place)."""

from __future__ import annotations

import threading
import uuid
from decimal import Decimal

import pytest
from django.db import connection, connections

from billing import selectors, services
from billing.errors import InsufficientCredit
from billing.models import LedgerEntry, PricePlan

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL row locks (SELECT … FOR UPDATE); run with DATABASE_URL=postgres://…",
)

PARALLEL = 20
AFFORDABLE = 10


@pytest.mark.django_db(transaction=True)
def test_parallel_holds_never_overdraw(django_user_model):
    assert PricePlan.objects.filter(is_default=True).exists()  # restored by tests/conftest.py:reference_data
    user = django_user_model.objects.create_user(username="racer", password="racer-pass-123")
    quote = services.quote_job(
        user=user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p"
    )
    services.account_top_up(
        user=user, amount=quote.hold_amount * AFFORDABLE, actor=None, reason="exactly ten holds"
    )

    barrier = threading.Barrier(PARALLEL)
    placed: list[uuid.UUID] = []
    refused: list[InsufficientCredit] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def submit() -> None:
        try:
            barrier.wait(timeout=30)
            job_id = uuid.uuid4()
            services.hold_place(user=user, job_id=job_id, quote=quote)
            with lock:
                placed.append(job_id)
        except InsufficientCredit as exc:
            with lock:
                refused.append(exc)
        except BaseException as exc:  # noqa: BLE001 - reported below
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    assert len(placed) == AFFORDABLE
    assert len(refused) == PARALLEL - AFFORDABLE
    assert all(exc.available >= 0 and exc.available < quote.hold_amount for exc in refused)
    assert LedgerEntry.objects.filter(account__user=user, kind="hold").count() == AFFORDABLE
    balance = selectors.account_balance(user=user)
    assert balance.held == quote.hold_amount * AFFORDABLE
    assert balance.available == Decimal("0.00")
