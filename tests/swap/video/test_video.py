"""Video through the engine: generated clips (PyAV), the classical pipeline, whole and segmented."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from skimage import data as skdata

from swap.config import PipelineConfig
from swap.pipeline import Pipeline
from swap.types import SwapOptions
from swap.video import io, synthetic
from swap.video.process import NoFaceInVideo, process_clip, swap_video
from swap.video.segments import plan_segments, segment_count
from swap.video.synthetic import ClipSpec
from swap.video.tracking import TrackingConfig

SPEC = ClipSpec(width=256, height=256, fps=15, seconds=2.0, audio=True)


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(
        PipelineConfig(
            detector="dlib_hog",
            landmarker="dlib_shape68",
            recognizer="dlib_resnet",
            swapper="classical",
            enhancer="none",
        )
    )


@pytest.fixture(scope="module")
def source(pipeline):
    # The mirrored astronaut: a swap onto the astronaut in the clip visibly changes the face.
    return pipeline.prepare_source([cv2.flip(cv2.cvtColor(skdata.astronaut(), cv2.COLOR_RGB2BGR), 1)])


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, tuple[Path, ClipSpec, list[np.ndarray]]]:
    directory = tmp_path_factory.mktemp("clips")
    specs = {
        "audio": SPEC,
        "silent": ClipSpec(width=256, height=256, fps=12, seconds=2.0, audio=False),
        "odd": ClipSpec(width=641, height=359, fps=12, seconds=1.5, audio=True),
        "phone": ClipSpec(width=192, height=320, fps=12, seconds=1.5, audio=True, rotation=-90),
        "empty": ClipSpec(width=256, height=256, fps=12, seconds=1.0, audio=False, face=False),
    }
    out = {}
    for name, spec in specs.items():
        path = directory / f"{name}.mp4"
        frames = synthetic.write_clip(path, spec, skdata.astronaut())
        out[name] = (path, spec, frames)
    return out


def _far_from_face(spec: ClipSpec, frame_index: int, frames: list[np.ndarray]) -> np.ndarray:
    """A mask of background pixels well away from the face patch and the counter bar."""
    patch = synthetic.face_patch(skdata.astronaut(), spec)
    x1, y1, x2, y2 = synthetic.face_box(spec, frame_index, (patch.shape[1], patch.shape[0]))
    mask = np.ones(frames[0].shape[:2], bool)
    margin = 12
    mask[max(0, y1 - margin) : y2 + margin, max(0, x1 - margin) : x2 + margin] = False
    mask[-synthetic.COUNTER_ROWS - 4 :] = False
    return mask


@pytest.mark.parametrize("name", ["audio", "silent", "odd", "phone"])
def test_swapped_clip_keeps_timing_audio_and_background(pipeline, source, clips, tmp_path, name):
    path, spec, rendered = clips[name]
    info = io.probe(path)
    output = tmp_path / "out.mp4"
    result = swap_video(pipeline, source, path, output, crf=18)

    out_info = io.probe(output)
    frames, fps, duration = io.count_frames(output)
    assert frames == spec.frames == result.frames
    assert fps == spec.fps
    assert abs(duration - spec.frames / spec.fps) <= 1 / spec.fps
    # Display size: rotation applied (the phone clip is portrait), odd sides rounded down to even.
    assert (out_info.width, out_info.height) == (info.width - info.width % 2, info.height - info.height % 2)
    assert out_info.rotation == 0
    if spec.audio:
        assert out_info.has_audio
        assert io.audio_duration(output) == pytest.approx(io.audio_duration(path), abs=0.03)
    else:
        assert not out_info.has_audio

    original = list(io.read_frames(path, size=(out_info.width, out_info.height)))
    swapped = list(io.read_frames(output))
    assert [synthetic.read_counter(f) for f in swapped] == list(range(spec.frames))
    middle = spec.frames // 2
    for i in (middle - 1, middle, middle + 1):
        faces = pipeline.analyse(original[i], embed=False)
        assert faces, "the test clip must show a detectable face"
        x1, y1, x2, y2 = faces[0].box.astype(int)
        face_diff = np.abs(original[i][y1:y2, x1:x2].astype(int) - swapped[i][y1:y2, x1:x2]).mean()
        # An unswapped face differs by coding noise alone (< 3, like the background below); swapped
        # faces measure 7.6-12.5 here (the small phone clip's lowest: its ~60-px face's landmarks
        # move with the decoder's rounding).
        assert face_diff > 6, f"frame {i}: the face did not change ({face_diff:.1f})"
        mask = _far_from_face(spec, i, rendered)[: out_info.height, : out_info.width]
        background_diff = np.abs(original[i].astype(int) - swapped[i])[mask].mean()
        assert background_diff < 3, f"frame {i}: background changed ({background_diff:.1f})"
    assert result.swapped_frames >= spec.frames - 2


def test_segments_join_without_repeated_or_dropped_frames(pipeline, source, clips, tmp_path):
    path, spec, _ = clips["audio"]
    plan = plan_segments(spec.frames, segment_count(spec.frames, spec.fps, 0.7, 0.7))
    assert len(plan) == 3
    parts = []
    for segment in plan:
        part = tmp_path / f"part{segment.index}.mp4"
        process_clip(pipeline, source, path, part, size=(256, 256), start=segment.start, stop=segment.stop)
        parts.append(part)
    joined = tmp_path / "joined.mp4"
    assert io.join_parts(parts, joined, fps=io.probe(path).fps, original=path) == spec.frames

    whole = tmp_path / "whole.mp4"
    swap_video(pipeline, source, path, whole)
    assert io.count_frames(joined)[0] == io.count_frames(whole)[0] == spec.frames
    assert io.audio_duration(joined) == pytest.approx(io.audio_duration(whole), abs=1e-6)
    counters = [synthetic.read_counter(f) for f in io.read_frames(joined)]
    assert counters == list(range(spec.frames))


def test_segment_plan_cuts_by_frame_index_into_equal_segments():
    assert [(s.start, s.stop) for s in plan_segments(300, 3)] == [(0, 100), (100, 200), (200, None)]
    assert [(s.start, s.stop) for s in plan_segments(301, 2)] == [(0, 150), (150, None)]
    assert plan_segments(20, 1)[0].stop is None


def test_a_clip_is_cut_once_for_each_worker_within_the_shortest_and_longest_segment():
    """A 30 s clip (900 frames at 30 fps), segments of 10 to 60 s: one for each of two workers
    (each starts once), three for eight workers (none shorter than 10 s); one where no worker is
    counted or the clip is not twice the shortest; a longest of 4 s cuts eight, rounded up to a
    multiple of three workers (none swaps the last one alone); never more segments than frames."""
    assert segment_count(900, 30, 10.0, 60.0, workers=2) == 2
    assert segment_count(900, 30, 10.0, 60.0, workers=8) == 3
    assert segment_count(900, 30, 10.0, 60.0, workers=0) == 1
    assert segment_count(900, 30, 10.0, 60.0, workers=1) == 1
    assert segment_count(570, 30, 10.0, 60.0, workers=2) == 1  # 19 s: two would be 9.5 s each
    assert segment_count(900, 30, 10.0, 4.0, workers=1) == 8
    assert segment_count(900, 30, 10.0, 4.0, workers=3) == 9
    assert segment_count(900, 30, 10.0, 30.0, workers=1) == 1  # exactly the longest: not cut
    assert segment_count(3, 30, 0.01, 0.01, workers=4) == 3


def test_tracking_detects_less_and_falls_back_on_a_scene_cut(pipeline, clips):
    path, _, _ = clips["audio"]
    frames = list(io.read_frames(path))
    from swap.video.tracking import FaceTracker

    tracker = FaceTracker(pipeline, TrackingConfig(detect_interval=10))
    boxes = [tracker.faces(f) for f in frames]
    assert all(boxes)
    assert tracker.stats.detections <= 4
    # Tracked boxes stay on the face: close to a fresh detection's box.
    fresh = pipeline.analyse(frames[17], embed=False)[0].box
    tracked = boxes[17][0].box
    assert np.abs(fresh - tracked).max() < 15

    cut = np.full_like(frames[0], 30)
    before = tracker.stats.detections
    assert tracker.faces(cut) == []
    assert tracker.stats.scene_cuts == 1 and tracker.stats.detections == before + 1


def test_clip_without_a_face_raises_no_face(pipeline, source, clips, tmp_path):
    path, _, _ = clips["empty"]
    with pytest.raises(NoFaceInVideo) as info:
        swap_video(pipeline, source, path, tmp_path / "out.mp4")
    assert info.value.code == "no_face_detected"


def test_probe_reads_metadata_and_rejects_bad_files(clips, tmp_path):
    path, spec, _ = clips["phone"]
    info = io.probe(path)
    assert (info.width, info.height, info.rotation) == (192, 320, -90)
    assert info.frames == spec.frames and info.has_audio and info.fps == spec.fps

    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(io.InvalidVideo):
        io.probe(truncated)
    audio_only = tmp_path / "audio.m4a"
    synthetic.write_audio_only(audio_only)
    with pytest.raises(io.NoVideoStream):
        io.probe(audio_only)


@pytest.mark.parametrize(
    ("options", "mode"),
    [(None, "largest"), (SwapOptions(faces="many"), "standard"), (SwapOptions(mode="fast"), "fast")],
)
def test_frames_are_analysed_as_a_photo_target_of_the_same_job(
    pipeline, source, clips, tmp_path, monkeypatch, options, mode
):
    path, _, _ = clips["audio"]
    modes: list[str] = []
    analyse = pipeline.analyse
    monkeypatch.setattr(pipeline, "analyse", lambda frame, **kw: modes.append(kw["mode"]) or analyse(frame, **kw))
    process_clip(pipeline, source, path, tmp_path / "part.mp4", size=(256, 256), options=options, stop=12)
    assert modes and set(modes) == {mode}


def test_progress_is_reported_by_time_and_at_the_end_and_a_raise_stops_the_clip(pipeline, source, clips, tmp_path):
    path, spec, _ = clips["audio"]
    frames = round(spec.fps * spec.seconds)
    calls: dict[float, list[int]] = {}
    for every in (0.0, 3600.0):
        calls[every] = []
        process_clip(
            pipeline, source, path, tmp_path / "part.mp4", size=(256, 256),
            on_progress=calls[every].append, progress_every_s=every,
        )
    assert calls[0.0] == [*range(1, frames + 1), frames]  # due after every frame, and the end's
    assert calls[3600.0] == [frames]  # never due: only the end's

    class Canceled(Exception):
        pass

    def cancel(done: int) -> None:
        raise Canceled(done)

    with pytest.raises(Canceled) as raised:
        process_clip(pipeline, source, path, tmp_path / "part.mp4", size=(256, 256), on_progress=cancel,
                     progress_every_s=0.0)
    assert raised.value.args == (1,)  # stopped at the first report, not after the whole clip


def test_frames_swapped_side_by_side_equal_those_swapped_one_at_a_time(pipeline, source, clips, tmp_path):
    path, spec, _ = clips["audio"]
    keep = range(0, 30, 3)  # the unmarked output frames, as output moderation takes them
    results = {
        threads: process_clip(
            pipeline, source, path, tmp_path / f"part{threads}.mp4", size=(256, 256), keep=keep, swap_threads=threads
        )
        for threads in (1, 2)
    }
    one, two = results[1], results[2]
    assert one.frames == two.frames == round(spec.fps * spec.seconds)
    assert one.swapped_frames == two.swapped_frames > 0
    assert [index for index, _ in one.kept] == [index for index, _ in two.kept] == list(keep)
    for (_, a), (_, b) in zip(one.kept, two.kept, strict=True):
        np.testing.assert_array_equal(a, b)
    decoded = [list(io.read_frames(tmp_path / f"part{threads}.mp4")) for threads in (1, 2)]
    assert len(decoded[0]) == len(decoded[1]) == one.frames
    for a, b in zip(*decoded, strict=True):
        np.testing.assert_array_equal(a, b)
    assert two.stage_ms["swap"] > 0 and two.inference_ms > 0


def test_sampled_frames_are_the_read_frames_at_their_indices_and_only_they_are_converted(clips, monkeypatch):
    """Moderation's ~1 frame a second: the same pictures `read_frames` gives at those indices (the
    phone clip: turned upright, scaled), converted to BGR alone (every frame of a 30 s 720p clip
    converted and thrown away cost ~1.5 s of a screening's ~2.2 s of decoding)."""
    path, _, _ = clips["phone"]
    info = io.probe(path)
    size = io.sample_size(info.width, info.height, 160)
    expected = list(io.read_frames(path, size=size))
    conversions = []
    real = io._to_bgr
    monkeypatch.setattr(io, "_to_bgr", lambda *a: conversions.append(1) or real(*a))
    picked = io.sample_frames(path, minimum=4, max_side=160)
    assert [index for index, _ in picked] == io.sample_indices(len(expected), info.duration_seconds, minimum=4)
    assert len(conversions) == len(picked) < len(expected)
    for index, frame in picked:
        assert np.array_equal(frame, expected[index])


def test_sampled_frames_one_at_a_time_decode_only_up_to_the_frame_asked_for(clips, monkeypatch):
    """The GPU step's check for a face stops at the first sampled frame that shows one: the clip
    is decoded up to that frame, not to its end (a 30 s 720p clip decoded whole was ~0.5 s)."""
    path, _, _ = clips["silent"]
    info = io.probe(path)
    wanted = io.sample_indices(info.frames, info.duration_seconds, minimum=4)
    decoded = []
    real = io.decoded_frames

    def counted(*args, **kwargs):
        for item in real(*args, **kwargs):
            decoded.append(item[0])
            yield item

    monkeypatch.setattr(io, "decoded_frames", counted)
    frames = io.iter_sampled_frames(path, minimum=4, max_side=160)
    first, frame = next(frames)
    frames.close()
    assert first == wanted[0] and frame.shape[2] == 3
    assert decoded == list(range(wanted[0] + 1)) and wanted[0] + 1 < info.frames
    assert [index for index, _ in io.iter_sampled_frames(path, minimum=4, max_side=160)] == wanted
