"""20 parallel job submissions against a balance that covers exactly 10: exactly 10 jobs, never overdrawn."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection

from billing import selectors as billing_selectors
from billing import services as billing_services
from tests.webapp.conftest import api_client_for, post_job
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks; run with DATABASE_URL=postgres://…")
def test_twenty_parallel_submissions_create_exactly_ten_jobs(user_b, astronaut_pair):
    source, target, (width, height) = astronaut_pair
    quote = billing_services.quote_job(user=user_b, width=width, height=height, frames=1, mode="standard",
                                       resolution="720p")
    billing_services.account_top_up(user=user_b, amount=quote.hold_amount * 10, actor=None, reason="exactly ten")
    statuses: list[int] = []
    barrier = threading.Barrier(20)

    def submit() -> None:
        from django.db import connections

        client = api_client_for(user_b)
        barrier.wait()
        try:
            statuses.append(post_job(client, source, target).status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [201] * 10 + [402] * 10
    assert Job.objects.filter(owner=user_b).count() == 10
    balance = billing_selectors.account_balance(user=user_b)
    assert balance.available == Decimal("0")
    assert balance.held == quote.hold_amount * 10
