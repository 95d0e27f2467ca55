"""The site's views without a browser: the no-JavaScript upload, the faces endpoint, sign-up credit, access."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import numpy as np
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from skimage import data as skdata

from billing import selectors as billing_selectors
from tests.helpers.images import encode
from webapp.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client_a(funded_user) -> Client:
    client = Client()
    client.force_login(funded_user)
    return client


def test_sign_up_gives_starting_credit_and_logs_in(client, settings):
    settings.SIGNUP_CREDITS = Decimal("20")
    response = client.post(
        "/signup/",
        {
            "username": "dora",
            "email": "",
            "password1": "a-long-pass-phrase-1",
            "password2": "a-long-pass-phrase-1",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/jobs/new/"
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username="dora")
    assert billing_selectors.account_balance(user=user).available == Decimal("20.00")
    assert client.get("/").status_code == 200


def test_visitors_get_the_landing_page_and_members_their_gallery(client, funded_user):
    landing = client.get("/")
    assert landing.status_code == 200
    body = landing.content.decode()
    assert "How it works" in body and 'href="/signup/"' in body and 'href="/login/"' in body
    assert 'id="prices"' in body and " credits</td>" in body  # priced from the default plan, in credits
    assert "Consent." in body and "AI-generated" in body
    client.force_login(funded_user)
    assert "Your swaps" in client.get("/").content.decode()


def test_sign_up_errors_are_shown_next_to_fields(client):
    response = client.post("/signup/", {"username": "dora", "password1": "x", "password2": "y"})
    assert response.status_code == 200
    assert b"field-error" in response.content and b"didn" in response.content  # "didn't match"


def test_pages_need_a_login(client):
    for path in ("/jobs/new/", "/account/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), path


def test_upload_without_javascript_creates_the_job(client_a, astronaut_pair):
    source, target, _ = astronaut_pair
    response = client_a.post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("face.png", source),
            "target": SimpleUploadedFile("photo.jpg", target),
            "mode": "fast",
            "resolution": "720p",
            "faces": "one",
            "consent": "on",
            "face_index": "",
        },
    )
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.id}/"
    assert (job.mode, job.face_index) == ("fast", None)


def test_upload_without_javascript_shows_errors_next_to_fields(client_a, astronaut_pair):
    source, _, _ = astronaut_pair
    response = client_a.post(
        "/jobs/new/",
        {
            "source": SimpleUploadedFile("face.png", source),
            "target": SimpleUploadedFile("notes.txt", b"hello"),
            "mode": "fast",
            "resolution": "720p",
            "faces": "one",
            "consent": "on",
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="target-error"' in html
    target_error = html.split('id="target-error"', 1)[1].split("</div>", 1)[0]
    assert "not a supported type" in target_error
    assert "choose them again" in html
    assert not Job.objects.exists()


def test_upload_page_accept_list_follows_the_video_flag(client_a, settings):
    settings.VIDEO_ENABLED = False
    html = client_a.get("/jobs/new/").content.decode()
    assert 'accept="image/jpeg,image/png,image/webp,image/heic,image/avif"' in html and "video/mp4" not in html
    settings.VIDEO_ENABLED = True
    html = client_a.get("/jobs/new/").content.decode()
    assert "image/avif,video/mp4" in html


def test_faces_endpoint_finds_the_astronaut_largest_first(client_a, astronaut_pair):
    _, target, (width, height) = astronaut_pair
    response = client_a.post("/api/v1/faces", {"image": SimpleUploadedFile("t.jpg", target)})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["width"], body["height"]) == (width, height)
    assert len(body["faces"]) >= 1
    x1, y1, x2, y2 = body["faces"][0]["box"]
    assert 0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height
    # The astronaut's face is in the upper half of the (mirrored) photo.
    assert y2 < height * 0.6
    areas = [(f["box"][2] - f["box"][0]) * (f["box"][3] - f["box"][1]) for f in body["faces"]]
    assert areas == sorted(areas, reverse=True)


def test_faces_endpoint_reports_no_faces_and_bad_files(client_a):
    response = client_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("c.jpg", encode(skdata.coffee(), "JPEG"))}
    )
    assert response.status_code == 200 and response.json()["faces"] == []
    response = client_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("x.jpg", b"not an image"), "field": "target"}
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "target" in response.json()["errors"]


def test_faces_endpoint_needs_a_login_and_csrf(astronaut_pair, funded_user):
    _, target, _ = astronaut_pair
    assert Client().post("/api/v1/faces", {"image": SimpleUploadedFile("t.jpg", target)}).status_code in (
        401,
        403,
    )
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(funded_user)
    assert strict.post("/api/v1/faces", {"image": SimpleUploadedFile("t.jpg", target)}).status_code == 403


def test_token_key_is_shown_once(client_a):
    response = client_a.post("/account/tokens", {"name": "CLI"}, follow=True)
    html = response.content.decode()
    assert "vsg_" in html and "Copy it now" in html
    assert "Copy it now" not in client_a.get("/account/").content.decode()


def test_queue_standing_counts_higher_priority_queues_first(funded_user, astronaut_pair):
    from django.utils import timezone

    from tests.webapp.conftest import api_client_for, post_job
    from webapp.jobs.selectors import queue_standings

    source, target, _ = astronaut_pair
    api = api_client_for(funded_user)
    ids = [post_job(api, source, target).json()["id"] for _ in range(3)]
    now = timezone.now()
    for offset, (job_id, queue) in enumerate(zip(ids, ["default", "default", "vip"], strict=True)):
        Job.objects.filter(id=job_id).update(
            state="queued", queue=queue, queued_at=now + timedelta(seconds=offset)
        )
    standings = queue_standings(list(Job.objects.all()))
    assert [standings[Job.objects.get(id=i).id].position for i in ids] == [2, 3, 1]
    assert (
        standings[Job.objects.get(id=ids[1]).id].eta_seconds
        >= standings[Job.objects.get(id=ids[0]).id].eta_seconds
    )


# --- several photos of the face ------------------------------------------------------------------


def _upload_form(source_files: list, target: bytes) -> dict:
    return {
        "source": source_files,
        "target": SimpleUploadedFile("photo.jpg", target),
        "mode": "fast",
        "resolution": "720p",
        "faces": "one",
        "consent": "on",
        "face_index": "",
    }


def test_upload_without_javascript_takes_several_source_photos(client_a, astronaut_pair, astronaut_rgb):
    source, target, _ = astronaut_pair
    second = encode(astronaut_rgb[:, ::-1].copy())  # another photo of the same person
    response = client_a.post(
        "/jobs/new/",
        _upload_form(
            [SimpleUploadedFile("face-1.png", source), SimpleUploadedFile("face-2.png", second)], target
        ),
    )
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.id}/"
    assert job.extra_sources.count() == 1
    assert client_a.get(f"/api/v1/jobs/{job.id}").json()["source"]["photos"] == 2
    assert "2 source photos" in client_a.get(f"/jobs/{job.id}/").content.decode()


def test_upload_without_javascript_refuses_too_many_source_photos(client_a, astronaut_pair, settings):
    settings.MAX_SOURCE_PHOTOS = 2
    source, target, _ = astronaut_pair
    photos = [SimpleUploadedFile(f"face-{i}.png", source) for i in range(3)]
    response = client_a.post("/jobs/new/", _upload_form(photos, target))
    assert response.status_code == 400
    html = response.content.decode()
    source_error = html.split('id="source-error"', 1)[1].split("</div>", 1)[0]
    assert "at most 2 photos" in source_error and "not 3" in source_error
    assert not Job.objects.exists()


def test_upload_page_offers_several_source_photos(client_a, settings):
    settings.MAX_SOURCE_PHOTOS = 4
    html = client_a.get("/jobs/new/").content.decode()
    source_input = html.split('id="id_source"', 1)[1].split(">", 1)[0]
    assert " multiple" in source_input and 'data-max-files="4"' in source_input
    assert "Add up to 4 photos of the same person for a better likeness." in html
    target_input = html.split('id="id_target"', 1)[1].split(">", 1)[0]
    assert "multiple" not in target_input
    settings.MAX_SOURCE_PHOTOS = 1
    html = client_a.get("/jobs/new/").content.decode()
    assert "multiple" not in html.split('id="id_source"', 1)[1].split(">", 1)[0]
    assert "for a better likeness" not in html


# --- the faces endpoint detects with the engine's detector ---------------------------------------


@pytest.fixture
def engine_detector_reset(tmp_path):
    """A fresh faces-endpoint detector; afterwards, only the sessions of this test's own models
    (under tmp_path) are dropped, never other tests' (the moderation models stay loaded)."""
    from swap.inference.sessions import clear_sessions
    from webapp.api.faces import reset_face_detector

    reset_face_detector()
    yield
    reset_face_detector()
    clear_sessions(under=tmp_path)


