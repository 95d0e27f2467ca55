"""FaceTracker with the default engine's Face Mesh: MediaPipe-style tracking between keyframes."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data as skdata

from swap.video import synthetic
from swap.video.synthetic import ClipSpec
from swap.video.tracking import FaceTracker, TrackingConfig

SPEC = ClipSpec(width=320, height=240, fps=15, seconds=2.0, audio=False, face_height=0.45)


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    patch = synthetic.face_patch(skdata.astronaut(), SPEC)
    return [synthetic.render_frame(SPEC, i, patch) for i in range(SPEC.frames)]


def test_the_mesh_follows_the_face_between_keyframes(mesh_pipeline, frames):
    tracker = FaceTracker(mesh_pipeline, TrackingConfig(detect_interval=10))
    tracked = [tracker.faces(frame) for frame in frames]

    assert all(len(faces) == 1 for faces in tracked)
    # Detection on keyframes only (0, 10, 20): every other frame is the mesh's alone.
    assert tracker.stats.detections == 3
    assert tracker.stats.mesh_follows == SPEC.frames - 3
    assert tracker.stats.patch_matches == 0 and tracker.stats.lost == 0
    # The followed mesh stays on the face: next to what a fresh analysis of that frame finds.
    for index in (7, 17, 27):
        fresh = mesh_pipeline.analyse(frames[index], embed=False, mode=tracker.mode)[0]
        eyes = np.linalg.norm(fresh.landmarks_68[36:42].mean(0) - fresh.landmarks_68[42:48].mean(0))
        error = np.linalg.norm(tracked[index][0].landmarks_68 - fresh.landmarks_68, axis=1).mean()
        assert error < 0.1 * eyes, f"frame {index}: {error:.1f} px off"


def test_an_unsure_mesh_falls_back_to_the_patch_match(mesh_pipeline, frames, monkeypatch):
    monkeypatch.setattr(mesh_pipeline.landmarker, "follow", lambda frame, face: None)
    tracker = FaceTracker(mesh_pipeline, TrackingConfig(detect_interval=10))
    assert all(len(tracker.faces(frame)) == 1 for frame in frames[:10])

    assert tracker.stats.detections == 1
    assert tracker.stats.patch_matches == 9 and tracker.stats.mesh_follows == 0


def test_a_scene_cut_or_a_lost_face_is_detected_again(mesh_pipeline, frames):
    tracker = FaceTracker(mesh_pipeline, TrackingConfig(detect_interval=1000))
    for frame in frames[:5]:
        assert tracker.faces(frame)
    assert tracker.stats.detections == 1

    # The face leaves a shot that otherwise stays: no cut, but the mesh finds no face where it was.
    empty = synthetic.render_frame(SPEC, 5, None)
    assert tracker.faces(empty) == []
    assert tracker.stats.scene_cuts == 0
    assert tracker.stats.lost == 1 and tracker.stats.detections == 2

    # ... it comes back: nothing was tracked, so the next frame is looked at (quickly) and it is found.
    assert tracker.faces(frames[6])
    assert tracker.stats.detections == 2 and tracker.stats.quick_looks == 1

    # A cut to another picture: detected again even while the mesh would hold.
    cut = np.full_like(frames[0], 30)
    assert tracker.faces(cut) == []
    assert tracker.stats.scene_cuts == 1 and tracker.stats.detections == 3


def test_a_shot_with_nobody_in_it_gets_the_full_search_once_an_interval(mesh_pipeline, monkeypatch):
    """Nothing tracked: each frame gets a quick look (no rotated retries, no fallback), the full search
    runs every `detect_interval` frames; a face entering is still found on its first frame."""
    searches: list[bool] = []
    analyse = mesh_pipeline.analyse

    def recording(frame, **kw):
        searches.append(kw.get("retries", True))
        return analyse(frame, **kw)

    monkeypatch.setattr(mesh_pipeline, "analyse", recording)
    tracker = FaceTracker(mesh_pipeline, TrackingConfig(detect_interval=10))
    empty = [synthetic.render_frame(SPEC, i, None) for i in range(25)]
    assert all(tracker.faces(frame) == [] for frame in empty)
    assert [i for i, full in enumerate(searches) if full] == [0, 10, 20]
    assert tracker.stats.detections == 3 and tracker.stats.quick_looks == 22
    assert mesh_pipeline.detector.last_report.tries == ["blazeface_full_range"]  # frame 24: a quick look

    patch = synthetic.face_patch(skdata.astronaut(), SPEC)
    assert len(tracker.faces(synthetic.render_frame(SPEC, 25, patch))) == 1
    assert searches[-1] is False  # found by the quick look
