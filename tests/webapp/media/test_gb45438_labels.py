"""GB 45438-2025 labels (VISAGE_AIGC_LABELS with `gb45438`): the `AIGC` object in each format's
metadata, read back after C2PA signing; the explicit mark's text measured on pixels; the default
profile left as it was."""

from __future__ import annotations

import io
import json
import uuid
from fractions import Fraction

import av
import numpy as np
import pytest
from PIL import Image
from skimage import data as skdata

from swap.mark import MarkStyle, VisibleMark
from swap.video import io as video_io
from webapp.media import aigc, provenance

JOB = uuid.UUID("3f6c1a52-0d7e-4a43-9a36-0c8f4cc0d7a1")
FIELDS = [
    "Label",
    "ContentProducer",
    "ProduceID",
    "ReservedCode1",
    "ContentPropagator",
    "PropagateID",
    "ReservedCode2",
]
FORMATS = [("jpeg", "image/jpeg"), ("png", "image/png"), ("webp", "image/webp")]


def claim(media_type: str) -> provenance.ResultClaim:
    return provenance.ResultClaim(
        content_id=str(JOB),
        title=f"{JOB}.x",
        inputs_sha256=provenance.inputs_digest(["a" * 64]),
        target_sha256="b" * 64,
        target_media_type=media_type,
        engine={"name": "visage-swap", "version": "0.1.0"},
    )


@pytest.fixture
def gb(settings):
    settings.AIGC_LABELS = ["iptc", "c2pa", "gb45438"]
    settings.AIGC_PRODUCER = "91110000MA000000XX"
    return settings


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_each_image_format_carries_the_aigc_object_through_signing(gb, fmt, media_type):
    image = skdata.astronaut()[:, :, ::-1]
    encoded = aigc.encode_labelled(image, fmt=fmt, job_id=JOB)
    signed = provenance.sign(encoded, media_type=media_type, claim=claim(media_type))
    label = aigc.gb45438_label_of(signed)
    assert label is not None and list(label) == FIELDS
    assert label["Label"] == "1"
    assert label["ContentProducer"] == "91110000MA000000XX"
    assert label["ProduceID"] == str(JOB)
    assert label["ContentPropagator"] == "" and label["PropagateID"] == ""
    # both standards at once: IPTC's digital source type and a Content Credentials manifest that still validates
    assert aigc.IPTC_SOURCE_TYPE.encode() in signed and aigc.is_labelled(signed)
    assert provenance.read(signed, media_type=media_type).validation_state == "Trusted"


def test_a_configured_propagator_fills_the_propagation_fields(gb):
    gb.AIGC_PROPAGATOR = "app.example"
    label = aigc.gb45438_label_of(aigc.encode_labelled(skdata.astronaut(), fmt="jpeg", job_id=JOB))
    assert label["ContentPropagator"] == "app.example" and label["PropagateID"] == str(JOB)


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_the_default_profile_writes_no_gb_field(settings, fmt, media_type):
    assert settings.AIGC_LABELS == ["iptc", "c2pa"]
    encoded = aigc.encode_labelled(skdata.astronaut(), fmt=fmt, job_id=JOB)
    assert aigc.gb45438_label_of(encoded) is None and b"tc260" not in encoded.lower()
    assert aigc.is_labelled(encoded)
    assert aigc.visible_mark().style.text == "AI-generated"
    assert aigc.visible_mark().style.min_text_fraction == 0


def test_gb_only_drops_the_iptc_label_and_signing(settings):
    settings.AIGC_LABELS = ["gb45438"]
    encoded = aigc.encode_labelled(skdata.astronaut(), fmt="jpeg", job_id=JOB)
    assert aigc.gb45438_label_of(encoded)["ProduceID"] == str(JOB)
    assert aigc.IPTC_SOURCE_TYPE.encode() not in encoded
    assert provenance.sign(encoded, media_type="image/jpeg", claim=claim("image/jpeg")) is encoded


