"""Different people into different faces of one photo (Pipeline.swap_assigned), proven with the
generated inswapper whose B channel is the source latent's first value."""

from __future__ import annotations

import numpy as np
import pytest

from swap import align
from swap.config import PipelineConfig
from swap.errors import FaceIndexOutOfRange
from swap.models import standins as fx
from swap.pipeline import Pipeline
from tests.helpers.standin_inputs import CPU, identity, points_64, textured_frame

LATENT_A, LATENT_B = 0.2, 0.8


@pytest.fixture
def people():
    """Two orthogonal ArcFace-like embeddings and an emap whose column 0 gives each its own latent[0]."""
    rng = np.random.default_rng(21)
    u = np.linalg.qr(rng.standard_normal((512, 2)))[0].T.astype(np.float32)  # two orthonormal rows
    emap = rng.standard_normal((512, 512)).astype(np.float32) * 0.01
    emap[:, 0] = LATENT_A * u[0] + LATENT_B * u[1]
    return (u[0] * 3, u[1] * 3), emap


@pytest.fixture
def pipeline(tmp_path, people):
    _, emap = people
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap)
    fx.make_arcface(tmp_path / "arcface_w600k_r50.onnx")
    fx.make_2dfan4(tmp_path / "2dfan4.onnx", points_64(), peak=0.2)  # low score: keep the detector's 5
    big = align.template_points("arcface_128", 128) * 1.5 + np.float32([60, 60])  # face 0 (largest)
    small = align.template_points("arcface_128", 128) + np.float32([400, 200])  # face 1
    rows = [
        dict(anchor=0, cx=156, cy=156, w=192, h=192, score=0.9, kps=big),
        dict(anchor=1, cx=464, cy=264, w=128, h=128, score=0.9, kps=small),
    ]
    fx.make_yoloface(tmp_path / "yoloface_8n.onnx", fx.yoloface_table(rows), score_from_input_anchor=None)
    return Pipeline(PipelineConfig(models_dir=tmp_path, runtime=CPU, enhancer="none"))


def test_each_face_gets_its_assigned_person(pipeline, people):
    (person_a, person_b), _ = people
    frame = textured_frame(480, 640)
    result = pipeline.swap_assigned(
        [identity(person_a), identity(person_b)], frame, assignments=[(0, 1), (1, 0)]
    )
    # B channel at each face centre (mask 1) is that face's source latent[0] × 255.
    assert result.image[156, 156, 0] == round(LATENT_B * 255)  # face 0 ← person B
    assert result.image[264, 464, 0] == round(LATENT_A * 255)  # face 1 ← person A
    assert len(result.faces_used) == 2
    np.testing.assert_array_equal(result.image[440:, :40], frame[440:, :40])  # far from both faces


def test_one_person_into_both_faces_is_one_batch(pipeline, people):
    (person_a, _), _ = people
    result = pipeline.swap_assigned(
        [identity(person_a)], textured_frame(480, 640), assignments=[(0, 0), (1, 0)]
    )
    assert result.image[156, 156, 0] == result.image[264, 464, 0] == round(LATENT_A * 255)


def test_a_face_index_the_photo_does_not_have_is_a_clear_error(pipeline, people):
    (person_a, _), _ = people
    with pytest.raises(FaceIndexOutOfRange, match="face 2 is out of range: the target image has 2 faces"):
        pipeline.swap_assigned([identity(person_a)], textured_frame(480, 640), assignments=[(2, 0)])
