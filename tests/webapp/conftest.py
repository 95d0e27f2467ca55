"""Platform fixtures: an API client per user, the astronaut pair, and a real RQ worker that drains queues."""

from __future__ import annotations

import cv2
import django_rq
import numpy as np
import pytest
from django.conf import settings
from rest_framework.test import APIClient
from skimage import data as skdata

from swap.video import synthetic
from swap.video.synthetic import ClipSpec
from tests.helpers.images import encode
from webapp.accounts import services as account_services
from webapp.jobs.worker import VisageWorker
from webapp.media import storage

ALL_QUEUES = [settings.MODERATION_QUEUE, *settings.GPU_QUEUES, settings.WEBHOOK_QUEUE]


def two_face_target(astronaut_rgb) -> bytes:
    """The astronaut twice, side by side at two sizes: face 0 (largest) left, face 1 right (a JPEG)."""
    canvas = np.full((512, 900, 3), 235, np.uint8)
    canvas[:, :512] = astronaut_rgb
    small = cv2.resize(astronaut_rgb[:, ::-1], (384, 384))
    canvas[64:448, 516:900] = small
    return encode(canvas, "JPEG")


@pytest.fixture(scope="session")
def astronaut_rgb() -> np.ndarray:
    return skdata.astronaut()


@pytest.fixture(scope="session")
def astronaut_pair(astronaut_rgb) -> tuple[bytes, bytes, tuple[int, int]]:
    """(source PNG, target JPEG, target (width, height)): the target is a mirrored, rescaled, shifted copy."""
    target = cv2.flip(astronaut_rgb, 1)
    target = cv2.resize(target, (460, 430), interpolation=cv2.INTER_AREA)
    shift = np.float32([[1, 0, 12], [0, 1, 8]])
    target = cv2.warpAffine(target, shift, (460, 430), borderMode=cv2.BORDER_REFLECT)
    return encode(astronaut_rgb), encode(target, "JPEG", quality=92), (460, 430)


@pytest.fixture(autouse=True)
def clean_redis_and_buckets():
    """Every test starts with empty queues and buckets (the servers live for the whole session)."""
    django_rq.get_connection("default").flushdb()
    storage.ensure_buckets()
    for bucket in (settings.S3_UPLOADS_BUCKET, settings.S3_RESULTS_BUCKET):
        for key in storage.list_keys(bucket):
            storage.delete(bucket, key)
    yield


def drain(queues: list[str] | None = None) -> None:
    """A real RQ worker (the same class the service runs), in burst mode, in this process."""
    names = queues or ALL_QUEUES
    worker = VisageWorker([django_rq.get_queue(n) for n in names], connection=django_rq.get_connection(names[0]))
    try:
        worker.work(burst=True)
    finally:
        # A worker that died with its Redis (chaos tests) leaves its command listener running.
        # stop() joins the thread (redis-py 8): bounded, as VisageWorker.unsubscribe bounds it.
        if worker.pubsub_thread is not None and worker.pubsub_thread.is_alive():
            worker.pubsub_thread.stop(timeout=1)


@pytest.fixture
def fcm_standin(settings):
    """FCM on: a stand-in token endpoint and send endpoint that verify every request."""
    from tests.helpers.push_standins import FcmStandIn

    stand_in = FcmStandIn()
    settings.FCM_SERVICE_ACCOUNT = stand_in.service_account
    settings.FCM_URL = stand_in.url
    yield stand_in
    stand_in.close()


@pytest.fixture
def apns_standin(settings):
    """APNs on: a stand-in HTTP/2 server that verifies the provider token, headers and payload."""
    from tests.helpers.push_standins import ApnsStandIn

    stand_in = ApnsStandIn()
    settings.APNS_KEY = stand_in.p8
    settings.APNS_KEY_ID = stand_in.key_id
    settings.APNS_TEAM_ID = stand_in.team_id
    settings.APNS_TOPIC = [stand_in.topic]
    settings.APNS_URL = stand_in.url
    yield stand_in
    stand_in.close()


def api_client_for(user) -> APIClient:
    _, key = account_services.api_token_create(user=user, name="tests")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def api_a(funded_user) -> APIClient:
    return api_client_for(funded_user)


@pytest.fixture
def api_b(user_b) -> APIClient:
    from decimal import Decimal

    from billing import services as billing_services

    billing_services.account_top_up(user=user_b, amount=Decimal("1000"), actor=None, reason="test funding")
    return api_client_for(user_b)


def post_job(client: APIClient, source: bytes, target: bytes, **fields):
    files = {
        "source": _upload("source.png", source),
        "target": _upload("target.jpg", target),
    }
    headers = fields.pop("headers", {})
    fields.setdefault("consent", "true")  # every upload states the right to use the face
    if fields["consent"] is None:
        del fields["consent"]
    return client.post("/api/v1/jobs", {**files, **fields}, format="multipart", headers=headers)


def _upload(name: str, content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)


# --- video clips -------------------------------------------------------------------------------------

# A 2 s 256×256 12 fps clip of the astronaut moving across a background, with a sine tone.
VIDEO_SPEC = ClipSpec(width=256, height=256, fps=12, seconds=2.0, audio=True)


@pytest.fixture(scope="module")
def source_png() -> bytes:
    """The mirrored astronaut, so a swap visibly changes the astronaut in the clip."""
    return encode(skdata.astronaut()[:, ::-1].copy())


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("video") / "clip.mp4"
    synthetic.write_clip(path, VIDEO_SPEC, skdata.astronaut())
    return path.read_bytes()
