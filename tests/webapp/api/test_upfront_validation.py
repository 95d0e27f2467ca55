"""Validation up front: what would fail on a worker, or cost web CPU, is refused at submit."""

from __future__ import annotations

import io
import json
import socket

import cv2
import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from tests.helpers.images import encode
from tests.helpers.problems import assert_problem
from tests.helpers.uploads import nothing_stored
from tests.webapp.conftest import post_job
from webapp.jobs.webhook_urls import WebhookRefused, check_webhook_url_at_submit
from webapp.jobs.webhooks import check_destination

pytestmark = pytest.mark.django_db(transaction=True)


def post_with_sources(client, source: bytes, target: bytes, count: int = 2, **fields):
    return client.post("/api/v1/jobs", {
        "source": [SimpleUploadedFile(f"s{i}.png", source) for i in range(count)],
        "target": SimpleUploadedFile("t.jpg", target),
        **fields,
    }, format="multipart")


# --- face_sources -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("face_sources", "message"),
    [
        ([{"face": True, "source": 0}], "whole numbers"),  # bool is an int in Python
        ([{"face": 0, "source": False}], "whole numbers"),
        ([{"face": 1.0, "source": 0}], "whole numbers"),
        ([{"face": "0", "source": 0}], "whole numbers"),
        ([{"face": 0, "source": 0, "extra": 1}], "whole numbers"),
        ([{"face": 64, "source": 0}], "numbered 0 to 63"),
        ([{"face": 10**30, "source": 0}], "numbered 0 to 63"),
        ([{"face": 0, "source": 5}], "at most 5 source photos"),
        ([{"face": i, "source": 0} for i in range(17)], "1 to 16"),
        ({"face": 0, "source": 0}, "1 to 16"),
    ],
)
def test_face_sources_are_strictly_typed_and_bounded(api_a, astronaut_pair, face_sources, message):
    source, target, _ = astronaut_pair
    response = post_with_sources(api_a, source, target, face_sources=json.dumps(face_sources))
    body = assert_problem(response, 400, "validation_error", field="face_sources")
    assert message in " ".join(body["errors"]["face_sources"])
    assert nothing_stored()


# --- webhook_url ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["ftp://example.com/hook", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)"]
)
def test_webhook_schemes_other_than_http_are_refused_at_submit(api_a, astronaut_pair, url):
    source, target, _ = astronaut_pair
    assert_problem(post_job(api_a, source, target, webhook_url=url), 400, "validation_error", field="webhook_url")
    assert nothing_stored()
    with pytest.raises(WebhookRefused):
        check_destination(url)  # the delivery refuses them by the same rule


PRIVATE_URLS = [
    "http://127.0.0.1/hook", "http://127.1/hook", "http://2130706433/hook", "http://0x7f000001/hook",
    "http://[::1]/hook", "http://[::ffff:127.0.0.1]/hook", "http://10.1.2.3/hook", "http://192.168.0.10:8080/",
    "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0/", "http://localhost:8000/hook",
    "http://api.localhost/hook", "http://metadata.google.internal/", "http://printer.local/",
    "http://redis:6379/", "http://minio.visage.svc/", "http://LOCALHOST./hook",
    # 169.254.169.254 through IPv6 gateways: NAT64 (well-known and local-use prefixes), 6to4,
    # Teredo (client bits inverted), IPv4-compatible; each is "global" IPv6 to the ipaddress module.
    "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "http://[::169.254.169.254]/",
    "http://[64:ff9b::10.0.0.1]/", "http://[2002:7f00:1::1]/",
    # Multicast: "global" IPv4 to the ipaddress module.
    "http://224.0.0.1/", "http://239.255.255.250:1900/", "http://[ff02::1]/", "http://[ff0e::1]/",
]


@pytest.mark.parametrize("url", PRIVATE_URLS)
def test_private_and_loopback_webhooks_are_refused_at_submit_without_dns(settings, monkeypatch, url):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: pytest.fail("no DNS lookup at submit"))
    with pytest.raises(WebhookRefused):
        check_webhook_url_at_submit(url)


