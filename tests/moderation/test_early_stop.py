"""Cheapest first, stop at the first reject, across the two threads of screening: OCR beside the
face analysis. A reject on one side keeps the other from starting its next image."""

from __future__ import annotations

import threading
import uuid

import pytest

from moderation import identities, ocr, services
from moderation.models import BlockedTerm, CheckResult
from tests.helpers.images import banner, encode

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_nsfw_model(settings):
    settings.VISAGE_NSFW_MODEL = ""


def test_blocked_text_in_the_target_stops_face_analysis_before_the_target(astronaut_rgb, monkeypatch):
    BlockedTerm.objects.create(term="forbidden")
    source = encode(astronaut_rgb)
    target = encode(banner(astronaut_rgb, "FORBIDDEN DEAL")[:, :, ::-1].copy())
    ocr_finished = threading.Event()
    real_ocr_checks = services._ocr_checks

    def ocr_checks(*args, **kwargs):
        try:
            return real_ocr_checks(*args, **kwargs)
        finally:
            ocr_finished.set()

    monkeypatch.setattr(services, "_ocr_checks", ocr_checks)
    analyser, analysed = identities.get_analyser(), []

    def faces_for(position, pixels, embed):
        analysed.append(position)
        assert ocr_finished.wait(timeout=120)  # the source's analysis outlasts the target's OCR
        return analyser.faces(pixels)

    subject = uuid.uuid4()
    outcome = services.screen_inputs(subject_id=subject, source=source, target=target, faces_for=faces_for)
    assert (outcome.decision, outcome.code) == ("reject", "blocked_text")
    assert analysed == [0]  # the source only: the target's faces were never analysed
    checks = set(CheckResult.objects.filter(verdict__subject_id=subject).values_list("check_name", "role"))
    assert ("ocr", "target") in checks and ("identity", "source") in checks
    assert ("identity", "target") not in checks


def test_a_face_reject_stops_ocr_before_its_next_image(astronaut_rgb):
    pixels = banner(astronaut_rgb, "FORBIDDEN")
    images = [services._Image(f"frame {i}", pixels, str(i)) for i in range(3)]
    reader = ocr.get_reader()
    calls = reader.calls
    stop, rejected = threading.Event(), threading.Event()
    stop.set()
    assert services._ocr_checks(images, ["forbidden"], stop=stop, rejected=rejected) == []
    assert reader.calls == calls and not rejected.is_set()

    stop.clear()
    findings = services._ocr_checks(images, ["forbidden"], stop=stop, rejected=rejected)
    assert [f.outcome for f in findings] == ["reject"]  # the first frame rejects; the others are skipped
    assert reader.calls == calls + 1 and rejected.is_set()
