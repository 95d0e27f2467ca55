"""The classical swapper: only the face changes, and it takes on the source's identity."""

from __future__ import annotations

import hashlib

import cv2
import numpy as np
import pytest

import swap.swappers.classical as classical
from swap.face_recognition.dlib_resnet import dlib_distance
from swap.swappers.classical import (
    SOURCE_PHOTOS_HELD,
    SOURCE_RIM,
    ClassicalSettings,
    ClassicalSwapper,
    delaunay,
    extended_points,
    face_mask,
    mouth_openness,
    piecewise_affine_maps,
    pose_residual,
)
from swap.swappers.occlusion import occlusion_mask, skin_sample_mask
from swap.types import Face, SwapOptions


def _outside(frame_shape, faces, grow: float = 0.25) -> np.ndarray:
    """Pixels well outside every face's mask (the hull grown by `grow` x face width)."""
    near = np.zeros(frame_shape[:2], np.uint8)
    for face in faces:
        width = int(face.box[2] - face.box[0])
        k = max(3, int(grow * width)) | 1
        near |= cv2.dilate(face_mask(frame_shape, face), np.ones((k, k), np.uint8))
    return near == 0


@pytest.fixture(scope="module")
def source(pipeline, astronaut):
    return pipeline.prepare_source([astronaut])


def test_swap_changes_only_the_face(pipeline, source, other_face):
    target_faces = pipeline.analyse(other_face, embed=False)
    result = pipeline.swap_frame(source, other_face)

    assert result.image.shape == other_face.shape and result.image.dtype == np.uint8
    outside = _outside(other_face.shape, target_faces)
    assert outside.mean() > 0.5
    assert np.array_equal(result.image[outside], other_face[outside])
    inside = face_mask(other_face.shape, target_faces[0]) > 0
    changed = np.abs(result.image.astype(int) - other_face).max(axis=2)[inside]
    assert (changed > 10).mean() > 0.3  # the face region really changed


def test_swapped_face_moves_towards_the_source_identity(pipeline, source, other_face):
    before = pipeline.analyse(other_face)[0]
    result = pipeline.swap_frame(source, other_face)
    after = pipeline.analyse(result.image)[0]

    assert dlib_distance(after.embedding, source.embedding) < dlib_distance(
        before.embedding, source.embedding
    )


def test_face_cut_by_the_image_edge(pipeline, source, astronaut):
    # Crop so the face touches the left and top border.
    face = pipeline.analyse(astronaut, embed=False)[0]
    x1, y1 = int(face.box[0]) + 12, int(face.box[1]) + 6
    target = np.ascontiguousarray(astronaut[y1 : y1 + 300, x1 : x1 + 300])
    target_faces = pipeline.analyse(target, embed=False)
    assert target_faces, "the cropped face should still be found"

    result = pipeline.swap_frame(source, target)
    assert result.image.shape == target.shape
    outside = _outside(target.shape, target_faces)
    assert np.array_equal(result.image[outside], target[outside])


def test_several_faces_in_one_call(pipeline, source, astronaut):
    # Two copies side by side; "many" swaps both in one swapper call.
    frame = np.hstack([astronaut, cv2.flip(astronaut, 1)])
    calls = []
    swapper = pipeline.swapper
    original = swapper.swap

    def counting(src, img, faces, **mode_options):
        calls.append(len(faces))
        return original(src, img, faces, **mode_options)

    swapper.swap = counting
    try:
        result = pipeline.swap_frame(source, frame, SwapOptions(faces="many"))
    finally:
        del swapper.swap
    assert calls == [2]
    assert len(result.faces_used) == 2


def test_delaunay_covers_the_points():
    pts = np.array([[10, 10], [90, 10], [50, 80], [50, 40], [20, 60]], np.float32)
    tris = delaunay(pts, (100, 100))
    assert len(tris) == 4
    assert set(np.unique(tris)) == set(range(5))