@pytest.mark.parametrize("url", ["https://hooks.example.com/visage", "http://93.184.216.34:8080/x", "https://[2606:4700::1111]/"])
def test_public_webhooks_pass_at_submit_without_dns(settings, monkeypatch, url):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: pytest.fail("no DNS lookup at submit"))
    check_webhook_url_at_submit(url)


def test_private_webhook_is_a_400_at_submit_in_production(api_a, astronaut_pair, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    source, target, _ = astronaut_pair
    body = assert_problem(
        post_job(api_a, source, target, webhook_url="http://169.254.169.254/latest"), 400, "validation_error",
        field="webhook_url",
    )
    assert "private or loopback" in body["errors"]["webhook_url"][0]
    assert nothing_stored()


def test_private_webhooks_are_allowed_in_development(api_a, astronaut_pair, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    source, target, _ = astronaut_pair
    response = post_job(api_a, source, target, webhook_url="http://127.0.0.1:9/hook")
    assert response.status_code == 201, response.content


# --- /api/v1/faces ----------------------------------------------------------------------------------


def _gif(rgb: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="GIF")
    return buffer.getvalue()


def test_faces_refuses_what_jobs_refuse(api_a, astronaut_rgb):
    body = assert_problem(
        api_a.post("/api/v1/faces", {"image": SimpleUploadedFile("a.gif", _gif(astronaut_rgb))}, format="multipart"),
        400, "unsupported_media_type", field="image",
    )
    assert "JPEG, PNG, WebP, HEIC or AVIF" in body["detail"]
    heic = b"\x00\x00\x00\x18ftypheic" + b"\x00" * 64  # a HEIC photo's type, with no picture in it
    assert_problem(
        api_a.post("/api/v1/faces", {"image": SimpleUploadedFile("a.heic", heic), "field": "source"},
                   format="multipart"),
        400, "corrupt_image", field="source",
    )
    assert_problem(api_a.post("/api/v1/faces", {}, format="multipart"), 400, "missing_file", field="image")
    response = api_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("a.png", encode(astronaut_rgb)), "field": "elsewhere"},
        format="multipart",
    )
    assert_problem(response, 400, "validation_error", field="field")


def test_faces_on_a_large_photo_are_found_on_a_bounded_decode_and_reported_in_full_pixels(api_a, astronaut_rgb):
    """A 4096×4096 JPEG is decoded at 2048 px (libjpeg's own scaling); boxes come back in full-size pixels."""
    small = api_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("s.png", encode(astronaut_rgb))}, format="multipart"
    ).json()
    big = cv2.resize(astronaut_rgb, (4096, 4096), interpolation=cv2.INTER_CUBIC)
    response = api_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("b.jpg", encode(big, "JPEG", quality=90))}, format="multipart"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["width"], body["height"]) == (4096, 4096)
    assert len(body["faces"]) == len(small["faces"]) >= 1
    expected = np.array(small["faces"][0]["box"]) * 8  # 512 → 4096
    found = np.array(body["faces"][0]["box"])
    assert np.abs(found - expected).max() < 0.06 * 4096, (found, expected)


def test_faces_reports_the_displayed_size_of_a_rotated_photo(api_a, astronaut_rgb):
    wide = cv2.copyMakeBorder(astronaut_rgb, 0, 0, 0, 2500, cv2.BORDER_CONSTANT, value=(255, 255, 255))  # 3012×512
    rotated = np.ascontiguousarray(np.rot90(wide, 1))  # stored sideways (512×3012) …
    exif = Image.Exif()
    exif[0x0112] = 6  # … and displayed upright, 3012 wide
    buffer = io.BytesIO()
    Image.fromarray(rotated).save(buffer, format="JPEG", exif=exif, quality=92)
    body = api_a.post(
        "/api/v1/faces", {"image": SimpleUploadedFile("r.jpg", buffer.getvalue())}, format="multipart"
    ).json()
    assert (body["width"], body["height"]) == (3012, 512)
    x1, y1, x2, y2 = body["faces"][0]["box"]
    assert x2 < 512 and y2 <= 512  # the face is in the astronaut's part, at the left as displayed
