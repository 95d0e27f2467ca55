"""ONNX adapters against generated stand-in models whose output is a known function of the input.

The assertions are on pasted-back pixels and decoded boxes, so a wrong channel order,
normalisation, alignment or batching shows up as wrong pixels.
"""

from __future__ import annotations

import numpy as np
import pytest

from swap import align
from swap.errors import ModelMissing, ModelRefused
from swap.models import registry
from swap.models import standins as fx
from swap.swappers.inswapper import read_emap, source_latent
from swap.types import Face
from tests.helpers.standin_inputs import (
    CPU,
    LATENT_0,
    CountingSession,
    emap_for,
    enhancer_frame,
    face_at,
    identity,
    points_64,
    textured_frame,
    yolo_rows,
)

pytestmark = pytest.mark.usefixtures("fresh_sessions")


@pytest.fixture
def source_embedding() -> np.ndarray:
    return np.random.default_rng(7).standard_normal(512).astype(np.float32) * 3


# --- inswapper ---------------------------------------------------------------------------------


@pytest.fixture
def swapper_dir(tmp_path, source_embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(source_embedding))
    return tmp_path


def expected_swap(frame: np.ndarray, offsets: list[tuple[int, int]]) -> np.ndarray:
    """What the stand-in must produce: inside each (integer-shifted) crop, R = 255 − B, G kept,
    B = 0.4 · 255, blended through FaceFusion's box mask."""
    result = frame.astype(np.float64)
    mask = align.box_mask(128)[..., None].astype(np.float64)
    for x, y in offsets:
        region = result[y : y + 128, x : x + 128]
        swapped = region.copy()
        swapped[..., 2] = 255.0 - region[..., 0]
        swapped[..., 0] = LATENT_0 * 255.0
        result[y : y + 128, x : x + 128] = region * (1 - mask) + swapped * mask
    return np.round(result)


OFFSETS = [(10, 10), (180, 20), (40, 180)]


def test_inswapper_pastes_known_pixels_in_bgr(swapper_dir, source_embedding):
    swapper = registry.load_adapter("inswapper_128", swapper_dir, CPU)
    frame = textured_frame()
    faces = [face_at("arcface_128", 128, x, y) for x, y in OFFSETS]
    result = swapper.swap(identity(source_embedding), frame, faces)
    assert result.shape == frame.shape and result.dtype == np.uint8
    assert np.abs(result.astype(int) - expected_swap(frame, OFFSETS)).max() <= 1
    # Face centre (mask 1): B = 0.4 · 255, G untouched, R = 255 − the frame's B.
    x, y = OFFSETS[0]
    b, g, _ = frame[y + 64, x + 64].tolist()
    assert result[y + 64, x + 64].tolist() == [102, g, 255 - b]
    # Far from every face nothing changed.
    np.testing.assert_array_equal(result[300:, 300:], frame[300:, 300:])
    # The input frame is never modified in place.
    assert not np.shares_memory(result, frame)


def test_inswapper_runs_all_faces_of_a_frame_in_one_batch(swapper_dir, source_embedding):
    swapper = registry.load_adapter("inswapper_128", swapper_dir, CPU)
    swapper.session = CountingSession(swapper.session)
    frame = textured_frame()
    faces = [face_at("arcface_128", 128, x, y) for x, y in OFFSETS]
    batched = swapper.swap(identity(source_embedding), frame, faces)
    assert swapper.session.batches == [3]

    one_by_one = frame
    for face in faces:
        one_by_one = swapper.swap(identity(source_embedding), one_by_one, [face])
    np.testing.assert_array_equal(batched, one_by_one)

    swapper.max_batch = 2
    swapper.session.batches.clear()
    np.testing.assert_array_equal(swapper.swap(identity(source_embedding), frame, faces), batched)
    assert swapper.session.batches == [2, 1]


def test_inswapper_with_fixed_batch_one_loops(tmp_path, source_embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(source_embedding), batch=1)
    swapper = registry.load_adapter("inswapper_128", tmp_path, CPU)
    swapper.session = CountingSession(swapper.session)
    frame = textured_frame()
    faces = [face_at("arcface_128", 128, x, y) for x, y in OFFSETS]
    result = swapper.swap(identity(source_embedding), frame, faces)
    assert swapper.session.batches == [1, 1, 1]
    assert np.abs(result.astype(int) - expected_swap(frame, OFFSETS)).max() <= 1