@pytest.mark.parametrize("requested", ["yoloface_8n", "auto"])
def test_faces_endpoint_uses_the_engines_detector(
    client_a, tmp_path, monkeypatch, engine_detector_reset, requested
):
    pytest.importorskip("onnxruntime")
    from swap.models import standins as fx
    from swap.pipeline import build_detector

    kps = [(300, 180), (340, 180), (320, 200), (305, 225), (335, 225)]
    rows = [
        dict(anchor=0, cx=500, cy=300, w=50, h=50, score=0.9, kps=[(500, 300)] * 5),  # smaller, surer
        dict(anchor=1, cx=320, cy=200, w=100, h=120, score=0.7, kps=kps),
    ]
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    monkeypatch.setenv("VISAGE_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("VISAGE_DETECTOR", requested)
    assert build_detector().name == "yoloface_8n"  # what the engine's Pipeline would pick

    # A plain image: dlib HOG finds no face in it; the stand-in model always "finds" its two boxes.
    image = encode(np.full((480, 640, 3), (20, 100, 230), np.uint8))
    response = client_a.post("/api/v1/faces", {"image": SimpleUploadedFile("plain.png", image)})
    assert response.status_code == 200, response.content
    faces = response.json()["faces"]
    assert [f["index"] for f in faces] == [0, 1]
    assert faces[0]["box"] == [270.0, 140.0, 370.0, 260.0]  # largest first, whatever the model's order
    assert faces[1]["box"] == [475.0, 275.0, 525.0, 325.0]
    assert faces[0]["score"] == 0.7


def test_faces_endpoint_falls_back_to_dlib_like_the_engine(tmp_path, monkeypatch, engine_detector_reset):
    from swap.pipeline import build_detector
    from webapp.api.faces import face_detector

    monkeypatch.setenv("VISAGE_MODELS_DIR", str(tmp_path))  # nothing installed
    monkeypatch.setenv("VISAGE_DETECTOR", "auto")
    monkeypatch.setenv("VISAGE_DETECT_MAX_SIDE", "777")
    detector = face_detector()
    assert detector is face_detector()  # one per process
    assert detector.name == build_detector().name == "dlib_hog"
    assert detector.primary.max_side == 777  # HOG inside the angle-retry wrapper


def test_upload_without_javascript_needs_the_consent_box(client_a, astronaut_pair):
    source, target, _ = astronaut_pair
    form = _upload_form([SimpleUploadedFile("face.png", source)], target)
    del form["consent"]
    response = client_a.post("/jobs/new/", form)
    assert response.status_code == 400 and not Job.objects.exists()
    html = response.content.decode()
    consent_error = html.split('id="consent-error"', 1)[1].split("</div>", 1)[0]
    assert "right to use the face" in consent_error
    assert 'id="consent" checked' not in html

    form = _upload_form([SimpleUploadedFile("face.png", source)], target)
    assert client_a.post("/jobs/new/", form).status_code == 302
    job = Job.objects.get()
    assert (job.consent_channel, job.consent_version) == ("site", settings.CONSENT_VERSION)
    # Consent is an act per submission: never pre-ticked, on the next upload or on "Run again".
    assert 'id="consent" checked' not in client_a.get("/jobs/new/").content.decode()
    Job.objects.filter(id=job.id).update(state="succeeded")
    page = client_a.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="again-consent"' in page and 'id="again-consent" checked' not in page
    form = _upload_form([SimpleUploadedFile("face.png", source)], target)
    del form["consent"]
    assert client_a.post("/jobs/new/", form).status_code == 400 and Job.objects.count() == 1
