"""The result page draws results in their true shape and opens the before/after on the swapped face."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.webapp.site.conftest import log_in, stored_result_job

pytestmark = pytest.mark.django_db(transaction=True)

ALICE = {"username": "alice", "password": "alice-pass-123"}
VIEWPORTS = {
    "desktop": {"viewport": {"width": 1366, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2},
}
# (width, height, face box): the landscape size is the one once drawn stretched.
SHAPES = {
    "landscape": (1126, 661, (760, 180, 940, 380)),
    "portrait": (600, 900, (90, 120, 250, 300)),
    "square": (700, 700, (420, 300, 560, 460)),
}

MEASURE = """() => {
  const after = document.getElementById("result-image");
  const before = document.querySelector(".compare-before");
  const handle = document.querySelector(".compare-handle").getBoundingClientRect();
  const a = after.getBoundingClientRect(), b = before.getBoundingClientRect();
  return {natural: after.naturalWidth / after.naturalHeight, shown: a.width / a.height,
          after: [a.left, a.top, a.width, a.height], before: [b.left, b.top, b.width, b.height],
          handleX: handle.left + handle.width / 2, overflow: document.documentElement.scrollWidth - innerWidth};
}"""


@pytest.mark.parametrize("device", VIEWPORTS)
def test_results_keep_their_shape_and_the_slider_opens_on_the_face(new_page, live_server, funded_user, artifacts, device):
    page = new_page(**VIEWPORTS[device])
    log_in(page, live_server, **ALICE)
    for shape, (width, height, face) in SHAPES.items():
        job = stored_result_job(funded_user, width=width, height=height, face_box=face)
        page.goto(f"{live_server.url}/jobs/{job.id}/")
        page.wait_for_function("document.getElementById('result-image').naturalWidth > 0")
        page.wait_for_function("document.querySelector('.compare-before').naturalWidth > 0")
        m = page.evaluate(MEASURE)
        assert abs(m["shown"] / m["natural"] - 1) <= 0.01, (shape, device, m)
        assert all(abs(x - y) <= 1 for x, y in zip(m["after"], m["before"], strict=True)), (shape, device, m)
        assert m["overflow"] <= 0, (shape, device, m)
        # The split line opens on the swapped face, so both sides of the change are in view.
        left, _, shown_width, _ = m["after"]
        scale = shown_width / width
        assert left + face[0] * scale <= m["handleX"] <= left + face[2] * scale, (shape, device, m)
        expect(page.get_by_text("Before · original")).to_be_visible()
        expect(page.get_by_text("After · swapped")).to_be_visible()
        page.screenshot(path=artifacts / f"30-result-{shape}-{device}.png", full_page=True)


def test_slider_opens_in_the_middle_without_a_face_box(page, live_server, funded_user):
    job = stored_result_job(funded_user, width=800, height=500, face_box=None)
    log_in(page, live_server, **ALICE)
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    expect(page.get_by_role("slider", name="Before and after", exact=False)).to_have_value("50")
