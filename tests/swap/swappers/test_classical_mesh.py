"""The classical swapper on the dense Face Mesh warp: the target's expression is kept."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from swap.face_mesh_points import (
    MESH_LEFT_EYE,
    MESH_LOWER_INNER_LIP,
    MESH_RIGHT_EYE,
    MESH_TO_68,
    MESH_UPPER_INNER_LIP,
)
from swap.swappers import classical
from swap.swappers.classical import (
    ClassicalSettings,
    ClassicalSwapper,
    closed_lips,
    delaunay,
    eye_openness_each,
    kept_eyes,
    mesh_destination,
    mouth_openness,
    piecewise_affine_maps,
    rim_stretch,
    soften_feature_corners,
    stretched,
    teeth_differ,
    teeth_shown,
)

LOWER_LIP = [146, 91, 181, 84, 17, 314, 405, 321, 375, 95, 88, 178, 87, 14, 317, 402, 318, 324]
CHIN = [152, 148, 176, 149, 150, 377, 400, 378, 379, 365, 397, 288, 58, 172, 136, 18, 200, 199, 175, 83, 313]
INNER_LIPS = [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 415, 310, 311, 312, 13, 82, 81, 80, 191]


def open_mouth(pipeline, image: np.ndarray) -> np.ndarray:
    """`image` with the face's jaw dropped (lower lip and chin moved down by a warp on its mesh) and
    the mouth's inside dark: a person caught talking."""
    (face,) = pipeline.analyse(image, embed=False)
    src = face.landmarks_468[:, :2].astype(np.float32)
    dst = src.copy()
    width = float(np.linalg.norm(src[291] - src[61]))
    dst[LOWER_LIP, 1] += 0.35 * width
    dst[CHIN, 1] += 0.25 * width
    h, w = image.shape[:2]
    corners = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], np.float32)
    to, back = np.vstack([dst, corners]), np.vstack([src, corners])
    map_x, map_y, _ = piecewise_affine_maps(to, back, delaunay(to, (w, h)), (w, h))
    out = cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    cv2.fillPoly(out, [np.round(dst[INNER_LIPS]).astype(np.int32)], (30, 25, 60))
    return out


def measured_mouth(pipeline, image: np.ndarray) -> float:
    (face,) = pipeline.analyse(image, embed=False)
    return mouth_openness(face.landmarks_68)


def test_the_targets_mouth_opening_is_kept(mesh_pipeline, astronaut):
    target = open_mouth(mesh_pipeline, astronaut)
    source = cv2.flip(astronaut, 1)
    result = mesh_pipeline.swap_image(source, target).image
    opening = {
        name: measured_mouth(mesh_pipeline, im) for name, im in (("target", target), ("source", source))
    }
    assert opening["target"] > opening["source"] + 0.05  # the synthetic jaw drop shows in the mesh
    swapped = measured_mouth(mesh_pipeline, result)
    assert abs(swapped - opening["target"]) < 0.04


def test_the_foreshortened_rim_of_the_source_is_found():
    """A grid whose right-most column of cells the source shows squeezed to a quarter (the far cheek
    of a turned head) and one squeezed cell inside: only the rim strip is marked, as the swap keeps
    the target's pixels there and the source's own features inside."""
    xs, ys = np.meshgrid(np.arange(0, 121, 20, dtype=np.float32), np.arange(0, 121, 20, dtype=np.float32))
    dst = np.stack([xs.ravel(), ys.ravel()], axis=1) + 10
    src = dst.copy()
    right = dst[:, 0] > 120
    src[right, 0] = 110 + (dst[right, 0] - 110) / 4  # the last column: 20 px wide -> 5 px
    inner = (dst[:, 0] == 70) & (dst[:, 1] == 70)
    src[inner, 0] -= 15  # one interior point pulled aside: its cells squeezed on one side
    tris = delaunay(dst, (141, 141))
    marked = stretched(dst, src, tris, (141, 141), limit=3.0)
    assert marked[70, 125] == 255  # the squeezed rim strip
    assert marked[70, 60] == 255  # the squeezed interior cell ...
    region = np.zeros((141, 141), np.uint8)
    region[10:131, 10:131] = 255
    rim = rim_stretch(marked, region)
    assert rim[70, 125] == 255 and rim[70, 60] == 0  # ... is no rim
    assert stretched(dst, dst * 0.5, tris, (141, 141), limit=3.0).max() == 0  # a smaller source is no stretch


