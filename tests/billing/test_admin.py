"""Admin: manual top-up/adjustment form, refund action, usage report with CSV export.

No clock is measured here: "GPU seconds" below are billed quantities fed to the ledger (as a
worker reports them), and ledger dates are pinned, so no run time or date decides an outcome.
"""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.urls import reverse

from billing import selectors, services
from billing.models import Account, LedgerEntry, PricePlan
from tests.billing.conftest import usage_for

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.billing.urls")]

QUOTE = {"width": 1920, "height": 1080, "frames": 300, "mode": "standard", "resolution": "1080p"}


@pytest.fixture
def staff(admin_client):
    return admin_client


def credit_url(user) -> str:
    return reverse("admin:billing_account_credit", args=[services.account_get_or_create(user=user).pk])


def test_top_up_without_reason_is_refused(staff, user_a, plan):
    response = staff.post(credit_url(user_a), {"kind": "top_up", "amount": "25.00", "reason": "   "})
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    assert not LedgerEntry.objects.filter(account__user=user_a).exists()


def test_top_up_with_reason_creates_the_entry(staff, admin_user, user_a, plan):
    response = staff.post(
        credit_url(user_a), {"kind": "top_up", "amount": "25.00", "reason": "paid by invoice 42"}
    )
    assert response.status_code == 302
    entry = LedgerEntry.objects.get(account__user=user_a)
    assert (entry.kind, entry.amount, entry.actor, entry.reason) == (
        "top_up",
        Decimal("25.00"),
        admin_user,
        "paid by invoice 42",
    )
    assert selectors.account_balance(user=user_a).available == Decimal("25.00")


def test_negative_adjustment_beyond_available_is_refused(staff, funded_user):
    response = staff.post(
        credit_url(funded_user), {"kind": "adjustment", "amount": "-1000.01", "reason": "oops"}
    )
    assert response.status_code == 200
    assert LedgerEntry.objects.filter(account__user=funded_user).count() == 1
    response = staff.post(
        credit_url(funded_user), {"kind": "adjustment", "amount": "-1.50", "reason": "goodwill reversal"}
    )
    assert response.status_code == 302
    assert selectors.account_balance(user=funded_user).balance == Decimal("998.50")


def test_account_list_shows_money(staff, funded_user):
    response = staff.get(reverse("admin:billing_account_changelist"))
    assert response.status_code == 200
    assert '<td class="field-available">1000.00</td>' in response.content.decode()
    assert (
        staff.get(
            reverse("admin:billing_account_change", args=[Account.objects.get(user=funded_user).pk])
        ).status_code
        == 200
    )


def test_ledger_admin_is_read_only(staff, funded_user):
    entry = LedgerEntry.objects.get(account__user=funded_user)
    assert staff.get(reverse("admin:billing_ledgerentry_changelist")).status_code == 200
    assert staff.get(reverse("admin:billing_ledgerentry_add")).status_code == 403
    staff.post(reverse("admin:billing_ledgerentry_change", args=[entry.pk]), {"amount": "5"})
    assert LedgerEntry.objects.get(pk=entry.pk).amount == Decimal("1000.00")


def captured_job(user, billed_gpu_seconds: str = "36") -> uuid.UUID:
    quote = services.quote_job(user=user, **QUOTE)
    job_id = uuid.uuid4()
    services.hold_place(user=user, job_id=job_id, quote=quote)
    services.hold_capture(job_id=job_id, usage=usage_for(quote, gpu_seconds=billed_gpu_seconds))
    return job_id


def test_refund_action_asks_for_a_reason_then_refunds_once(staff, admin_user, funded_user, plan):
    job_id = captured_job(funded_user)
    capture = LedgerEntry.objects.get(job_id=job_id, kind="capture")
    url = reverse("admin:billing_ledgerentry_changelist")
    confirm = staff.post(url, {"action": "refund_jobs", "_selected_action": [capture.pk]})
    assert confirm.status_code == 200 and "Refund" in confirm.content.decode()
    assert not LedgerEntry.objects.filter(job_id=job_id, kind="refund").exists()
    staff.post(
        url, {"action": "refund_jobs", "_selected_action": [capture.pk], "apply": "1", "reason": "bad swap"}
    )
    staff.post(
        url, {"action": "refund_jobs", "_selected_action": [capture.pk], "apply": "1", "reason": "twice"}
    )
    refunds = LedgerEntry.objects.filter(job_id=job_id, kind="refund")
    assert refunds.count() == 1
    assert (refunds[0].amount, refunds[0].actor, refunds[0].reason) == (
        Decimal("5.40"),
        admin_user,
        "bad swap",
    )