def _reference_triangulation(points, size):
    """delaunay / piecewise_affine_maps as first written: per point, per triangle, in Python."""
    w, h = size
    subdiv = cv2.Subdiv2D((-1, -1, w + 2, h + 2))
    index = {}
    for i, (x, y) in enumerate(np.clip(points, 0, [w, h])):
        key = (round(float(x), 3), round(float(y), 3))
        if key not in index:
            index[key] = i
            subdiv.insert((float(x), float(y)))
    tris = []
    for t in subdiv.getTriangleList():
        keys = [(round(float(t[2 * j]), 3), round(float(t[2 * j + 1]), 3)) for j in range(3)]
        if all(k in index for k in keys):
            tris.append([index[k] for k in keys])
    return np.array(tris, np.int32).reshape(-1, 3)


def _reference_maps(dst_pts, src_pts, tris, size):
    w, h = size
    tri_id = np.full((h, w), -1, np.int32)
    mats = np.zeros((len(tris), 2, 3), np.float32)
    for k, (a, b, c) in enumerate(tris):
        mats[k] = cv2.getAffineTransform(dst_pts[[a, b, c]], src_pts[[a, b, c]])
        cv2.fillConvexPoly(tri_id, np.round(dst_pts[[a, b, c]]).astype(np.int32), k)
    ys, xs = np.nonzero(tri_id >= 0)
    m = mats[tri_id[ys, xs]]
    map_x, map_y = np.full((h, w), -1, np.float32), np.full((h, w), -1, np.float32)
    map_x[ys, xs] = m[:, 0, 0] * xs + m[:, 0, 1] * ys + m[:, 0, 2]
    map_y[ys, xs] = m[:, 1, 0] * xs + m[:, 1, 1] * ys + m[:, 1, 2]
    return map_x, map_y, tri_id >= 0