def highlight(image: np.ndarray, centre: np.ndarray, radius: float, strength: float) -> np.ndarray:
    """`image` with a specular highlight: white light mixed in, up to `strength`, in a Gaussian spot."""
    h, w = image.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    spot = strength * np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * radius**2))
    return np.clip(image + spot[..., None] * (255.0 - image), 0, 255).astype(np.uint8)


def cheek_brightening(pipeline, astronaut, target_image, settings: ClassicalSettings) -> float:
    """How much lighter the target's right cheek gets (99th percentile of the L* step) when the
    source (the astronaut) has a white specular highlight on hers."""
    (face,) = pipeline.analyse(astronaut, embed=False)
    shiny = highlight(astronaut, face.landmarks_468[50, :2], 0.02 * float(face.box[2] - face.box[0]), 1.0)
    (target,) = pipeline.analyse(target_image, embed=False)
    spot = np.zeros(target_image.shape[:2], np.uint8)
    cheek = tuple(int(v) for v in np.round(target.landmarks_468[50, :2]))
    cv2.circle(spot, cheek, int(0.08 * (target.box[2] - target.box[0])), 255, -1)
    swapper = ClassicalSwapper(settings)
    lights = [
        cv2.cvtColor(swapper.swap(pipeline.prepare_source([src]), target_image, [target]), cv2.COLOR_BGR2LAB)[
            ..., 0
        ].astype(np.float32)
        for src in (astronaut, shiny)
    ]
    return float(np.percentile((lights[1] - lights[0])[spot > 0], 99))


def test_a_highlight_on_the_sources_cheek_is_no_bright_blob(mesh_pipeline, astronaut, other_face):
    """A shiny spot on the source's cheek is finer than the lighting transfer's scale, so it was
    pasted as it is: a bright round blob on the target's cheek (as a real source's shiny nose tip
    was on the bench). It is flattened into the skin round it."""
    # Measured: 10.0 with the highlight flattened, 35 without (8.0 / 24 with the seam 4 % inside the
    # outline; 14 when the texture's spread took in the outline's band); 11.0 since the Poisson clone
    # is solved by sine transforms (OpenCV's result within 2 levels, its fixed edge a pixel further
    # out; the measure is a percentile of whole L* levels).
    assert cheek_brightening(mesh_pipeline, astronaut, other_face, ClassicalSettings()) < 12.0
    unflattened = ClassicalSettings(remove_highlights=False)
    assert (
        cheek_brightening(mesh_pipeline, astronaut, other_face, unflattened) > 18.0
    )  # the check sees the defect


def test_a_source_highlight_goes_when_the_target_shines_elsewhere(mesh_pipeline, astronaut, other_face):
    """A target with a shiny cheek of its own (the other one) must not let the source's highlight
    through: painting out only spots brighter than the target's brightest skin left the source's lit
    nose rim as a white blob on the nose wing of a turned head (biden_1 -> paul_rudd_2 on the bench).
    Measured: 11.0 (8.8 with the seam 4 % inside the outline); 23.8 with the brightest-skin rule."""
    (target,) = mesh_pipeline.analyse(other_face, embed=False)
    width = float(target.box[2] - target.box[0])
    shiny_target = highlight(other_face, target.landmarks_468[280, :2], 0.03 * width, 1.0)  # the left cheek
    assert cheek_brightening(mesh_pipeline, astronaut, shiny_target, ClassicalSettings()) < 12.0