def test_an_mp4_carries_the_aigc_object_through_signing(gb, tmp_path):
    part = tmp_path / "part.mp4"
    with video_io.PartWriter(part, width=64, height=48, fps=Fraction(10), crf=30) as writer:
        for i in range(5):
            writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    joined = tmp_path / "joined.mp4"
    video_io.join_parts([part], joined, fps=Fraction(10), original=None, metadata=aigc.video_metadata(JOB))
    signed = provenance.sign_file(joined, media_type="video/mp4", claim=claim("video/mp4"))
    data = signed.read_bytes()
    label = aigc.gb45438_label_of(data)
    assert label is not None and list(label) == FIELDS and label["ProduceID"] == str(JOB)
    with av.open(io.BytesIO(data)) as container:  # the IPTC profile's comment tag is still beside it
        assert aigc.LABEL in container.metadata.get("comment", "")
    assert provenance.read(data, media_type="video/mp4").validation_state == "Trusted"


def inked_height(marked: np.ndarray, plain: np.ndarray) -> int:
    """Rows holding the mark's glyphs: pixels at least half way from the plate towards the text colour."""
    lum = marked.astype(np.float32).mean(axis=2)
    background = float(plain.mean())
    # over a light background the plate is dark (20) and the text light (245): glyph pixels are the
    # ones brighter than the untouched background
    rows = np.flatnonzero((lum > (background + 245) / 2).any(axis=1))
    return int(rows[-1] - rows[0] + 1) if rows.size else 0


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (720, 1280), (480, 300), (3000, 2000)])
@pytest.mark.parametrize("height_fraction", [0.10, 0.04])
def test_the_gb_mark_text_is_at_least_five_percent_of_the_shorter_side(
    settings, width, height, height_fraction
):
    settings.AIGC_LABELS = ["gb45438"]
    settings.MARK_HEIGHT_FRACTION = height_fraction
    mark = aigc.visible_mark()
    assert mark.style.text == "AI生成"
    plain = np.full((height, width, 3), 200, np.uint8)
    marked = mark.apply(plain)
    assert inked_height(marked, plain) >= 0.05 * min(width, height)
    x, y, w, h = mark.region(width, height)
    assert x + w > width * 0.9 and y + h > height * 0.9  # in the (bottom-right) corner
    changed = np.argwhere(np.abs(marked.astype(int) - plain).max(axis=2) > 0)
    assert changed[:, 0].min() >= y and changed[:, 1].min() >= x  # nothing outside the badge


def test_the_cjk_text_is_drawn_with_the_bundled_font_not_hershey():
    """Hershey has no CJK glyphs (OpenCV draws '?'): the CJK badge differs from the '??' one."""
    plain = np.full((300, 480, 3), 200, np.uint8)
    cjk = VisibleMark(MarkStyle(text="AI生成")).apply(plain)
    question = VisibleMark(MarkStyle(text="AI??")).apply(plain)
    assert np.abs(cjk.astype(int) - question).max() > 100


def test_a_label_profile_outside_the_list_is_refused():
    import os
    import subprocess
    import sys

    env = {**os.environ, "VISAGE_AIGC_LABELS": "iptc,gb45438x", "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True, text=True
    )
    assert done.returncode != 0 and "VISAGE_AIGC_LABELS" in done.stderr
    env["VISAGE_AIGC_LABELS"] = "iptc,c2pa,gb45438"
    assert subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env).returncode == 0


def test_the_aigc_object_is_json_with_the_standards_field_names(gb):
    xmp = aigc.xmp_packet(JOB).decode()
    assert aigc.TC260_NS in xmp
    value = aigc._gb_from_xmp(xmp)
    assert json.loads(json.dumps(value)) == aigc.gb45438_label(JOB)
    with Image.open(io.BytesIO(aigc.encode_labelled(skdata.astronaut(), fmt="png", job_id=JOB))) as image:
        assert aigc.TC260_NS in image.info["XML:com.adobe.xmp"]


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_an_encoded_result_keeps_its_colours_the_right_way_round(fmt, media_type):
    """encode_labelled takes the engine's BGR frame: a blue sky stays blue, a red face red."""
    frame = np.zeros((64, 96, 3), np.uint8)
    frame[:, :32] = (255, 0, 0)  # BGR blue
    frame[:, 32:64] = (0, 0, 255)  # BGR red
    frame[:, 64:] = (0, 255, 0)  # green
    with Image.open(io.BytesIO(aigc.encode_labelled(frame, fmt=fmt, job_id=JOB))) as image:
        rgb = np.asarray(image.convert("RGB")).astype(int)
    for column, expected in ((16, (0, 0, 255)), (48, (255, 0, 0)), (80, (0, 255, 0))):
        assert np.abs(rgb[32, column] - expected).max() <= 8, (fmt, column, rgb[32, column])
