"""The repository `python -m swap serve` hands to Triton, and its settings (no Triton needed)."""

from __future__ import annotations

import numpy as np
import pytest

from swap.config import PipelineConfig
from swap.models import standins as fx
from swap.models.repository import RepositoryError
from swap.serve import launcher


def test_stand_in_repository_is_the_standard_one_with_the_python_backend(tmp_path):
    """`swap serve` serves the layout `models repository` writes: same names, versions, parameters;
    only the backend differs (and its model.py sits next to every model.onnx)."""
    models, work = tmp_path / "models", tmp_path / "work"
    fx.make_inswapper(models / "inswapper_128.onnx")
    fx.make_inswapper(
        models / "inswapper_128" / "2" / "inswapper_128.onnx", emap=np.full((512, 512), 0.5, np.float32)
    )
    fx.make_gfpgan(models / "gfpgan_1.4.onnx")
    (work / "repository" / "leftover").mkdir(parents=True)  # an earlier start's model, uninstalled since
    batching = launcher.BatchingSettings(
        max_batch_size=8, preferred_batch_sizes=[4, 8], max_queue_delay_us=100
    )
    written = launcher.build_repository(models, work, batching=batching)

    assert written == {"inswapper_128": [1, 2], "gfpgan_1.4": [1]}
    repo = work / "repository"
    assert sorted(p.name for p in repo.iterdir()) == ["gfpgan_1_4", "inswapper_128", "inswapper_128_emap"]
    config = (repo / "inswapper_128" / "config.pbtxt").read_text()
    assert 'backend: "python"' in config and "onnxruntime_onnx" not in config
    assert "max_batch_size: 8" in config and "max_queue_delay_microseconds: 100" in config
    for version in ("1", "2"):
        folder = repo / "inswapper_128" / version
        assert (folder / "model.py").read_text() == launcher.SERVER_MODEL.read_text()
        assert (folder / "model.onnx").is_file()

    with pytest.raises(launcher.ServeError, match="codeformer is not installed"):
        launcher.build_repository(models, work, names=["codeformer"])
    with pytest.raises(launcher.ServeError, match="no installed models"):
        launcher.build_repository(tmp_path / "empty", work)


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
    with pytest.raises(RepositoryError, match="VISAGE_TRITON_MAX_BATCH must be an integer"):
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