def test_affine_matrices_are_opencvs_per_triangle_and_zero_for_a_degenerate_one():
    rng = np.random.default_rng(7)
    dst = rng.uniform(0, 300, (200, 3, 2)).astype(np.float32)
    src = (dst * 0.7 + rng.normal(0, 3, dst.shape)).astype(np.float32)
    dst[5] = [[10, 10], [20, 20], [30, 30]]  # collinear
    dst[6] = [[4, 4], [4, 4], [9, 1]]  # two corners at one point
    mats = classical.affine_matrices(dst, src)
    for k in range(len(dst)):
        if k in (5, 6):
            assert not mats[k].any()
        else:
            assert np.allclose(mats[k], cv2.getAffineTransform(dst[k], src[k]), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("seed", range(5))
def test_batched_triangulation_and_maps_match_the_per_triangle_ones(seed):
    """A 468-point mesh makes ~900 triangles a frame: delaunay and piecewise_affine_maps work on
    them in batches; the triangles are the same and the maps the same to float rounding."""
    rng = np.random.default_rng(seed)
    dst = rng.uniform(-4, 124, (300, 2)).astype(np.float32)
    dst[10] = dst[3]  # duplicates count once
    dst[11] = dst[3] + 1e-4
    if seed % 2:
        dst = np.round(dst)  # collinear and cocircular points
    src = (dst * 1.3 + rng.normal(0, 1.5, dst.shape)).astype(np.float32)
    tris = delaunay(dst, (120, 120))
    assert np.array_equal(tris, _reference_triangulation(dst, (120, 120)))
    map_x, map_y, covered = piecewise_affine_maps(dst, src, tris, (120, 120))
    ref_x, ref_y, ref_covered = _reference_maps(dst, src, tris, (120, 120))
    assert np.array_equal(covered, ref_covered)
    assert np.abs(map_x - ref_x).max() < 0.1 and np.abs(map_y - ref_y).max() < 0.1
    assert np.median(np.abs(map_x - ref_x)[covered]) < 1e-3


def test_swapper_needs_landmarks(source, astronaut):
    face = Face(box=np.array([0, 0, 10, 10], np.float32), score=1.0, landmarks_5=np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="68 target landmarks"):
        ClassicalSwapper().swap(source, astronaut, [face])


# --- quality: what the swap must keep from the target ------------------------------------------


def test_grayscale_target_gets_a_grayscale_face(pipeline, source, other_face):
    grey = cv2.cvtColor(cv2.cvtColor(other_face, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    for mode in ("fast", "standard", "hq"):
        result = pipeline.swap_frame(source, grey, SwapOptions(mode=mode))
        changed = np.abs(result.image.astype(int) - grey).max(axis=2) > 3
        assert changed.mean() > 0.01
        spread = np.ptp(result.image.astype(int), axis=2)[changed]
        assert spread.max() <= 2, mode  # no colour appears in a black-and-white photo


def _bar_over_mouth(image: np.ndarray, face) -> tuple[np.ndarray, np.ndarray]:
    out = image.copy()
    pts = face.landmarks_68
    x1, x2 = int(pts[48, 0]) - 10, int(pts[54, 0]) + 10
    y1, y2 = int(pts[51, 1]) - 6, int(pts[57, 1]) + 6
    bar = np.zeros(image.shape[:2], bool)
    bar[y1:y2, x1:x2] = True
    out[bar] = (200, 90, 30)  # a blue bar over the mouth
    return out, bar


def test_an_occluder_over_the_face_is_not_painted_over(pipeline, other_face, astronaut):
    target_face = pipeline.analyse(astronaut, embed=False)[0]
    target, bar = _bar_over_mouth(astronaut, target_face)
    source = pipeline.prepare_source([other_face])
    faces = pipeline.analyse(target, embed=False)
    kept = {}
    for occlusion in (True, False):
        swapper = ClassicalSwapper(ClassicalSettings(occlusion=occlusion))
        out = swapper.swap(source, target, faces)
        diff = np.abs(out.astype(int) - target).max(axis=2)
        kept[occlusion] = float((diff[bar] <= 3).mean())
    assert kept[True] > 0.95
    assert kept[False] < 0.8  # without the estimate the swap paints over the bar


def test_the_targets_open_mouth_is_kept_when_expressions_differ(pipeline, other_face, astronaut):
    source = pipeline.prepare_source([other_face])
    faces = pipeline.analyse(astronaut, embed=False)
    pts = faces[0].landmarks_68
    assert mouth_openness(pts) > 0.06  # she smiles with her teeth showing
    inner = np.zeros(astronaut.shape[:2], np.uint8)
    cv2.fillPoly(inner, [np.round(pts[60:68]).astype(np.int32)], 255)
    inner = cv2.erode(inner, np.ones((3, 3), np.uint8)) > 0
    same = {}
    for keep in (True, False):
        # tolerance -1: treat the expressions as different, as for an open mouth over closed lips
        settings = ClassicalSettings(keep_target_mouth=keep, expression_tolerance=-1.0)
        out = ClassicalSwapper(settings).swap(source, astronaut, faces)
        same[keep] = float((np.abs(out.astype(int) - astronaut).max(axis=2)[inner] <= 4).mean())
    assert same[True] > 0.9  # teeth and tongue are the target's
    assert same[False] < same[True] - 0.3


def test_hq_keeps_a_small_source_face_as_recognisable_as_standard(pipeline, astronaut, other_face):
    # A source photo at half size: its face is upscaled onto the target and comes out soft. Its
    # finest octaves hold interpolation texture, not the source's detail: boosting them to the
    # picture's crispness (as hq once did) cost 0.03 in dlib distance to the source.
    small = cv2.resize(astronaut, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    source = pipeline.prepare_source([small])
    face = pipeline.analyse(other_face, embed=False)[0]
    inside = cv2.erode(face_mask(other_face.shape, face), np.ones((15, 15), np.uint8)) > 0

    def detail(image: np.ndarray) -> float:
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
        return float(np.abs(cv2.Laplacian(grey, cv2.CV_32F))[inside].mean())

    out = {
        mode: pipeline.swap_frame(source, other_face, SwapOptions(mode=mode)).image
        for mode in ("standard", "hq")
    }
    d_src = {
        mode: dlib_distance(pipeline.analyse(image)[0].embedding, source.embedding)
        for mode, image in out.items()
    }
    assert d_src["hq"] <= d_src["standard"] + 0.01, d_src
    ratio = {mode: detail(image) / detail(other_face) for mode, image in out.items()}
    assert ratio["standard"] < 0.85  # one capped sharpen leaves it visibly softer than its picture
    assert ratio["hq"] > 0.95 * ratio["standard"], ratio  # and hq is no softer than standard


def test_several_source_photos_are_used(pipeline, astronaut, other_face):
    one = pipeline.prepare_source([astronaut])
    two = pipeline.prepare_source([astronaut, cv2.flip(astronaut, 1)])
    assert len(two.photos) == 2
    for mode in ("standard", "hq"):
        a = pipeline.swap_frame(one, other_face, SwapOptions(mode=mode)).image
        b = pipeline.swap_frame(two, other_face, SwapOptions(mode=mode)).image
        assert not np.array_equal(a, b), mode


def test_the_pose_closest_photo_is_chosen(pipeline, astronaut, other_face):
    target = pipeline.analyse(other_face, embed=False)[0].landmarks_68
    straight = pipeline.analyse(astronaut, embed=False)[0].landmarks_68
    mirrored = pipeline.analyse(cv2.flip(astronaut, 1), embed=False)[0].landmarks_68
    # other_face is the astronaut mirrored: the mirrored photo matches its pose better.
    assert pose_residual(mirrored, target) < pose_residual(straight, target)


def test_nothing_is_taken_from_outside_the_source_photo():
    image = np.full((100, 100, 3), 200, np.uint8)
    src = np.array([[-40, 10], [60, 10], [60, 90], [-40, 90]], np.float32)  # left part off the photo
    dst = np.array([[10, 10], [110, 10], [110, 90], [10, 90]], np.float32)
    tris = np.array([[0, 1, 2], [0, 2, 3]], np.int32)
    warped, valid = ClassicalSwapper()._warp(image, src, dst, tris, (130, 100))
    assert valid[50, 20] == 0 and warped[50, 20].tolist() == [0, 0, 0]  # maps to x = -30: a hole
    assert valid[50, 90] == 255 and warped[50, 90].tolist() == [200, 200, 200]


def test_hq_replaces_as_much_of_the_face_as_standard(pipeline, source, other_face):
    # hq warps at 2x and reduces: a stricter test of which pixels came from the source than
    # standard's would shrink its face by a pixel all round, leaving more of the target's identity.
    changed = {
        mode: np.abs(
            pipeline.swap_frame(source, other_face, SwapOptions(mode=mode)).image.astype(int) - other_face
        )
        .max(axis=2)
        .astype(bool)
        for mode in ("standard", "hq")
    }
    lost = (changed["standard"] & ~changed["hq"]).sum() / changed["standard"].sum()
    assert lost < 0.015, lost


def test_a_source_photos_figures_are_computed_once_for_its_pixels(pipeline, other_face, astronaut, monkeypatch):
    """A user's selfie into one target after another: each job decodes it into a new array, and the
    figures of its face (what in its hull is not skin) are still computed once; other pixels, again."""
    computed = []
    real = classical.occlusion_mask
    monkeypatch.setattr(classical, "occlusion_mask", lambda *args, **kw: computed.append(1) or real(*args, **kw))
    photo = astronaut.copy()
    photo[0, 0] ^= 1  # pixels no other test swapped in
    faces = pipeline.analyse(other_face, embed=False)

    pipeline.swap_frame(pipeline.prepare_source([photo]), other_face, faces=faces)
    source_figures = len(computed)  # the target's own figure is computed each time
    pipeline.swap_frame(pipeline.prepare_source([photo.copy()]), other_face, faces=faces)
    assert len(computed) == 2 * source_figures - 1

    changed = photo.copy()
    changed[0, 1] ^= 1
    pipeline.swap_frame(pipeline.prepare_source([changed]), other_face, faces=faces)
    assert len(computed) == 3 * source_figures - 1


def test_each_source_photo_is_digested_once_across_frames(pipeline, astronaut, other_face, monkeypatch):
    """hq uses every source photo on every frame: each photo's pixels are hashed once, not once a frame."""
    hashed = []

    class CountingHashlib:
        @staticmethod
        def sha256(data):
            hashed.append(1)
            return hashlib.sha256(data)

    monkeypatch.setattr(classical, "hashlib", CountingHashlib)
    source = pipeline.prepare_source([astronaut.copy(), cv2.flip(astronaut, 1)])
    faces = pipeline.analyse(other_face, embed=False)
    for _ in range(3):  # three frames of a clip
        pipeline.swap_frame(source, other_face, SwapOptions(mode="hq"), faces=faces)
    assert len(hashed) == 2


def test_pale_grey_hair_along_the_side_of_a_source_face_is_left_out(pipeline, astronaut):
    """The mesh's outline runs over the temples: a source's grey hair there (lighter than the skin,
    under half its colour) passed the occluder thresholds and was warped into the target as a white
    streak beside the eye. With the source's rim band it is left out; an as pale shine on the
    forehead is not (it is the person's)."""
    face = pipeline.analyse(astronaut, embed=False)[0]
    pts68 = face.landmarks_68
    photo = (astronaut.astype(np.float32) * 0.6).astype(np.uint8)  # an indoor photo: skin at mid grey
    region = extended_points(pts68, ClassicalSettings().forehead)
    size = float(np.linalg.norm(region.max(0) - region.min(0))) / np.sqrt(2)
    lab = cv2.cvtColor(photo, cv2.COLOR_BGR2LAB).astype(np.float32)
    sample = skin_sample_mask(photo.shape[:2], pts68, size) > 0
    l_skin = float(np.median(lab[..., 0][sample]))
    chroma = np.median(lab[..., 1:][sample], axis=0) - 128
    pale = np.array([min(245.0, 1.3 * l_skin + 20), *(128 + 0.4 * chroma)], np.float32)
    pale_bgr = cv2.cvtColor(pale.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_LAB2BGR)[0, 0].tolist()

    image = photo.copy()
    hull = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(np.round(region).astype(np.int32)), 255)
    # A strip of hair just inside the hull's edge beside the eye (jaw points 0-2: temple to cheek).
    centre = pts68[27:36].mean(0)
    strip = [(p + (centre - p) * 0.05) for p in pts68[0:3]]
    hair = np.zeros_like(hull)
    cv2.polylines(hair, [np.round(strip).astype(np.int32)], False, 255, max(2, int(0.04 * size)))
    hair &= hull
    image[hair > 0] = pale_bgr
    # The same pale colour as a shine on the forehead, near the hull's top edge.
    shine = np.zeros_like(hull)
    top = region[68:].mean(0) + (pts68[8] - pts68[27]) * 0.06
    cv2.circle(shine, tuple(int(v) for v in np.round(top)), max(3, int(0.03 * size)), 255, -1)
    shine &= hull
    image[shine > 0] = pale_bgr

    before = occlusion_mask(image, pts68, size, region_points=region)
    after = occlusion_mask(image, pts68, size, region_points=region, rim=SOURCE_RIM)
    flagged = lambda mask, where: float((mask[where > 0] > 0).mean())  # noqa: E731
    assert flagged(before, hair) < 0.5  # the failure: most of the strip passed as skin
    assert flagged(after, hair) > 0.8
    assert flagged(after, shine) == flagged(before, shine)
    # Nothing else changes.
    rest = cv2.dilate(hair, np.ones((15, 15), np.uint8)) == 0
    assert np.array_equal(after[rest], before[rest])


def test_a_full_digest_store_lets_go_of_the_photo_used_longest_ago_not_the_ones_in_use(pipeline, astronaut):
    """Eight photos held (other jobs' selfies): a clip's two photos each hashed once across its
    frames; emptied when full, the first was let go as the second came in, and hashed again."""
    swapper = ClassicalSwapper()
    others = [np.full((8, 8, 3), i, np.uint8) for i in range(SOURCE_PHOTOS_HELD - 1)]
    for photo in others:
        swapper._digest(photo)
    clip_photos = [astronaut.copy(), cv2.flip(astronaut, 1)]
    digests = [swapper._digest(photo) for photo in clip_photos]
    held = dict(swapper._digests)
    for _ in range(3):
        assert [swapper._digest(photo) for photo in clip_photos] == digests
    assert {key: value[1] for key, value in swapper._digests.items()} == {k: v[1] for k, v in held.items()}
    assert id(clip_photos[0]) in swapper._digests and id(clip_photos[1]) in swapper._digests
    assert id(others[0]) not in swapper._digests  # the one used longest ago went
    assert len(swapper._digests) == SOURCE_PHOTOS_HELD


def _source_mask_inputs(pipeline, astronaut, scale: float, pad: tuple[int, int]):
    """The astronaut enlarged by `scale` on a canvas padded by `pad` (left, top) pixels, her 68
    points, the source's region points and face size, as the swapper takes them."""
    big = cv2.resize(astronaut, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    left, top = pad
    image = cv2.copyMakeBorder(big, top, 37, left, 41, cv2.BORDER_REFLECT)
    face = pipeline.analyse(image, embed=False)[0]
    region = extended_points(face.landmarks_68, ClassicalSettings().forehead)
    size = float(np.linalg.norm(region.max(0) - region.min(0))) / np.sqrt(2)
    return image, face.landmarks_68, region, size


def _boxed_source_mask(image, pts68, region, size):
    def compute(picture, to_picture):
        return occlusion_mask(
            picture, to_picture(pts68), size * to_picture.factor, region_points=to_picture(region), rim=SOURCE_RIM
        )

    return classical.on_face_box(image, np.vstack([pts68, region]), size, compute)


@pytest.mark.parametrize(("scale", "pad"), [(1.0, (0, 0)), (1.7, (13, 6)), (2.3, (101, 250))])
def test_a_source_mask_worked_out_in_a_box_round_the_face_is_the_whole_photos(pipeline, astronaut, scale, pad):
    image, pts68, region, size = _source_mask_inputs(pipeline, astronaut, scale, pad)
    assert size <= classical.SOURCE_MASK_FACE_PX
    whole = occlusion_mask(image, pts68, size, region_points=region, rim=SOURCE_RIM)
    assert whole.any()
    np.testing.assert_array_equal(_boxed_source_mask(image, pts68, region, size), whole)


def test_a_large_source_face_is_masked_on_a_reduced_copy_close_to_the_whole_photos(pipeline, astronaut, monkeypatch):
    image, pts68, region, size = _source_mask_inputs(pipeline, astronaut, 2.3, (40, 40))
    # A dark blue bar across the cheek and jaw (a sleeve, a phone): an occluder the mask must hold.
    bar = np.round([pts68[3], pts68[4], pts68[48] + (pts68[57] - pts68[48]) * 0.3, pts68[31]]).astype(np.int32)
    cv2.fillConvexPoly(image, bar, (120, 40, 20))
    monkeypatch.setattr(classical, "SOURCE_MASK_FACE_PX", size / 2.5)  # as a ~1,500-px selfie face is
    whole = occlusion_mask(image, pts68, size, region_points=region, rim=SOURCE_RIM) > 0
    reduced = _boxed_source_mask(image, pts68, region, size) > 0
    assert whole.sum() > 0.02 * size * size  # the bar is in it
    # 0.91 (2026-12-06): the reduced copy's edges, a pixel or two of it, are 2.5 px of the photo
    assert (whole & reduced).sum() / (whole | reduced).sum() > 0.85
    assert not reduced[: int(region[:, 1].min() - size / 4), :].any()  # nothing far above the face
