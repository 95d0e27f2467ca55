"""Blocked text: RapidOCR offline on rendered text, and NFKC/casefold matching (full-width too)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from moderation import ocr

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def banner(rgb: np.ndarray, text: str | None) -> np.ndarray:
    """The image with a white banner at the bottom, carrying `text` (None: banner only). BGR."""
    image = Image.fromarray(rgb).convert("RGB")
    draw = ImageDraw.Draw(image)
    width, height = image.size
    draw.rectangle([0, height - 90, width, height], fill="white")
    if text:
        draw.text((20, height - 75), text, fill="black", font=ImageFont.truetype(FONT, 44))
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])


def test_matching_is_width_and_case_insensitive_on_whole_words():
    assert ocr.matching_terms(["ＢＡＤ ｗｏｒｄ here"], ["bad word"]) == ["bad word"]
    assert ocr.matching_terms(["ＢＡＤ"], ["bad"]) == ["bad"]
    assert ocr.matching_terms(["FORBIDDEN!"], ["ｆｏｒｂｉｄｄｅｎ"]) == ["ｆｏｒｂｉｄｄｅｎ"]
    assert ocr.matching_terms(["STRASSE"], ["straße"]) == ["straße"]  # casefold, not lower()
    assert ocr.matching_terms(["badge of honour"], ["bad"]) == []  # no match inside a word
    assert ocr.matching_terms(["BADWORD"], ["bad word"]) == ["bad word"]  # OCR dropped the space


def test_rendered_blocked_term_is_rejected_and_clean_image_passes(astronaut_rgb):
    terms = ["forbidden", "unrelated"]
    flagged = ocr.check(banner(astronaut_rgb, "FORBIDDEN DEAL"), role="target", blocked_terms=terms)
    assert flagged.outcome == "reject"
    assert flagged.code == "blocked_text"
    assert flagged.detail["matched_terms"] == ["forbidden"]
    clean = ocr.check(banner(astronaut_rgb, None), role="target", blocked_terms=terms)
    assert clean.outcome == "pass"


def test_no_terms_means_no_ocr_run(astronaut_rgb):
    reader = ocr.get_reader()
    before = reader.calls
    assert ocr.check(banner(astronaut_rgb, "FORBIDDEN"), role="target", blocked_terms=[]).outcome == "skipped"
    assert reader.calls == before


@pytest.mark.parametrize("enabled", [False])
def test_disabled_by_setting(settings, astronaut_rgb, enabled):
    settings.VISAGE_OCR_ENABLED = enabled
    assert ocr.check(banner(astronaut_rgb, "X"), role="target", blocked_terms=["x"]).outcome == "disabled"