def test_a_bar_over_the_mouth_is_kept_and_tints_nothing(mesh_pipeline, astronaut, other_face):
    """A blue bar across half the mouth (a microphone, a hand): all of it stays the target's,
    including where it covers the inner mouth (left out of the occluder there, it was painted over),
    and the face round it keeps its colour (the Poisson solve took the bar as its boundary and
    tinted the lips and nose blue-purple: b* -6.6 above the bar, 71 % of the bar kept)."""
    (target,) = mesh_pipeline.analyse(other_face, embed=False)
    points, (x1, _, x2, y2) = target.landmarks_68, target.box
    width, height = x2 - x1, y2 - target.box[1]
    top = int(points[62, 1] - 0.03 * height)
    bar = np.zeros(other_face.shape[:2], np.uint8)
    cv2.rectangle(
        bar,
        (int(points[48, 0] - 0.1 * width), top),
        (int(points[51, 0] + 0.05 * width), int(points[57, 1] + 0.05 * height)),
        255,
        -1,
    )
    barred = other_face.copy()
    barred[bar > 0] = (200, 90, 30)
    source = mesh_pipeline.prepare_source([astronaut])
    with_bar = ClassicalSwapper().swap(source, barred, [target])
    without = ClassicalSwapper().swap(source, other_face, [target])

    kept = float((np.abs(with_bar.astype(int) - barred).max(axis=2)[bar > 0] <= 6).mean())
    assert kept > 0.95
    above = np.zeros_like(bar)  # the face above the bar: upper lip, nose, cheeks
    cv2.rectangle(above, (int(x1), int(top - 0.25 * height)), (int(x2), top), 255, -1)
    above &= ~cv2.dilate(bar, np.ones((int(0.06 * width),) * 2, np.uint8))
    cv2.fillConvexPoly(face := np.zeros_like(bar), cv2.convexHull(np.round(points).astype(np.int32)), 255)
    above &= face
    b_star = [
        cv2.cvtColor(img, cv2.COLOR_BGR2LAB)[..., 2][above > 0].astype(np.float32).mean()
        for img in (with_bar, without)
    ]
    assert abs(b_star[0] - b_star[1]) < 2.0  # measured 0.25


def test_stretched_eye_corners_are_softened_and_nothing_else(mesh_pipeline, astronaut):
    """A narrow source eye opened onto a wide target eye spreads its lashes over the corners in thin
    stretched triangles: a saw-toothed dark smear on a turned head's far eye (biden_1 -> paul_rudd_2
    on the bench). Those triangles are blurred; stretch elsewhere and every other pixel stay as
    they are."""
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    points, size = face.landmarks_68, float(face.box[2] - face.box[0])
    image = astronaut.copy()
    corner = points[45]  # the image-right eye's outer corner
    stretch = np.zeros(astronaut.shape[:2], np.uint8)
    for k in range(6):  # dark teeth of lashes in thin slivers beside the corner
        tip = corner + [0.01 * size * k, 0.04 * size]
        sliver = np.round([corner + [0.01 * size * k, 0], corner + [0.01 * size * (k + 0.5), 0], tip]).astype(
            np.int32
        )
        cv2.fillConvexPoly(stretch, sliver, 255)
        cv2.fillConvexPoly(image, sliver, (20, 20, 20))
    chin = np.round([points[8], points[8] + [0.05 * size, 0], points[8] + [0, 0.02 * size]]).astype(np.int32)
    cv2.fillConvexPoly(stretch, chin, 255)  # stretch far from the eyes: left alone

    out = soften_feature_corners(image, stretch, points, size)

    def edges(img: np.ndarray) -> float:
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
        zone = cv2.dilate(stretch, np.ones((5, 5), np.uint8)) > 0
        zone[int(points[8][1]) - 5 :] = False
        return float(np.abs(cv2.Laplacian(grey, cv2.CV_32F))[zone].mean())

    assert edges(out) < 0.8 * edges(image)  # measured 0.68 (a 110-px face: a 1.3-px blur)
    near = cv2.dilate(stretch, np.ones((int(0.1 * size),) * 2, np.uint8)) > 0
    near[int(points[8][1]) - 5 :] = False  # the chin's stretch is not near an eye
    assert np.array_equal(out[~near], image[~near])
    assert soften_feature_corners(image, np.zeros_like(stretch), points, size) is image


