"""Moderation fixtures: generated stand-in models, a tiny CLIP checkpoint, a moderator, queue probes.

Platform fixtures (API clients, the astronaut pair, the queue-emptying autouse fixture) come from
tests/webapp/conftest.py so the flow tests here talk to the same real Redis, S3 and database.
"""

from __future__ import annotations

import json
from pathlib import Path

import django_rq
import numpy as np
import onnx
import pytest
from django.conf import settings
from onnx import TensorProto, helper, numpy_helper

from moderation.nsfw import LABELS
from tests.webapp.conftest import (  # noqa: F401 - fixtures re-exported for this package
    api_a,
    astronaut_pair,
    astronaut_rgb,
    clean_redis_and_buckets,
)

ANCHORS = 2100  # what 320n emits for a 320×320 input: 40² + 20² + 10²


def nudenet_like_model(path: Path, detections: list[tuple[str, float]]) -> Path:
    """An ONNX model with NudeNet's interface ('images' [batch,3,h,w] → 'output0' [batch, 22, anchors])
    whose output is the same constant for every image of the batch: decoding it yields exactly
    `detections` (label, score), one box each."""
    rows = np.zeros((1, 4 + len(LABELS), ANCHORS), np.float32)
    for i, (label, score) in enumerate(detections):
        rows[0, 0:4, i] = [40 + 90 * i, 160, 60, 60]  # apart, so NMS keeps every box
        rows[0, 4 + LABELS.index(label), i] = score
    graph = helper.make_graph(
        [
            # Touch the input so it stays a real graph input; a zero per image of the batch,
            # shaped [batch, 1, 1], broadcasts the constant over the batch as the real model does.
            helper.make_node("ReduceMean", ["images"], ["mean"], axes=[1, 2, 3], keepdims=0),
            helper.make_node("Unsqueeze", ["mean", "rows_axes"], ["mean_3d"]),
            helper.make_node("Mul", ["mean_3d", "zero"], ["nothing"]),
            helper.make_node("Add", ["rows", "nothing"], ["output0"]),
        ],
        "nudenet_like",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["batch", 4 + len(LABELS), ANCHORS])],
        initializer=[
            numpy_helper.from_array(rows, "rows"),
            numpy_helper.from_array(np.float32(0), "zero"),
            numpy_helper.from_array(np.array([1, 2], np.int64), "rows_axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.fixture(scope="session")
def nsfw_models(tmp_path_factory) -> dict[str, Path]:
    """Stand-ins: 'reject' (genitalia 0.91), 'review' (breast 0.45), 'clean' (a face only)."""
    root = tmp_path_factory.mktemp("nsfw")
    return {
        "reject": nudenet_like_model(
            root / "reject.onnx", [("FEMALE_GENITALIA_EXPOSED", 0.91), ("FACE_FEMALE", 0.8)]
        ),
        "review": nudenet_like_model(root / "review.onnx", [("FEMALE_BREAST_EXPOSED", 0.45)]),
        "clean": nudenet_like_model(root / "clean.onnx", [("FACE_FEMALE", 0.99), ("FEET_EXPOSED", 0.9)]),
    }


TINY_CLIP = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory) -> dict[str, str]:
    """A tiny open_clip architecture (config JSON) and a random-weight state_dict checkpoint."""
    import open_clip
    import torch

    root = tmp_path_factory.mktemp("clip")
    config = root / "visage-tiny-clip.json"
    config.write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    model = open_clip.create_model("visage-tiny-clip", pretrained=None)
    checkpoint = root / "tiny.pt"
    torch.save(model.state_dict(), checkpoint)
    return {
        "VISAGE_CLIP_MODEL": "visage-tiny-clip",
        "VISAGE_CLIP_CHECKPOINT": str(checkpoint),
        "VISAGE_CLIP_CONFIG": str(config),
    }


@pytest.fixture
def moderator(django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(username="mod", password="mod-pass-123", is_staff=True)
    user.groups.add(Group.objects.get(name="moderator"))
    return user


@pytest.fixture
def moderator_client(client, moderator):
    client.force_login(moderator)
    return client


def gpu_queued() -> int:
    return sum(django_rq.get_queue(name).count for name in settings.GPU_QUEUES)


def gpu_touched() -> int:
    """Everything that ever reached a GPU queue: waiting, started, finished or failed."""
    total = 0
    for name in settings.GPU_QUEUES:
        queue = django_rq.get_queue(name)
        total += queue.count + queue.started_job_registry.count + queue.finished_job_registry.count
        total += queue.failed_job_registry.count
    return total
