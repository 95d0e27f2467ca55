"""FaceFusion-parity masks and the 256-px swapper, on generated models with the real tensor layout."""

from __future__ import annotations

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.models import registry
from swap.models import standins as fx
from swap.pipeline import Pipeline
from tests.helpers.standin_inputs import CPU, emap_for, face_at, identity


@pytest.fixture
def embedding() -> np.ndarray:
    return np.random.default_rng(9).standard_normal(512).astype(np.float32) * 3


def test_xseg_reads_bgr_channels_last_and_softens_its_mask(tmp_path):
    fx.make_xseg(tmp_path / "xseg_1.onnx")
    occluder = registry.load_adapter("xseg_1", tmp_path, CPU)
    crops = np.zeros((2, 128, 128, 3), np.uint8)
    crops[:, :, :64, 0] = 255  # blue (channel 0 of BGR) on the left: "face"
    crops[1, :, :, 2] = 255  # red everywhere on the second crop: must not matter
    masks = occluder.masks(crops)
    assert masks.shape == (2, 128, 128) and masks.dtype == np.float32
    assert masks[:, 64, 20].min() == pytest.approx(1.0) and masks[:, 64, 110].max() == pytest.approx(0.0)
    assert 0.0 < masks[0, 64, 58] < 1.0  # blurred edge (sigma 5, clipped to [.5, 1], rescaled)


def test_bisenet_feeds_imagenet_normalised_rgb_and_keeps_the_chosen_regions(tmp_path):
    fx.make_bisenet(tmp_path / "bisenet_resnet_34.onnx")
    parser = registry.load_adapter("bisenet_resnet_34", tmp_path, CPU)
    crops = np.zeros((1, 96, 96, 3), np.uint8)
    crops[0, :48, :, 2] = 255  # red (channel 2 of BGR) on top: class 1, skin
    masks = parser.masks(crops)
    assert masks[0, 10, 48] == pytest.approx(1.0) and masks[0, 85, 48] == pytest.approx(0.0)
    nose_only = registry.load_adapter("bisenet_resnet_34", tmp_path, CPU, regions=("nose",))
    assert nose_only.masks(crops).max() == 0.0
    with pytest.raises(ValueError, match="unknown face regions"):
        registry.load_adapter("bisenet_resnet_34", tmp_path, CPU, regions=("beard",))


def _frame_with_occluded_right_half() -> np.ndarray:
    frame = np.random.default_rng(4).integers(0, 256, (300, 300, 3), dtype=np.uint8)
    frame[60:188, 60:124, 0] = 255  # xseg stand-in: blue = face
    frame[60:188, 124:188, 0] = 0  # ... no blue = something in front of the face
    return frame


def test_swapper_combines_box_and_occlusion_masks_except_in_fast_mode(tmp_path, embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_xseg(tmp_path / "xseg_1.onnx")
    swapper = registry.load_adapter("inswapper_128", tmp_path, CPU)
    swapper.maskers = [registry.load_adapter("xseg_1", tmp_path, CPU)]
    frame = _frame_with_occluded_right_half()
    face = face_at("arcface_128", 128, 60, 60)
    out = swapper.swap(identity(embedding), frame, [face])
    assert (out[124, 85] != frame[124, 85]).any()  # visible face: swapped
    np.testing.assert_array_equal(out[100:150, 140:180], frame[100:150, 140:180])  # occluded: kept
    fast = swapper.swap(identity(embedding), frame, [face], mode="fast")
    assert (fast[124, 160] != frame[124, 160]).any()  # fast: box mask only


def test_hyperswap_uses_the_normalised_embedding_and_its_256_crop(tmp_path, embedding):
    fx.make_hyperswap(tmp_path / "hyperswap_1a_256.onnx")
    swapper = registry.load_adapter("hyperswap_1a_256", tmp_path, CPU, pixel_boost=128)
    assert swapper.crop_size == 256  # the engine's "no boost" 128 is the model's own 256
    frame = np.random.default_rng(5).integers(0, 256, (400, 400, 3), dtype=np.uint8)
    face = face_at("arcface_128", 256, 60, 60)
    out = swapper.swap(identity(embedding), frame, [face])
    b, g, r = frame[188, 188].tolist()
    s0 = embedding[0] / np.linalg.norm(embedding)
    expected = [255 - r, g, round((s0 * 0.5 + 0.5) * 255)]  # BGR: B = 1 - R_in, G kept, R = source
    assert np.abs(out[188, 188].astype(int) - expected).max() <= 1
    scaled = swapper.swap(identity(embedding * 5), frame, [face])
    np.testing.assert_array_equal(out, scaled)  # the embedding is normalised: scale does not matter
    boosted = swapper.swap(identity(embedding), frame, [face], pixel_boost=512)
    assert boosted.shape == frame.shape


def test_pipeline_loads_installed_masks_for_an_onnx_swapper(tmp_path, embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_xseg(tmp_path / "xseg_1.onnx")
    fx.make_bisenet(tmp_path / "bisenet_resnet_34.onnx")
    pipeline = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU))
    assert pipeline.backends["masks"] == "xseg_1+bisenet_resnet_34"
    assert [m.name for m in pipeline.swapper.maskers] == ["xseg_1", "bisenet_resnet_34"]
    no_masks = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, occluder="none", face_parser="none"))
    assert "masks" not in no_masks.backends


def test_operator_chooses_xseg_2_or_3_and_auto_takes_the_first_installed(tmp_path, embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_xseg(tmp_path / "xseg_2.onnx")
    fx.make_xseg(tmp_path / "xseg_3.onnx")
    auto = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU))
    assert auto.backends["masks"] == "xseg_2"
    chosen = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, occluder="xseg_3"))
    assert chosen.backends["masks"] == "xseg_3"
    occluder = chosen.maskers[0]
    crops = np.zeros((1, 128, 128, 3), np.uint8)
    crops[:, :, :64, 0] = 255  # the xseg adapter's BGR channels-last input, as for xseg_1
    masks = occluder.masks(crops)
    assert masks[0, 64, 20] == pytest.approx(1.0) and masks[0, 64, 110] == pytest.approx(0.0)


def test_manifest_lists_the_xseg_family_with_their_reported_sizes():
    models = registry.MODELS
    sizes = {"xseg_1": 70_324_286, "xseg_2": 70_324_286, "xseg_3": 70_327_709}
    for name, size in sizes.items():
        spec = models[name]
        assert (spec.kind, spec.adapter, spec.input_size) == ("occluder", "xseg", (256, 256))
        assert spec.size_bytes == size and spec.sha256 == "" and "GPL-3.0" in spec.licence
        assert len([w for w in spec.notes.split() if len(w.strip(";,.")) == 64]) == 1  # reported SHA-256
    assert models["xseg_2"].url.endswith("/models-3.1.0/xseg_2.onnx")
    assert models["xseg_3"].url.endswith("/models-3.2.0/xseg_3.onnx")
    assert models["bisenet_resnet_34"].size_bytes == 93_632_546


def test_manifest_lists_the_mask_models_and_hyperswap_with_licences():
    models = registry.MODELS
    assert models["hyperswap_1a_256"].non_commercial and "RAIL" in models["hyperswap_1a_256"].licence
    assert models["hyperswap_1a_256"].input_size == (256, 256)
    assert "GPL" in models["xseg_1"].licence and models["xseg_1"].kind == "occluder"
    assert (
        models["bisenet_resnet_34"].kind == "parser"
        and "CelebAMask-HQ" in models["bisenet_resnet_34"].licence
    )
