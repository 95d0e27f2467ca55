"""A standard Triton model repository from the installed models (`python -m swap models repository`).

    <out>/<triton name>/config.pbtxt          platform "onnxruntime_onnx", batching, instances,
                                              version policy, Visage's metadata in `parameters`
    <out>/<triton name>/<version>/model.onnx  every installed version under one name
    <out>/inswapper_128_emap/<version>/model.onnx
                                              inswapper's 512×512 emap of that version, as a model

NVIDIA's own Triton image loads this as is (from a directory or `s3://…`). The PyTriton stand-in
(`python -m swap serve`) serves the same layout with `backend: "python"` running the same ONNX
files in onnxruntime (`swap.serve.server`), so the workers' client (swap.inference.triton_client)
talks to both through the standard protocol only.

Why the emap is a model and not a parameter or a file: config `parameters` are per model, not per
version (the emap differs per version), 1 MiB of float text in every config request is waste, and
a stock Triton client cannot read files from the repository. A tiny constant ONNX model with the
same version numbers is fetched once per version through the ordinary infer call.

Batching: a model whose every input and output has a symbolic first dimension is batched
(`max_batch_size` > 0, `dynamic_batching`); a fixed-batch export (yoloface_8n's [1, 3, 640, 640])
or one with an unbatched input (codeformer's `weight` [1]) gets `max_batch_size: 0`: Triton runs
each request as sent (the ONNX shapes), since stock Triton cannot batch it.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from swap.models import registry

MODEL_FILE = "model.onnx"
EMAP_SUFFIX = "_emap"
FILE_MODE = 0o644  # read by a Triton pod running as another uid

# ONNX TensorProto element types -> Triton data types
ONNX_TO_TRITON = {1: "TYPE_FP32", 2: "TYPE_UINT8", 3: "TYPE_INT8", 6: "TYPE_INT32", 7: "TYPE_INT64",
                  9: "TYPE_BOOL", 10: "TYPE_FP16", 11: "TYPE_FP64"}  # fmt: skip


# The stand-in's extra output (python backend only): the model work each item of a request caused
# on the server, in ns (swap.serve.server measures it; swap.inference.triton_client bills it).
COMPUTE_OUTPUT = "visage_compute_ns"


class RepositoryError(Exception):
    """The repository cannot be generated (one-line reason)."""


def triton_name(name: str) -> str:
    """Triton model names are directory names; keep them plain (gfpgan_1.4 → gfpgan_1_4)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def emap_model_name(name: str) -> str:
    return f"{triton_name(name)}{EMAP_SUFFIX}"


