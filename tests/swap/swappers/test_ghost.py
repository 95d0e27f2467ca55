"""GHOST swappers and their crossface converter, on generated models with the real tensor layout.

The stand-in converter multiplies by a known matrix and the stand-in swapper writes source[0]
into R, keeps G and writes −R into B (in the (x − .5) / .5 scale), so the pixels say which
embedding reached `source`, the channel order, the normalisation and the alignment template.
"""

from __future__ import annotations

import numpy as np
import pytest

from swap import align
from swap.config import PipelineConfig
from swap.errors import ModelMissing
from swap.models import registry
from swap.models import standins as fx
from swap.pipeline import Pipeline
from swap.swappers import ghost
from swap.types import SwapOptions
from tests.helpers.standin_inputs import CPU, face_at, identity, points_64, textured_frame

CONVERTED_0 = 0.4  # the stand-in converter maps the test embedding's first value to this

pytestmark = pytest.mark.usefixtures("fresh_sessions")


@pytest.fixture
def embedding() -> np.ndarray:
    return np.random.default_rng(9).standard_normal(512).astype(np.float32) * 3


def converter_matrix(embedding: np.ndarray) -> np.ndarray:
    """Random, except column 0, which sends the raw `embedding` to CONVERTED_0 (and a normalised
    one, or the same one normalised after conversion, far from it)."""
    matrix = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32) * 0.05
    matrix[:, 0] = CONVERTED_0 * embedding / np.dot(embedding, embedding)
    return matrix


@pytest.fixture
def ghost_dir(tmp_path, embedding):
    fx.make_ghost(tmp_path / "ghost_1_256.onnx")
    fx.make_crossface(tmp_path / "crossface_ghost.onnx", converter_matrix(embedding))
    return tmp_path


def test_source_is_the_converted_raw_embedding_not_normalised(ghost_dir, embedding):
    swapper = registry.load_adapter("ghost_1_256", ghost_dir, CPU)
    assert swapper.converter.name == "crossface_ghost"
    source = swapper.source_input(embedding)
    assert source.shape == (1, 512) and source.dtype == np.float32
    np.testing.assert_allclose(source, embedding[None] @ converter_matrix(embedding), rtol=1e-4, atol=1e-5)
    assert source[0, 0] == pytest.approx(CONVERTED_0, abs=1e-5)
    assert np.linalg.norm(source) > 10  # not L2-normalised after the conversion


def test_ghost_swaps_its_arcface_112_v1_crop_in_rgb_scaled_to_minus_one_one(ghost_dir, embedding):
    swapper = registry.load_adapter("ghost_1_256", ghost_dir, CPU, pixel_boost=128)
    assert swapper.crop_size == 256  # the engine's "no boost" 128 is the model's own 256
    frame = np.random.default_rng(5).integers(0, 256, (400, 400, 3), dtype=np.uint8)
    x0, y0 = 60, 60
    face = face_at("arcface_112_v1", 256, x0, y0)  # on the template: the crop is frame[60:316, 60:316]
    out = swapper.swap(identity(embedding), frame, [face])

    crop = frame[y0 : y0 + 256, x0 : x0 + 256].astype(np.float64)
    swapped = np.empty_like(crop)
    swapped[..., 0] = 255 - crop[..., 2]  # B = −R_in, de-normalised: 1 − r
    swapped[..., 1] = crop[..., 1]  # G kept
    swapped[..., 2] = (CONVERTED_0 * 0.5 + 0.5) * 255  # R = converted source[0]
    mask = align.box_mask(256)[..., None]
    expected = crop * (1 - mask) + swapped * mask
    inner = align.box_mask(256) > 0.999
    diff = np.abs(out[y0 : y0 + 256, x0 : x0 + 256].astype(np.float64) - expected)[inner]
    assert diff.max() <= 1.0
    np.testing.assert_array_equal(out[:, :x0], frame[:, :x0])  # outside the crop: untouched
    np.testing.assert_array_equal(out[y0 + 256 :], frame[y0 + 256 :])

    louder = swapper.swap(identity(embedding * 2), frame, [face])  # raw: the scale reaches `source`
    assert abs(int(louder[188, 188, 2]) - (2 * CONVERTED_0 * 0.5 + 0.5) * 255) <= 1


