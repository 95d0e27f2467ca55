"""The stand-in model set the Triton tests serve (two inswapper versions, a broken arcface
version, enhancers, landmarker, detector) and a pair of adapters, local and through Triton."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

from swap.config import RuntimeOptions
from swap.models import registry
from swap.models import standins as fx
from tests.helpers.standin_inputs import CPU, emap_for, points_64, yolo_rows

EMBEDDING = np.random.default_rng(7).standard_normal(512).astype(np.float32) * 3
LATENT_V2 = 0.8  # version 2 of the stand-in inswapper writes this into B instead of 0.4


def write_models(models_dir: Path) -> None:
    emap_v2 = emap_for(EMBEDDING)
    emap_v2[:, 0] = LATENT_V2 * EMBEDDING / np.linalg.norm(EMBEDDING)
    fx.make_inswapper(models_dir / "inswapper_128.onnx", emap=emap_for(EMBEDDING))
    fx.make_inswapper(models_dir / "inswapper_128" / "2" / "inswapper_128.onnx", emap=emap_v2)
    fx.make_arcface(models_dir / "arcface_w600k_r50.onnx")
    # A version that is not a model: left out of the repository, the good version still serves.
    broken = models_dir / "arcface_w600k_r50" / "3" / "arcface_w600k_r50.onnx"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not an onnx model")
    # A model that parses but cannot load (an operator onnxruntime lacks): Triton reports it by name.
    # (ghost's converter: no pipeline here loads it.)
    fx.make_crossface(models_dir / "crossface_ghost.onnx", np.eye(512, dtype=np.float32))
    unloadable = onnx.load(str(models_dir / "crossface_ghost.onnx"))
    unloadable.graph.node[0].op_type = "NoSuchOperator"
    onnx.save(unloadable, str(models_dir / "crossface_ghost.onnx"))
    fx.make_gfpgan(models_dir / "gfpgan_1.4.onnx")
    fx.make_codeformer(models_dir / "codeformer.onnx")
    fx.make_2dfan4(models_dir / "2dfan4.onnx", points_64(), peak=0.9)
    fx.make_yoloface(models_dir / "yoloface_8n.onnx", fx.yoloface_table(yolo_rows()))


def remote(process) -> RuntimeOptions:
    return replace(CPU, inference="triton", triton_url=process.grpc_url)


def both(models_dir, process, name: str, **options):
    return (
        registry.load_adapter(name, models_dir, CPU, **options),
        registry.load_adapter(name, models_dir, remote(process), **options),
    )