def test_usage_report_csv(staff, funded_user, user_b, plan):
    services.account_top_up(user=user_b, amount=Decimal("100.00"), actor=None, reason="funding")
    captured_job(funded_user, billed_gpu_seconds="36")  # 5.40
    refunded = captured_job(funded_user, billed_gpu_seconds="30")  # 300 × 1.5 × 0.10 s × 0.10 = 4.50
    services.job_refund(job_id=refunded, actor=None, reason="bad")
    # 6.75 by the formula, but bob was quoted 5.81 (alice's jobs: 0.1075 s/frame fitted, the newer
    # 0.100 weighing more, × 1.2, the minimum margin, as their spread is less; 5.8069 rounded up):
    # he pays the quote, the report counts it as capped.
    captured_job(user_b, billed_gpu_seconds="45")
    # The report groups by the month an entry was made: pin them to one, so no clock (a run across
    # midnight at a month's end) decides what the test sees.
    LedgerEntry.objects.update(created_at=datetime(2026, 3, 15, 12, tzinfo=UTC))
    month = "2026-03"

    page = staff.get(reverse("admin:billing_usage_report"), {"month": month})
    assert page.status_code == 200 and "alice" in page.content.decode()
    response = staff.get(reverse("admin:billing_usage_report"), {"month": month, "export": "csv"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [
        (
            r["month"],
            r["username"],
            r["jobs"],
            r["frames"],
            r["gpu_seconds"],
            r["charged"],
            r["refunded"],
            r["net"],
            r["gpu_cost"],
            r["margin"],
            r["capped_jobs"],
        )
        for r in rows
    ] == [  # GPU cost at the default 0.0005 per GPU second
        (month, "alice", "2", "600", "66.000", "9.90", "4.50", "5.40", "0.0330", "5.3670", "0"),
        (month, "bob", "1", "300", "45.000", "5.81", "0.00", "5.81", "0.0225", "5.7875", "1"),
    ]
    other_month = staff.get(reverse("admin:billing_usage_report"), {"month": "2001-01", "export": "csv"})
    assert other_month.content.decode().strip().count("\n") == 0  # header only

    # The page: readable headers (the CSV keeps the column names) and the month's totals per currency.
    html = page.content.decode()
    assert '<th scope="col">GPU seconds</th>' in html and "gpu_seconds" not in html
    assert page.context["totals"] == [{
        "currency": "USD", "jobs": 3, "frames": 900, "gpu_seconds": Decimal("111.000"),
        "charged": Decimal("15.71"), "refunded": Decimal("4.50"), "net": Decimal("11.21"),
        "gpu_cost": Decimal("0.0555"), "margin": Decimal("11.1545"), "capped_jobs": 1,
    }]  # fmt: skip
    assert f"Total {month}" in html and "<td>15.71</td>" in html


def plan_form(**fields: str) -> dict:
    """The admin's add-plan form, filled in; `fields` replace or add values."""
    return {
        "name": "Plan", "gpu_queue": "default", "unit_price": "0.05", "minimum_charge": "0.01",
        "currency": "usd", "minor_unit_exponent": "2", "coefficient_720p": "1", "coefficient_1080p": "1.5",
        "original_coefficient_tiers": '[[2073600, "1.5"], [null, "3"]]',
        "weight_fast": "0.5", "weight_standard": "1", "weight_hq": "2", **fields,
    }


def test_only_one_default_plan(staff, plan):
    response = staff.post(
        reverse("admin:billing_priceplan_add"),
        plan_form(name="Batch", is_default="on", gpu_queue="batch"),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert list(PricePlan.objects.filter(is_default=True).values_list("name", flat=True)) == ["Batch"]
    assert PricePlan.objects.get(name="Batch").currency == "USD"
    bad = staff.post(
        reverse("admin:billing_priceplan_add"), {"name": "Bad", "original_coefficient_tiers": "[[5, 1.5]]"}
    )
    assert bad.status_code == 200 and not PricePlan.objects.filter(name="Bad").exists()


def test_a_plan_that_makes_jobs_free_is_refused(staff, plan):
    """A zero minimum with a zero price (or weight) quoted jobs at 0, and every submit under the
    plan then failed with a server error (a hold must be positive)."""
    form = plan_form(name="Free", unit_price="0", minimum_charge="0")
    refused = staff.post(reverse("admin:billing_priceplan_add"), form)
    assert refused.status_code == 200 and not PricePlan.objects.filter(name="Free").exists()
    assert "must be above 0" in refused.content.decode()
    assert staff.post(reverse("admin:billing_priceplan_add"), {**form, "minimum_charge": "0.01"}).status_code == 302


def test_staff_who_may_change_accounts_but_not_add_ledger_entries_cannot_add_credits(django_user_model, user_b):
    """Changing an account assigns its plan; adding credits moves money: the ledger's add permission,
    as for the top-up requests' actions. No button, and the form refuses."""
    from django.contrib.auth.models import Permission
    from django.test import Client

    account = services.account_get_or_create(user=user_b)
    clerk = django_user_model.objects.create_user(username="planclerk", password="x-pass-12345", is_staff=True)
    clerk.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="billing", codename__in=["view_account", "change_account"]
    ))
    client = Client()
    client.force_login(clerk)
    page = client.get(reverse("admin:billing_account_change", args=[account.pk]))
    assert page.status_code == 200 and reverse("admin:billing_account_credit", args=[account.pk]) not in page.content.decode()
    response = client.post(
        reverse("admin:billing_account_credit", args=[account.pk]),
        {"kind": "top_up", "amount": "100000", "reason": "because I can"},
    )
    assert response.status_code == 403
    assert selectors.account_balance(user=user_b).balance == 0
    assert not LedgerEntry.objects.filter(actor=clerk).exists()