def test_ghost_pixel_boost_and_batches(ghost_dir, embedding):
    swapper = registry.load_adapter("ghost_1_256", ghost_dir, CPU, pixel_boost=512)
    frame = textured_frame(640, 640)
    faces = [face_at("arcface_112_v1", 256, 20, 20), face_at("arcface_112_v1", 256, 330, 330)]
    out = swapper.swap(identity(embedding), frame, faces)
    assert out.shape == frame.shape
    for x, y in ((20, 20), (330, 330)):
        assert abs(int(out[y + 128, x + 128, 2]) - round((CONVERTED_0 * 0.5 + 0.5) * 255)) <= 1


def test_ghost_needs_its_converter(tmp_path):
    fx.make_ghost(tmp_path / "ghost_2_256.onnx")
    with pytest.raises(ModelMissing, match="crossface_ghost"):
        registry.load_adapter("ghost_2_256", tmp_path, CPU)


def test_manifest_lists_the_ghost_family_and_its_converter():
    models = registry.MODELS
    for name in ("ghost_1_256", "ghost_2_256", "ghost_3_256"):
        spec = models[name]
        assert (spec.kind, spec.adapter, spec.template, spec.input_size) == (
            "swapper", "ghost", "arcface_112_v1", (256, 256)
        )  # fmt: skip
        assert spec.requires == (ghost.CONVERTER,)
        assert "Apache-2.0" in spec.licence and not spec.non_commercial
        assert spec.url.endswith(f"/models-3.0.0/{name}.onnx") and spec.sha256 == ""
        assert name in registry.auto_order("swapper")
    converter = models[ghost.CONVERTER]
    assert (converter.kind, converter.adapter, converter.sha256) == ("converter", "crossface", "")
    assert converter.url.endswith("/models-3.4.0/crossface_ghost.onnx")
    for spec in models.values():  # every companion a model names exists
        assert all(name in models for name in spec.requires)


def _install_chain(models_dir, embedding, *, converter: bool = True) -> np.ndarray:
    """ghost_1_256 (+ its converter), arcface, 2dfan4 and a yoloface that finds one face whose 5
    points sit on the arcface_112_v1 template scaled to 192 px at (100, 60)."""
    fx.make_ghost(models_dir / "ghost_1_256.onnx")
    if converter:
        fx.make_crossface(models_dir / "crossface_ghost.onnx", converter_matrix(embedding))
    fx.make_arcface(models_dir / "arcface_w600k_r50.onnx")
    fx.make_2dfan4(models_dir / "2dfan4.onnx", points_64(), peak=0.2)  # low score: keep the detector's 5
    kps = align.template_points("arcface_112_v1", 256) * 0.75 + np.float32([100, 60])
    rows = [dict(anchor=0, cx=196, cy=156, w=192, h=192, score=0.9, kps=kps)]
    fx.make_yoloface(models_dir / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    return kps


def test_pipeline_swaps_with_ghost_inside_the_face_crop_only(tmp_path, embedding):
    _install_chain(tmp_path, embedding)
    pipeline = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU))  # auto: the installed swapper
    assert pipeline.backends["swapper"] == "ghost_1_256"
    assert pipeline.backends["recognizer"] == "arcface_w600k_r50"
    image = textured_frame(480, 640)
    result = pipeline.swap_frame(pipeline.prepare_source([image]), image, SwapOptions())
    assert result.swapper == "ghost_1_256" and len(result.faces_used) == 1
    changed = np.argwhere((result.image != image).any(axis=2))
    assert len(changed) > 192 * 192 // 2  # the face is swapped ...
    (top, left), (bottom, right) = changed.min(axis=0), changed.max(axis=0)
    assert 60 <= top and bottom < 60 + 192 and 100 <= left and right < 100 + 192  # ... and nothing else
    # The pipeline's source is the mean raw ArcFace embedding of the photo, fed through the converter.
    expected_source = pipeline.prepare_source([image]).embedding[None] @ converter_matrix(embedding)
    np.testing.assert_allclose(
        pipeline.swapper.source_input(pipeline.prepare_source([image]).embedding), expected_source, rtol=1e-4
    )


def test_pipeline_skips_ghost_without_its_converter_and_says_so_when_forced(tmp_path, embedding):
    _install_chain(tmp_path, embedding, converter=False)
    assert Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU)).swapper.name == "classical"
    with pytest.raises(ModelMissing, match="crossface_ghost"):
        Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, swapper="ghost_1_256"))
