"""`python -m swap models repository`: a standard Triton model repository (configs parsed as
Triton's own ModelConfig protobuf; no Triton server needed)."""

from __future__ import annotations

import os
import stat

import numpy as np
import onnxruntime as ort
import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from swap.models import cli, versions
from swap.models import standins as fx
from swap.swappers.inswapper import read_emap
from tests.helpers.standin_inputs import emap_for, yolo_rows
from tests.helpers.triton_models import EMBEDDING


def _config(path) -> model_config_pb2.ModelConfig:
    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())


@pytest.fixture
def models(tmp_path):
    models = tmp_path / "models"
    fx.make_inswapper(models / "inswapper_128.onnx", emap=emap_for(EMBEDDING))
    fx.make_inswapper(
        models / "inswapper_128" / "2" / "inswapper_128.onnx", emap=np.full((512, 512), 0.5, np.float32)
    )
    fx.make_codeformer(models / "codeformer.onnx")
    fx.make_yoloface(models / "yoloface_8n.onnx", fx.yoloface_table(yolo_rows()))
    fx.make_gfpgan(models / "gfpgan_1.4.onnx")
    return models


def test_repository_of_the_installed_models_parses_as_triton_model_configs(models, tmp_path, capsys):
    out = tmp_path / "repo"
    assert cli.main(["models", "--models-dir", str(models), "repository", "--out", str(out)]) == 0
    assert "inswapper_128: versions 1, 2" in capsys.readouterr().out

    names = sorted(p.name for p in out.iterdir())
    assert names == ["codeformer", "gfpgan_1_4", "inswapper_128", "inswapper_128_emap", "yoloface_8n"]
    configs = {name: _config(out / name / "config.pbtxt") for name in names}
    for name, config in configs.items():
        assert config.name == name  # every file parsed, names match their folders
        assert config.platform == "onnxruntime_onnx"
        # One instance per GPU; the constant emap model needs none (a CPU instance).
        kind = "KIND_CPU" if name.endswith("_emap") else "KIND_GPU"
        assert [g.kind for g in config.instance_group] == [
            model_config_pb2.ModelInstanceGroup.Kind.Value(kind)
        ]
        assert config.version_policy.WhichOneof("policy_choice") == "all"
        assert (stat.S_IMODE(os.stat(out / name / "config.pbtxt").st_mode)) == 0o644

    swapper = configs["inswapper_128"]
    assert swapper.max_batch_size == 16
    assert list(swapper.dynamic_batching.preferred_batch_size) == [4, 8, 16]
    assert swapper.dynamic_batching.max_queue_delay_microseconds == 5000
    assert [(i.name, list(i.dims), i.data_type) for i in swapper.input] == [
        ("target", [3, 128, 128], model_config_pb2.TYPE_FP32),
        ("source", [512], model_config_pb2.TYPE_FP32),
    ]
    parameters = {k: v.string_value for k, v in swapper.parameters.items()}
    assert parameters["visage_name"] == "inswapper_128" and parameters["versions"] == "1,2"
    assert parameters["stable"] == "1" and parameters["emap_model"] == "inswapper_128_emap"
    assert parameters["non_commercial"] == "true" and "non-commercial" in parameters["licence"]
    assert parameters["input_size"] == "128x128" and parameters["template"] == "arcface_128"
    assert configs["gfpgan_1_4"].parameters["visage_name"].string_value == "gfpgan_1.4"

    # Version folders under one name, each with its own file.
    for version in (1, 2):
        assert (out / "inswapper_128" / str(version) / "model.onnx").is_file()

    # Stock Triton cannot batch a fixed-batch export or an unbatched input: one request per run.
    for name in ("yoloface_8n", "codeformer"):
        assert configs[name].max_batch_size == 0 and not configs[name].HasField("dynamic_batching")
    assert list(configs["yoloface_8n"].input[0].dims) == [1, 3, 640, 640]
    assert [list(i.dims) for i in configs["codeformer"].input] == [[-1, 3, 512, 512], [1]]


def test_the_emap_of_each_version_is_a_model_with_that_version(models, tmp_path):
    out = tmp_path / "repo"
    assert cli.main(["models", "--models-dir", str(models), "repository", "--out", str(out)]) == 0
    config = _config(out / "inswapper_128_emap" / "config.pbtxt")
    assert config.max_batch_size == 0 and [o.name for o in config.output] == ["emap"]
    expected = {1: read_emap(models / "inswapper_128.onnx"), 2: np.full((512, 512), 0.5, np.float32)}
    for version, emap in expected.items():
        session = ort.InferenceSession(str(out / "inswapper_128_emap" / str(version) / "model.onnx"))
        (got,) = session.run(["emap"], {"version": np.array([version], np.int32)})
        np.testing.assert_array_equal(got, emap)


