"""A billing admin whose browser asks for Simplified Chinese reads the billing and accounts admin in
Chinese, as Django's own admin words on the same pages: the top-up requests' actions and messages,
the account's top-up button and form, the ledger's refund action and its confirmation, the usage
report and the API tokens' actions."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing import services, top_up_requests
from billing.models import Account, LedgerEntry
from tests.billing.conftest import usage_for
from webapp.accounts import services as account_services

pytestmark = pytest.mark.django_db(transaction=True)

ZH = {"accept-language": "zh-hans"}


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "root-pass-123")


@pytest.fixture
def client_zh(root) -> Client:
    client = Client(headers=ZH)
    client.force_login(root)
    return client


def _page(response) -> str:
    assert response.status_code == 200, response.status_code
    assert response["Content-Language"] == "zh-hans"
    return response.content.decode()


def _captured_job(user) -> uuid.UUID:
    quote = services.quote_job(
        user=user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p"
    )
    job_id = uuid.uuid4()
    services.hold_place(user=user, job_id=job_id, quote=quote)
    services.hold_capture(job_id=job_id, usage=usage_for(quote, gpu_seconds="36"))
    return job_id


def test_the_top_up_requests_actions_and_message_are_in_chinese(client_zh, user_b):
    request = top_up_requests.top_up_request_create(user=user_b, pack=None, credits=Decimal("5"))
    url = reverse("admin:billing_topuprequest_changelist")
    page = _page(client_zh.get(url))
    assert "选择" in page  # Django's own words are in Chinese on this page, and so are the project's
    assert "Add the credits asked for (and close)" not in page and "Decline (no credits)" not in page
    assert "添加所申请的积分（并关闭申请）" in page and "拒绝（不添加积分）" in page

    response = client_zh.post(
        url, {"action": "add_credits", "_selected_action": [request.pk], "index": 0}, follow=True
    )
    messages = [str(m) for m in response.context["messages"]]
    assert messages == ["已为 1 个申请添加积分。"], messages
    assert "Credits added for" not in response.content.decode()


def test_the_account_page_and_its_credit_form_are_in_chinese(client_zh, funded_user):
    account = Account.objects.get(user=funded_user)
    page = _page(client_zh.get(reverse("admin:billing_account_change", args=[account.pk])))
    assert "Top up or adjust…" not in page and ">充值或调整…</a>" in page
    assert "Money (from the ledger)" not in page and "资金（来自账本）" in page
    assert "余额 1000.00，预留 0.00，可用 1000.00" in page

    credit_url = reverse("admin:billing_account_credit", args=[account.pk])
    form = _page(client_zh.get(credit_url))
    for english in ("Top up or adjust", "Balance ", "Top-up (credit)", "Adjustment (signed", 'value="Record"'):
        assert english not in form, english
    assert f"充值或调整：{funded_user}" in form and "余额 1000.00，预留 0.00，可用 1000.00" in form
    assert "充值（增加积分）" in form and "调整（带符号：负数为扣减）" in form
    assert ">首页</a>" in form and 'value="记录"' in form and "金额" in form and "原因" in form

    refused = _page(client_zh.post(credit_url, {"kind": "top_up", "amount": "-5", "reason": "test"}))
    assert "A top-up must be positive." not in refused and "充值金额必须为正数。" in refused

    recorded = client_zh.post(credit_url, {"kind": "top_up", "amount": "5", "reason": "invoice 42"}, follow=True)
    messages = [str(m) for m in recorded.context["messages"]]
    assert len(messages) == 1 and messages[0].startswith(f"已为 {funded_user} 记录"), messages


def test_the_ledgers_refund_action_and_its_confirmation_are_in_chinese(client_zh, funded_user):
    job_id = _captured_job(funded_user)
    capture = LedgerEntry.objects.get(job_id=job_id, kind="capture")
    url = reverse("admin:billing_ledgerentry_changelist")
    page = _page(client_zh.get(url))
    assert "Refund the selected captured jobs" not in page and "为所选已扣费的任务退款" in page
    assert "Usage report" not in page and ">用量报表</a>" in page

    confirm = _page(client_zh.post(url, {"action": "refund_jobs", "_selected_action": [capture.pk]}))
    assert "Refund these captured charges?" not in confirm and 'value="Refund"' not in confirm
    assert "确定为这些已扣费的任务退款吗？每个任务只能退款一次。" in confirm
    assert f"任务 {job_id}" in confirm and 'value="退款"' in confirm and "任务退款" in confirm

    done = client_zh.post(
        url,
        {"action": "refund_jobs", "_selected_action": [capture.pk], "apply": "1", "reason": "bad swap"},
        follow=True,
    )
    assert [str(m) for m in done.context["messages"]] == ["已为 1 个任务退款。"]


def test_the_usage_report_is_in_chinese(client_zh, funded_user):
    _captured_job(funded_user)
    page = _page(client_zh.get(reverse("admin:billing_usage_report")))
    for english in ("Usage per user and month", "GPU seconds", "Export CSV", "Consent records", 'value="Show"',
                    "Capped jobs", ">Total<", ">Month"):
        assert english not in page, english
    assert "按用户和月份统计的用量" in page and '<th scope="col">GPU 秒数</th>' in page
    assert ">导出 CSV</a>" in page and 'value="查看"' in page and ">合计</th>" in page
    assert '<label for="id_month">月份' in page  # the month filter's label


def test_the_accounts_admin_actions_are_in_chinese(client_zh, funded_user):
    token, _key = account_services.api_token_create(user=funded_user, name="laptop")
    tokens_url = reverse("admin:webapp_apitoken_changelist")
    tokens = _page(client_zh.get(tokens_url))  # (the action menu shows once there is a token)
    assert "Revoke selected tokens" not in tokens and "吊销所选令牌" in tokens
    revoked = client_zh.post(
        tokens_url, {"action": "revoke", "_selected_action": [token.pk], "index": 0}, follow=True
    )
    assert [str(m) for m in revoked.context["messages"]] == ["已吊销。"]

    users_url = reverse("admin:auth_user_changelist")
    users = _page(client_zh.get(users_url))
    assert "Unlock sign-in" not in users and "解除登录锁定（清除失败记录）" in users

    unlocked = client_zh.post(
        users_url, {"action": "unlock_sign_in", "_selected_action": [funded_user.pk], "index": 0}, follow=True
    )
    messages = [str(m) for m in unlocked.context["messages"]]
    assert messages == [f"{funded_user.username}：已清除 0 次失败的登录尝试。"], messages