def _int_env(env, key: str, default: int) -> int:
    value = env.get(key, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        raise RepositoryError(f"{key} must be an integer, got {value!r}") from None


@dataclass
class BatchingSettings:
    batching: bool = True
    max_batch_size: int = 16
    preferred_batch_sizes: list[int] = field(default_factory=lambda: [4, 8, 16])
    max_queue_delay_us: int = 5000

    @classmethod
    def from_env(cls, environ=None) -> BatchingSettings:
        """VISAGE_TRITON_MAX_BATCH (16), VISAGE_TRITON_PREFERRED_BATCH ("4,8,16"),
        VISAGE_TRITON_QUEUE_DELAY_US (5000), VISAGE_TRITON_BATCHING (1; 0 = one request per run)."""
        env = os.environ if environ is None else environ
        preferred = env.get("VISAGE_TRITON_PREFERRED_BATCH", "").strip()
        settings = cls(
            batching=env.get("VISAGE_TRITON_BATCHING", "1").strip().lower()
            not in ("0", "false", "no", "off"),
            max_batch_size=_int_env(env, "VISAGE_TRITON_MAX_BATCH", 16),
            max_queue_delay_us=_int_env(env, "VISAGE_TRITON_QUEUE_DELAY_US", 5000),
        )
        if preferred:
            settings.preferred_batch_sizes = [int(p) for p in preferred.split(",") if p.strip()]
        settings.preferred_batch_sizes = [
            p for p in settings.preferred_batch_sizes if p <= settings.max_batch_size
        ]
        return settings


@dataclass(frozen=True)
class RepositoryOptions:
    batching: BatchingSettings = field(default_factory=BatchingSettings)
    cpu: bool = False  # KIND_CPU instances instead of one per GPU
    tensorrt: bool = False  # ORT's TensorRT execution accelerator, FP16
    version_policy: str = "all"  # "all" | "rollout" (only the stable and canary versions)
    backend: str = "onnxruntime"  # "python": the stand-in (swap.serve.server) runs the same files
    python_model: Path | None = None  # the stand-in's model.py, copied into every version folder


# -- ONNX interface --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    name: str
    data_type: str
    shape: tuple  # ONNX dims: int, or -1 for a symbolic one


def _tensors(values, initializers: set[str]) -> list[Tensor]:
    tensors = []
    for value in values:
        if value.name in initializers:
            continue
        kind = value.type.tensor_type
        dims = tuple(
            d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else -1 for d in kind.shape.dim
        )
        data_type = ONNX_TO_TRITON.get(kind.elem_type)
        if data_type is None:
            raise RepositoryError(f"{value.name}: ONNX element type {kind.elem_type} has no Triton type here")
        tensors.append(Tensor(value.name, data_type, dims))
    return tensors


def interface(path: Path) -> tuple[list[Tensor], list[Tensor]]:
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    return _tensors(graph.input, initializers), _tensors(graph.output, set())


def _parses(path: Path) -> bool:
    try:
        onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - any parse failure means "not a model"
        return False
    return True


def batchable(inputs: list[Tensor], outputs: list[Tensor]) -> bool:
    """Every tensor has a symbolic first dimension: Triton may stack requests on it."""
    return all(t.shape and t.shape[0] == -1 for t in (*inputs, *outputs))


# -- config.pbtxt ----------------------------------------------------------------------------------


def _quote(value: str) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _tensor_text(tensor: Tensor, batched: bool) -> str:
    dims = tensor.shape[1:] if batched else tensor.shape
    return f"  {{ name: {_quote(tensor.name)} data_type: {tensor.data_type} dims: [ {', '.join(map(str, dims))} ] }}"


def config_text(
    name: str,
    inputs: list[Tensor],
    outputs: list[Tensor],
    *,
    versions: list[int],
    parameters: dict[str, str],
    options: RepositoryOptions,
    batched: bool,
) -> str:
    batching = options.batching
    max_batch = max(1, batching.max_batch_size) if batched and batching.batching else (1 if batched else 0)
    lines = [f"name: {_quote(name)}"]
    lines.append(
        f"backend: {_quote('python')}" if options.backend == "python" else 'platform: "onnxruntime_onnx"'
    )
    lines.append(f"max_batch_size: {max_batch}")
    if options.version_policy == "all":
        lines.append("version_policy: { all { } }")
    else:
        lines.append(f"version_policy: {{ specific {{ versions: [ {', '.join(map(str, versions))} ] }} }}")
    lines.append("input [\n" + ",\n".join(_tensor_text(t, max_batch > 0) for t in inputs) + "\n]")
    if options.backend == "python":  # NVIDIA's ONNX Runtime backend bills from its statistics
        outputs = [*outputs, Tensor(COMPUTE_OUTPUT, "TYPE_INT64", (-1, 1) if max_batch > 0 else (1,))]
    lines.append("output [\n" + ",\n".join(_tensor_text(t, max_batch > 0) for t in outputs) + "\n]")
    if max_batch > 1:
        preferred = [p for p in batching.preferred_batch_sizes if p <= max_batch]
        lines.append(
            "dynamic_batching {"
            + (f" preferred_batch_size: [ {', '.join(map(str, preferred))} ]" if preferred else "")
            + f" max_queue_delay_microseconds: {batching.max_queue_delay_us} }}"
        )
    # KIND_GPU without `gpus`: one instance on every GPU the server sees.
    kind = "KIND_CPU" if options.cpu or options.backend == "python" else "KIND_GPU"
    lines.append(f"instance_group [ {{ count: 1 kind: {kind} }} ]")
    if options.tensorrt and kind == "KIND_GPU" and options.backend != "python":
        lines.append(
            'optimization { execution_accelerators { gpu_execution_accelerator : [ { name : "tensorrt" '
            'parameters { key: "precision_mode" value: "FP16" } } ] } }'
        )
    for key, value in parameters.items():
        lines.append(f"parameters {{ key: {_quote(key)} value {{ string_value: {_quote(value)} }} }}")
    return "\n".join(lines) + "\n"


# -- the repository --------------------------------------------------------------------------------


def _place(source: Path, target: Path) -> None:
    """Hard link (the stand-in's repository costs no copy), else copy; readable by every uid."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    try:
        os.chmod(target, FILE_MODE)
    except PermissionError:  # a link to a file someone else owns: it is already world-readable
        pass


def emap_model_bytes(emap) -> bytes:
    """A constant ONNX model: input `version` [1] (ignored), output `emap` [512, 512]."""
    value = numpy_helper.from_array(np.asarray(emap, np.float32), "emap_value")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["emap_value"], ["emap"])],
        "emap",
        [helper.make_tensor_value_info("version", TensorProto.INT32, [1])],
        [helper.make_tensor_value_info("emap", TensorProto.FLOAT, list(value.dims))],
        initializer=[value],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def _write_config(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.pbtxt").write_text(text)
    os.chmod(folder / "config.pbtxt", FILE_MODE)


def _add_python_model(version_dir: Path, options: RepositoryOptions) -> None:
    if options.backend == "python":
        if options.python_model is None:
            raise RepositoryError("the python backend needs its model.py")
        shutil.copyfile(options.python_model, version_dir / "model.py")


def installed_models(models_dir: Path) -> list[str]:
    """The manifest's ONNX models with at least one version on disk in `models_dir`: what a
    repository written from it would serve (none: `write_repository` refuses). MediaPipe's TFLite
    and dlib's models are not Triton's: they run in the workers."""
    return [
        spec.name
        for spec in registry.manifest().values()
        if spec.file.endswith(".onnx") and registry.installed_versions(spec.name, models_dir)
    ]


def write_repository(
    models_dir: Path,
    out: Path,
    options: RepositoryOptions | None = None,
    *,
    names: list[str] | None = None,
    skipped: list[str] | None = None,
) -> dict[str, list[int]]:
    """Write the repository of every installed (or each named) manifest model; {name: versions}.
    Versions left out (unreadable files) are appended to `skipped`."""
    skipped = [] if skipped is None else skipped
    options = options or RepositoryOptions()
    models_dir, out = Path(models_dir), Path(out)
    state = registry.load_state(models_dir)
    written: dict[str, list[int]] = {}
    for spec in registry.manifest().values():
        if names is not None and spec.name not in names:
            continue
        if not spec.file.endswith(".onnx") and names is None:
            continue  # MediaPipe's TFLite models run in the workers, never in Triton
        installed = registry.installed_versions(spec.name, models_dir)
        if not installed:
            if names is not None:
                raise RepositoryError(f"{spec.name} is not installed in {models_dir}")
            continue
        rollout = registry.rollout_for(spec.name, models_dir, state)
        # Triton unloads a whole model when one of its versions fails to load: a version whose
        # file is not even an ONNX model is left out (and reported), the others serve.
        broken = [v for v in installed if not _parses(registry.version_path(spec.name, v, models_dir))]
        for version in broken:
            skipped.append(f"{spec.name} v{version}: not a readable ONNX model, left out")
        installed = [v for v in installed if v not in broken]
        if not installed:
            continue
        served = installed
        if options.version_policy == "rollout":
            served = sorted({v for v in (rollout.stable, rollout.canary) if v in installed}) or installed
        paths = {v: registry.version_path(spec.name, v, models_dir) for v in served}
        stable = rollout.stable if rollout.stable in served else served[-1]
        try:
            inputs, outputs = interface(paths[stable])
        except RepositoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - an unreadable file is named, the command fails
            raise RepositoryError(
                f"{spec.name} version {stable} ({paths[stable]}) is not a readable ONNX model: {exc}"
            ) from None
        name = triton_name(spec.name)
        parameters = {
            "visage_name": spec.name,
            "kind": spec.kind,
            "adapter": spec.adapter,
            "versions": ",".join(map(str, served)),
            "stable": str(stable),
            "canary": "" if rollout.canary is None else str(rollout.canary),
            "licence": spec.licence,
            "non_commercial": "true" if spec.non_commercial else "false",
            # The adapters do their own pre-processing; these say what they feed the model.
            "input_size": "x".join(map(str, spec.input_size)),
            "template": spec.template or "",
        }
        if spec.adapter == "inswapper":
            parameters["emap_model"] = emap_model_name(spec.name)
        batched = batchable(inputs, outputs)
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        _write_config(
            folder,
            config_text(
                name,
                inputs,
                outputs,
                versions=served,
                parameters=parameters,
                options=options,
                batched=batched,
            ),
        )
        for version, path in paths.items():
            _place(path, folder / str(version) / MODEL_FILE)
            _add_python_model(folder / str(version), options)
        if spec.adapter == "inswapper":
            _write_emap_model(spec.name, paths, out, options, served)
        written[spec.name] = served
    if not written:
        raise RepositoryError(f"no installed models in {models_dir} (python -m swap models list)")
    return written


def read_emap(path: Path):
    """inswapper's 512×512 emap: the graph's LAST initializer (as swap.inference.emap reads it)."""
    return numpy_helper.to_array(onnx.load(str(path)).graph.initializer[-1]).astype(np.float32)


def _write_emap_model(
    name: str, paths: dict[int, Path], out: Path, options: RepositoryOptions, served: list[int]
) -> None:
    folder = out / emap_model_name(name)
    if folder.exists():
        shutil.rmtree(folder)
    emap_options = RepositoryOptions(
        batching=BatchingSettings(batching=False), cpu=True, version_policy=options.version_policy,
        backend=options.backend, python_model=options.python_model,
    )  # fmt: skip
    inputs = [Tensor("version", "TYPE_INT32", (1,))]
    outputs = [Tensor("emap", "TYPE_FP32", (512, 512))]
    text = config_text(emap_model_name(name), inputs, outputs, versions=served, options=emap_options,
                       parameters={"visage_name": f"{name}{EMAP_SUFFIX}", "emap_of": name}, batched=False)  # fmt: skip
    _write_config(folder, text)
    for version, path in paths.items():
        target = folder / str(version) / MODEL_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(emap_model_bytes(read_emap(path)))
        os.chmod(target, FILE_MODE)
        _add_python_model(target.parent, options)
