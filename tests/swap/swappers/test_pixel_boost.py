"""inswapper pixel boost: the face aligned at k·128 px, swapped as k² interleaved 128-px tiles in one batch."""

from __future__ import annotations

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.models import registry
from swap.models import standins as fx
from swap.swappers.inswapper import explode_pixel_boost, implode_pixel_boost, source_latent
from tests.helpers.standin_inputs import CPU, LATENT_0, CountingSession, emap_for, face_at, identity


@pytest.fixture
def embedding() -> np.ndarray:
    return np.random.default_rng(7).standard_normal(512).astype(np.float32) * 3


@pytest.fixture
def models_dir(tmp_path, embedding):
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    return tmp_path


def test_implode_interleaves_pixels_and_explode_inverts_it():
    crops = np.random.default_rng(1).integers(0, 255, (2, 256, 256, 3), dtype=np.uint8)
    tiles = implode_pixel_boost(crops, 2)
    assert tiles.shape == (8, 128, 128, 3)
    # Tile (i, j) of face n holds pixels [i::2, j::2] of that face.
    np.testing.assert_array_equal(tiles[0], crops[0, 0::2, 0::2])
    np.testing.assert_array_equal(tiles[1], crops[0, 0::2, 1::2])
    np.testing.assert_array_equal(tiles[2], crops[0, 1::2, 0::2])
    np.testing.assert_array_equal(tiles[7], crops[1, 1::2, 1::2])
    np.testing.assert_array_equal(explode_pixel_boost(tiles, 2), crops)
    np.testing.assert_array_equal(explode_pixel_boost(implode_pixel_boost(crops, 4), 4), crops)


def test_boosted_swap_is_the_models_function_at_full_resolution_in_one_batch(models_dir, embedding):
    swapper = registry.load_adapter("inswapper_128", models_dir, CPU, pixel_boost=256)
    swapper.session = CountingSession(swapper.session)
    crops = np.random.default_rng(2).integers(0, 255, (3, 256, 256, 3), dtype=np.uint8)
    out = swapper.swap_crops(source_latent(embedding, swapper.emap), crops)
    assert out.shape == (3, 256, 256, 3)
    assert swapper.session.batches == [12]  # 3 faces × 4 tiles, one run
    # The stand-in is per pixel (B = latent[0], G = G, R = 1 − B in RGB terms), so a boosted swap must
    # equal that function applied to every pixel of the 256-px crop: nothing lost or misplaced.
    expected = np.empty_like(out)
    expected[..., 0] = LATENT_0 * 255.0
    expected[..., 1] = crops[..., 1]
    expected[..., 2] = 255.0 - crops[..., 0]
    np.testing.assert_allclose(out, expected, atol=0.01)


def test_boosted_swap_pastes_back_onto_the_frame(models_dir, embedding):
    swapper = registry.load_adapter("inswapper_128", models_dir, CPU, pixel_boost=256)
    frame = np.random.default_rng(3).integers(0, 255, (400, 400, 3), dtype=np.uint8)
    face = face_at("arcface_128", 256, 60, 60)
    result = swapper.swap(identity(embedding), frame, [face])
    b, g, _ = frame[60 + 128, 60 + 128].tolist()
    assert result[60 + 128, 60 + 128].tolist() == [102, g, 255 - b]  # face centre: mask 1
    np.testing.assert_array_equal(result[340:, 340:], frame[340:, 340:])  # far away: untouched


def test_pixel_boost_must_be_a_multiple_of_128(models_dir):
    with pytest.raises(ValueError, match="multiple of 128"):
        registry.load_adapter("inswapper_128", models_dir, CPU, pixel_boost=200)


def test_pixel_boost_comes_from_the_environment():
    assert PipelineConfig.from_env({"VISAGE_PIXEL_BOOST": "512"}).pixel_boost == 512
    assert PipelineConfig.from_env({}).pixel_boost == 128