def test_a_stretched_mouth_corner_is_softened_and_not_the_teeth_between(mesh_pipeline, astronaut):
    """A smile narrower than the target's draws its corner out in thin stretched triangles: a dark
    wedge with a jagged pale lip edge (eileen_collins_1 -> paul_rudd_1 on the bench). The corner's
    slivers are blurred; a sliver between the front teeth stays sharp."""
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    points, size = face.landmarks_68, float(face.box[2] - face.box[0])
    image = astronaut.copy()
    corner = points[54]  # the image-right mouth corner
    at_corner = np.zeros(astronaut.shape[:2], np.uint8)
    for k in range(4):  # pale and dark teeth of a lip edge in slivers at the corner
        sliver = [corner + [-0.02 * size * k, -0.01 * size], corner + [-0.02 * size * (k + 0.5), -0.01 * size], corner]
        cv2.fillConvexPoly(at_corner, np.round(sliver).astype(np.int32), 255)
        cv2.fillConvexPoly(image, np.round(sliver).astype(np.int32), (235, 235, 235) if k % 2 else (25, 20, 20))
    middle = (points[62] + points[66]) / 2
    between = np.zeros_like(at_corner)
    gap = [middle + [0, -0.015 * size], middle + [0.004 * size, 0.015 * size], middle + [-0.004 * size, 0.015 * size]]
    cv2.fillConvexPoly(between, np.round(gap).astype(np.int32), 255)
    image[between > 0] = (30, 30, 30)

    out = soften_feature_corners(image, at_corner | between, points, size)

    grey = {name: cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32) for name, img in (("in", image), ("out", out))}
    zone = cv2.dilate(at_corner, np.ones((3, 3), np.uint8)) > 0
    lap = {name: float(np.abs(cv2.Laplacian(g, cv2.CV_32F))[zone].mean()) for name, g in grey.items()}
    assert lap["out"] < 0.8 * lap["in"]
    assert np.array_equal(out[between > 0], image[between > 0])


OUTER_LIPS = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185]


def shut_mouth(pipeline, image: np.ndarray) -> tuple[np.ndarray, list]:
    """`image` with the face's mouth painted shut (the lips filled with their own colour, no teeth,
    a dark line where they meet) and its face with the mesh's inner lips closed to match."""
    (face,) = pipeline.analyse(image, embed=False)
    mesh = face.landmarks_468.copy()
    out = image.copy()
    lips = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(lips, [np.round(mesh[OUTER_LIPS, :2]).astype(np.int32)], 255)
    colour = np.median(image[lips > 0], axis=0)
    out[lips > 0] = colour
    mesh[MESH_LOWER_INNER_LIP, :2] = mesh[MESH_UPPER_INNER_LIP, :2] + [0.0, 0.5]
    line = np.round(mesh[[61, *MESH_UPPER_INNER_LIP, 291], :2]).astype(np.int32)
    cv2.polylines(out, [line], False, tuple(float(c) * 0.5 for c in colour), 1, cv2.LINE_AA)
    shut = dataclasses.replace(face, landmarks_468=mesh, landmarks_68=mesh[MESH_TO_68, :2].astype(np.float32))
    return out, [shut]


def teeth(image: np.ndarray, face) -> int:
    """Pixels inside the face's outer lip line much lighter than the lips: teeth."""
    lips = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(lips, [np.round(face.landmarks_468[OUTER_LIPS, :2]).astype(np.int32)], 255)
    light = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
    return int(((light > np.median(light[lips > 0]) + 40) & (lips > 0)).sum())


