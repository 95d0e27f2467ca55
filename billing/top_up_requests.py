"""Credits asked for, on an install without a payment provider: the user asks on the credits page,
staff hear of it by email and add the credits in the admin (once per request)."""

from __future__ import annotations

import logging
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.core.mail import mail_admins, send_mail
from django.db import transaction
from django.utils import timezone

from billing import services
from billing.models import Account, CreditPack, TopUpRequest

logger = logging.getLogger(__name__)

MAX_OPEN_PER_ACCOUNT = 3  # a user may not flood the staff's inbox


class TooManyOpenRequests(Exception):
    pass


def top_up_request_create(*, user, pack: CreditPack | None, credits: Decimal, note: str = "") -> TopUpRequest:
    """Record the request and email the staff once it is committed. Raises TooManyOpenRequests."""
    if credits <= 0:
        raise ValueError("a request needs a positive number of credits")
    with transaction.atomic():
        account = Account.objects.select_for_update().get(pk=services.account_get_or_create(user=user).pk)
        if (
            TopUpRequest.objects.filter(account=account, status=TopUpRequest.Status.OPEN).count()
            >= MAX_OPEN_PER_ACCOUNT
        ):
            raise TooManyOpenRequests()
        request = TopUpRequest.objects.create(account=account, pack=pack, credits=credits, note=note[:500])
        transaction.on_commit(lambda: _tell_staff(request))
    return request


def _tell_staff(request: TopUpRequest) -> None:
    """Every active staff member with an address; the ADMINS setting when there is none."""
    user = request.account.user
    subject = f"Visage: {user.get_username()} asks for {request.credits.normalize():f} credits"
    body = (
        f"{user.get_username()} ({user.email or 'no email'}) asks for {request.credits.normalize():f} credits"
        f"{f' ({request.pack.name})' if request.pack else ''}.\n"
        f"{f'Note: {request.note}' + chr(10) if request.note else ''}"
        "Open the admin's Top-up requests to add the credits (or decline).\n"
    )
    recipients = list(
        get_user_model()
        .objects.filter(is_staff=True, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    try:
        if recipients:
            send_mail(subject, body, None, recipients)
        else:
            mail_admins(subject, body)
    except Exception:  # the request is recorded and listed in the admin either way
        logger.warning("could not email staff about top-up request %s", request.pk, exc_info=True)


def top_up_request_fulfil(*, request_id: int, actor) -> TopUpRequest | None:
    """Add the credits asked for and close the request; None when it was no longer open."""
    with transaction.atomic():
        request = TopUpRequest.objects.select_for_update().select_related("account__user").get(pk=request_id)
        if request.status != TopUpRequest.Status.OPEN or not request.account.user.is_active:
            return None  # handled already, or its account was closed (deleted) since
        entry = services.account_top_up(
            user=request.account.user,
            amount=request.credits,
            actor=actor,
            reason=f"top-up request #{request.pk}",
        )
        request.status = TopUpRequest.Status.DONE
        request.top_up, request.handled_by, request.handled_at = entry, actor, timezone.now()
        request.save(update_fields=["status", "top_up", "handled_by", "handled_at"])
        return request


def top_up_request_decline(*, request_id: int, actor) -> bool:
    return bool(
        TopUpRequest.objects.filter(pk=request_id, status=TopUpRequest.Status.OPEN).update(
            status=TopUpRequest.Status.DECLINED, handled_by=actor, handled_at=timezone.now()
        )
    )


def top_up_requests_close(*, user) -> int:
    """Decline a closing account's open requests and forget their notes (free text); how many."""
    return TopUpRequest.objects.filter(account__user=user, status=TopUpRequest.Status.OPEN).update(
        status=TopUpRequest.Status.DECLINED, note="", handled_at=timezone.now()
    )


def top_up_requests_open(*, user):
    return TopUpRequest.objects.filter(account__user=user, status=TopUpRequest.Status.OPEN).select_related(
        "pack"
    )