def test_inswapper_fp16_export(tmp_path, source_embedding):
    fx.make_inswapper(tmp_path / "inswapper_128_fp16.onnx", emap=emap_for(source_embedding), fp16_io=True)
    swapper = registry.load_adapter("inswapper_128_fp16", tmp_path, CPU)
    frame = textured_frame()
    result = swapper.swap(identity(source_embedding), frame, [face_at("arcface_128", 128, 10, 10)])
    assert np.abs(result.astype(int) - expected_swap(frame, [(10, 10)])).max() <= 1


def test_inswapper_no_faces_returns_a_copy(swapper_dir, source_embedding):
    swapper = registry.load_adapter("inswapper_128", swapper_dir, CPU)
    frame = textured_frame()
    result = swapper.swap(identity(source_embedding), frame, [])
    np.testing.assert_array_equal(result, frame)
    assert result is not frame


def test_inswapper_refuses_a_dlib_embedding(swapper_dir):
    from swap.errors import EngineError

    swapper = registry.load_adapter("inswapper_128", swapper_dir, CPU)
    with pytest.raises(EngineError, match="ArcFace"):
        swapper.swap(
            identity(np.ones(128, np.float32), kind="dlib128"),
            textured_frame(),
            [face_at("arcface_128", 128, 0, 0)],
        )


def test_emap_is_the_last_initializer_and_latent_is_not_renormalised(swapper_dir, source_embedding):
    emap = read_emap(swapper_dir / "inswapper_128.onnx")
    np.testing.assert_array_equal(emap, emap_for(source_embedding))
    latent = source_latent(source_embedding, emap)
    assert latent.shape == (1, 512)
    expected = (source_embedding @ emap) / np.linalg.norm(source_embedding)
    np.testing.assert_allclose(latent[0], expected, rtol=1e-5)
    assert latent[0, 0] == pytest.approx(LATENT_0, abs=1e-5)
    assert abs(np.linalg.norm(latent) - 1.0) > 0.1  # FaceFusion does not re-normalise


# --- arcface ---------------------------------------------------------------------------------


def test_arcface_feeds_rgb_scaled_to_minus_one_one(tmp_path):
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    recognizer = registry.load_adapter("arcface_w600k_r50", tmp_path, CPU)
    assert recognizer.embedding_kind == "arcface512"
    frame = np.zeros((300, 300, 3), np.uint8)
    frame[:, :150] = (10, 100, 200)  # BGR, left half
    frame[:, 150:] = (200, 50, 0)  # right half
    faces = [face_at("arcface_112_v2", 112, 10, 80), face_at("arcface_112_v2", 112, 170, 80)]
    embeddings = recognizer.embed(frame, faces)
    assert [e.shape for e in embeddings] == [(512,), (512,)]
    np.testing.assert_allclose(
        embeddings[0][:3], [200 / 127.5 - 1, 100 / 127.5 - 1, 10 / 127.5 - 1], atol=1e-4
    )
    np.testing.assert_allclose(embeddings[1][:3], [0 / 127.5 - 1, 50 / 127.5 - 1, 200 / 127.5 - 1], atol=1e-4)
    assert not embeddings[0][3:].any()
    assert recognizer.embed(frame, []) == []


# --- enhancers -----------------------------------------------------------------------------------


def expected_enhanced(frame: np.ndarray, x: int, y: int, red_out: float, blend: float) -> np.ndarray:
    mask = align.box_mask(512)[..., None].astype(np.float64)
    pasted = frame.astype(np.float64)
    region = pasted[y : y + 512, x : x + 512]
    restored = region.copy()
    restored[..., 2] = red_out
    pasted[y : y + 512, x : x + 512] = region * (1 - mask) + restored * mask
    pasted = np.round(pasted)
    return frame * (1 - blend) + pasted * blend


def test_gfpgan_restores_in_rgb_and_blends_at_80_percent(tmp_path):
    fx.make_gfpgan(tmp_path / "gfpgan_1.4.onnx")
    enhancer = registry.load_adapter("gfpgan_1.4", tmp_path, CPU)
    frame = enhancer_frame()
    face = face_at("ffhq_512", 512, 20, 30)
    result = enhancer.enhance(frame, [face], blend=0.8)
    # Stand-in sets R to −1 → 0 after de-normalisation; G and B survive the round trip exactly.
    assert np.abs(result.astype(int) - expected_enhanced(frame, 20, 30, 0.0, 0.8)).max() <= 1
    assert result[30 + 256, 20 + 256].tolist() == [*frame[30 + 256, 20 + 256, :2].tolist(), 40]
    np.testing.assert_array_equal(enhancer.enhance(frame, [face], blend=0.0), frame)
    assert enhancer.enhance(frame, [face], blend=1.0)[30 + 256, 20 + 256, 2] == 0


