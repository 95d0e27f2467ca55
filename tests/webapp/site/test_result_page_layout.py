"""The result page on a desktop and on a phone: a video's player fills the column, its middle-frame
compare keeps its shape, and no label (the "AI-generated" pill, the Before/After tags) covers
another or the badge burnt into the result."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.webapp.site.conftest import log_in, stored_result_job, stored_video_job
from webapp.media import aigc

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
VIEWPORTS = {
    "desktop": {"viewport": {"width": 1366, "height": 900}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
}

MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const after = document.getElementById("result-image");
  const video = document.querySelector("video.result-media");
  return {
    inner: innerWidth,
    overflow: document.documentElement.scrollWidth - innerWidth,
    stage: box(document.querySelector(".result-stage")),
    video: video ? box(video) : null,
    after: box(after), natural: [after.naturalWidth, after.naturalHeight],
    labels: [...document.querySelectorAll(".result-stage .aigc-label, .result-stage .compare-tag")].map(
      (el) => [el.className, box(el)]),
  };
}"""


def _overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _burnt_mark(m) -> list[float]:
    """Where the visible badge is drawn on the page (its region in the picture, scaled as shown)."""
    (nw, nh), (left, top, width, height) = m["natural"], m["after"]
    x, y, w, h = aigc.visible_mark().region(nw, nh)
    sx, sy = width / nw, height / nh
    return [left + x * sx, top + y * sy, w * sx, h * sy]


def _check_labels(m, where) -> None:
    boxes = [*m["labels"], ("burnt-in mark", _burnt_mark(m))]
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1 :]:
            assert not _overlap(a, b), (where, name_a, a, name_b, b)


@pytest.mark.parametrize("device", VIEWPORTS)
def test_a_video_result_page_fits_the_screen(new_page, live_server, funded_user, tmp_path, artifacts, device):
    job = stored_video_job(funded_user, tmp_path, width=640, height=360)
    page = new_page(**VIEWPORTS[device])
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.wait_for_function("document.querySelector('video.result-media').readyState >= 1")
    page.wait_for_function("document.getElementById('result-image').naturalWidth > 0")
    m = page.evaluate(MEASURE)
    page.screenshot(path=artifacts / f"40-video-result-{device}.png", full_page=True)
    assert m["overflow"] <= 0, m
    stage_width = m["stage"][2]
    # The player fills the result's column (on a phone, nearly the whole screen), in its own shape.
    video_width, video_height = m["video"][2], m["video"][3]
    assert video_width >= 0.9 * stage_width, m
    if device == "phone":
        assert video_width >= 0.9 * m["inner"], m
    assert abs(video_width / video_height - 640 / 360) < 0.02, m
    # The middle frame's compare is as wide as the column allows (640 px or the column) and not squeezed.
    after_width, after_height = m["after"][2], m["after"][3]
    assert after_width >= min(640, 0.9 * stage_width) - 1, m
    assert abs(after_width / after_height - 640 / 360) < 0.02, m
    _check_labels(m, device)


@pytest.mark.parametrize("device", VIEWPORTS)
def test_a_photo_result_page_labels_cover_nothing(new_page, live_server, funded_user, artifacts, device):
    job = stored_result_job(funded_user, width=1126, height=661, face_box=(760, 180, 940, 380))
    page = new_page(**VIEWPORTS[device])
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.wait_for_function("document.getElementById('result-image').naturalWidth > 0")
    m = page.evaluate(MEASURE)
    page.screenshot(path=artifacts / f"41-photo-result-{device}.png", full_page=True)
    assert m["overflow"] <= 0, m
    _check_labels(m, device)


SIDES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const after = document.getElementById("result-image");
  const handle = document.querySelector(".compare-handle").getBoundingClientRect();
  return {after: box(after), natural: [after.naturalWidth, after.naturalHeight],
          pill: box(document.querySelector(".compare .aigc-label")), handleX: handle.left + handle.width / 2};
}"""


def _region_png(page, box) -> np.ndarray:
    left, top, width, height = box
    shot = page.screenshot(clip={"x": left, "y": top, "width": width, "height": height})
    return np.asarray(Image.open(io.BytesIO(shot)).convert("RGB"), dtype=np.int16)


@pytest.mark.parametrize("device", VIEWPORTS)
@pytest.mark.parametrize("shape", ["landscape", "square"])
def test_the_ai_pill_labels_the_swapped_side_and_nothing_hides_the_burnt_badge(
    new_page, live_server, funded_user, artifacts, device, shape
):
    # Faces at the right, in the badge's columns (the badge is burnt in at the bottom-right).
    width, height, face = {"landscape": (1126, 661, (760, 180, 940, 380)), "square": (700, 700, (420, 300, 560, 460))}[shape]
    job = stored_result_job(funded_user, width=width, height=height, face_box=face)
    page = new_page(**VIEWPORTS[device])
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.wait_for_function("[...document.querySelectorAll('.compare img')].every((img) => img.naturalWidth > 0)")
    m = page.evaluate(SIDES)
    page.screenshot(path=artifacts / f"42-compare-{shape}-{device}.png", full_page=True)
    after_left, after_top, after_width, after_height = m["after"]
    pill_left, pill_top, pill_width, pill_height = m["pill"]
    # The "AI-generated" pill is over the swapped (After) side only: right of the line, on the picture.
    assert m["handleX"] <= pill_left and pill_left + pill_width <= after_left + after_width, (device, m)
    assert after_top <= pill_top and pill_top + pill_height <= after_top + after_height, (device, m)
    # The badge burnt into the result looks the same with the original's side, the line and the
    # labels taken away: nothing of them is drawn over it.
    # Where it opens, and with the line inside the badge's columns.
    mark = _burnt_mark(m)
    shown = [_region_png(page, mark)]
    page.evaluate("""() => { const r = document.getElementById("compare-range");
                           r.value = 90; r.dispatchEvent(new Event("input")); }""")
    handle_x = page.evaluate("(() => { const r = document.querySelector('.compare-handle').getBoundingClientRect(); return r.left + r.width / 2; })()")
    assert mark[0] < handle_x < mark[0] + mark[2], (device, mark, handle_x)
    shown.append(_region_png(page, mark))
    page.add_style_tag(content=".compare-before, .compare-handle, .compare-side { visibility: hidden; }")
    bare = _region_png(page, mark)
    for where, region in zip(("opening", "line on the badge"), shown, strict=True):
        assert np.abs(region - bare).mean() < 2, (device, where, float(np.abs(region - bare).mean()))
