"""Classical face swap that needs no downloaded weights.

Per target face (standard mode): pick the source photo whose pose and expression are closest
to the target's, warp it onto the target's landmarks (piecewise affine over a Delaunay
triangulation, done as ONE remap so triangle edges never show; nothing is taken from outside
the source photo), keep the target's own mouth opening and eye openings (expression) and
whatever covers the face (occlusion estimate), give the face the target's low-frequency
lighting and colour, grain, sharpness and JPEG blockiness, and Poisson-blend it (NORMAL_CLONE:
mixed cloning would keep the target's gradients and so its identity) inside a slightly shrunk
hull of the face, feathered at the rim and cut at the frame edge; where the warp stretches a
foreshortened strip of the source across the target's rim (the far cheek of a turned head, the
mesh's edge on hair: a light streak, a colour step at the seam) the target's own pixels stay. Everything outside that mask
is copied back from the target, so only the face can change.

hq: the same with a 2x supersampled Lanczos warp (of a source face reduced onto the target),
every source photo blended by pose similarity, the detail spectrum matched to the picture per
octave band instead of one sharpen or blur (`match_detail`; octaves finer than an enlarged
source's resolution boosted no more than standard's sharpen), and a grain-keeping multi-band join at the rim. fast: one photo,
global colour match, feathered alpha.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

import cv2
import numpy as np

from swap.face_mesh_points import (
    MESH_FACE_OVAL,
    MESH_LEFT_BROW,
    MESH_LEFT_EYE,
    MESH_LIPS,
    MESH_LOWER_INNER_LIP,
    MESH_MIRROR,
    MESH_RIGHT_BROW,
    MESH_RIGHT_EYE,
    MESH_TO_68,
    MESH_UPPER_INNER_LIP,
)
from swap.inference import clock as inference_clock
from swap.swappers.appearance import (
    blockiness_grid,
    is_grayscale,
    match_blockiness,
    match_detail,
    match_grain,
    match_sharpness,
    remove_highlights,
    to_gray3,
    transfer_shading,
)
from swap.swappers.blending import multiband, poisson
from swap.swappers.occlusion import occlusion_mask
from swap.types import Face, SourceIdentity

JAW = slice(0, 17)
INNER = slice(17, 68)  # brows, nose, eyes, mouth
MOUTH_INNER = slice(60, 68)
# Eyelid gap over eye width under which an eye is shut (a blink, a wink, eyes cast down); open eyes
# measure 0.20-0.36 on ../shared/faces. A narrower open eye keeps the source's eyeball (identity).
CLOSED_EYE = 0.15
# Teeth seen between the lips, as a share of the mouth's width squared (teeth_shown): on
# ../shared/faces grins and speech show 0.0125-0.079, closed or barely parted lips 0-0.0015. Face
# Mesh can place the inner lips of a closed smile apart (0.15 open on obama_3, whose lips touch),
# so the openings alone would take a grin's teeth onto closed lips; the teeth tell them apart.
TEETH_SHOWN = 0.008
# x face size: how far inside the face's region its texture (sharpness, detail, grain, the spread
# that bounds a highlight) is measured: the outline's band holds the warp's rim and the picture's
# face edge, no skin texture (read as such, hq's detail match left the face softer than standard
# and a cheek's highlight kept a ring).
TEXTURE_INSET = 0.03
# mirror_fill: the area ratio over its start at which a side is taken wholly from its mirror image.
MIRROR_FILL_SPAN = 0.9
NOSE_TIP = 1  # the mesh's nose tip


@dataclass
class ClassicalSettings:
    # How far above the brows the face region reaches, x face height. 0.22 scored best on identity
    # but pulled fringe hair across the forehead as a band; 0.12 keeps 100 % of bench pairs.
    forehead: float = 0.12
    source_shape: float = 0.5  # 0 = inner features take the target's shape, 1 = the source's
    # Erode the hull by this x face size so the seam sits on the target's skin (shrunk_region):
    # below the brows, where the hull is the face's own outline (0.04 until 2026-12-04: 0.01 puts
    # the source's cheeks and jaw line in, -0.031 dlib distance to the source on the bench), ...
    mask_shrink: float = 0.01
    # ... and above them, where the region's top is a line lifted from the brows across the
    # hairline: a source's fringe showed its edge as a band across the forehead at 0.02.
    forehead_shrink: float = 0.04
    feather: float = 0.05  # soften the rim over this x face size
    keep_target_mouth: bool = True  # the target's lips and mouth opening (teeth, tongue): expression
    keep_target_eyes: bool = True  # the target's eye openings (gaze, blinks)
    # Openness difference (mouth gap / width; eyelid gap / width) above which the target's mouth or
    # eyes are kept: below it the expressions match and the source's own features are used. On
    # ../shared/faces closed mouths measure 0.01-0.04, smiles with teeth 0.1-0.13, speech 0.18-0.36;
    # open eyes 0.20-0.36, so only a blink-sized difference keeps the target's eyes.
    expression_tolerance: float = 0.05
    eye_tolerance: float = 0.12
    sharpen: float = 0.35  # standard: most unsharp amount when the warped face is softer than its picture
    membrane_limit: float = 20.0  # most the Poisson colour correction may stray from its median
    membrane_reach: float = 0.2  # x face size: the Poisson correction fades to none this far inside
    shading_sigma: float = 0.12  # x face size: below this scale lighting and colour are the target's
    # x face size: colour's own, finer scale (appearance.transfer_shading): a source's flushed cheek
    # was a red patch on the target (figures in docs/engine/models.md). >= shading_sigma: colour
    # splits with the lightness.
    colour_sigma: float = 0.04
    occlusion: bool = True  # keep what covers the target's face
    match_grain: bool = True
    match_blockiness: bool = True
    supersample: int = 2  # hq: warp a reduced source at this many times the resolution, then area-reduce
    # hq: the face's detail matched to its picture over this many of the finest octaves (periods of
    # 2, 4, ... px; match_detail). Coarser octaves carry the face's structure, i.e. its identity:
    # matching them too (4 octaves) cost 0.003 in dlib distance to the source on the bench.
    detail_octaves: int = 2
    multiband_levels: int = 1  # hq: pyramid levels joining the Poisson result at the rim (0: feather)
    pose_tau: float = 0.03  # hq: photo weight exp(-(residual - best) / tau)
    # Keep the target's own pixels where the warp magnifies the source (in its most stretched
    # direction) more than this many times the face's typical magnification (`stretched`): the
    # foreshortened far cheek, the mesh's rim on hair. <= 0: off.
    stretch_limit: float = 4.0
    # Flatten the source's highlights before the lighting transfer (remove_highlights): kept as
    # detail they were a bright round blob on the target's nose or cheek.
    remove_highlights: bool = True
    # Where a turned source shows one side of its face foreshortened (its mesh triangles there
    # cover at most 1/this of their mirror images' area), that side is warped from the other,
    # mirrored (`mirror_fill_weights`, below the nose): stretched out to the target's pose, the far
    # cheek's few pixels drew its stubble and creases as streaks. Fully from MIRROR_FILL_SPAN above
    # it. <= 0: off.
    mirror_fill: float = 1.3


def extended_points(points_68: np.ndarray, forehead: float) -> np.ndarray:
    """The 68 points plus forehead points lifted from the brows along the face's up axis."""
    pts = points_68.astype(np.float32)
    up = pts[27] - pts[8]  # chin -> nose bridge
    height = float(np.linalg.norm(up)) or 1.0
    lifted = pts[17:27] + up / height * (forehead * height)
    return np.vstack([pts, lifted]).astype(np.float32)