def test_codeformer_feeds_its_weight(tmp_path):
    fx.make_codeformer(tmp_path / "codeformer.onnx")
    enhancer = registry.load_adapter("codeformer", tmp_path, CPU)
    frame = enhancer_frame()
    face = face_at("ffhq_512", 512, 20, 30)
    result = enhancer.enhance(frame, [face], blend=0.8)  # weight 0.5 → R = 0 → 127.5 → 128
    assert np.abs(result.astype(int) - expected_enhanced(frame, 20, 30, 128.0, 0.8)).max() <= 1
    enhancer.weight = 1.0  # R = 1 → 255
    assert enhancer.enhance(frame, [face], blend=1.0)[30 + 256, 20 + 256, 2] == 255


def test_enhancer_batches_faces(tmp_path):
    fx.make_gfpgan(tmp_path / "gfpgan_1.4.onnx")
    enhancer = registry.load_adapter("gfpgan_1.4", tmp_path, CPU)
    enhancer.session = CountingSession(enhancer.session)
    frame = np.full((300, 600, 3), 200, np.uint8)
    faces = [face_at("ffhq_512", 512, 10, 10, 0.5), face_at("ffhq_512", 512, 300, 10, 0.5)]
    together = enhancer.enhance(frame, faces, blend=0.8)
    assert enhancer.session.batches == [2]
    # Faces don't overlap, so each face's pixels equal the single-face result.
    alone = enhancer.enhance(frame, faces[:1], blend=0.8)
    np.testing.assert_array_equal(together[:, :280], alone[:, :280])


# --- yoloface ----------------------------------------------------------------------------------


def detector(tmp_path):
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(yolo_rows()))
    return registry.load_adapter("yoloface_8n", tmp_path, CPU)


def bgr_frame(height: int, width: int) -> np.ndarray:
    frame = np.empty((height, width, 3), np.uint8)
    frame[:] = (230, 100, 20)  # B = 230 → anchor 0 scores 0.902; R would give 0.078
    return frame


def test_yoloface_decodes_boxes_through_the_letterbox(tmp_path):
    faces = detector(tmp_path).detect(bgr_frame(960, 1280))  # shrunk ×0.5 → ratio 2
    assert len(faces) == 2
    first, second = faces
    assert first.score == pytest.approx(230 / 255, abs=1e-5)
    np.testing.assert_allclose(first.box, [540, 280, 740, 520], atol=1e-3)
    np.testing.assert_allclose(first.landmarks_5[0], [600, 360], atol=1e-3)
    np.testing.assert_allclose(first.landmarks_5[4], [670, 450], atol=1e-3)
    assert first.landmarks_5.shape == (5, 2) and first.box.dtype == np.float32
    assert second.score == pytest.approx(0.7)
    np.testing.assert_allclose(second.box, [950, 550, 1050, 650], atol=1e-3)


def test_yoloface_small_frame_is_not_enlarged(tmp_path):
    faces = detector(tmp_path).detect(bgr_frame(480, 640))
    np.testing.assert_allclose(faces[0].box, [270, 140, 370, 260], atol=1e-3)


def test_yoloface_non_square_ratio(tmp_path):
    faces = detector(tmp_path).detect(bgr_frame(700, 1000))  # scale 0.64 → ratio 1.5625
    np.testing.assert_allclose(faces[0].box, np.array([270, 140, 370, 260]) * 1.5625, atol=1e-2)


def test_yoloface_reads_bgr(tmp_path):
    frame = bgr_frame(480, 640)[..., ::-1].copy()  # an RGB frame: anchor 0 falls below 0.5
    faces = detector(tmp_path).detect(frame)
    assert [round(f.score, 3) for f in faces] == [0.8, 0.7]


