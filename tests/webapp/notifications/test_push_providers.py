"""FCM HTTP v1 and APNs (HTTP/2) clients against stand-ins that verify every request: the OAuth
assertion and the provider token are checked with the test keys, the headers and bodies with the
providers' rules. No network."""

from __future__ import annotations

import uuid

import pytest

from tests.helpers.push_standins import ApnsStandIn, FcmStandIn, verify_jwt
from webapp.notifications import apns, fcm
from webapp.notifications.errors import PushFailed, PushTokenInvalid
from webapp.notifications.push import enabled_platforms, job_push_text, language_for

FCM_TOKEN = "fcm-token_1:APA91b" + "x" * 120
APNS_TOKEN = "a1" * 32


def send_fcm(token: str = FCM_TOKEN) -> None:
    fcm.send(token=token, title="Your swap is ready", body="Open the app to see it.",
             data={"job_id": "j1", "state": "succeeded"}, collapse_key="j1")


def send_apns(stand_in: ApnsStandIn, token: str = APNS_TOKEN) -> None:
    apns.send(token=token, topic=stand_in.topic, title="Your swap is ready", body="Open the app to see it.",
              data={"job_id": "j1", "state": "succeeded"}, collapse_id="j1", push_id=str(uuid.uuid4()))


def test_fcm_exchanges_a_signed_assertion_once_and_sends_v1_messages(fcm_standin):
    send_fcm()
    send_fcm()
    assert fcm_standin.problems == []
    assert fcm_standin.token_requests == 1  # the access token is reused until it expires
    assert len(fcm_standin.delivered) == 2
    message = fcm_standin.delivered[0]
    assert message["token"] == FCM_TOKEN
    assert message["notification"] == {"title": "Your swap is ready", "body": "Open the app to see it."}
    assert message["data"] == {"job_id": "j1", "state": "succeeded"}
    assert message["android"]["collapse_key"] == "j1"


def test_fcm_unregistered_token_is_invalid_and_5xx_is_a_failed_try(fcm_standin):
    fcm_standin.dead_tokens.add("dead-token")
    fcm_standin.malformed_tokens.add("malformed-token")
    with pytest.raises(PushTokenInvalid, match="UNREGISTERED"):
        send_fcm("dead-token")
    with pytest.raises(PushTokenInvalid, match="INVALID_ARGUMENT"):
        send_fcm("malformed-token")
    fcm_standin.fail_next = 1
    with pytest.raises(PushFailed, match="503"):
        send_fcm()
    send_fcm()
    assert len(fcm_standin.delivered) == 1 and fcm_standin.problems == []


def test_fcm_assertion_signed_with_another_key_is_refused(fcm_standin, settings):
    other = FcmStandIn()  # the same account's name, another key: the token endpoint must refuse it
    try:
        settings.FCM_SERVICE_ACCOUNT = {**fcm_standin.service_account, "private_key": other.service_account["private_key"]}
        with pytest.raises(PushFailed, match="access token"):
            send_fcm()
        assert fcm_standin.token_requests == 0
        assert any("not signed by the service account's key" in p for p in fcm_standin.problems)
    finally:
        other.close()


def test_apns_speaks_http2_with_an_es256_provider_token(apns_standin):
    send_apns(apns_standin)
    assert apns_standin.problems == []
    [(token, headers, payload)] = apns_standin.delivered
    assert token == APNS_TOKEN
    assert headers["apns-topic"] == apns_standin.topic and headers["apns-push-type"] == "alert"
    assert headers["apns-collapse-id"] == "j1"
    assert payload == {"aps": {"alert": {"title": "Your swap is ready", "body": "Open the app to see it."},
                               "sound": "default"}, "job_id": "j1", "state": "succeeded"}


def test_apns_dead_and_bad_tokens_are_invalid_and_5xx_is_a_failed_try(apns_standin):
    apns_standin.dead_tokens.add("b2" * 32)
    apns_standin.malformed_tokens.add("c3" * 32)
    with pytest.raises(PushTokenInvalid, match="410 Unregistered"):
        send_apns(apns_standin, "b2" * 32)
    with pytest.raises(PushTokenInvalid, match="400 BadDeviceToken"):
        send_apns(apns_standin, "c3" * 32)
    apns_standin.fail_next = 1
    with pytest.raises(PushFailed, match="503"):
        send_apns(apns_standin)
    send_apns(apns_standin)
    assert len(apns_standin.delivered) == 1 and apns_standin.problems == []


def test_apns_provider_token_is_reused_for_50_minutes_then_renewed(apns_standin):
    first = apns.provider_token(now=1_000_000.0)
    assert apns.provider_token(now=1_000_000.0 + 49 * 60) == first
    renewed = apns.provider_token(now=1_000_000.0 + 50 * 60)
    assert renewed != first
    header, claims = verify_jwt(renewed, apns_standin.key.public_key())
    assert header["alg"] == "ES256" and header["kid"] == apns_standin.key_id
    assert claims == {"iss": apns_standin.team_id, "iat": 1_000_000 + 50 * 60}


def test_apns_unreachable_is_a_failed_try(apns_standin, settings):
    apns_standin.close()
    with pytest.raises(PushFailed, match="unreachable"):
        send_apns(apns_standin)


def test_each_platform_is_off_until_configured(settings, fcm_standin):
    assert enabled_platforms() == {"fcm"}
    settings.FCM_SERVICE_ACCOUNT = {}
    assert enabled_platforms() == set()


def test_push_text_follows_the_device_locale_or_the_site_language():
    # The site's languages (settings.LANGUAGES: en, zh-hans); a phone's locale picks the closest.
    assert language_for("zh_CN") == "zh-hans"
    assert language_for("zh-Hans-CN") == "zh-hans"
    assert language_for("en-GB") == "en"
    assert language_for("pt_BR") == ""  # not offered: the site's language
    assert language_for("zz") == ""
    assert job_push_text("failed", locale="zz") == (
        "Your swap could not be made", "Nothing was charged. Open the app to see why."
    )
    assert job_push_text("failed", locale="zh_CN") == ("你的换脸未能完成", job_push_text("failed", locale="zh-hans")[1])
    assert job_push_text("failed", locale="zh_CN")[1] != "Nothing was charged. Open the app to see why."
