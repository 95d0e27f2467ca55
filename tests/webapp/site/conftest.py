"""Browser fixtures: Debian's Chromium driven by Playwright against pytest-django's live server.

Without a Chromium binary these tests skip; install one with `apt-get install chromium` (CI does),
or point VISAGE_CHROMIUM at another Chromium/Chrome executable.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API keeps an event loop in this thread; the ORM calls the tests make between
# page actions are still plain synchronous code, so Django's async-context guard does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "site"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SKIP_MESSAGE = (
    "Browser tests need Chromium: install it with `apt-get install chromium` "
    "(or set VISAGE_CHROMIUM to a Chromium/Chrome executable)."
)


def chromium_path() -> str | None:
    candidates = [
        os.environ.get("VISAGE_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ]
    return next((c for c in candidates if c and Path(c).is_file() and os.access(c, os.X_OK)), None)


@pytest.fixture(scope="session")
def browser(playwright_loop_set_aside):
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI") == "true":  # CI must run them: a silent skip would hide a broken setup
            pytest.fail(SKIP_MESSAGE)
        pytest.skip(SKIP_MESSAGE)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Browser tests need the `playwright` Python package (pip install playwright).")
    from playwright.sync_api import expect

    # Assertions wait as long as actions (20 s, not Playwright's 5 s): the page waits on server-side
    # face detection, which a loaded 2-core CI machine can take seconds over. A deadline, not a speed test.
    expect.set_options(timeout=20_000)
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def _new_page(browser, **context_options):
    # Scripts Playwright evaluates (wait_for_function) are the test's, not the page's: the site's
    # Content-Security-Policy would refuse them as eval. tests/webapp/site/test_security_policy.py
    # loads the site with the policy enforced.
    context = browser.new_context(accept_downloads=True, **{"bypass_csp": True, **context_options})
    page = context.new_page()
    page.set_default_timeout(20_000)
    return context, page


@pytest.fixture
def new_page(browser) -> Iterator:
    """A factory of fresh pages (each in its own context, so cookies do not leak between users)."""
    contexts = []

    def make(**context_options):
        context, page = _new_page(browser, **{"viewport": {"width": 1280, "height": 860}, **context_options})
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()


@pytest.fixture
def astronaut_files(tmp_path, astronaut_pair) -> tuple[Path, Path]:
    source, target, _ = astronaut_pair
    source_path, target_path = tmp_path / "astronaut-face.png", tmp_path / "astronaut-target.jpg"
    source_path.write_bytes(source)
    target_path.write_bytes(target)
    return source_path, target_path


def log_in(page, live_server, *, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")


def stored_result_job(owner, *, width: int, height: int, face_box=None, created_at=None, state: str = "succeeded"):
    """A finished photo job whose result (width×height, a bright "face" square at `face_box`) is stored
    through the real hook, webapp.jobs.steps.common.store_result (result, before image, marked after preview, thumbnail).

    For layout tests that need results of exact shapes without running the engine each time.
    """
    import cv2
    import numpy as np
    from django.utils import timezone

    from webapp.jobs.models import Job, Upload
    from webapp.jobs.steps.common import store_result

    uploads = [
        Upload.objects.create(
            owner=owner, role=role, s3_key=f"{owner.id}/gone-{role}", sha256="0" * 64, media_type="image/jpeg",
            width=width, height=height, size_bytes=1, deleted_at=timezone.now(),
        )
        for role in ("source", "target")
    ]
    job = Job.objects.create(owner=owner, source=uploads[0], target=uploads[1], state=state)
    y, x = np.mgrid[0:height, 0:width]
    after = np.dstack([(x * 255 // max(1, width - 1)), (y * 255 // max(1, height - 1)), np.full_like(x, 90)]).astype(np.uint8)
    after = cv2.add(after, np.random.default_rng(len(str(job.id))).integers(0, 60, after.shape, dtype=np.uint8))
    before = after // 2
    boxes = []
    if face_box is not None:
        x1, y1, x2, y2 = face_box
        cv2.rectangle(after, (x1, y1), (x2, y2), (40, 200, 255), -1)
        cv2.circle(after, ((x1 + x2) // 2, (y1 + y2) // 2), max(4, (x2 - x1) // 5), (30, 30, 30), -1)
        cv2.rectangle(before, (x1, y1), (x2, y2), (200, 90, 40), -1)
        boxes = [list(face_box)]
    data = cv2.imencode(".jpg", after, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()
    key = store_result(job, data=data, media_type="image/jpeg", extension="jpg", before=before, unmarked=after,
                       face_boxes=boxes)
    Job.objects.filter(id=job.id).update(
        result_key=key, result_media_type="image/jpeg", result_bytes=len(data), result_visible=True,
        processed_width=width, processed_height=height, progress=100, frames_processed=1,
        engine_notes={"face_boxes": boxes}, completed_at=timezone.now(),
        **({"created_at": created_at} if created_at else {}),
    )
    return Job.objects.get(id=job.id)


def stored_video_job(owner, tmp_path: Path, *, width: int = 640, height: int = 360):
    """A finished video job (a short synthetic width×height MP4 with the astronaut) stored through the
    real hook, like stored_result_job: the page then shows the player and the middle-frame compare."""
    from django.utils import timezone
    from skimage import data as skdata

    from swap.video import synthetic
    from webapp.jobs.models import Job, Upload
    from webapp.jobs.steps.common import store_result

    path = tmp_path / "result.mp4"
    frames = synthetic.write_clip(
        path, synthetic.ClipSpec(width=width, height=height, fps=12, seconds=1.0, audio=False), skdata.astronaut()
    )
    uploads = [
        Upload.objects.create(
            owner=owner, role=role, s3_key=f"{owner.id}/gone-{role}", sha256="0" * 64,
            media_type="image/png" if role == "source" else "video/mp4",
            width=width, height=height, size_bytes=1, deleted_at=timezone.now(),
        )
        for role in ("source", "target")
    ]
    job = Job.objects.create(owner=owner, source=uploads[0], target=uploads[1], state="succeeded")
    middle = frames[len(frames) // 2][:, :, ::-1].copy()
    data = path.read_bytes()
    key = store_result(job, data=data, media_type="video/mp4", extension="mp4", before=middle // 2 + 40,
                       unmarked=middle, face_boxes=[])
    Job.objects.filter(id=job.id).update(
        result_key=key, result_media_type="video/mp4", result_bytes=len(data), result_visible=True,
        processed_width=width, processed_height=height, progress=100, frames_processed=len(frames),
        engine_notes={"face_boxes": []}, completed_at=timezone.now(),
    )
    return Job.objects.get(id=job.id)
