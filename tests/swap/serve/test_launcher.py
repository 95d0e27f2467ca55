"""The serve plan `python -m swap serve` hands to Triton, and its settings (no Triton needed)."""

from __future__ import annotations

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.models import standins as fx
from swap.serve import launcher
from swap.swappers.inswapper import read_emap


def test_plan_lists_every_installed_version_with_its_batching(tmp_path):
    models, work = tmp_path / "models", tmp_path / "work"
    emap_v2 = np.full((512, 512), 0.5, np.float32)
    fx.make_inswapper(models / "inswapper_128.onnx")
    fx.make_inswapper(models / "inswapper_128" / "2" / "inswapper_128.onnx", emap=emap_v2)
    fx.make_gfpgan(models / "gfpgan_1.4.onnx")
    batching = launcher.BatchingSettings(
        max_batch_size=8, preferred_batch_sizes=[4, 8], max_queue_delay_us=100
    )
    plan = launcher.build_plan(models, work, batching=batching, ports=(1, 2, 3))

    by_name = {m["name"]: m for m in plan["models"]}
    assert set(by_name) == {"inswapper_128", "gfpgan_1.4"}  # only what is installed
    swapper = by_name["inswapper_128"]
    assert [v["version"] for v in swapper["versions"]] == [1, 2]
    assert swapper["stable"] == 1 and swapper["max_batch_size"] == 8 and swapper["max_queue_delay_us"] == 100
    # Each version's emap travels to Triton (clients get it from there, per version).
    np.testing.assert_array_equal(np.load(swapper["versions"][1]["emap"]), emap_v2)
    np.testing.assert_array_equal(
        np.load(swapper["versions"][0]["emap"]), read_emap(models / "inswapper_128.onnx")
    )
    assert by_name["gfpgan_1.4"]["triton_name"] == "gfpgan_1_4"
    assert "emap" not in by_name["gfpgan_1.4"]["versions"][0]
    assert (plan["http_port"], plan["grpc_port"], plan["metrics_port"]) == (1, 2, 3)

    with pytest.raises(launcher.ServeError, match="codeformer is not installed"):
        launcher.build_plan(models, work, names=["codeformer"])


def test_batching_settings_from_env():
    settings = launcher.BatchingSettings.from_env(
        {
            "VISAGE_TRITON_MAX_BATCH": "8",
            "VISAGE_TRITON_PREFERRED_BATCH": "2,4,16",
            "VISAGE_TRITON_QUEUE_DELAY_US": "250",
        }
    )
    assert (settings.max_batch_size, settings.preferred_batch_sizes, settings.max_queue_delay_us) == (
        8,
        [2, 4],
        250,
    )
    assert launcher.BatchingSettings.from_env({"VISAGE_TRITON_BATCHING": "0"}).batching is False
    with pytest.raises(launcher.ServeError, match="VISAGE_TRITON_MAX_BATCH must be an integer"):
        launcher.BatchingSettings.from_env({"VISAGE_TRITON_MAX_BATCH": "lots"})


def test_pipeline_config_reads_the_inference_settings():
    config = PipelineConfig.from_env(
        {
            "VISAGE_INFERENCE": "triton",
            "VISAGE_TRITON_URL": "grpc://triton:8001",
            "VISAGE_CANARY_PERCENT": "5",
        }
    )
    assert (config.runtime.inference, config.runtime.triton_url, config.canary_percent) == (
        "triton",
        "grpc://triton:8001",
        5.0,
    )
    assert PipelineConfig.from_env({}).runtime.inference == "local"
    with pytest.raises(ValueError, match="VISAGE_INFERENCE must be 'local' or 'triton'"):
        PipelineConfig.from_env({"VISAGE_INFERENCE": "remote"})