# --- 2dfan4 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("peak,rebuilt", [(0.9, True), (0.3, False)])
def test_2dfan4_maps_landmarks_back_and_rebuilds_the_5_points(tmp_path, peak, rebuilt):
    fx.make_2dfan4(tmp_path / "2dfan4.onnx", points_64(), peak=peak)
    landmarker = registry.load_adapter("2dfan4", tmp_path, CPU)
    frame = np.full((400, 400, 3), 128, np.uint8)
    detector_5 = np.float32([[150, 170], [250, 170], [200, 210], [160, 250], [240, 250]])
    faces = [
        Face(box=np.float32([100, 100, 300, 300]), score=0.9, landmarks_5=detector_5),
        Face(box=np.float32([20, 40, 120, 140]), score=0.8, landmarks_5=detector_5 / 2),
    ]
    refined = landmarker.refine(frame, faces)
    scale = 195 / 200
    translation = (256 - 400 * scale) / 2
    expected = (points_64() * 4 - translation) / scale
    np.testing.assert_allclose(refined[0].landmarks_68, expected, atol=1e-3)
    if rebuilt:
        five = refined[0].landmarks_5
        np.testing.assert_allclose(five[0], expected[36:42].mean(axis=0), atol=1e-3)
        np.testing.assert_allclose(five[1], expected[42:48].mean(axis=0), atol=1e-3)
        np.testing.assert_allclose(five[2:], expected[[30, 48, 54]], atol=1e-3)
    else:
        np.testing.assert_array_equal(refined[0].landmarks_5, detector_5)
    assert refined[1].landmarks_68.shape == (68, 2)
    assert faces[0].landmarks_68 is None  # inputs are not mutated


# --- registry ----------------------------------------------------------------------------------


def test_missing_model_raises_with_install_hint(tmp_path):
    with pytest.raises(ModelMissing) as raised:
        registry.load_adapter("inswapper_128", tmp_path, CPU)
    assert "python -m swap models fetch inswapper_128" in str(raised.value)
    assert raised.value.code == "model_missing"


def test_operator_can_refuse_non_commercial_models(tmp_path, monkeypatch, swapper_dir):
    monkeypatch.setenv("VISAGE_ALLOW_NON_COMMERCIAL", "0")
    with pytest.raises(ModelRefused, match="non-commercial"):
        registry.load_adapter("inswapper_128", swapper_dir, CPU)
    fx.make_gfpgan(tmp_path / "gfpgan_1.4.onnx")
    assert registry.load_adapter("gfpgan_1.4", tmp_path, CPU).name == "gfpgan_1.4"  # Apache-2.0


def test_manifest_lists_licences():
    models = registry.MODELS
    for name in (
        "inswapper_128",
        "inswapper_128_fp16",
        "arcface_w600k_r50",
        "yoloface_8n",
        "2dfan4",
        "gfpgan_1.4",
        "codeformer",
    ):
        assert name in models
    assert models["inswapper_128"].non_commercial and models["codeformer"].non_commercial
    assert not models["gfpgan_1.4"].non_commercial and "Apache" in models["gfpgan_1.4"].licence
    assert "GPL" in models["yoloface_8n"].licence
    assert models["inswapper_128"].template == "arcface_128"


# --- the whole ONNX chain through the core Pipeline ----------------------------------------------


def test_pipeline_picks_the_installed_onnx_models_and_loads_each_once(tmp_path, source_embedding):
    from swap.config import PipelineConfig
    from swap.inference.sessions import model_load_counts
    from swap.pipeline import Pipeline
    from swap.types import SwapOptions

    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(source_embedding))
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_gfpgan(tmp_path / "gfpgan_1.4.onnx")
    fx.make_2dfan4(tmp_path / "2dfan4.onnx", points_64(), peak=0.2)  # low score: keep the detector's 5
    kps = align.template_points("arcface_128", 128) * 1.5 + np.float32([100, 60])
    rows = [dict(anchor=0, cx=196, cy=156, w=192, h=192, score=0.9, kps=kps)]
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)

    config = PipelineConfig(models_dir=tmp_path, runtime=CPU)
    pipeline = Pipeline(config)
    assert pipeline.backends == {
        "detector": "yoloface_8n", "landmarker": "2dfan4", "recognizer": "arcface_w600k_r50",
        "swapper": "inswapper_128", "enhancer": "gfpgan_1.4",
    }  # fmt: skip
    loads = model_load_counts()
    Pipeline(config)  # a second pipeline in the same process reuses every session
    assert model_load_counts() == loads

    image = textured_frame(480, 640)
    result = pipeline.swap_frame(pipeline.prepare_source([image]), image, SwapOptions(enhance=True))
    assert (result.swapper, result.enhancer) == ("inswapper_128", "gfpgan_1.4")
    assert len(result.faces_used) == 1
    assert (result.image != image).any()
    np.testing.assert_array_equal(result.image[420:, 560:], image[420:, 560:])  # far from the face

    # Pixel boost through the pipeline's config: the same models, the face swapped at 256 px.
    from dataclasses import replace

    boosted = Pipeline(replace(config, pixel_boost=256))
    assert boosted.swapper.crop_size == 256
    boosted_result = boosted.swap_frame(boosted.prepare_source([image]), image, SwapOptions())
    assert (boosted_result.image != image).any()
    np.testing.assert_array_equal(boosted_result.image[420:, 560:], image[420:, 560:])
