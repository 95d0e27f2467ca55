"""Blocked text: RapidOCR offline on rendered text, and NFKC/casefold matching (full-width too)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import rapidocr
from PIL import Image, ImageDraw, ImageFont

from moderation import ocr
from swap.inference.sessions import without_subnormal_weights
from tests.helpers.images import FONT, banner


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


def caption(rgb: np.ndarray, text: str, *, size: tuple[int, int], font_px: int) -> np.ndarray:
    """The photo scaled to `size` (w, h) with a white, black-outlined caption near the bottom, as
    memes and screenshots carry it. BGR."""
    image = Image.fromarray(rgb).convert("RGB").resize(size)
    ImageDraw.Draw(image).text(
        (size[0] // 10, size[1] - 2 * font_px),
        text,
        fill="white",
        font=ImageFont.truetype(FONT, font_px),
        stroke_width=max(1, font_px // 12),
        stroke_fill="black",
    )
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])


@pytest.mark.parametrize(("size", "font_px"), [((1920, 1080), 32), ((1920, 1080), 56), ((1080, 1920), 40)])
def test_blocked_caption_on_a_large_photo_is_caught_by_the_downscaled_detector(astronaut_rgb, size, font_px):
    # The detector sees the photo at VISAGE_OCR_MAX_SIDE (480): a 32 px caption on a 1920 px photo
    # is 8 px there, and still found and read.
    reader = ocr.get_reader()
    recognitions = reader.recognitions
    finding = ocr.check(
        caption(astronaut_rgb, "FORBIDDEN DEAL", size=size, font_px=font_px),
        role="target",
        blocked_terms=["forbidden"],
    )
    assert finding.outcome == "reject"
    assert finding.detail["matched_terms"] == ["forbidden"]
    assert reader.recognitions == recognitions + 1


def test_recogniser_runs_only_when_the_detector_found_text():
    from skimage import data

    reader = ocr.get_reader()
    cat = np.ascontiguousarray(data.chelsea()[:, :, ::-1])  # a photo without text
    calls, recognitions = reader.calls, reader.recognitions
    finding = ocr.check(cat, role="target", blocked_terms=["forbidden"])
    assert finding.outcome == "pass"
    assert finding.detail["text_lines"] == 0
    assert (reader.calls, reader.recognitions) == (calls + 1, recognitions)  # detector only

    finding = ocr.check(banner(data.chelsea(), "FORBIDDEN"), role="target", blocked_terms=["forbidden"])
    assert finding.outcome == "reject"
    assert (reader.calls, reader.recognitions) == (calls + 2, recognitions + 1)


def test_the_text_detector_runs_without_its_subnormal_weights_and_finds_the_same_text(astronaut_rgb):
    """RapidOCR's detection model file holds subnormal weights (~3.5x slower on a CPU); the reader
    runs it with them set to zero (swap.inference.sessions.without_subnormal_weights), and its text
    map for a captioned photo is the shipped model's, bit for bit."""
    reader = ocr.get_reader()
    detector = reader.engine.text_det
    (shipped,) = (Path(rapidocr.__file__).parent / "models").glob("*_det_*.onnx")
    flushed = without_subnormal_weights(shipped.read_bytes())  # rapidocr 3.10's: 255,958 of them
    assert detector.session.session._model_bytes == flushed  # what onnxruntime made it from
    original = onnxruntime.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])
    image = caption(astronaut_rgb, "FORBIDDEN DEAL", size=(480, 270), font_px=24)
    tensor = detector.get_preprocess()(image)
    text_map = detector.session.session.run(None, {"x": tensor})[0]
    assert np.array_equal(text_map, original.run(None, {"x": tensor})[0])
    assert (text_map > 0.3).sum() > 100  # the caption is in it