def test_a_shut_mouth_stays_shut_under_a_source_that_shows_its_teeth(mesh_pipeline, astronaut, monkeypatch):
    """The astronaut smiles with her teeth showing; the target's mouth is shut. The warp closes the
    source's lips onto the target's, but the triangles joining them span the source's open mouth:
    its teeth were drawn over the closed lips, a grin where the target has none (0.10 opening
    measured on a real pair of ../shared/faces). They are left out and the target's lips stay."""
    target, faces = shut_mouth(mesh_pipeline, cv2.flip(astronaut, 1))
    assert mouth_openness(faces[0].landmarks_68) < 0.02 < 0.1 < measured_mouth(mesh_pipeline, astronaut)
    source = mesh_pipeline.prepare_source([astronaut])
    assert teeth(target, faces[0]) == 0
    assert teeth(ClassicalSwapper().swap(source, target, faces), faces[0]) <= 2
    # The check sees the defect: with the source's opening kept in, its teeth come through.
    monkeypatch.setattr(classical, "unmatched_openings", lambda *args: None)
    assert teeth(ClassicalSwapper().swap(source, target, faces), faces[0]) > 15


def test_a_shut_mouth_the_mesh_places_open_stays_shut(mesh_pipeline, astronaut, monkeypatch):
    """Face Mesh can place a closed smile's inner lips apart (0.15 opening on a real photo of
    ../shared/faces whose lips touch, as open as the astronaut's grin): by the openings the two
    expressions matched and the source's teeth were drawn over the closed lips. The teeth each
    mouth shows tell them apart."""
    image = cv2.flip(astronaut, 1)
    target, _ = shut_mouth(mesh_pipeline, image)
    (face,) = mesh_pipeline.analyse(image, embed=False)  # the grin's mesh, over the shut pixels
    source = mesh_pipeline.prepare_source([astronaut])
    assert abs(mouth_openness(face.landmarks_68) - mouth_openness(source.face.landmarks_68)) < 0.05
    assert teeth_shown(target, face.landmarks_68) < 0.001 < classical.TEETH_SHOWN
    assert teeth_shown(astronaut, source.face.landmarks_68) > 2 * classical.TEETH_SHOWN
    assert teeth(ClassicalSwapper().swap(source, target, [face]), face) <= 2
    # The check sees the defect: judged by the openings alone, the source's teeth come through.
    monkeypatch.setattr(classical, "teeth_differ", lambda *args: False)
    assert teeth(ClassicalSwapper().swap(source, target, [face]), face) > 15


def test_a_grin_keeps_its_teeth_under_a_source_with_a_shut_mouth(mesh_pipeline, astronaut, monkeypatch):
    """The reverse: the target grins, the source's lips are closed though its mesh places them
    apart. The source's closed lips would be stretched over the target's teeth; they stay."""
    target = cv2.flip(astronaut, 1)
    (face,) = mesh_pipeline.analyse(target, embed=False)
    shut, _ = shut_mouth(mesh_pipeline, astronaut)
    (source_face,) = mesh_pipeline.analyse(astronaut, embed=False)  # the grin's mesh on shut lips
    source = mesh_pipeline.prepare_source([shut], faces=[[source_face]])
    assert abs(mouth_openness(face.landmarks_68) - mouth_openness(source_face.landmarks_68)) < 0.05
    before = teeth(target, face)
    assert before > 50
    assert teeth(ClassicalSwapper().swap(source, target, [face]), face) > 0.8 * before
    monkeypatch.setattr(classical, "teeth_differ", lambda *args: False)
    assert teeth(ClassicalSwapper().swap(source, target, [face]), face) < 0.5 * before


