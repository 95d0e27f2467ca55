"""Classical face swap that needs no downloaded weights.

Per target face: warp the source face onto the target's landmarks (piecewise affine over a
Delaunay triangulation, done as ONE remap so triangle edges never show), move its colour to
the target's skin (LAB mean/std inside the face), then Poisson-blend it (seamless clone,
NORMAL_CLONE: mixed cloning would keep the target's gradients and so its identity) inside a
slightly shrunk hull of the face, feathered at the rim. Everything outside that mask is
copied back from the target, so only the face can change.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from swap import inference_clock
from swap.types import Face, SourceIdentity

JAW = slice(0, 17)
INNER = slice(17, 68)  # brows, nose, eyes, mouth
MOUTH_INNER = slice(60, 68)


@dataclass
class ClassicalSettings:
    # How far above the brows the face region reaches, x face height. 0.22 scored best on identity
    # but pulled fringe hair across the forehead as a band; 0.12 keeps 100 % of bench pairs.
    forehead: float = 0.12
    source_shape: float = 0.5  # 0 = inner features take the target's shape, 1 = the source's
    mask_shrink: float = 0.04  # erode the hull by this x face size, so the seam sits on skin
    feather: float = 0.05  # soften the rim over this x face size
    keep_target_mouth: bool = False  # keep the target's open mouth (teeth/tongue)
    sharpen: float = 0.35  # unsharp amount on the warped source (remap softens it)
    # Drop this x face size of the source rim (hair, background of turned heads); < 0: off. Off by
    # default: on the bench it cost identity (100 % -> 98.8 % of pairs) for a small visual gain.
    source_shrink: float = -1.0
    membrane_limit: float = 20.0  # most the Poisson colour correction may stray from its median


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
    """Triangles (n, 3) of point indices covering the convex hull of `points`."""
    w, h = size
    subdiv = cv2.Subdiv2D((-1, -1, w + 2, h + 2))
    clipped = np.clip(points, 0, [w, h])
    index = {}
    for i, (x, y) in enumerate(clipped):
        key = (round(float(x), 3), round(float(y), 3))
        if key in index:
            continue
        index[key] = i
        subdiv.insert((float(x), float(y)))
    tris = []
    lookup = {k: v for k, v in index.items()}
    for t in subdiv.getTriangleList():
        ids = []
        for j in range(3):
            key = (round(float(t[2 * j]), 3), round(float(t[2 * j + 1]), 3))
            if key not in lookup:
                break
            ids.append(lookup[key])
        if len(ids) == 3:
            tris.append(ids)
    return np.array(tris, np.int32).reshape(-1, 3)


def piecewise_affine_maps(dst_pts: np.ndarray, src_pts: np.ndarray, tris: np.ndarray, size: tuple[int, int]):
    """Per-pixel source coordinates for every pixel inside the triangulation (-1 elsewhere)."""
    w, h = size
    tri_id = np.full((h, w), -1, np.int32)
    mats = np.zeros((len(tris), 2, 3), np.float32)
    for k, (a, b, c) in enumerate(tris):
        d = dst_pts[[a, b, c]].astype(np.float32)
        s = src_pts[[a, b, c]].astype(np.float32)
        mats[k] = cv2.getAffineTransform(d, s)
        cv2.fillConvexPoly(tri_id, np.round(d).astype(np.int32), int(k), lineType=cv2.LINE_8)
    ys, xs = np.nonzero(tri_id >= 0)
    m = mats[tri_id[ys, xs]]
    map_x = np.full((h, w), -1, np.float32)
    map_y = np.full((h, w), -1, np.float32)
    map_x[ys, xs] = m[:, 0, 0] * xs + m[:, 0, 1] * ys + m[:, 0, 2]
    map_y[ys, xs] = m[:, 1, 0] * xs + m[:, 1, 1] * ys + m[:, 1, 2]
    return map_x, map_y, tri_id >= 0


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


class ClassicalSwapper:
    name = "classical"
    needs_embedding = None
    reports_inference_time = True  # no model: none of its time is inference

    def __init__(self, settings: ClassicalSettings | None = None) -> None:
        self.settings = settings or ClassicalSettings()

    def swap(self, source: SourceIdentity, frame: np.ndarray, faces: list[Face]) -> np.ndarray:
        if source.face.landmarks_68 is None:
            raise ValueError("the classical swapper needs 68 source landmarks")
        out = frame.copy()
        for face in faces:
            if face.landmarks_68 is None:
                raise ValueError("the classical swapper needs 68 target landmarks")
            self._swap_one(source.image, source.face.landmarks_68, out, face.landmarks_68)
        return out

    def _swap_one(self, src_img: np.ndarray, src_68: np.ndarray, out: np.ndarray, tgt_68: np.ndarray) -> None:
        cfg = self.settings
        dst_68 = destination_points(src_68, tgt_68, cfg.source_shape)
        src_pts = extended_points(src_68, cfg.forehead)
        dst_pts = extended_points(dst_68, cfg.forehead)
        face_size = float(np.linalg.norm(dst_pts.max(0) - dst_pts.min(0))) / np.sqrt(2)

        # Work in a region around the face, padded past the frame edge by reflection so faces
        # that touch the border keep a full Poisson boundary.
        margin = int(0.15 * face_size) + 8
        x1, y1 = np.floor(dst_pts.min(0)).astype(int) - margin
        x2, y2 = np.ceil(dst_pts.max(0)).astype(int) + margin
        fh, fw = out.shape[:2]
        cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x2, fw), min(y2, fh)
        if cx2 - cx1 < 8 or cy2 - cy1 < 8:
            return
        roi = cv2.copyMakeBorder(
            out[cy1:cy2, cx1:cx2], cy1 - y1, y2 - cy2, cx1 - x1, x2 - cx2, cv2.BORDER_REFLECT_101
        )
        rh, rw = roi.shape[:2]
        local = dst_pts - [x1, y1]

        tris = delaunay(local, (rw, rh))
        map_x, map_y, covered = piecewise_affine_maps(local, src_pts, tris, (rw, rh))
        warped = cv2.remap(src_img, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)
        if cfg.sharpen > 0:
            blur = cv2.GaussianBlur(warped, (0, 0), 1.2)
            warped = cv2.addWeighted(warped, 1 + cfg.sharpen, blur, -cfg.sharpen, 0)

        mask = np.zeros((rh, rw), np.uint8)
        cv2.fillConvexPoly(mask, cv2.convexHull(np.round(local).astype(np.int32)), 255)
        mask &= covered.astype(np.uint8) * 255
        # Only take source pixels that are face: with a turned source head, the far side of its
        # hull is hair and background, which the warp would otherwise stretch onto the cheek.
        if cfg.source_shrink >= 0:
            mask &= self._source_face_mask(src_img.shape, src_pts, map_x, map_y, face_size)
        if cfg.keep_target_mouth:
            tgt_local = tgt_68 - [x1, y1]
            cv2.fillPoly(mask, [np.round(tgt_local[MOUTH_INNER]).astype(np.int32)], 0)
        shrink = max(1, int(cfg.mask_shrink * face_size))
        mask = cv2.erode(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * shrink + 1,) * 2))
        if cv2.countNonZero(mask) < 64:
            return

        warped = transfer_colour(warped, roi, mask)
        with inference_clock.stage("paste"):
            self._blend(warped, roi, mask, face_size)
        oy, ox = cy1 - y1, cx1 - x1
        out[cy1:cy2, cx1:cx2] = roi[oy : oy + (cy2 - cy1), ox : ox + (cx2 - cx1)]

    def _source_face_mask(self, shape, src_pts, map_x, map_y, face_size: float) -> np.ndarray:
        src_size = float(np.linalg.norm(src_pts.max(0) - src_pts.min(0))) / np.sqrt(2)
        x1, y1 = np.maximum(np.floor(src_pts.min(0)).astype(int) - 2, 0)
        x2, y2 = np.ceil(src_pts.max(0)).astype(int) + 2
        x2, y2 = min(x2, shape[1]), min(y2, shape[0])
        valid = np.zeros((max(1, y2 - y1), max(1, x2 - x1)), np.uint8)
        cv2.fillConvexPoly(valid, cv2.convexHull(np.round(src_pts - [x1, y1]).astype(np.int32)), 255)
        r = max(1, int(self.settings.source_shrink * src_size))
        valid = cv2.erode(valid, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2))
        warped = cv2.remap(
            valid, map_x - np.float32(x1), map_y - np.float32(y1), cv2.INTER_NEAREST, borderValue=0
        )
        return warped

    def _blend(self, warped: np.ndarray, roi: np.ndarray, mask: np.ndarray, face_size: float) -> None:
        """Poisson-blend `warped` into `roi` (in place) inside `mask`, feathered at the rim."""
        bx, by, bw, bh = cv2.boundingRect(mask)
        # The mask stays >= margin away from the ROI edge, as seamlessClone needs. OpenCV 5.0's
        # seamlessClone overwrites its mask argument, and may touch a pixel just outside it:
        # hand it a copy, and only take pixels inside our own mask below.
        cloned = cv2.seamlessClone(warped, roi, mask.copy(), (bx + bw // 2, by + bh // 2), cv2.NORMAL_CLONE)

        feather = max(1, int(self.settings.feather * face_size))
        inner = cv2.erode(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (feather + 1,) * 2))
        limit = self.settings.membrane_limit
        if limit > 0 and cv2.countNonZero(inner) > 64:
            # The clone is the warped face plus a smooth correction fitted to the mask's rim. Where
            # the rim crosses hair or background (turned heads), that correction smears a dark or
            # bright patch across the cheek: keep it within `limit` of its typical value.
            membrane = cloned.astype(np.float32) - warped.astype(np.float32)
            centre = np.median(membrane[inner > 0], axis=0)
            membrane = centre + np.clip(membrane - centre, -limit, limit)
            cloned = np.clip(warped.astype(np.float32) + membrane, 0, 255)
        alpha = cv2.GaussianBlur(inner.astype(np.float32) / 255.0, (0, 0), feather / 2.0)
        alpha *= mask > 0  # never reach outside the mask
        blended = roi.astype(np.float32) + alpha[..., None] * (cloned.astype(np.float32) - roi)
        inside = mask > 0
        roi[inside] = np.clip(np.rint(blended[inside]), 0, 255).astype(np.uint8)


def face_mask(
    frame_shape: tuple[int, ...], face: Face, settings: ClassicalSettings | None = None
) -> np.ndarray:
    """The region the classical swapper may change for `face` (before shrinking), as 0/255."""
    cfg = settings or ClassicalSettings()
    pts = extended_points(face.landmarks_68, cfg.forehead)
    mask = np.zeros(frame_shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.round(pts).astype(np.int32)), 255)
    return mask