def _similarity(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Least-squares similarity transform (2x3) mapping src points onto dst points."""
    m, _ = cv2.estimateAffinePartial2D(src.astype(np.float32), dst.astype(np.float32), method=cv2.LMEDS)
    if m is None:
        m = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    return m


def destination_points(source_68: np.ndarray, target_68: np.ndarray, source_shape: float) -> np.ndarray:
    """Where the source's features land: the target's pose and jaw, the source's inner proportions
    blended in, because eye spacing, nose and mouth shape carry much of a person's identity."""
    if source_shape <= 0:
        return target_68.astype(np.float32)
    m = _similarity(source_68[INNER], target_68[INNER])
    aligned = source_68 @ m[:, :2].T + m[:, 2]
    dst = target_68.astype(np.float32).copy()
    dst[INNER] = (1 - source_shape) * target_68[INNER] + source_shape * aligned[INNER]
    return dst


def delaunay(points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Triangles (n, 3) of point indices covering the convex hull of `points`.

    Points equal to 3 decimals count once (the first of them); the corners OpenCV returns are
    looked up among the inserted points by sorted search, not one by one in Python (the 468-point
    mesh makes ~900 triangles a frame)."""
    w, h = size
    subdiv = cv2.Subdiv2D((-1, -1, w + 2, h + 2))
    clipped = np.clip(points, 0, [w, h])
    keys = np.round(clipped.astype(np.float64), 3)
    # One complex key a point: np.unique over rows (axis=0) sorts a structured view, ~4x slower.
    _, first = np.unique(keys[:, 0] + 1j * keys[:, 1], return_index=True)
    first = np.sort(first)  # insertion in input order, as the triangulation depends on it
    if len(first):
        subdiv.insert(np.ascontiguousarray(clipped[first], np.float32))
    corners = np.round(np.asarray(subdiv.getTriangleList(), np.float64).reshape(-1, 3, 2), 3)
    # Complex keys sort by x, then y: one searchsorted finds every corner's point (or none: the
    # corners of Subdiv2D's outer bounding triangle, whose triangles are dropped).
    inserted = keys[first, 0] + 1j * keys[first, 1]
    order = np.argsort(inserted)
    wanted = (corners[..., 0] + 1j * corners[..., 1]).ravel()
    if len(order) == 0 or len(wanted) == 0:
        return np.zeros((0, 3), np.int32)
    pos = np.clip(np.searchsorted(inserted[order], wanted), 0, len(order) - 1)
    found = (inserted[order][pos] == wanted).reshape(-1, 3).all(1)
    ids = first[order][pos].reshape(-1, 3)
    return ids[found].astype(np.int32).reshape(-1, 3)


def affine_matrices(dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    """(n, 2, 3) affine maps taking each triangle of `dst` (n, 3, 2) onto the one of `src`, as
    cv2.getAffineTransform per triangle (zeros for a degenerate one), all at once: each triangle's
    3x3 system [x y 1] M = src solved by its cofactors, in closed form (for the mesh's ~900 triangles
    a frame numpy's batched solve and det took 1.0 ms, this 0.3, on the 2026-12-05 machine)."""
    d, s = dst.astype(np.float64), src.astype(np.float64)
    (x0, y0), (x1, y1), (x2, y2) = d[:, 0].T, d[:, 1].T, d[:, 2].T
    # cofactors[:, j, i]: of row j, column i of [[x0, y0, 1], [x1, y1, 1], [x2, y2, 1]]
    cofactors = np.stack([
        np.stack([y1 - y2, x2 - x1, x1 * y2 - x2 * y1], axis=1),
        np.stack([y2 - y0, x0 - x2, x2 * y0 - x0 * y2], axis=1),
        np.stack([y0 - y1, x1 - x0, x0 * y1 - x1 * y0], axis=1),
    ], axis=1)
    det = x0 * cofactors[:, 0, 0] + y0 * cofactors[:, 0, 1] + cofactors[:, 0, 2]
    solvable = np.abs(det) > 1e-9
    # M = adj / det @ src, adj the cofactors' transpose; mats[k] = M's column k as a row: src^T @ cofactors.
    mats = np.matmul(s.transpose(0, 2, 1), cofactors) / np.where(solvable, det, 1.0)[:, None, None]
    mats[~solvable] = 0.0
    return mats.astype(np.float32)


def piecewise_affine_maps(dst_pts: np.ndarray, src_pts: np.ndarray, tris: np.ndarray, size: tuple[int, int]):
    """Per-pixel source coordinates for every pixel inside the triangulation (-1 elsewhere)."""
    w, h = size
    tri_id = np.full((h, w), -1, np.int32)
    dst = dst_pts[tris].astype(np.float32)
    coef = affine_matrices(dst, src_pts[tris]).reshape(-1, 6)
    corners = np.round(dst).astype(np.int32)
    for k in range(len(tris)):
        cv2.fillConvexPoly(tri_id, corners[k], k, lineType=cv2.LINE_8)
    # Uncovered pixels (id -1) take the last row, which maps every pixel to -1: no masking after.
    coef = np.vstack([coef, [[0, 0, -1, 0, 0, -1]]]).astype(np.float32)
    xs, ys = np.arange(w, dtype=np.float32)[None, :], np.arange(h, dtype=np.float32)[:, None]
    map_x = coef[tri_id, 0]
    map_x *= xs
    map_x += coef[tri_id, 1] * ys
    map_x += coef[tri_id, 2]
    map_y = coef[tri_id, 3]
    map_y *= xs
    map_y += coef[tri_id, 4] * ys
    map_y += coef[tri_id, 5]
    return map_x, map_y, tri_id >= 0


def stretched(
    dst_pts: np.ndarray, src_pts: np.ndarray, tris: np.ndarray, size: tuple[int, int], limit: float
):
    """0/255: pixels whose triangle magnifies the source, in its most stretched direction, more than
    `limit` times the face's typical magnification, or mirrors it. Those are the parts the source
    shows foreshortened (the far cheek of a turned head, a narrowed eye, the rim where the mesh
    runs onto hair or background): a thin strip of source pixels smeared wide."""
    w, h = size
    if len(tris) == 0:
        return np.zeros((h, w), np.uint8)
    d = dst_pts[tris].astype(np.float64)  # (n, 3, 2)
    s = src_pts[tris].astype(np.float64)
    # Each triangle's Jacobian (source pixels per destination pixel) J = S D^-1 from its edge
    # vectors, and J's determinant and smallest singular value, in closed form for 2x2 (a batched
    # svd/inv cost ~1 ms a frame for the mesh's ~900 triangles).
    (a, c), (b, e) = (d[:, 1] - d[:, 0]).T, (d[:, 2] - d[:, 0]).T  # D = [[a, b], [c, e]]
    (p, r), (q, t) = (s[:, 1] - s[:, 0]).T, (s[:, 2] - s[:, 0]).T  # S = [[p, q], [r, t]]
    det_d = a * e - b * c
    area = np.abs(det_d) / 2
    ok = area > 1e-6
    inv_d = np.where(ok, 1.0 / np.where(ok, det_d, 1.0), 0.0)
    j11, j12 = (p * e - q * c) * inv_d, (q * a - p * b) * inv_d
    j21, j22 = (r * e - t * c) * inv_d, (t * a - r * b) * inv_d
    det = j11 * j22 - j12 * j21
    frobenius = j11**2 + j12**2 + j21**2 + j22**2
    smallest = np.sqrt(np.maximum(0.0, (frobenius - np.sqrt(np.maximum(0.0, frobenius**2 - 4 * det**2))) / 2))
    order = np.argsort(np.sqrt(np.abs(det)))
    cumulative = np.cumsum(area[order])
    typical = float(np.sqrt(np.abs(det[order][np.searchsorted(cumulative, cumulative[-1] / 2)])))
    bad = ok & ((det <= 0) | (smallest * limit < typical))
    out = np.zeros((h, w), np.uint8)
    for tri in d[bad]:
        cv2.fillConvexPoly(out, np.round(tri).astype(np.int32), 255, lineType=cv2.LINE_8)
    return out


def rim_stretch(stretch: np.ndarray, region: np.ndarray) -> np.ndarray:
    """The parts of `stretch` (0/255) that reach the rim of `region` (0/255): a foreshortened strip
    along the face's edge. Stretch inside the face (the mesh's thin triangles round the eyes and
    lips, whose shapes follow the target) is the features' own and is kept."""
    outside = cv2.bitwise_not(region)
    joined = stretch | outside
    _, labels = cv2.connectedComponents(joined, connectivity=8)
    touching = np.unique(labels[outside > 0])
    return (np.isin(labels, touching[touching > 0]) & (stretch > 0)).astype(np.uint8) * 255


def transfer_colour(src: np.ndarray, dst: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Match the LAB mean and spread of `src` to `dst` inside `mask` (Reinhard et al.)."""
    sel = mask > 0
    if sel.sum() < 16:
        return src
    s = cv2.cvtColor(src, cv2.COLOR_BGR2LAB).astype(np.float32)
    d = cv2.cvtColor(dst, cv2.COLOR_BGR2LAB).astype(np.float32)
    s_mean, s_std = s[sel].mean(0), s[sel].std(0) + 1e-3
    d_mean, d_std = d[sel].mean(0), d[sel].std(0) + 1e-3
    # Cap the contrast change: a flat-lit target must not flatten the source's features away.
    gain = np.clip(d_std / s_std, 0.6, 1.6)
    out = (s - s_mean) * gain + d_mean
    return cv2.cvtColor(np.clip(out, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)


def pose_residual(source_68: np.ndarray, target_68: np.ndarray) -> float:
    """How differently two faces are posed and posed-up (yaw, pitch, open mouth, closed eyes):
    RMS of the 68 points after the best similarity fit, over the target's inter-ocular distance."""
    m = _similarity(source_68, target_68)
    aligned = source_68 @ m[:, :2].T + m[:, 2]
    eyes = float(np.linalg.norm(target_68[36:42].mean(0) - target_68[42:48].mean(0))) or 1.0
    return float(np.sqrt(np.mean(np.sum((aligned - target_68) ** 2, axis=1)))) / eyes


def mouth_openness(points_68: np.ndarray) -> float:
    """Gap between the inner lips over the mouth's width (0 = closed)."""
    gap = np.linalg.norm(points_68[[61, 62, 63]] - points_68[[67, 66, 65]], axis=1).mean()
    return float(gap / (np.linalg.norm(points_68[54] - points_68[48]) or 1.0))


def eye_openness(points_68: np.ndarray) -> float:
    """Eyelid gap over eye width, both eyes averaged (about 0.3 open, under 0.1 closed)."""
    return float(np.mean(eye_openness_each(points_68)))


def eye_openness_each(points_68: np.ndarray) -> tuple[float, float]:
    """Each eye's eyelid gap over its width (image-left eye first): a wink is one eye closed."""
    values = []
    for a in (36, 42):
        lids = np.linalg.norm(points_68[[a + 1, a + 2]] - points_68[[a + 5, a + 4]], axis=1).mean()
        values.append(float(lids / (np.linalg.norm(points_68[a + 3] - points_68[a]) or 1.0)))
    return values[0], values[1]


def kept_eyes(source_68: np.ndarray, target_68: np.ndarray, cfg: ClassicalSettings) -> tuple[bool, bool]:
    """Which of the target's eyes (image-left first) keep the target's own pixels, where the rest
    of the face has the source's eye warped into the target's lids: an eye one of the two shows
    shut (under CLOSED_EYE: a blink, a wink, eyes cast down) and the other open by more than
    `eye_tolerance`, since no warp makes an eyeball of a closed lid or a closed lid of an eyeball.
    Two open eyes, however differently open, take the source's (its iris: identity) in the target's
    lids. A kept eye the target shows open shows the target's iris, so its pair is kept too: the
    earlier rule (each eye on its own, any difference over the tolerance) left obama_1's brown eye
    beside paul_rudd_2's grey-green one, his near eye being the more open (0.33 against 0.19)."""
    if not cfg.keep_target_eyes:
        return False, False
    pairs = list(zip(eye_openness_each(source_68), eye_openness_each(target_68), strict=True))
    keep = [min(s, t) < CLOSED_EYE and abs(s - t) > cfg.eye_tolerance for s, t in pairs]
    if any(kept and target >= CLOSED_EYE for kept, (_, target) in zip(keep, pairs, strict=True)):
        return True, True
    return keep[0], keep[1]


def teeth_shown(image: np.ndarray, points_68: np.ndarray) -> float | None:
    """How much teeth show between the lips: pixels inside the inner lip line clearly lighter
    (CIELAB L* 12 above the lips' median) and, unless the picture is grey, less coloured (chroma
    under 0.8 of the lips') than the lips round them, over the mouth's width squared. Measured
    against the person's own lips, so skin tone and lighting cancel out; None for a mouth too
    small to tell (under 24 px wide)."""
    width = float(np.linalg.norm(points_68[54] - points_68[48]))
    if width < 24:
        return None
    h, w = image.shape[:2]
    x1, y1 = np.maximum(np.floor(points_68[48:60].min(0)).astype(int) - 2, 0)
    x2, y2 = np.minimum(np.ceil(points_68[48:60].max(0)).astype(int) + 3, [w, h])
    if x2 - x1 < 4 or y2 - y1 < 4:
        return None
    lab = cv2.cvtColor(image[y1:y2, x1:x2], cv2.COLOR_BGR2LAB).astype(np.float32)
    lightness = lab[..., 0] * (100 / 255)
    chroma = np.hypot(lab[..., 1] - 128, lab[..., 2] - 128)
    inner = np.zeros(lab.shape[:2], np.uint8)
    outer = np.zeros(lab.shape[:2], np.uint8)
    cv2.fillPoly(inner, [np.round(points_68[MOUTH_INNER] - [x1, y1]).astype(np.int32)], 255)
    cv2.fillPoly(outer, [np.round(points_68[48:60] - [x1, y1]).astype(np.int32)], 255)
    lips = (outer > 0) & (inner == 0)
    if lips.sum() < 8:
        return None
    teeth = (inner > 0) & (lightness > np.median(lightness[lips]) + 12)
    lips_chroma = np.median(chroma[lips])
    if lips_chroma > 4:  # not a grey picture
        teeth &= chroma < 0.8 * lips_chroma
    return float(teeth.sum()) / (width * width)


def teeth_differ(shown: float | None, other: float | None) -> bool:
    """One mouth shows teeth (a grin, speech) where the other shows under a fifth as much (closed or
    barely parted lips): its inside is not the other's expression, whatever the openings say. False
    when either mouth is too small to tell (None): a small face's grin must not be closed."""
    if shown is None or other is None:
        return False
    return shown >= TEETH_SHOWN and other < shown / 5


def closed_lips(points: np.ndarray, upper: list[int], lower: list[int], gap: float = 0.05) -> None:
    """Move each pair of inner lip points (`upper[i]` above `lower[i]`) in place towards the line
    where they meet, leaving `gap` of their distance: a sliver, so the triangulation keeps them
    apart. The lips warped onto them are drawn closed."""
    middle = (points[upper] + points[lower]) / 2
    half = (points[upper] - points[lower]) * (gap / 2)
    points[upper] = middle + half
    points[lower] = middle - half


def unmatched_openings(
    shape: tuple[int, ...],
    source_68: np.ndarray,
    target_68: np.ndarray,
    cfg: ClassicalSettings,
    teeth_unmatched: bool = False,
) -> np.ndarray | None:
    """0/255 in the source photo: its open mouth (teeth, tongue) where the target's is more closed
    than the tolerance or shows no teeth where the source's does (`teeth_unmatched`), and an open
    eye where the target's is shut (a blink, a wink, downcast), or None. The warp closes the
    source's lips or lids onto the target's, but the triangles joining them span the opening, so
    its teeth would be drawn over a closed mouth (a grin where the target has none) and an eyeball
    over a closed lid; those pixels are left out, and the target's own stay there."""
    mask = np.zeros(shape[:2], np.uint8)
    if cfg.keep_target_mouth and (
        teeth_unmatched or mouth_openness(source_68) - mouth_openness(target_68) > cfg.expression_tolerance
    ):
        cv2.fillPoly(mask, [np.round(source_68[MOUTH_INNER]).astype(np.int32)], 255)
    if cfg.keep_target_eyes:
        pairs = zip(eye_openness_each(source_68), eye_openness_each(target_68), strict=True)
        for (source, target), part in zip(pairs, (slice(36, 42), slice(42, 48)), strict=True):
            if target < CLOSED_EYE and source - target > cfg.eye_tolerance:
                cv2.fillPoly(mask, [np.round(source_68[part]).astype(np.int32)], 255)
    if not mask.any():
        return None
    width = float(np.linalg.norm(source_68[16] - source_68[0]))
    return cv2.dilate(mask, _disk(0.01 * width))


# The mesh points inside its silhouette, and of those the ones the source's proportions move (not the
# lips' and eyelids': the expression). Index sets of the 468, fixed, so not found again each frame.
MESH_INNER = np.setdiff1d(np.arange(468), MESH_FACE_OVAL)
MESH_BLENDED = np.setdiff1d(MESH_INNER, np.concatenate([MESH_LIPS, MESH_RIGHT_EYE, MESH_LEFT_EYE]))


def mesh_destination(
    source_mesh: np.ndarray, target_mesh: np.ndarray, source_shape: float, moved: tuple[str, ...] = ()
) -> np.ndarray:
    """Where the source's 468 mesh points land: the target's silhouette, lips and eyelids (its head
    pose, mouth opening, lip line and blinks: the expression), and the source's proportions blended
    into everything inside (brows, nose, cheeks, eye spacing: identity), as destination_points.
    The features named in `moved` ("right_eye", "left_eye", "lips") keep the target's outline but
    move as a whole by the same share towards where the source has them (`move_feature`)."""
    target = target_mesh[:, :2].astype(np.float32)
    m = _similarity(source_mesh[MESH_INNER, :2], target[MESH_INNER])
    aligned = source_mesh[:, :2] @ m[:, :2].T + m[:, 2]
    dst = target.copy()
    dst[MESH_BLENDED] = (1 - source_shape) * target[MESH_BLENDED] + source_shape * aligned[MESH_BLENDED]
    for name in moved:
        group, corners, scaled = MOVED_FEATURES[name]
        dst[group] = move_feature(
            target[group], aligned[group], corners, source_shape if scaled else 0.0, source_shape
        )
    return dst.astype(np.float32)


# The features the dense warp may move as wholes: their mesh points, the two corners (positions in
# the group) whose distance is the feature's width, and whether that width is the source's too. A
# mouth's width changes with a smile (expression), an eye's barely (identity), so lips only move.
MOVED_FEATURES = {
    "right_eye": (MESH_RIGHT_EYE, (0, 8), True),
    "left_eye": (MESH_LEFT_EYE, (0, 8), True),
    "lips": (MESH_LIPS, (0, 10), False),
}


def move_feature(
    target: np.ndarray, source: np.ndarray, corners: tuple[int, int], size_share: float, place_share: float
) -> np.ndarray:
    """`target`'s points (one feature's outline) moved `place_share` of the way to where the source
    has its centre and scaled `size_share` of the way (geometrically) to the source's width: the
    target's shape (the eye's opening, the lips' line) kept, the source's placement and size, which
    carry identity (eye spacing, where the mouth sits), taken in. Both point sets in the same frame."""
    centre = target.mean(0)
    width = float(np.linalg.norm(target[corners[0]] - target[corners[1]]))
    source_width = float(np.linalg.norm(source[corners[0]] - source[corners[1]]))
    factor = (source_width / width) ** size_share if width > 0 and source_width > 0 else 1.0
    return centre + place_share * (source.mean(0) - centre) + factor * (target - centre)


def soften_feature_corners(warped: np.ndarray, stretch: np.ndarray, points_68: np.ndarray, face_size: float):
    """`warped` with the stretched triangles round the eyes and at the mouth's corners (where
    `points_68` put them) blurred. A narrow source eye opened onto a wide target eye spreads a few
    lash pixels over its corners as a saw-toothed dark smear (a turned head's far eye); a smile
    narrower than the target's draws its corner out into a dark wedge with a jagged pale lip edge
    (eileen_collins_1 onto paul_rudd_1). Blurred, they read as the eye's shadow and the mouth's
    corner; the source's eye and mouth stay (keeping the target's eye there instead cost 0.006 in
    dlib distance to the source on the bench). Only the mouth's corners: a sliver between the front
    teeth is left sharp."""
    corners = _eye_openings(points_68, stretch.shape)
    for corner in (48, 54, 60, 64):
        centre = (int(round(points_68[corner][0])), int(round(points_68[corner][1])))
        cv2.circle(corners, centre, max(1, int(0.02 * face_size)), 255, -1)
    slivers = stretch & cv2.dilate(corners, _disk(0.04 * face_size))
    if not slivers.any():
        return warped
    sigma = max(1.0, 0.012 * face_size)
    spread = cv2.dilate(slivers, _disk(0.01 * face_size))
    # Only a window round the slivers is blurred (a mouth corner's slivers are in most frames of a
    # smile; the whole face's blur cost ~1 ms a frame): the weight's blur reaches 2 sigma past them and
    # the picture's 3 sigma past that, so the window's own borders never reach a changed pixel.
    ys, xs = np.nonzero(spread)
    margin = int(np.ceil(5 * sigma)) + 2
    h, w = spread.shape
    win = np.s_[
        max(0, ys.min() - margin) : min(h, ys.max() + 1 + margin),
        max(0, xs.min() - margin) : min(w, xs.max() + 1 + margin),
    ]
    weight = cv2.GaussianBlur(spread[win].astype(np.float32) / 255, (0, 0), sigma / 2)
    part = warped[win]
    soft = cv2.GaussianBlur(part, (0, 0), sigma).astype(np.float32)
    mixed = part.astype(np.float32) + weight[..., None] * (soft - part.astype(np.float32))
    out = warped.copy()
    out[win] = np.clip(np.rint(mixed), 0, 255).astype(np.uint8)
    return out


def _eye_openings(points_68: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """0/255: the two eye openings (between the lids) of `points_68`."""
    eyes = np.zeros(shape[:2], np.uint8)
    for part in (slice(36, 42), slice(42, 48)):
        cv2.fillPoly(eyes, [np.round(points_68[part]).astype(np.int32)], 255)
    return eyes


def _eye_weights(points_68: np.ndarray, shape: tuple[int, int], face_size: float) -> np.ndarray:
    """0-1: the eye openings of `points_68`, soft-edged round the lids (transfer_shading's `eyes`)."""
    sigma = max(1.0, 0.01 * face_size)
    eyes = cv2.dilate(_eye_openings(points_68, shape), _disk(sigma))
    return cv2.GaussianBlur(eyes.astype(np.float32) / 255.0, (0, 0), sigma)


def _brows(points: np.ndarray, shape: tuple[int, int], face_size: float) -> np.ndarray:
    """0/255: the two brows of a face, from its 468 mesh points (their outlines, widened by 1 % of
    the face's size for the hairs' edge) or, given 68, a band 6 % of the face's size wide along the
    68 points' brow lines."""
    brows = np.zeros(shape[:2], np.uint8)
    if len(points) >= 468:
        for outline in (MESH_RIGHT_BROW, MESH_LEFT_BROW):
            cv2.fillPoly(brows, [np.round(points[outline, :2]).astype(np.int32)], 255)
        return cv2.dilate(brows, _disk(0.01 * face_size))
    for line in (slice(17, 22), slice(22, 27)):
        cv2.polylines(brows, [np.round(points[line]).astype(np.int32)], False, 255, max(1, round(0.06 * face_size)))
    return brows


def shrunk_region(shape_mask: np.ndarray, points: np.ndarray, face_size: float, cfg: ClassicalSettings) -> np.ndarray:
    """`shape_mask` eroded so that the seam sits on the target's skin: by `mask_shrink` x face size
    below the brows, where the hull is the face's own outline, and by `forehead_shrink` above them,
    where its top is a line lifted from the brows across the hairline (`points`: the 68 + forehead)."""
    below = cv2.erode(shape_mask, _disk(cfg.mask_shrink * face_size))
    if cfg.forehead_shrink <= cfg.mask_shrink:
        return below
    above = cv2.erode(shape_mask, _disk(cfg.forehead_shrink * face_size))
    # Above the brows: past the line through the highest brow point, square to the face's up axis.
    up = points[27] - points[8]
    up = up / (np.linalg.norm(up) or 1.0)
    level = float((points[17:27] @ up).max())
    h, w = shape_mask.shape
    height = np.arange(w, dtype=np.float32)[None, :] * up[0] + np.arange(h, dtype=np.float32)[:, None] * up[1]
    return np.where(height > level, above, below)


def mirror_fill_weights(image_shape: tuple[int, ...], mesh: np.ndarray, start: float) -> np.ndarray | None:
    """0..1 in the source photo: how much of each place is to be warped from its mirror image. A
    mesh triangle whose mirror image (MESH_MIRROR) covers `start` times its area or more is
    foreshortened (the far side of a turned head), fully at `start` + MIRROR_FILL_SPAN. The eyes,
    brows and lips keep their own pixels (mirrored, a look to one side would turn to the other, a
    crooked smile the other way); the weights are feathered over 3 % of the face. None: nothing
    to fill (a frontal photo)."""
    h, w = image_shape[:2]
    tris = delaunay(mesh, (w, h))
    if len(tris) == 0:
        return None

    def areas(triangles: np.ndarray) -> np.ndarray:
        a, b, c = mesh[triangles[:, 0]], mesh[triangles[:, 1]], mesh[triangles[:, 2]]
        return 0.5 * np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1]))

    ratio = areas(MESH_MIRROR[tris]) / np.maximum(areas(tris), 1e-6)
    weight = np.clip((ratio - start) / MIRROR_FILL_SPAN, 0.0, 1.0)
    # Only below the nose tip (the cheeks, jaw and chin, where a smile's creases and stubble are).
    up = (mesh[33] + mesh[263]) / 2 - (mesh[61] + mesh[291]) / 2
    height = (mesh[tris].mean(axis=1) - mesh[NOSE_TIP]) @ (up / max(float(np.linalg.norm(up)), 1e-6))
    weight[height > 0] = 0.0
    if not (weight > 0).any():
        return None
    size = float(np.linalg.norm(mesh.max(0) - mesh.min(0))) / np.sqrt(2)
    # Drawn and feathered in the face_box round the mesh, wider than the dilation's and the blur's
    # reach: the same weights as over the whole photo, where a 9 MP selfie's took ~0.5 s of CPU.
    x0, y0, x1, y1 = face_box(mesh, size, (h, w))
    local = mesh - np.asarray([x0, y0], mesh.dtype)
    box = np.zeros((y1 - y0, x1 - x0), np.float32)
    for tri in np.flatnonzero(weight > 0):
        cv2.fillConvexPoly(box, np.round(local[tris[tri]]).astype(np.int32), float(weight[tri]))
    features = np.zeros(box.shape, np.uint8)
    for part in (MESH_LIPS, MESH_RIGHT_EYE, MESH_LEFT_EYE, MESH_RIGHT_BROW, MESH_LEFT_BROW):
        cv2.fillConvexPoly(features, cv2.convexHull(np.round(local[part]).astype(np.int32)), 255)
    box[cv2.dilate(features, _disk(0.04 * size)) > 0] = 0.0
    box = cv2.GaussianBlur(box, (0, 0), max(1.0, 0.03 * size))
    box[features > 0] = 0.0  # what the feathering carried back in
    # A frontal photo's few uneven triangles come to under a tenth (0.02-0.05 on ../shared/faces'
    # frontal portraits, 0.4-0.7 on its turned ones): nothing to fill, and no second warp a frame.
    if box.max() < 0.1:
        return None
    weights = np.zeros((h, w), np.float32)
    weights[y0:y1, x0:x1] = box
    return weights


def _disk(radius: int) -> np.ndarray:
    r = max(1, int(radius))
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


# The band along a source face's edge (x face size) where pale, grey pixels are left out as hair
# (occlusion.rim_hair): the mesh's outline runs over the temples.
SOURCE_RIM = 0.08
# A source photo's occlusion mask is worked out on a box round its face (the face's points, widened by
# SOURCE_MASK_MARGIN x its size: past every erosion, dilation and closing it makes), and a face larger
# than SOURCE_MASK_FACE_PX on a copy of that box reduced to it. On the whole photo its erosions and
# dilations ran over every pixel with disks that grow with the face: a 9 MP selfie took 2.6 s of CPU
# the first time it was swapped in (the mask is then kept per photo), a 512-px photo 0.17 s. A
# reduced mask comes back enlarged (bilinear, cut at half): its edge within a pixel of the reduced
# copy's, a fraction of one where a 720p or 1080p target's smaller face takes it.
SOURCE_MASK_MARGIN = 0.25
SOURCE_MASK_FACE_PX = 640
SOURCE_PHOTOS_HELD = 8  # a job's source photos whose digests the swapper keeps (one selfie, or a few)


class ToPicture:
    """Points of a photo in a box of it from (x0, y0), scaled by fx, fy (pixel centres kept)."""

    def __init__(self, x0: int = 0, y0: int = 0, fx: float = 1.0, fy: float = 1.0) -> None:
        self.x0, self.y0, self.fx, self.fy = x0, y0, fx, fy
        self.factor = (fx + fy) / 2

    def __call__(self, points: np.ndarray) -> np.ndarray:
        moved = points - np.asarray([self.x0, self.y0], points.dtype)
        if self.fx == self.fy == 1.0:
            return moved
        return (moved.astype(np.float64) + 0.5) * [self.fx, self.fy] - 0.5


def face_box(points: np.ndarray, face_size: float, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the box round `points`, SOURCE_MASK_MARGIN x `face_size` + 16 px wider on
    every side, within a picture of `shape`; its corner on even pixels, so points moved into it
    round half to even as they do on the picture."""
    h, w = shape[:2]
    margin = SOURCE_MASK_MARGIN * face_size + 16
    x0, y0 = (max(0, int(v - margin)) & ~1 for v in points.min(axis=0))
    x1, y1 = min(w, int(points[:, 0].max() + margin) + 1), min(h, int(points[:, 1].max() + margin) + 1)
    return x0, y0, x1, y1


def on_face_box(image: np.ndarray, points: np.ndarray, face_size: float, compute) -> np.ndarray:
    """`compute(picture, to_picture)`, a 0/255 mask of `picture`'s size, for the whole of `image`:
    worked out on the `face_box` round `points`, on a copy of the box area-reduced to a SOURCE_MASK_FACE_PX face when the face is larger (then enlarged back:
    bilinear, cut at half); zero outside the box."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = face_box(points, face_size, (h, w))
    box = image[y0:y1, x0:x1]
    if face_size <= SOURCE_MASK_FACE_PX:
        mask = compute(box, ToPicture(x0, y0))
    else:
        bh, bw = box.shape[:2]
        factor = SOURCE_MASK_FACE_PX / face_size
        size = (max(1, round(bw * factor)), max(1, round(bh * factor)))
        small = compute(cv2.resize(box, size, interpolation=cv2.INTER_AREA), ToPicture(x0, y0, size[0] / bw, size[1] / bh))
        mask = (cv2.resize(small, (bw, bh), interpolation=cv2.INTER_LINEAR) > 127).astype(np.uint8) * 255
    out = np.zeros((h, w), np.uint8)
    out[y0:y1, x0:x1] = mask
    return out


class ClassicalSwapper:
    name = "classical"
    needs_embedding = None
    reports_inference_time = True  # no model: none of its time is inference
    supports_modes = True

    def __init__(self, settings: ClassicalSettings | None = None) -> None:
        self.settings = settings or ClassicalSettings()
        self._source_cache: dict = {}
        self._digests: dict[int, tuple[np.ndarray, bytes]] = {}  # by id(): the photo array, its digest
        self._digests_lock = threading.Lock()

    def swap(
        self,
        source: SourceIdentity,
        frame: np.ndarray,
        faces: list[Face],
        mode: str = "standard",
        pixel_boost: int | None = None,  # ONNX swappers only
    ) -> np.ndarray:
        photos = source.photos or [(source.image, source.face)]
        for _, face in photos:
            if face.landmarks_68 is None:
                raise ValueError("the classical swapper needs 68 source landmarks")
        out = frame.copy()
        for face in faces:
            if face.landmarks_68 is None:
                raise ValueError("the classical swapper needs 68 target landmarks")
            if mode == "fast":
                self._swap_fast(photos[0], out, face.landmarks_68)
            else:
                self._swap_full(
                    photos, out, face.landmarks_68, hq=mode == "hq", target_mesh=face.landmarks_468
                )
        return out

    # -- shared geometry ------------------------------------------------------------------------

    def _region(self, out: np.ndarray, dst_pts: np.ndarray, face_size: float):
        """The work region around the face: (x1, y1, x2, y2) unclipped, the clipped frame box, the
        ROI (padded past the frame edge by REPLICATING edge pixels: reflection would mirror
        features into the face), and a 0/255 map of which ROI pixels are inside the frame."""
        margin = int(0.15 * face_size) + 8
        x1, y1 = np.floor(dst_pts.min(0)).astype(int) - margin
        x2, y2 = np.ceil(dst_pts.max(0)).astype(int) + margin
        fh, fw = out.shape[:2]
        cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x2, fw), min(y2, fh)
        if cx2 - cx1 < 8 or cy2 - cy1 < 8:
            return None
        roi = cv2.copyMakeBorder(
            out[cy1:cy2, cx1:cx2], cy1 - y1, y2 - cy2, cx1 - x1, x2 - cx2, cv2.BORDER_REPLICATE
        )
        inframe = np.zeros(roi.shape[:2], np.uint8)
        inframe[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1] = 255
        return (x1, y1), (cx1, cy1, cx2, cy2), roi, inframe

    def _warp(self, image, src_pts, local, tris, size, scale: int = 1, not_face: np.ndarray | None = None):
        """The source warped onto `local` (ROI coordinates) and a 0/255 map of pixels that really
        came from inside the source photo (no border fill: a face cut by the source's edge leaves
        a hole, not mirrored features) and are not in `not_face` (0/255 in the source photo: its
        hair, background, glasses). scale > 1: warp at scale× with Lanczos, then area-reduce."""
        rw, rh = size
        if scale <= 1:
            map_x, map_y, covered = piecewise_affine_maps(local, src_pts, tris, (rw, rh))
            warped = cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        else:
            big = local * scale + (scale - 1) / 2.0
            map_x, map_y, covered = piecewise_affine_maps(big, src_pts, tris, (rw * scale, rh * scale))
            warped = cv2.remap(image, map_x, map_y, cv2.INTER_LANCZOS4, borderMode=cv2.BORDER_CONSTANT)
            warped = cv2.resize(warped, (rw, rh), interpolation=cv2.INTER_AREA)
        h, w = image.shape[:2]
        inside = covered & (map_x >= 0) & (map_y >= 0) & (map_x <= w - 1) & (map_y <= h - 1)
        valid = inside.astype(np.uint8) * 255
        if not_face is not None:
            valid &= ~cv2.remap(not_face, map_x, map_y, cv2.INTER_NEAREST, borderValue=0)
        if scale > 1:
            # Valid where most of the pixel came from the source, as at scale 1 (where its centre
            # decides): requiring all of it would shrink the face by a pixel all round, and leave
            # that much more of the target's face (identity) in hq than in standard.
            valid = (cv2.resize(valid, (rw, rh), interpolation=cv2.INTER_AREA) > 127).astype(np.uint8) * 255
        return warped, valid

    def _mirror_filled(self, warped, image, face, src_pts, local, tris, size, scale, not_face):
        """`warped` with the source's foreshortened side (mirror_fill_weights) taken from the other
        side: the photo mirrored, each mesh point warped from its mirror image's place (the
        forehead points, lifted from the brows, reversed). Where the mirrored pixel is not the
        face's (hair, the photo's edge) the side keeps its own. Only the triangles that carry a
        weight are warped again, over their bounding box (a turned source onto a large photo face:
        ~4-5 ms more, where warping the whole face twice more cost ~10); a frontal photo costs
        nothing."""
        weights = self._for_source(
            "mirror_fill", image, face,
            lambda: mirror_fill_weights(image.shape, face.landmarks_468[:, :2], self.settings.mirror_fill),
        )
        if weights is None:
            return warped
        h, w = image.shape[:2]
        corners = src_pts[tris]  # each triangle's corners and centre in the source photo
        samples = np.round(np.concatenate([corners, corners.mean(axis=1, keepdims=True)], axis=1)).astype(int)
        carried = (weights[np.clip(samples[..., 1], 0, h - 1), np.clip(samples[..., 0], 0, w - 1)] > 0).any(axis=1)
        if not carried.any():
            return warped
        part = tris[carried]
        rw, rh = size
        x0, y0 = np.clip(np.floor(local[part].reshape(-1, 2).min(axis=0)).astype(int), 0, [rw, rh])
        x1, y1 = np.clip(np.ceil(local[part].reshape(-1, 2).max(axis=0)).astype(int) + 1, 0, [rw, rh])
        if x1 <= x0 or y1 <= y0:
            return warped
        box_local, box_size = local - [x0, y0], (int(x1 - x0), int(y1 - y0))
        mirrored = self._for_source("mirrored", image, face, lambda: np.ascontiguousarray(image[:, ::-1]))
        mirrored_pts = np.vstack([src_pts[:468][MESH_MIRROR], src_pts[468:][::-1]]).astype(np.float32)
        mirrored_pts[:, 0] = w - 1 - mirrored_pts[:, 0]
        mirrored_not_face = None if not_face is None else np.ascontiguousarray(not_face[:, ::-1])
        other_side, other_valid = self._warp(
            mirrored, mirrored_pts, box_local, part, box_size, scale, mirrored_not_face
        )
        weight, covered = self._warp(weights, src_pts, box_local, part, box_size, scale)
        # np.clip: hq's Lanczos warp rings a little past 0 and 1.
        weight = (np.clip(weight, 0.0, 1.0) * ((other_valid > 0) & (covered > 0)))[..., None]
        region = warped[y0:y1, x0:x1].astype(np.float32)
        filled = warped.copy()
        filled[y0:y1, x0:x1] = np.clip(np.rint(region * (1.0 - weight) + other_side * weight), 0, 255).astype(np.uint8)
        return filled

    # -- fast ----------------------------------------------------------------------------------

    def _swap_fast(self, photo, out: np.ndarray, tgt_68: np.ndarray) -> None:
        """Landmark warp, global colour match, feathered alpha: no Poisson solve, no region masks."""
        cfg = self.settings
        src_img, src_face = photo
        dst_68 = destination_points(src_face.landmarks_68, tgt_68, cfg.source_shape)
        src_pts = extended_points(src_face.landmarks_68, cfg.forehead)
        dst_pts = extended_points(dst_68, cfg.forehead)
        face_size = float(np.linalg.norm(dst_pts.max(0) - dst_pts.min(0))) / np.sqrt(2)
        region = self._region(out, dst_pts, face_size)
        if region is None:
            return
        (x1, y1), (cx1, cy1, cx2, cy2), roi, inframe = region
        rh, rw = roi.shape[:2]
        local = dst_pts - [x1, y1]
        tris = delaunay(local, (rw, rh))
        warped, valid = self._warp(src_img, src_pts, local, tris, (rw, rh))
        mask = np.zeros((rh, rw), np.uint8)
        cv2.fillConvexPoly(mask, cv2.convexHull(np.round(local).astype(np.int32)), 255)
        mask = shrunk_region(mask & valid, local, face_size, cfg)
        if cv2.countNonZero(mask) < 64:
            return
        warped = transfer_colour(warped, roi, mask)
        if is_grayscale(roi, inframe):
            warped = to_gray3(warped)
        feather = max(1, int(cfg.feather * face_size))
        alpha = cv2.GaussianBlur(
            cv2.erode(mask, _disk(feather / 2)).astype(np.float32) / 255.0, (0, 0), feather / 2.0
        )
        alpha *= (mask > 0) & (inframe > 0)
        with inference_clock.stage("paste"):
            blended = roi.astype(np.float32) + alpha[..., None] * (warped.astype(np.float32) - roi)
            self._write_back(out, roi, blended, alpha, (x1, y1), (cx1, cy1, cx2, cy2))

    # -- standard / hq -------------------------------------------------------------------------

    def _swap_full(
        self, photos, out: np.ndarray, tgt_68: np.ndarray, *, hq: bool, target_mesh: np.ndarray | None = None
    ) -> None:
        cfg = self.settings
        ranked = sorted(
            ((pose_residual(face.landmarks_68, tgt_68), i) for i, (_, face) in enumerate(photos)),
        )
        used = ranked if hq else ranked[:1]
        primary = photos[used[0][1]][1]
        # With Face Mesh points on both sides the warp follows all 468 (the lids, the inner and outer
        # lip lines): the target's expression is carried by the geometry itself.
        dense = target_mesh is not None and all(photos[i][1].landmarks_468 is not None for _, i in used)
        # Teeth seen on one side only: each mouth's inside stays its own person's, whatever the
        # openings say (Face Mesh can place the lips of a closed smile apart).
        tgt_teeth = teeth_shown(out, tgt_68)
        src_teeth = {
            i: self._for_source("teeth", *photos[i], lambda i=i: teeth_shown(photos[i][0], photos[i][1].landmarks_68))
            for _, i in used
        }
        # The source grins onto closed lips: its lips are drawn closed on the target's mouth line
        # (their inner lines meet), so no teeth and none of the target's own lips show between them.
        # Not onto a mouth open wider than the grin without teeth showing (an "O", a dropped jaw):
        # that opening is the target's, kept below (keep_mouth).
        close_lips = (
            cfg.keep_target_mouth
            and teeth_differ(src_teeth[used[0][1]], tgt_teeth)
            and mouth_openness(tgt_68) <= mouth_openness(primary.landmarks_68) + cfg.expression_tolerance
        )
        # Expression: where the target's mouth or eyes are posed differently from the source's (an
        # open mouth over closed lips, a blink), that part keeps the target's shape and opening;
        # where they match, the source's own (part of its identity) is used.
        src_68 = primary.landmarks_68
        mouth_differs = (
            cfg.keep_target_mouth
            and abs(mouth_openness(tgt_68) - mouth_openness(src_68)) > cfg.expression_tolerance
        )
        # The target's open mouth (teeth, tongue) is kept inside the source's lips. A closed target
        # mouth under the source's open one: the lips take the target's line (the warp closes them)
        # and what the source shows between them is left out (unmatched_openings).
        keep_mouth = cfg.keep_target_mouth and (
            (mouth_differs and mouth_openness(tgt_68) > 0.06) or teeth_differ(tgt_teeth, src_teeth[used[0][1]])
        )
        keep_eye = kept_eyes(src_68, tgt_68, cfg)
        if dense:
            # An eye or the lips whose target pixels are not kept moves towards where the source has it.
            moved = tuple(
                name
                for name, kept in (
                    ("right_eye", keep_eye[0]),
                    ("left_eye", keep_eye[1]),
                    ("lips", keep_mouth or mouth_differs),
                )
                if not kept
            )
            dst_mesh = mesh_destination(primary.landmarks_468, target_mesh, cfg.source_shape, moved)
            if close_lips:
                closed_lips(dst_mesh, MESH_UPPER_INNER_LIP, MESH_LOWER_INNER_LIP)
            dst_68 = dst_mesh[MESH_TO_68].copy()
        else:
            dst_68 = destination_points(primary.landmarks_68, tgt_68, cfg.source_shape)
        for kept, part in zip(keep_eye, (slice(36, 42), slice(42, 48)), strict=True):
            if kept:
                dst_68[part] = tgt_68[part]
        if mouth_differs:
            dst_68[48:68] = tgt_68[48:68]
        if close_lips:
            closed_lips(dst_68, [61, 62, 63], [67, 66, 65])
        dst_pts = extended_points(dst_68, cfg.forehead)
        face_size = float(np.linalg.norm(dst_pts.max(0) - dst_pts.min(0))) / np.sqrt(2)
        region = self._region(out, dst_pts, face_size)
        if region is None:
            return
        (x1, y1), box, roi, inframe = region
        rh, rw = roi.shape[:2]
        local = dst_pts - [x1, y1]
        tgt_local = (tgt_68 - [x1, y1]).astype(np.float32)
        # The warp's points: the 68 (+ forehead), or the 468 mesh points (+ the same forehead points);
        # the region, its mask and seam stay those of the 68 either way.
        warp_local = np.vstack([dst_mesh - [x1, y1], local[68:]]).astype(np.float32) if dense else local
        tris = delaunay(warp_local, (rw, rh))
        scale = cfg.supersample if hq else 1

        # Warp each used photo; hq blends them, weighted by how close their pose is to the target's.
        best = used[0][0]
        acc = np.zeros((rh, rw, 3), np.float32)
        weight_sum = np.zeros((rh, rw), np.float32)
        primary_valid = None
        for residual, index in used:
            image, face = photos[index]
            src_pts = extended_points(face.landmarks_68, cfg.forehead)
            not_face = self._source_not_face(image, face, src_pts) if cfg.occlusion else None
            unmatched = unmatched_openings(
                image.shape, face.landmarks_68, tgt_68, cfg, teeth_differ(src_teeth[index], tgt_teeth)
            )
            if unmatched is not None:
                not_face = unmatched if not_face is None else not_face | unmatched
            # Supersampling keeps a reduced source from aliasing; an enlarged one has no detail
            # finer than the picture's pixels to keep, and Lanczos would only add ringing.
            upscale = face_size / (float(np.linalg.norm(src_pts.max(0) - src_pts.min(0))) / np.sqrt(2))
            warp_src = np.vstack([face.landmarks_468[:, :2], src_pts[68:]]) if dense else src_pts
            if index == used[0][1]:
                warp_src_primary = warp_src
            warped, valid = self._warp(
                image, warp_src, warp_local, tris, (rw, rh), scale if upscale < 1 else 1, not_face
            )
            if dense and cfg.mirror_fill > 0:
                warped = self._mirror_filled(
                    warped, image, face, warp_src, warp_local, tris, (rw, rh), scale if upscale < 1 else 1, not_face
                )
            if primary_valid is None:
                primary_valid, primary_upscale = valid, upscale
            weight = float(np.exp(-(residual - best) / cfg.pose_tau))
            if weight < 0.05:
                continue
            if len(used) > 1:  # each photo in the target's colours first, so they average cleanly
                warped = transfer_colour(warped, roi, cv2.erode(valid, _disk(3)))
            w = (valid > 0).astype(np.float32) * weight
            acc += warped.astype(np.float32) * w[..., None]
            weight_sum += w
        valid = primary_valid
        warped = np.clip(acc / np.maximum(weight_sum, 1e-6)[..., None], 0, 255).astype(np.uint8)
        warped[weight_sum <= 0] = roi[weight_sum <= 0]

        grayscale = is_grayscale(roi, inframe)
        if grayscale:
            warped = to_gray3(warped)

        hull = np.zeros((rh, rw), np.uint8)
        cv2.fillConvexPoly(hull, cv2.convexHull(np.round(local).astype(np.int32)), 255)
        shape_mask = hull & valid
        stretch = None
        if cfg.stretch_limit > 0:
            stretch = stretched(warp_local, warp_src_primary, tris, (rw, rh), cfg.stretch_limit)
            shape_mask &= ~rim_stretch(stretch, cv2.erode(hull, _disk(cfg.mask_shrink * face_size)))
            warped = soften_feature_corners(warped, stretch, local[:68], face_size)
        holes = np.zeros((rh, rw), np.uint8)
        if keep_mouth:
            cv2.fillPoly(holes, [np.round(tgt_local[MOUTH_INNER]).astype(np.int32)], 255)
        for kept, part in zip(keep_eye, (slice(36, 42), slice(42, 48)), strict=True):
            if kept:  # the source shows this eye otherwise opened: its pixels would not match
                cv2.fillPoly(holes, [np.round(tgt_local[part]).astype(np.int32)], 255)
        holes = cv2.dilate(holes, _disk(0.012 * face_size))
        if keep_mouth and stretch is not None:
            # The source's closed lips spread over the target's open mouth: the triangles joining
            # them draw the source's lip crease stretched round the target's teeth (a dark, dotted
            # rim). Where they reach past the mouth's inner outline the target's own pixels stay.
            lips = np.zeros((rh, rw), np.uint8)
            cv2.fillPoly(lips, [np.round(tgt_local[48:60]).astype(np.int32)], 255)
            holes |= stretch & lips
        if cfg.occlusion:
            holes |= occlusion_mask(
                roi,
                tgt_local,
                face_size,
                region_points=extended_points(tgt_local, cfg.forehead),
                grayscale=grayscale,
            )
        outer = shrunk_region(shape_mask, local, face_size, cfg)
        mask = outer & ~holes
        if cv2.countNonZero(mask & inframe) < 64:
            return

        skin = mask & inframe
        # Where the texture measures look (TEXTURE_INSET); what they change is all of `skin`.
        texture = cv2.erode(skin, _disk(TEXTURE_INSET * face_size))
        sigma = max(2.0, cfg.shading_sigma * face_size)
        if cfg.remove_highlights:
            # Eyes (with their lids, up to the brows) and mouth excluded: eye whites, a lit lid
            # under a dark brow and teeth stand out as highlights do.
            features = np.zeros((rh, rw), np.uint8)
            for part in (np.r_[17:22, 36:42], np.r_[22:27, 42:48], np.r_[48:60]):
                cv2.fillConvexPoly(features, cv2.convexHull(np.round(local[part]).astype(np.int32)), 255)
            plain_skin = skin & ~cv2.dilate(features, _disk(0.03 * face_size))
            warped = remove_highlights(warped, roi, plain_skin, sigma, texture=texture)
        warped = transfer_shading(
            warped, roi, skin, sigma, eyes=_eye_weights(local, (rh, rw), face_size),
            target_skin=shrunk_region(hull, local, face_size, cfg) & ~holes & inframe,
            brows=(
                _brows((dst_mesh if dense else dst_68) - [x1, y1], (rh, rw), face_size),
                _brows((target_mesh[:, :2] if dense else tgt_68) - [x1, y1], (rh, rw), face_size),
            ),
            colour_sigma=max(1.0, cfg.colour_sigma * face_size),
        )
        if hq and cfg.detail_octaves > 0:
            warped = match_detail(
                warped, roi, texture, cfg.detail_octaves, upscale=primary_upscale, max_invented=1 + cfg.sharpen
            )
        else:
            warped = match_sharpness(warped, roi, texture, cfg.sharpen)
        if cfg.match_grain:
            warped = match_grain(warped, roi, texture)

        feather = max(1, int(cfg.feather * face_size))
        inner = cv2.erode(mask, _disk(feather / 2))
        alpha = cv2.GaussianBlur(inner.astype(np.float32) / 255.0, (0, 0), feather / 2.0)
        alpha *= mask > 0  # never reach outside the mask
        alpha *= inframe > 0  # nor outside the frame (the padded rim is not the picture)
        with inference_clock.stage("paste"):
            # The solve's boundary is the face's outer rim only: inside the holes (a kept mouth or
            # eye, an occluder) the shaded face stands in for the picture, so nothing there pulls
            # the face's colour (a blue bar over the mouth tinted the lips and nose blue-purple).
            # The holes are cut out again by `alpha`.
            boundary = np.where(holes[..., None] > 0, warped, roi)
            cloned = poisson(warped, boundary, outer, cfg.membrane_limit, reach=cfg.membrane_reach * face_size)
            if hq and cfg.multiband_levels > 0:
                # The Poisson solve removes what low-frequency mismatch is left at the rim; the
                # pyramid then joins the fine bands, each over its own width, keeping their grain.
                filled = np.where(mask[..., None] > 0, cloned, roi.astype(np.float32))
                blended = multiband(filled, roi, alpha, cfg.multiband_levels)
            else:
                blended = roi.astype(np.float32) + alpha[..., None] * (cloned - roi.astype(np.float32))
            cx1, cy1, cx2, cy2 = box
            original = None
            if cfg.match_blockiness:  # only the face's region on the 8x8 grid, not the whole frame
                gx0, gy0, gx1, gy1 = blockiness_grid(out.shape, (cy2 - cy1, cx2 - cx1), (cx1, cy1))
                original = out[gy0:gy1, gx0:gx1].copy()
            self._write_back(out, roi, blended, alpha, (x1, y1), box)
            if original is not None:
                oy, ox = cy1 - y1, cx1 - x1
                match_blockiness(out, original, alpha[oy : oy + cy2 - cy1, ox : ox + cx2 - cx1], (cx1, cy1))

    def _source_not_face(self, image: np.ndarray, face: Face, src_pts: np.ndarray) -> np.ndarray:
        """What in the source's face hull is not its skin (hair over the forehead, background past a
        turned cheek, glasses, a hand): the same skin-model estimate as for the target, cached per
        photo so several target faces pay for it once. Worked out on a box round the face
        (`on_face_box`), reduced for a face over SOURCE_MASK_FACE_PX."""
        size = float(np.linalg.norm(src_pts.max(0) - src_pts.min(0))) / np.sqrt(2)

        def compute(picture: np.ndarray, to_picture) -> np.ndarray:
            return occlusion_mask(
                picture, to_picture(face.landmarks_68), size * to_picture.factor,
                region_points=to_picture(src_pts), grayscale=is_grayscale(image), rim=SOURCE_RIM,
            )

        points = np.vstack([face.landmarks_68, src_pts])
        return self._for_source("not_face", image, face, lambda: on_face_box(image, points, size, compute))

    def _for_source(self, what: str, image: np.ndarray, face: Face, compute):
        """`compute()`, a figure of one source photo's face, kept while that photo is the one being
        swapped in: several target faces, a video's every frame and the next jobs with the same
        photo (a user's selfie into one target after another) pay for it once. Known by the photo's
        pixels, not by the array that holds them (a new job decodes it again; a freed array's
        address is reused). One photo at a time (its figures kept together): bounded memory.

        A video's swap threads call this side by side: the value computed is returned as it is, not
        read back from the cache another thread may have replaced meanwhile (a KeyError then)."""
        points = b"" if face.landmarks_68 is None else np.asarray(face.landmarks_68).tobytes()
        photo = (self._digest(image), face.box.tobytes(), points)
        cache = self._source_cache
        if (what, photo) in cache:
            return cache[(what, photo)]
        value = compute()
        kept = {key: held for key, held in self._source_cache.items() if key[1] == photo}
        self._source_cache = {**kept, (what, photo): value}
        return value

    def _digest(self, image: np.ndarray) -> bytes:
        """The photo's SHA-256 (~0.45 ms a megapixel here), taken once per array: the arrays of the
        last few photos are held, so an array's identity stands for its pixels. Safe from the video's
        swap threads (each call returns its own photo's digest). When full, the photo used longest ago
        is let go, never all of them (emptied, a clip's photos in use were hashed again)."""
        with self._digests_lock:
            held = self._digests.pop(id(image), None)
            if held is None or held[0] is not image:
                pixels = np.ascontiguousarray(image)
                held = (image, hashlib.sha256(pixels.data).digest() + repr(pixels.shape).encode())
                while len(self._digests) >= SOURCE_PHOTOS_HELD:
                    del self._digests[next(iter(self._digests))]
            self._digests[id(image)] = held  # the most recently used last
        return held[1]

    @staticmethod
    def _write_back(out, roi, blended, alpha, origin, box) -> None:
        """Copy the changed pixels (alpha > 0) of the ROI back into the frame."""
        x1, y1 = origin
        cx1, cy1, cx2, cy2 = box
        changed = alpha > 0
        result = roi.copy()
        result[changed] = np.clip(np.rint(blended[changed]), 0, 255).astype(np.uint8)
        oy, ox = cy1 - y1, cx1 - x1
        out[cy1:cy2, cx1:cx2] = result[oy : oy + (cy2 - cy1), ox : ox + (cx2 - cx1)]


def face_mask(
    frame_shape: tuple[int, ...], face: Face, settings: ClassicalSettings | None = None
) -> np.ndarray:
    """The region the classical swapper may change for `face` (before shrinking), as 0/255."""
    cfg = settings or ClassicalSettings()
    pts = extended_points(face.landmarks_68, cfg.forehead)
    mask = np.zeros(frame_shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.round(pts).astype(np.int32)), 255)
    return mask