def test_teeth_differ_only_when_one_mouth_shows_far_more():
    shown = classical.TEETH_SHOWN
    assert teeth_differ(2 * shown, 0.0)
    assert teeth_differ(shown, shown / 6)
    assert not teeth_differ(shown, shown / 4)  # both show teeth: the same expression
    assert not teeth_differ(shown / 2, 0.0)  # a glint between closed lips is not a grin
    # A mouth too small to tell (a small face in a video): nothing is decided on it.
    assert not teeth_differ(2 * shown, None) and not teeth_differ(None, 0.0)


def test_a_mouth_too_small_to_tell_shows_no_teeth_figure(astronaut, mesh_pipeline):
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    assert teeth_shown(astronaut, face.landmarks_68) > classical.TEETH_SHOWN
    small = cv2.resize(astronaut, None, fx=0.2, fy=0.2, interpolation=cv2.INTER_AREA)
    assert teeth_shown(small, face.landmarks_68 * 0.2) is None  # a ~20-px mouth


def test_closed_lips_meet_on_their_middle_line_a_sliver_apart():
    points = np.array([[0.0, 0.0], [10.0, 2.0], [10.0, 12.0], [0.0, 20.0]], np.float32)
    closed_lips(points, [1], [2], gap=0.1)
    assert np.allclose(points[[1, 2]], [[10.0, 6.5], [10.0, 7.5]])
    assert np.array_equal(points[[0, 3]], [[0.0, 0.0], [0.0, 20.0]])  # nothing else moves


def test_a_source_photos_figures_are_taken_once_for_many_frames(mesh_pipeline, astronaut, monkeypatch):
    """A video swaps one source photo onto every frame: its teeth figure and what in it is not
    face are taken once; the target's teeth each frame."""
    source = mesh_pipeline.prepare_source([astronaut])
    photo = (source.photos or [(source.image, source.face)])[0][0]
    target = cv2.flip(astronaut, 1)
    (face,) = mesh_pipeline.analyse(target, embed=False)
    calls = []
    teeth_of, not_face_of = classical.teeth_shown, classical.occlusion_mask
    monkeypatch.setattr(
        classical, "teeth_shown", lambda image, points: calls.append(("teeth", image is photo)) or teeth_of(image, points)
    )
    monkeypatch.setattr(
        classical,
        "occlusion_mask",
        # the source's mask is worked out on a box of the photo (a view of it)
        lambda image, *args, **kwargs: calls.append(("mask", np.shares_memory(image, photo)))
        or not_face_of(image, *args, **kwargs),
    )
    swapper = ClassicalSwapper()
    for _ in range(3):
        swapper.swap(source, target, [face])
    assert calls.count(("teeth", True)) == 1 and calls.count(("mask", True)) == 1
    assert calls.count(("teeth", False)) == 3


def test_lips_are_closed_only_over_a_mouth_no_wider_than_the_grin(mesh_pipeline, astronaut, monkeypatch):
    """A target whose mouth is open wider than the source's grin, without teeth (a dropped jaw, an
    "O"), keeps its opening; only a mouth the mesh opens as far as the grin, or less, is closed."""
    closed = []
    monkeypatch.setattr(classical, "closed_lips", lambda points, *args: closed.append(len(points)))
    source = mesh_pipeline.prepare_source([astronaut])
    dropped = open_mouth(mesh_pipeline, cv2.flip(astronaut, 1))
    (face,) = mesh_pipeline.analyse(dropped, embed=False)
    assert teeth_differ(teeth_shown(astronaut, source.face.landmarks_68), teeth_shown(dropped, face.landmarks_68))
    ClassicalSwapper().swap(source, dropped, [face])
    assert closed == []
    image = cv2.flip(astronaut, 1)
    shut, _ = shut_mouth(mesh_pipeline, image)
    (face,) = mesh_pipeline.analyse(image, embed=False)
    ClassicalSwapper().swap(source, shut, [face])
    assert closed == [468, 68]


