"""Modes do different, documented work, and a result says which mode's work ran (what to charge)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.models import standins as fx
from swap.modes import mode_ran, plan_modes, requested_mode
from swap.pipeline import Pipeline
from swap.types import SwapOptions
from tests.helpers.standin_inputs import CPU, emap_for, points_64, textured_frame


def _md5(image: np.ndarray) -> str:
    return hashlib.md5(image.tobytes()).hexdigest()


@pytest.fixture(scope="module")
def source(pipeline, astronaut):
    return pipeline.prepare_source([astronaut])


def test_the_three_classical_modes_give_different_images_and_report_the_mode_that_ran(
    pipeline, source, other_face
):
    results = {
        mode: pipeline.swap_frame(source, other_face, SwapOptions(mode=mode))
        for mode in ("fast", "standard", "hq")
    }
    digests = {mode: _md5(r.image) for mode, r in results.items()}
    assert len(set(digests.values())) == 3, digests
    for mode, result in results.items():
        assert result.mode_requested == mode
        assert result.mode == mode  # the classical path can do each mode's own work everywhere
        assert result.mode_steps == pipeline.mode_capabilities()[mode].steps
        assert (result.image != other_face).any()
    # fast does less work: no Poisson solve, no region masks.
    assert "Poisson blend" in results["standard"].mode_steps
    assert "Poisson blend" not in results["fast"].mode_steps
    assert "multi-band (Laplacian pyramid) blend" in results["hq"].mode_steps


def test_legacy_enhance_flag_means_hq():
    assert requested_mode("standard", enhance=True) == "hq"
    assert requested_mode("fast", enhance=True) == "fast"
    assert requested_mode(None) == "standard"
    with pytest.raises(ValueError, match="unknown mode"):
        requested_mode("ultra")


def test_classical_hq_without_enhancer_still_does_more_than_standard():
    plans = plan_modes(swapper="classical", classical=True, enhancer=None)
    assert plans["hq"].runs_as == "hq" and plans["hq"].note is None
    assert set(plans["standard"].steps) - {"Poisson blend"} < set(plans["hq"].steps)
    with_enhancer = plan_modes(swapper="classical", classical=True, enhancer="gfpgan_1.4")
    assert with_enhancer["hq"].enhance and "face enhancer gfpgan_1.4" in with_enhancer["hq"].steps


def test_onnx_hq_without_enhancer_boosts_pixels_or_runs_as_standard():
    plans = plan_modes(swapper="inswapper_128", classical=False, enhancer=None, pixel_boost=128)
    assert (plans["fast"].pixel_boost, plans["standard"].pixel_boost, plans["hq"].pixel_boost) == (
        128,
        128,
        256,
    )
    assert plans["hq"].runs_as == "hq"
    maxed = plan_modes(swapper="inswapper_128", classical=False, enhancer=None, pixel_boost=512)
    assert maxed["hq"].runs_as == "standard"  # nothing more to do here: priced and reported as standard
    assert "same work as standard" in maxed["hq"].note
    enhanced = plan_modes(swapper="inswapper_128", classical=False, enhancer="gfpgan_1.4", pixel_boost=512)
    assert enhanced["hq"].runs_as == "hq" and enhanced["hq"].enhance


def test_onnx_modes_run_different_work_and_hq_is_reported_as_standard_when_it_cannot_do_more(tmp_path):
    embedding = np.random.default_rng(5).standard_normal(512).astype(np.float32)
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_2dfan4(tmp_path / "2dfan4.onnx", points_64(), peak=0.9)  # its 68 points rebuild the 5
    from swap import align

    kps = align.template_points("arcface_128", 128) * 1.5 + np.float32([100, 60])
    rows = [dict(anchor=0, cx=196, cy=156, w=192, h=192, score=0.9, kps=kps)]
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    image = textured_frame(480, 640)

    pipeline = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, enhancer="none"))
    identity = pipeline.prepare_source([image])
    results = {
        m: pipeline.swap_frame(identity, image, SwapOptions(mode=m)) for m in ("fast", "standard", "hq")
    }
    assert [results[m].mode for m in ("fast", "standard", "hq")] == ["fast", "standard", "hq"]
    assert results["fast"].timings_ms["landmarks"] == 0.0  # the detector's own points, no 2dfan4 run
    assert results["standard"].timings_ms["landmarks"] > 0.0
    assert len({_md5(r.image) for r in results.values()}) == 3

    maxed = Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, enhancer="none", pixel_boost=512))
    hq = maxed.swap_frame(identity, image, SwapOptions(mode="hq"))
    standard = maxed.swap_frame(identity, image, SwapOptions(mode="standard"))
    assert (hq.mode_requested, hq.mode) == ("hq", "standard")
    assert hq.mode_note and hq.enhancer_skipped_reason
    np.testing.assert_array_equal(hq.image, standard.image)  # same work, so the same price
    assert maxed.mode_capabilities()["hq"].runs_as == "standard"


def test_the_web_side_gets_the_same_plans_without_loading_models(pipeline, tmp_path):
    from swap.pipeline import mode_capabilities

    assert mode_capabilities(pipeline.config) == pipeline.mode_capabilities()
    embedding = np.random.default_rng(5).standard_normal(512).astype(np.float32)
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    config = PipelineConfig(models_dir=tmp_path, runtime=CPU, pixel_boost=512)
    plans = mode_capabilities(config)
    assert plans["hq"].runs_as == "standard"  # no enhancer, boost already at its largest
    assert plans == Pipeline(config).mode_capabilities()


def test_the_mode_that_ran_is_the_engines_report_else_hq_that_enhanced_nothing_is_standard():
    assert mode_ran("hq", reported=["standard"]) == "standard"
    assert mode_ran("hq", reported=[None, "fast"], enhanced=True) == "fast"  # the first that names a mode
    assert mode_ran("hq", reported=["bogus"], enhanced=False) == "standard"
    assert mode_ran("hq", enhanced=None) == "hq"  # not known: the mode asked for stands
    assert mode_ran("standard", enhanced=False) == "standard"
