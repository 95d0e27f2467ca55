"""The landing page's drawing: its "AI-generated" pill holds its text, whatever font the phone has."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_pill_holds_its_text(new_page, live_server, artifacts, device):
    page = new_page(**(PHONE if device == "phone" else {"viewport": {"width": 1366, "height": 900}}))
    page.goto(f"{live_server.url}/")
    boxes = page.evaluate(
        """() => {
            const text = [...document.querySelectorAll(".hero-svg text")].find(t => t.textContent === "AI-generated");
            const pill = text.previousElementSibling;
            return {text: text.getBoundingClientRect().toJSON(), pill: pill.getBoundingClientRect().toJSON()};
        }"""
    )
    page.locator(".hero-art").screenshot(path=str(artifacts / f"landing-art-{device}.png"))
    text, pill = boxes["text"], boxes["pill"]
    assert text["width"] > 0, boxes
    assert pill["left"] <= text["left"] and text["right"] <= pill["right"], boxes
    assert pill["top"] <= text["top"] + 1 and text["bottom"] <= pill["bottom"] + 1, boxes
