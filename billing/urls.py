"""Billing API routes; the platform mounts them under /api/v1/."""

from __future__ import annotations

from django.urls import path

from billing.api.ledger import LedgerExportCsvApi, LedgerListApi
from billing.api.payments import (
    AlipayNotifyApi,
    CheckoutCreateApi,
    PackListApi,
    StripeWebhookApi,
    WeChatPayNotifyApi,
)

app_name = "billing"

urlpatterns = [
    path("ledger", LedgerListApi.as_view(), name="ledger-list"),
    path("ledger/export.csv", LedgerExportCsvApi.as_view(), name="ledger-export-csv"),
    path("billing/packs", PackListApi.as_view(), name="pack-list"),
    path("billing/checkout", CheckoutCreateApi.as_view(), name="checkout-create"),
    path("billing/stripe/webhook", StripeWebhookApi.as_view(), name="stripe-webhook"),
    path("billing/alipay/notify", AlipayNotifyApi.as_view(), name="alipay-notify"),
    path("billing/wechatpay/notify", WeChatPayNotifyApi.as_view(), name="wechatpay-notify"),
]