def eyes_apart(pipeline, image: np.ndarray, spread: float) -> np.ndarray:
    """`image` with the eyes (and the skin round them) moved apart by `spread` x their distance: the
    same person with another eye spacing, warped on the mesh."""
    (face,) = pipeline.analyse(image, embed=False)
    src = face.landmarks_468[:, :2].astype(np.float32)
    right, left = src[MESH_RIGHT_EYE].mean(0), src[MESH_LEFT_EYE].mean(0)
    shift = (left - right) * spread / 2
    dst = src.copy()
    near = 0.45 * float(np.linalg.norm(left - right))
    for centre, sign in ((right, -1), (left, 1)):
        weight = np.clip(1.5 - np.linalg.norm(src - centre, axis=1) / near, 0, 1)  # 1 on the eye, 0 past it
        dst += sign * weight[:, None] * shift
    h, w = image.shape[:2]
    corners = np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]], np.float32)
    to, back = np.vstack([dst, corners]), np.vstack([src, corners])
    map_x, map_y, _ = piecewise_affine_maps(to, back, delaunay(to, (w, h)), (w, h))
    return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def eye_distance(pipeline, image: np.ndarray) -> float:
    """The distance between the eyes' centres over the face's width (jaw's ends)."""
    (face,) = pipeline.analyse(image, embed=False)
    points = face.landmarks_468[:, :2]
    width = float(np.linalg.norm(points[454] - points[234]))
    return float(np.linalg.norm(points[MESH_LEFT_EYE].mean(0) - points[MESH_RIGHT_EYE].mean(0))) / width


def test_a_moved_eye_takes_the_sources_place_and_size_and_keeps_the_targets_opening(mesh_pipeline, astronaut):
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    target = face.landmarks_468.astype(np.float32)
    source = target.copy()
    eye = source[MESH_LEFT_EYE, :2]
    centre = eye.mean(0)
    source[MESH_LEFT_EYE, :2] = (
        centre + [12.0, 0.0] + 1.44 * (eye - centre) * [1.0, 2.0]
    )  # wider, and open wider
    kept = mesh_destination(source, target, 0.5)
    moved = mesh_destination(source, target, 0.5, moved=("left_eye",))
    assert np.allclose(kept[MESH_LEFT_EYE], target[MESH_LEFT_EYE, :2])  # not named: the target's outline
    assert np.allclose(moved[MESH_RIGHT_EYE], kept[MESH_RIGHT_EYE])
    shifted = moved[MESH_LEFT_EYE].mean(0) - target[MESH_LEFT_EYE, :2].mean(0)
    assert (
        4.5 < shifted[0] < 7.5 and abs(shifted[1]) < 1.5
    )  # half of the 12 px (the alignment takes a little)
    corner = MESH_LEFT_EYE[[0, 8]]
    ratio = np.linalg.norm(np.subtract(*moved[corner])) / np.linalg.norm(np.subtract(*target[corner, :2]))
    assert abs(ratio - 1.2) < 0.03  # sqrt(1.44): half the way in size, geometrically
    moved_68 = np.zeros((68, 2), np.float32)
    moved_68[42:48] = moved[MESH_TO_68[42:48]]
    target_68 = np.zeros((68, 2), np.float32)
    target_68[42:48] = target[MESH_TO_68[42:48], :2]
    # the lids' opening (gap over width) is the target's, not the source's wider one
    assert abs(eye_openness_each(moved_68)[1] - eye_openness_each(target_68)[1]) < 1e-4


def test_the_swapped_face_takes_in_the_sources_eye_spacing(mesh_pipeline, astronaut):
    """Eye spacing is part of who someone is: the swap moves the target's eyes (outline and all)
    half the way to where the source has them. Before, the eyes' outlines stayed the target's."""
    source = eyes_apart(mesh_pipeline, astronaut, 0.2)
    spacing = {
        "target": eye_distance(mesh_pipeline, astronaut),
        "source": eye_distance(mesh_pipeline, source),
    }
    assert spacing["source"] > spacing["target"] + 0.04  # the synthetic spread shows in the mesh
    swapped = eye_distance(mesh_pipeline, mesh_pipeline.swap_image(source, astronaut).image)
    share = (swapped - spacing["target"]) / (spacing["source"] - spacing["target"])
    assert 0.45 < share < 0.75  # 0.58 measured; 0.34 before (only the skin round the eyes moved)