def test_cpu_tensorrt_and_rollout_policy_options(models, tmp_path):
    versions.start_canary("inswapper_128", 2, models)
    fx.make_inswapper(models / "inswapper_128" / "3" / "inswapper_128.onnx")  # installed, not rolled out
    out = tmp_path / "repo"
    argv = [
        "models",
        "--models-dir",
        str(models),
        "repository",
        "--out",
        str(out),
        "--tensorrt",
        "--version-policy",
        "rollout",
    ]
    assert cli.main(argv) == 0
    config = _config(out / "inswapper_128" / "config.pbtxt")
    assert list(config.version_policy.specific.versions) == [1, 2]
    assert not (out / "inswapper_128" / "3").exists()
    assert config.parameters["canary"].string_value == "2"
    (accelerator,) = config.optimization.execution_accelerators.gpu_execution_accelerator
    assert accelerator.name == "tensorrt" and accelerator.parameters["precision_mode"] == "FP16"

    cpu = tmp_path / "cpu"
    assert (
        cli.main(
            ["models", "--models-dir", str(models), "repository", "--out", str(cpu), "--cpu", "--tensorrt"]
        )
        == 0
    )
    config = _config(cpu / "inswapper_128" / "config.pbtxt")
    assert [g.kind for g in config.instance_group] == [model_config_pb2.ModelInstanceGroup.KIND_CPU]
    assert not config.HasField("optimization")  # no TensorRT on CPU instances
    assert list(config.version_policy.specific.versions) == [] and sorted(
        int(p.name) for p in (cpu / "inswapper_128").iterdir() if p.is_dir()
    ) == [1, 2, 3]


def test_an_unreadable_version_is_left_out_and_said(models, tmp_path, capsys):
    broken = models / "gfpgan_1.4" / "2" / "gfpgan_1.4.onnx"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not an onnx model")
    out = tmp_path / "repo"
    assert cli.main(["models", "--models-dir", str(models), "repository", "--out", str(out)]) == 0
    assert "gfpgan_1.4 v2: not a readable ONNX model, left out" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "gfpgan_1_4").iterdir()) == ["1", "config.pbtxt"]


def test_no_installed_models_is_a_clear_error(tmp_path, capsys):
    argv = ["models", "--models-dir", str(tmp_path / "none"), "repository", "--out", str(tmp_path / "repo")]
    assert cli.main(argv) == 1
    assert "no installed models in" in capsys.readouterr().err


def test_the_repository_goes_to_s3_for_nvidias_triton_and_stale_versions_are_removed(models, capsys):
    """`models repository --to s3://…`: the layout NVIDIA's Triton reads as `s3://…`, uploaded to the
    test suite's S3, every config parsing as Triton's ModelConfig; a version uninstalled since is
    removed at the next upload (a polling Triton unloads it)."""
    import shutil
    import uuid

    from swap.models import s3cache

    url = f"s3://visage-models-test/repo-{uuid.uuid4().hex[:8]}"
    location = s3cache.Location.parse(url)
    client = s3cache.client_from_env()

    def keys() -> set[str]:
        listed = client.list_objects(location.bucket, prefix=location.prefix + "/", recursive=True)
        return {o.object_name for o in listed}

    argv = ["models", "--models-dir", str(models), "repository", "--to", url]
    assert cli.main(argv) == 0
    assert f"uploaded to {url}" in capsys.readouterr().out
    uploaded = keys()
    assert {location.key(f"inswapper_128/{v}/model.onnx") for v in (1, 2)} <= uploaded
    assert location.key("inswapper_128_emap/2/model.onnx") in uploaded
    configs = [key for key in uploaded if key.endswith("/config.pbtxt")]
    assert len(configs) == 5  # inswapper_128, its emap, codeformer, yoloface_8n, gfpgan_1_4
    for key in configs:
        response = client.get_object(location.bucket, key)
        try:
            config = text_format.Parse(response.read().decode(), model_config_pb2.ModelConfig())
        finally:
            response.close()
            response.release_conn()
        assert config.name == key.rsplit("/", 2)[-2] and config.platform == "onnxruntime_onnx"

    shutil.rmtree(models / "inswapper_128" / "2")  # version 2 uninstalled
    assert cli.main(argv) == 0
    assert "2 stale removed" in capsys.readouterr().out  # its model and its emap's
    assert location.key("inswapper_128/2/model.onnx") not in keys()
    assert location.key("inswapper_128/1/model.onnx") in keys()


def test_the_repository_needs_somewhere_to_go(models, capsys):
    assert cli.main(["models", "--models-dir", str(models), "repository"]) == 1
    assert "--out DIR, --to s3://" in capsys.readouterr().err
