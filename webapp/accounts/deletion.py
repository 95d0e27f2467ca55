"""Deleting an account, as its owner asks: the account page on the site, POST /api/v1/me/delete in the
app. App stores require it of every app with sign-up (Apple's guideline 5.1.1(v), Google Play's
account deletion policy), and PIPL (art. 47) requires deleting a person's data when they close
their account.

Deleted: every job with everything stored for it (originals, results and their copies, face
analyses, share links; unfinished jobs are canceled first, their credit holds released, nothing
charged), resumable uploads not yet used, push devices, API tokens, signed-in app devices, browser
sessions, the username and the e-mail address.

Deleted with each job: the hashes of its allowed photos (moderation.services.subject_forget). A
request already past sign-in cannot add a job afterwards: the job's transaction locks the owner's
row and refuses a closed account (intake.job_create, 403 account_closed).

Kept: the billing account and its ledger, which bookkeeping law requires (their rows refer to the
user's id only), and moderation verdicts, the records of what was refused and known-bad hashes (no
pictures). Open top-up requests are declined and their notes cleared. So the user row stays, renamed `deleted-…`, inactive, with no usable password: nobody can sign in to it again and
its username and e-mail address are free for a new sign-up.
"""

from __future__ import annotations

import re
import secrets

from django.contrib.auth import get_user_model
from django.db import transaction

from billing import top_up_requests
from webapp.jobs.services import user_actions
from webapp.notifications.models import PushDevice

from .models import ApiToken, SignedInDevice

DELETED_USERNAME_PREFIX = "deleted-"


class StaffAccount(Exception):
    """A staff account is closed by another administrator, in the admin, never by itself (a lone
    superuser deleting themselves would lock everyone out of the admin)."""


def account_delete(*, user) -> int:
    """Delete `user`'s account as this module says; returns how many jobs were deleted. Idempotent:
    a second call (a retried request) finds nothing left to do."""
    if user.is_staff or user.is_superuser:
        raise StaffAccount()
    deleted = user_actions.jobs_delete_all(user=user)
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        if not re.fullmatch(rf"{DELETED_USERNAME_PREFIX}{user.pk}-[0-9a-f]{{8}}", user.get_username()):
            user.username = f"{DELETED_USERNAME_PREFIX}{user.pk}-{secrets.token_hex(4)}"  # "deleted-ana" too
        user.email = ""
        user.first_name = user.last_name = ""
        user.set_unusable_password()  # and Django's sessions of this user stop (their hash was the password's)
        user.is_active = False
        user.save()
    top_up_requests.top_up_requests_close(user=user)  # none left for staff to credit, notes gone
    ApiToken.objects.filter(owner=user).delete()  # cached copies forgotten (signals._token_changed)
    SignedInDevice.objects.filter(owner=user).delete()  # its access and refresh tokens with it
    PushDevice.objects.filter(owner=user).delete()
    # A job another signed-in app submitted while the first pass ran (it cannot submit any more now).
    return deleted + user_actions.jobs_delete_all(user=user)