def test_the_seam_runs_near_the_face_outline_below_the_brows_and_further_in_above(
    mesh_pipeline, astronaut, other_face
):
    """The source's cheeks and jaw line are part of who it is: below the brows the swap reaches to
    within ~1 % of the face's size of its outline (dlib distance to the source -0.031 on the bench),
    above them it stays 4 % in, off the hairline (a source's fringe showed there as a band)."""
    out = mesh_pipeline.swap_image(other_face, astronaut).image
    (face,) = mesh_pipeline.analyse(astronaut, embed=False)
    points = classical.extended_points(face.landmarks_68, ClassicalSettings().forehead)
    size = float(np.linalg.norm(points.max(0) - points.min(0))) / np.sqrt(2)
    hull = np.zeros(astronaut.shape[:2], np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(np.round(points).astype(np.int32)), 255)
    depth = cv2.distanceTransform(hull, cv2.DIST_L2, 5) / size
    band = (depth > 0.015) & (depth < 0.035)  # 1.5-3.5 % of the face's size inside its outline
    up = (points[27] - points[8]) / np.linalg.norm(points[27] - points[8])
    ys, xs = np.mgrid[0 : hull.shape[0], 0 : hull.shape[1]]
    above = xs * up[0] + ys * up[1] > (points[17:27] @ up).max()
    changed = np.abs(out.astype(int) - astronaut).max(axis=2) > 2
    assert changed[band & ~above].mean() > 0.25  # 0.41 measured; 0.02 with the seam 4 % in all round
    assert changed[band & above].mean() < 0.03  # 0.0 measured; 0.07 with the seam 1 % in all round


def _eyes_68(right: float, left: float) -> np.ndarray:
    """68 points whose eyes (image-left first) are open by `right` and `left` (lid gap over width)."""
    points = np.zeros((68, 2), np.float32)
    for first, x0, opening in ((36, 0.0, right), (42, 60.0, left)):
        half = 15.0 * opening
        points[first : first + 6] = [
            (x0, 0), (x0 + 10, -half), (x0 + 20, -half), (x0 + 30, 0), (x0 + 20, half), (x0 + 10, half)
        ]
    return points


def test_a_target_eye_is_kept_only_where_one_of_the_two_is_shut_and_an_open_one_with_its_pair():
    cfg = classical.ClassicalSettings()
    assert eye_openness_each(_eyes_68(0.33, 0.27)) == pytest.approx((0.33, 0.27))
    # Both open, the target's near eye much the wider (paul_rudd_2 under obama_1): the source's eyes
    # in the target's lids, not one eye of each person's colour.
    assert kept_eyes(_eyes_68(0.19, 0.20), _eyes_68(0.33, 0.27), cfg) == (False, False)
    # A wink on the target: its shut eye kept, the open one the source's.
    assert kept_eyes(_eyes_68(0.25, 0.26), _eyes_68(0.05, 0.26), cfg) == (True, False)
    # A blink on the source photo: the target's open eye is kept, and so its pair, for one colour.
    assert kept_eyes(_eyes_68(0.25, 0.04), _eyes_68(0.27, 0.26), cfg) == (True, True)
    # Within the tolerance, or keeping switched off: nothing kept.
    assert kept_eyes(_eyes_68(0.20, 0.20), _eyes_68(0.10, 0.12), cfg) == (False, False)
    off = dataclasses.replace(cfg, keep_target_eyes=False)
    assert kept_eyes(_eyes_68(0.25, 0.26), _eyes_68(0.05, 0.26), off) == (False, False)
