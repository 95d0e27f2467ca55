"""Blocked-text check: RapidOCR (PP-OCR models shipped in the wheel) + an admin-edited term list.

OCR is the expensive check, so the image is downscaled to VISAGE_OCR_MAX_SIDE before detection
and the angle classifier is off (swap targets are photos, not scans). Detection and recognition
are called as two steps: the recogniser runs only on the boxes the detector found, and not at all
when it found none — a photo without text costs one small detector pass (`recognitions` counts
the recogniser's runs, so tests can prove it). Matching is NFKC + casefold on whole words, so
full-width "ＢＡＤ" matches "bad" and "bad" does not match inside "badge".
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from swap.config import RuntimeOptions
from swap.image_io import reduced
from swap.inference.sessions import get_model_session, record_model_load, without_subnormal_weights

from . import conf
from .findings import Finding


def normalise(text: str) -> str:
    """Width-, compatibility- and case-insensitive form; runs of whitespace become one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def matching_terms(texts: Iterable[str], terms: Iterable[str]) -> list[str]:
    """The blocked terms (as given) that occur as whole words in any of the texts."""
    haystacks = [normalise(text) for text in texts]
    found = []
    for term in terms:
        needle = normalise(term)
        if not needle:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)")
        # OCR often drops the spaces between words: also try the text and term without them.
        squeezed = re.compile(rf"{re.escape(needle.replace(' ', ''))}")
        if any(
            pattern.search(h) or (" " in needle and squeezed.search(h.replace(" ", ""))) for h in haystacks
        ):
            found.append(term)
    return found


class TextReader:
    def __init__(self, max_side: int) -> None:
        from rapidocr.main import RapidOCR, RapidOCRError  # noqa: PLC0415 - the moderation extra, absent from the web image (which imports this module); ~0.5 s

        self.max_side = max_side
        # limit_type "max" caps the detector input; the default ("min" 736) upscales small images.
        # One onnxruntime thread: OCR runs in its own thread beside face analysis, and RapidOCR's
        # sessions keep onnxruntime's spinning pool threads (its config cannot turn spinning off),
        # which on the 720p bench target doubled the CPU (104 vs 50 ms a read) for no shorter wall
        # time (52 vs 47 ms).
        self.engine = RapidOCR(
            params={
                "Global.log_level": "error",
                "Global.use_cls": False,
                "Det.limit_type": "max",
                "Det.limit_side_len": max_side,
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            }
        )
        # Its text detector's model file has subnormal weights that made it ~3.5x slower on the CPU
        # (105 against 30 ms a 720p target here): it runs the same model with them set to zero.
        # RapidOCR's session wrapper (made now, not at the first read): it runs `.session`.
        detector = self.engine._load_det_model().session
        detector.session = get_model_session(
            "rapidocr_det",
            without_subnormal_weights(Path(detector.session._model_path).read_bytes()),
            RuntimeOptions(providers=("CPUExecutionProvider",), intra_op_threads=1),
        )
        self._no_result = RapidOCRError  # what RapidOCR raises for "no text boxes" / "nothing read"
        self.calls = 0
        self.recognitions = 0
        record_model_load("rapidocr")

    def read(self, image_bgr: np.ndarray) -> list[tuple[str, float]]:
        """Every text line read, with the recogniser's confidence (the caller applies its minimum)."""
        self.calls += 1
        height, width = image_bgr.shape[:2]
        scale = self.max_side / max(height, width)
        if scale < 1:
            image_bgr = reduced(image_bgr, (round(width * scale), round(height * scale)))
        # RapidOCR's own __call__ runs these steps too; called one by one, the gate is ours to see.
        image, op_record = self.engine.preprocess_img(image_bgr)
        try:
            crops, _ = self.engine.detect_and_crop(image, op_record)
        except self._no_result:  # the detector found no text box: nothing to recognise
            return []
        self.recognitions += 1
        try:
            result = self.engine.recognize_txt(crops)
        except self._no_result:
            return []
        return [
            (text, float(score))
            for text, score in zip(result.txts, result.scores, strict=True)
            if text.strip()
        ]

    def warm_up(self) -> None:
        """Load the detector and the recogniser now: RapidOCR loads each lazily on first use."""
        canvas = Image.new("RGB", (256, 64), "white")
        ImageDraw.Draw(canvas).text((10, 20), "warm up", fill="black", font_size=24)
        self.read(np.asarray(canvas)[:, :, ::-1].copy())
        self.calls = self.recognitions = 0


_reader: TextReader | None = None
_lock = threading.Lock()


def get_reader() -> TextReader:
    global _reader
    with _lock:
        if _reader is None or _reader.max_side != conf.ocr_max_side():
            _reader = TextReader(conf.ocr_max_side())
        return _reader


def loaded() -> bool:
    return _reader is not None


def check(image_bgr: np.ndarray, *, role: str, blocked_terms: list[str]) -> Finding:
    started = time.perf_counter()
    if not conf.ocr_enabled():
        return Finding(
            check="ocr", role=role, outcome="disabled", detail={"status": "disabled (VISAGE_OCR_ENABLED)"}
        )
    if not blocked_terms:  # nothing to look for: don't pay for OCR
        return Finding(
            check="ocr", role=role, outcome="skipped", detail={"status": "no blocked terms configured"}
        )
    min_score = conf.ocr_min_score()
    lines = [(text, score) for text, score in get_reader().read(image_bgr) if score >= min_score]
    matched = matching_terms([text for text, _ in lines], blocked_terms)
    return Finding(
        check="ocr",
        role=role,
        outcome="reject" if matched else "pass",
        score=round(max((s for _, s in lines), default=0.0), 4),
        threshold=min_score,
        code="blocked_text" if matched else "",
        # The matched terms are the admin's own list; the read text itself stays out of the record.
        detail={"matched_terms": matched, "text_lines": len(lines)},
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
