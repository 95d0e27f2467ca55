"""The payment providers a credit pack can be bought with, behind one interface: each creates an
order for a pack and says where the buyer pays. Stripe Checkout (any currency Stripe takes),
Alipay page/app pay and WeChat Pay Native (CNY). A provider is offered once its settings are set."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urljoin

from django.urls import reverse
from django.utils.translation import gettext as _

from billing import alipay_gateway, stripe_gateway, wechatpay_gateway
from billing.choices import PaymentProvider
from billing.models import Account, CreditPack
from billing.payment_errors import PackCurrencyUnsupported, PaymentsNotConfigured, UnknownPaymentProvider

SESSION_PLACEHOLDER = "{CHECKOUT_SESSION_ID}"


@dataclass(frozen=True)
class ProviderOrder:
    reference: str  # unique per purchase: Stripe's session id, or our out_trade_no
    url: str = ""
    code_url: str = ""
    order_string: str = ""


class Provider(Protocol):
    name: str
    currencies: frozenset[str] | None  # None: any

    def configured(self) -> bool: ...

    def order_create(
        self,
        *,
        pack: CreditPack,
        account: Account,
        customer_email: str,
        success_url: str,
        cancel_url: str,
        site_url: str,
        channel: str,
    ) -> ProviderOrder: ...


def _description(pack: CreditPack) -> str:
    return f"{pack.name}: {pack.credits.normalize():f} Visage credits"


def _out_trade_no() -> str:
    return "vsg" + secrets.token_hex(14)  # 31 characters: within WeChat Pay's 6–32 and Alipay's 64


class StripeProvider:
    name = PaymentProvider.STRIPE
    currencies = None

    def configured(self) -> bool:
        return stripe_gateway.configured()

    def order_create(self, *, pack, account, customer_email, success_url, cancel_url, site_url, channel):
        created = stripe_gateway.checkout_session_create(
            name=_description(pack),
            unit_amount_minor=pack.price_minor,
            currency=pack.currency,
            client_reference_id=str(account.pk),
            metadata={"account_id": str(account.pk), "pack_id": str(pack.pk), "credits": str(pack.credits)},
            success_url=success_url,
            cancel_url=cancel_url,
            customer_email=customer_email,
        )
        return ProviderOrder(reference=created.id, url=created.url)


class AlipayProvider:
    name = PaymentProvider.ALIPAY
    currencies = frozenset({"CNY"})

    def configured(self) -> bool:
        return alipay_gateway.configured()

    def order_create(self, *, pack, account, customer_email, success_url, cancel_url, site_url, channel):
        reference = _out_trade_no()
        notify_url = urljoin(site_url, reverse("billing:alipay-notify"))
        if channel == "app":
            order = alipay_gateway.app_pay_order(
                out_trade_no=reference, amount=pack.price, subject=_description(pack), notify_url=notify_url
            )
            return ProviderOrder(reference=reference, order_string=order)
        url = alipay_gateway.page_pay_url(
            out_trade_no=reference,
            amount=pack.price,
            subject=_description(pack),
            notify_url=notify_url,
            return_url=success_url.replace(SESSION_PLACEHOLDER, reference),
        )
        return ProviderOrder(reference=reference, url=url)


class WeChatPayProvider:
    name = PaymentProvider.WECHATPAY
    currencies = frozenset({"CNY"})

    def configured(self) -> bool:
        return wechatpay_gateway.configured()

    def order_create(self, *, pack, account, customer_email, success_url, cancel_url, site_url, channel):
        reference = _out_trade_no()
        code_url = wechatpay_gateway.native_order_create(
            out_trade_no=reference,
            amount_fen=pack.price_minor,
            description=_description(pack),
            notify_url=urljoin(site_url, reverse("billing:wechatpay-notify")),
        )
        return ProviderOrder(reference=reference, code_url=code_url)


PROVIDERS: dict[str, Provider] = {
    p.name: p for p in (StripeProvider(), AlipayProvider(), WeChatPayProvider())
}


def providers_enabled() -> list[str]:
    return [name for name, provider in PROVIDERS.items() if provider.configured()]


def providers_for(pack: CreditPack) -> list[str]:
    """The enabled providers that take the pack's currency (the credits page's buttons)."""
    return [
        name
        for name in providers_enabled()
        if PROVIDERS[name].currencies is None or pack.currency.upper() in PROVIDERS[name].currencies
    ]


def provider_get(name: str, pack: CreditPack | None = None) -> Provider:
    if name not in PROVIDERS:
        raise UnknownPaymentProvider(
            f"No payment provider {name!r}; this server has: {', '.join(PROVIDERS)}."
        )
    provider = PROVIDERS[name]
    if not provider.configured():
        raise PaymentsNotConfigured(
            _("%(provider)s is not configured on this server.") % {"provider": PaymentProvider(name).label}
        )
    if (
        pack is not None
        and provider.currencies is not None
        and pack.currency.upper() not in provider.currencies
    ):
        raise PackCurrencyUnsupported(
            f"{PaymentProvider(name).label} takes {', '.join(sorted(provider.currencies))}; this pack is priced in "
            f"{pack.currency}."
        )
    return provider
