"""Make a warped source face look like it was photographed with the target.

Lighting and colour come from the target's own skin at low spatial frequency (a masked, i.e.
normalised, Gaussian blur), the source keeps only its fine detail; then grain and sharpness
are matched to the target, and a grayscale target gets a grayscale face. JPEG blockiness is
matched after pasting (`match_blockiness`), on the frame's own 8x8 grid.
"""

from __future__ import annotations

import cv2
import numpy as np


def is_grayscale(image: np.ndarray, mask: np.ndarray | None = None, tolerance: float = 2.0) -> bool:
    """All three channels (nearly) equal inside `mask`: a black-and-white photo."""
    img = image.astype(np.int16)
    spread = np.abs(img[..., 0] - img[..., 1]) + np.abs(img[..., 1] - img[..., 2])
    values = spread[mask > 0] if mask is not None and mask.any() else spread
    return float(np.mean(values)) < tolerance


def to_gray3(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def masked_blur(values: np.ndarray, weight: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur that only averages where weight > 0 (normalised convolution).

    A wide blur (`sigma` from REDUCED_BLUR_SIGMA px) runs on a copy reduced to about 4 px per
    sigma (at least by 2) and is enlarged back: the result is smooth at that scale, and OpenCV's Gaussian costs
    in proportion to sigma (the shading transfer's blurs at full size were ~40 % of a standard swap
    of a 1280-px portrait)."""
    w = weight.astype(np.float32)
    weighted = values * (w[..., None] if values.ndim == 3 else w)
    num, den = _blur(weighted, sigma), _blur(w, sigma)
    den = np.maximum(den, 1e-4)
    return num / (den[..., None] if values.ndim == 3 else den)


def masked_blur_pair(
    first: np.ndarray, first_weight: np.ndarray, second: np.ndarray, second_weight: np.ndarray, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """`masked_blur` of two float32 (h, w, c) pictures, each with its own weight, in fewer blurs: the
    two weights as one two-channel picture, and the two weighted pictures as one where they fit in
    four channels (OpenCV's resize, on the reduced path, takes at most four). The same results, within
    float rounding; the products and quotients by OpenCV, ~4x numpy's broadcasting over channels."""
    ca, cb = first.shape[2], second.shape[2]
    wa, wb = first_weight.astype(np.float32), second_weight.astype(np.float32)
    den_a, den_b = cv2.split(np.maximum(_blur(cv2.merge([wa, wb]), sigma), 1e-4))
    if ca + cb <= 4:
        num = _blur(cv2.multiply(cv2.merge([first, second]), cv2.merge([wa] * ca + [wb] * cb)), sigma)
        low = cv2.divide(num, cv2.merge([den_a] * ca + [den_b] * cb))
        return low[..., :ca], low[..., ca:]
    num_a = _blur(cv2.multiply(np.ascontiguousarray(first), cv2.merge([wa] * ca)), sigma)
    num_b = _blur(cv2.multiply(np.ascontiguousarray(second), cv2.merge([wb] * cb)), sigma)
    return cv2.divide(num_a, cv2.merge([den_a] * ca)), cv2.divide(num_b, cv2.merge([den_b] * cb))


REDUCED_BLUR_SIGMA = 4.0


def _blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """cv2.GaussianBlur(image, (0, 0), sigma), on a copy reduced by a whole factor (about 4 px per
    sigma, at least 2) when sigma is REDUCED_BLUR_SIGMA or wider. From 4 px (8 before 2026-12-05): the
    colour's low-pass of a video-size face (sigma ~5.6 on a 200x193 region) ran at full size, 1.6-2.6
    ms of its ~8 ms shading transfer; halved, a masked blur at sigma 5.2 is within 2.6 levels (mean
    0.55) of the exact one."""
    factor = max(2, int(sigma // 4))
    if sigma < REDUCED_BLUR_SIGMA:
        return cv2.GaussianBlur(image, (0, 0), sigma)
    h, w = image.shape[:2]
    size = (max(1, round(w / factor)), max(1, round(h / factor)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigmaX=sigma * size[0] / w, sigmaY=sigma * size[1] / h)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def transfer_shading(
    warped: np.ndarray,
    target: np.ndarray,
    skin: np.ndarray,
    sigma: float,
    *,
    detail_gain_max: float = 1.25,
    eyes: np.ndarray | None = None,
    colour_sigma: float | None = None,
    brows: tuple[np.ndarray, np.ndarray] | None = None,
    target_skin: np.ndarray | None = None,
) -> np.ndarray:
    """The target's low-frequency shading and colour with the source's fine detail (Lab).

    `colour_sigma` (finer than `sigma`): colour is split at that scale instead, so the target's
    colour reaches down to it. At the lightness scale, a flushed or blotchy cheek of the source (a
    patch a fifth of the face wide) passed as detail: a red patch on the target's even skin.

    `skin` (0/255) marks pixels where both images show face skin (no mouth, eyes, occluders);
    elsewhere the low-pass is filled in from around them. The detail layer's contrast is scaled
    to the target's (a flat, low-light target must not get a contrasty face), never boosted by
    more than `detail_gain_max`, and colour detail is never boosted (no green/blue casts).
    The colour's detail is the source's colour turned and scaled as its skin's colour is to the
    target's (`_colour_in_targets_frame`), so a nearly grey pixel (a brow, lashes) stays nearly grey.
    `eyes` (0-1 weights): inside them (from 0.5, all of it from 0.9) the colour is the source's own (an
    iris's colour is the person's, not the light's: as the target skin's colour plus the iris's
    difference from the source's skin, a brown iris from an olive face turned blue on a pink one), and
    the lightness is never darker than the source's eye is in proportion to the skin round it (the
    proportion taken to the power of the target's contrast for its lightness over the source's: a dim
    picture darkens an eye more than the skin). Without that a blue or green iris on a shadowed, soft
    target eye came out near black and brownish, beside a blue one on the lit side (mismatched eyes).
    `brows` (0/255, the warped face's and the target's): hair, not lit skin, left out of that
    picture's own low-pass and filled in from the skin round it; the source's brows stay as detail.
    A dark-browed target's brows in its low-pass greyed and darkened the skin round them: where a
    fair source shows lids under thin brows, a pale grey band. `target_skin` (default `skin`): the
    target's own skin, over which its low-pass is taken; it may reach past `skin` where the source
    shows no face (a fringe over its forehead), so the low-pass at the face's rim is the skin's there.
    """
    w = cv2.cvtColor(warped, cv2.COLOR_BGR2LAB).astype(np.float32)
    t = cv2.cvtColor(target, cv2.COLOR_BGR2LAB).astype(np.float32)
    m = (skin > 0).astype(np.float32)
    if m.sum() < 64:
        return warped
    m_t = m if target_skin is None else (target_skin > 0).astype(np.float32)
    m_w, m_t = (m, m_t) if brows is None else (m * (brows[0] == 0), m_t * (brows[1] == 0))
    low_w, low_t = masked_blur_pair(w, m_w, t, m_t, sigma)
    detail_w = w - low_w
    detail_t = t - low_t
    sel = m > 0
    std_w = detail_w[sel].std(0) + 1e-3
    std_t = detail_t[sel].std(0) + 1e-3
    gain = np.clip(std_t / std_w, 0.5, detail_gain_max)
    gain[1:] = np.minimum(gain[1:], 1.0)
    out = low_t + detail_w * gain
    if colour_sigma is not None and colour_sigma < sigma:
        # On whole planes (cv2.split): arithmetic on strided channel slices cost 4 ms a 330-px face.
        _, a_w, b_w = cv2.split(w)
        _, a_t, b_t = cv2.split(t)
        # The colour's low-pass is the skin's, filled in over the eyes from round them: at colour_sigma
        # (about an iris's size) the target's iris was the eye's low-frequency colour under the
        # source's iris detail (a grey-green target eye turned a grey-blue source eye grey-green).
        lows_w, lows_t = (m_w, m_t) if eyes is None else (m_w * (1.0 - eyes), m_t * (1.0 - eyes))
        low_w_ab, low_t_ab = masked_blur_pair(
            cv2.merge([a_w, b_w]), lows_w, cv2.merge([a_t, b_t]), lows_t, colour_sigma
        )
        low_aw, low_bw = cv2.split(low_w_ab)
        low_at, low_bt = cv2.split(low_t_ab)
        a_c, b_c = _colour_in_targets_frame(a_w - 128.0, b_w - 128.0, low_aw - 128.0, low_bw - 128.0,
                                            low_at - 128.0, low_bt - 128.0)
        out = cv2.merge([
            np.ascontiguousarray(out[..., 0]),
            low_at + (a_c + 128.0 - low_at) * gain[1],
            low_bt + (b_c + 128.0 - low_bt) * gain[2],
        ])
    if eyes is not None and eyes.any():
        # Lightness as a ratio to the skin round it: added to a shadowed target's dark socket, an
        # iris's difference from the source's lit skin went below black. (Only round the eyes.)
        ys, xs = np.nonzero(eyes)
        box = np.s_[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        o, e = out[box], eyes[box]
        # The ratio's power is the target's contrast relative to its own lightness over the source's
        # (not `gain`, which is in lightness units): a dim picture darkens its dark parts more than in
        # proportion (a camera's tone curve), so there the eye is darker than in proportion too; at
        # `gain` a dim target's eyes stayed as light as the source's against the skin and glowed.
        relative_t = std_t[0] / max(cv2.mean(t, mask=skin)[0], 1.0)
        relative_w = std_w[0] / max(cv2.mean(w, mask=skin)[0], 1.0)
        contrast = float(np.clip(relative_t / relative_w, 0.5, 2.0))
        ratio = low_t[box][..., 0] * (np.maximum(w[box][..., 0], 1.0) / np.maximum(low_w[box][..., 0], 8.0)) ** contrast
        o[..., 0] += e * np.maximum(0.0, ratio - o[..., 0])
        core = np.clip((e - 0.5) / 0.4, 0.0, 1.0)[..., None]
        o[..., 1:] += core * (w[box][..., 1:] - o[..., 1:])
    return cv2.cvtColor(np.clip(np.rint(out), 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)


def _colour_in_targets_frame(
    a: np.ndarray, b: np.ndarray, la_w: np.ndarray, lb_w: np.ndarray, la_t: np.ndarray, lb_t: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The source's colour (a, b from grey) turned and scaled as its skin's colour round it (la_w, lb_w)
    is to the target's (la_t, lb_t): a complex product z * Z_t / Z_w. A pixel of the skin's own colour
    gets the target's; a nearly grey one (a dark brow, lashes) stays nearly grey in any skin (added as a
    difference from the source's skin, an olive face's dark brow turned blue on a pink face). Where the
    source's skin has next to no colour the difference is added as before."""
    norm = la_w * la_w + lb_w * lb_w
    inv = 1.0 / np.maximum(norm, 1e-3)
    # z * conj(Z_w) / |Z_w|^2 * Z_t
    ra, rb = (a * la_w + b * lb_w) * inv, (b * la_w - a * lb_w) * inv
    ma, mb = ra * la_t - rb * lb_t, ra * lb_t + rb * la_t
    if norm.min() >= 64.0:  # skin of some colour everywhere (chroma 8 and up): no blend to do
        return ma, mb
    k = np.clip((np.sqrt(norm) - 3.0) / 5.0, 0.0, 1.0)
    return k * ma + (1 - k) * (la_t + a - la_w), k * mb + (1 - k) * (lb_t + b - lb_w)


def remove_highlights(
    warped: np.ndarray,
    target: np.ndarray,
    skin: np.ndarray,
    sigma: float,
    *,
    knee: float = 3.0,
    texture: np.ndarray | None = None,
) -> np.ndarray:
    """Flatten the source's highlights (a shiny nose tip, the lit rim under it, a cheek's shine)
    where the target's light makes none.

    A highlight is finer than the shading transfer's `sigma`, so `transfer_shading` keeps it as
    detail and the face gets a bright spot the target's light does not explain. A skin pixel lifted
    above its surroundings (their median over `skin`, robust to the spot itself) by more than
    `knee` times the face's own texture spread (a robust standard deviation of that lift), paler
    than the skin round it (specular light is the lamp's colour, not the skin's), where the
    target's skin is not lifted too, is moved towards its surroundings, lightness and colour: none
    of the way at half that bound, all of it at the bound, its shoulder included, so no edge is
    left. Pores and wrinkles stay, as does the source's shine where the target's light puts one.
    (Inpainting spots brighter than the target skin's own brightest 0.1 % missed the source's lit
    nose rim whenever the target had a shiny cheek elsewhere: a white blob on the nose wing of a
    turned head; and a mean of the surroundings took a small spot in and left a pale ghost of it.)
    The texture's spread is measured over `texture` (default: `skin`), skin away from the face's
    outline: the rim's shading and edges there are no skin texture, and counted as such they raised
    the bound until a cheek's spot kept its shoulder as a ring."""
    sel = skin > 0
    measured = sel if texture is None else (texture > 0) & sel
    if measured.sum() < 256:
        measured = sel
    if sel.sum() < 256:
        return warped
    lab = cv2.cvtColor(warped, cv2.COLOR_BGR2LAB)
    around, lift, spread = _lift(lab, sel, sigma, measured)
    _, lift_t, spread_t = _lift(cv2.cvtColor(target, cv2.COLOR_BGR2LAB), sel, sigma, measured)
    lab = lab.astype(np.float32)
    chroma, chroma_around = _chroma(lab), _chroma(around)
    # 0 at 0.92x the chroma round it, 1 at 0.8x; none where the skin has next to no colour (a
    # grayscale picture tells no highlight from light skin)
    pale = np.clip((0.92 - chroma / np.maximum(chroma_around, 1e-3)) / 0.12, 0.0, 1.0) * (chroma_around > 3.0)
    unlit = np.clip(1.0 - lift_t / (knee * spread_t), 0.0, 1.0)  # 0 where the target shines too
    share = np.where(sel, pale * unlit * np.clip(lift / (knee * spread) * 2.0 - 1.0, 0.0, 1.0), 0.0)
    if not share.any():
        return warped
    r = max(1, round(sigma / 12))
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)
    share = cv2.GaussianBlur(cv2.dilate(share.astype(np.float32), disk), (0, 0), r)
    out = lab + share[..., None] * (around - lab)
    return cv2.cvtColor(np.clip(np.rint(out), 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)


def _chroma(lab: np.ndarray) -> np.ndarray:
    """A float32 Lab picture's chroma, the distance of (a, b) from grey: bit for bit what
    np.linalg.norm(lab[..., 1:] - 128, axis=2) gives, in a fourteenth of its time (0.14 against 1.9
    ms on a 270x239 face: the norm reduces over a 2-long axis pixel by pixel)."""
    a, b = lab[..., 1] - 128.0, lab[..., 2] - 128.0
    return np.sqrt(a * a + b * b)


def _lift(
    lab: np.ndarray, sel: np.ndarray, sigma: float, measured: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """The 8-bit Lab picture's median round each pixel (a window of about 2 x `sigma`: robust to a spot
    smaller than half of it, which a mean would take in and so be brightened by), how far each
    pixel's lightness rises above that, and the robust spread (standard deviation) of the rise
    over `measured` (the skin's texture). The median is smooth at that scale, so it is taken on a copy
    reduced to about 4 px per `sigma` and enlarged back (a 2 x `sigma` window at full size cost
    ~60 ms a channel on a 700-px face)."""
    h, w = sel.shape
    f = max(1, int(sigma // 4))
    size = (max(1, w // f), max(1, h // f))
    small = cv2.resize(lab, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    small_sel = cv2.resize(sel.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0.5
    # Off the skin (hair, brows, eyes, the rim) the skin's own mean stands in: skin beside dark
    # hair must not count as lifted.
    filled = np.where(small_sel[..., None], small, masked_blur(small, small_sel.astype(np.float32), sigma / f))
    filled = np.clip(np.rint(filled), 0, 255).astype(np.uint8)
    k = 2 * max(1, round(sigma / f)) + 1
    around = cv2.medianBlur(filled, k)  # each channel's own median
    around = cv2.resize(around, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    lift = lab[..., 0].astype(np.float32) - around[..., 0]
    spread = 1.4826 * float(np.median(np.abs(lift[measured] - np.median(lift[measured]))))
    return around, lift, max(spread, 1.0)


def noise_sigma(image: np.ndarray, mask: np.ndarray) -> float:
    """Robust per-pixel noise level of the luminance inside `mask` (MAD of a 3x3 median residual)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    residual = grey.astype(np.float32) - cv2.medianBlur(grey, 3).astype(np.float32)
    values = residual[mask > 0]
    if values.size < 64:
        return 0.0
    return float(1.4826 * np.median(np.abs(values - np.median(values))))


def sharpness(image: np.ndarray, mask: np.ndarray) -> float:
    """Mean absolute Laplacian of the luminance inside `mask` (fine-detail energy)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    lap = np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))
    values = lap[mask > 0]
    return float(values.mean()) if values.size else 0.0


def match_sharpness(
    warped: np.ndarray, target: np.ndarray, mask: np.ndarray, max_sharpen: float
) -> np.ndarray:
    """Blur the face when it is crisper than its picture; sharpen it (at most `max_sharpen`) when softer."""
    s_t, s_w = sharpness(target, mask), sharpness(warped, mask)
    if s_t <= 0 or s_w <= 0:
        return warped
    if s_w > 1.2 * s_t:
        best, best_err = warped, abs(np.log(s_w / s_t))
        for sigma in (0.5, 0.8, 1.1, 1.5, 2.0, 2.8):
            blurred = cv2.GaussianBlur(warped, (0, 0), sigma)
            err = abs(np.log(max(sharpness(blurred, mask), 1e-3) / s_t))
            if err < best_err:
                best, best_err = blurred, err
        return best
    if s_w < s_t / 1.2 and max_sharpen > 0:
        amount = float(min(max_sharpen, s_t / s_w - 1.0))
        blur = cv2.GaussianBlur(warped, (0, 0), 1.2)
        return cv2.addWeighted(warped, 1 + amount, blur, -amount, 0)
    return warped


def _octave_weights(shape: tuple[int, int], octaves: int) -> np.ndarray:
    """(octaves + 1, h, w // 2 + 1) weights over rfft2 frequencies that sum to 1 everywhere: hats
    in log2(frequency) centred on 1/2, 1/4, ... cycles per pixel (the finest takes everything above
    1/2), the last one everything below the coarsest octave."""
    h, w = shape
    radius = np.hypot(np.fft.fftfreq(h)[:, None], np.fft.rfftfreq(w)[None, :])
    u = np.log2(np.maximum(radius, 1e-6)) + 1.0  # 0 at 1/2 cycle per pixel, -k at octave k
    weights = np.zeros((octaves + 1, *radius.shape), np.float32)
    for k in range(octaves + 1):
        weights[k] = np.clip(1.0 - np.abs(u + k), 0.0, 1.0)
    weights[0][u > 0] = 1.0
    weights[octaves][u < -octaves] = 1.0
    return weights


def match_detail(
    warped: np.ndarray,
    target: np.ndarray,
    mask: np.ndarray,
    octaves: int = 2,
    gain_range=(0.2, 2.5),
    *,
    upscale: float = 1.0,
    max_invented: float = 1.35,
) -> np.ndarray:
    """Give the face its picture's fine detail spectrum: each of the `octaves` finest octaves of the
    luminance's spatial frequencies (1/2, 1/4, ... cycles per pixel) gets ONE gain that makes its
    energy over `mask` the target skin's in that octave; coarser ones (the face's structure, which
    carries its identity) are left as they are, their contrast and shading to `transfer_shading`. An upscaled
    (soft) source face gets crisp again where the picture is crisp, a crisp one is softened where
    the picture is soft, and the face keeps its own structure (no texture of the target is copied,
    so no identity is taken from it). The octaves are smooth partitions of the spectrum, so the
    gains barely interact: two refinements settle them.

    `upscale` is how many picture pixels one source pixel covers. An octave reaching past the
    source's own resolution (1 / (2 upscale) cycles per pixel) holds interpolation texture, not
    the source's detail: boosting it to the picture's energy makes the face less like the source,
    so its gain is capped at `max_invented` (standard's most sharpening)."""
    sel = mask > 0
    if sel.sum() < 64:
        return warped
    # Float Lab: an 8-bit round trip would add quantisation noise at the finest scale, the very
    # scale being matched.
    lab_w = cv2.cvtColor(warped.astype(np.float32) / 255.0, cv2.COLOR_BGR2LAB)
    lum_t = cv2.cvtColor(target.astype(np.float32) / 255.0, cv2.COLOR_BGR2LAB)[..., 0]
    shape = lum_t.shape
    weights = _octave_weights(shape, octaves)
    spectrum_w, spectrum_t = np.fft.rfft2(lab_w[..., 0]), np.fft.rfft2(lum_t)

    def energies(spectrum: np.ndarray) -> np.ndarray:
        return np.array(
            [np.mean(np.fft.irfft2(spectrum * wk, s=shape)[sel] ** 2) for wk in weights[:octaves]]
        )

    wanted = energies(spectrum_t)
    # Octave k spans frequencies up to 2^-k cycles per pixel.
    in_source = 2.0 ** -np.arange(octaves) <= 1.0 / (2.0 * upscale)
    highest = np.where(in_source, gain_range[1], min(gain_range[1], max_invented))
    gains = np.ones(octaves)
    spectrum = spectrum_w
    for _ in range(2):
        gains = np.clip(
            gains * np.sqrt((wanted + 1e-3) / (energies(spectrum) + 1e-3)), gain_range[0], highest
        )
        spectrum = spectrum_w * (np.tensordot(gains, weights[:octaves], axes=1) + weights[octaves])
    lab_w[..., 0] = np.fft.irfft2(spectrum, s=shape)
    bgr = cv2.cvtColor(lab_w, cv2.COLOR_LAB2BGR) * 255.0
    return np.clip(np.rint(bgr), 0, 255).astype(np.uint8)


def match_grain(warped: np.ndarray, target: np.ndarray, mask: np.ndarray, seed: int = 0) -> np.ndarray:
    """Add luminance grain so the face is as noisy as the target's skin."""
    n_t, n_w = noise_sigma(target, mask), noise_sigma(warped, mask)
    if n_t <= 1.2 * n_w or n_t < 0.8:
        return warped
    sigma = float(np.sqrt(n_t**2 - n_w**2))
    rng = np.random.default_rng(seed)
    grain = rng.normal(0.0, sigma, warped.shape[:2]).astype(np.float32)
    return np.clip(warped.astype(np.float32) + grain[..., None], 0, 255).astype(np.uint8)


def blockiness(grey: np.ndarray, mask: np.ndarray, offset: tuple[int, int] = (0, 0)) -> float:
    """Mean step across the 8x8 JPEG grid over the mean step elsewhere (1 = no blocks).

    `offset` is the frame position of grey[0, 0], so the grid is the frame's."""
    g = grey.astype(np.float32)
    ox, oy = offset
    dx = np.abs(np.diff(g, axis=1))
    dy = np.abs(np.diff(g, axis=0))
    mx = (mask[:, 1:] > 0) & (mask[:, :-1] > 0)
    my = (mask[1:, :] > 0) & (mask[:-1, :] > 0)
    cols = (np.arange(dx.shape[1]) + ox + 1) % 8 == 0
    rows = (np.arange(dy.shape[0]) + oy + 1) % 8 == 0
    on = np.concatenate([dx[:, cols][mx[:, cols]], dy[rows, :][my[rows, :]]])
    off = np.concatenate([dx[:, ~cols][mx[:, ~cols]], dy[~rows, :][my[~rows, :]]])
    if on.size < 32 or off.size < 32:
        return 1.0
    return float((on.mean() + 0.5) / (off.mean() + 0.5))


def blockiness_grid(shape: tuple[int, ...], size: tuple[int, int], origin: tuple[int, int]) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the region of `size` (height, width) at `origin` (x, y) widened to the
    frame's 8x8 grid, within a frame of `shape`: all that match_blockiness reads or changes."""
    h, w = size
    x0, y0 = origin
    gx0, gy0 = (x0 // 8) * 8, (y0 // 8) * 8
    gx1 = min(shape[1], -(-(x0 + w) // 8) * 8)
    gy1 = min(shape[0], -(-(y0 + h) // 8) * 8)
    return gx0, gy0, gx1, gy1


def match_blockiness(
    frame: np.ndarray,
    original: np.ndarray,
    alpha: np.ndarray,
    origin: tuple[int, int],
    min_ratio: float = 1.15,
) -> None:
    """Re-compress the pasted face (in place in `frame`) when the original picture is blocky.

    `alpha` (float, 0–1) covers the region starting at `origin` (x, y) in frame pixels; the
    region is widened to the frame's 8x8 grid so the new blocks line up with the old ones.
    `original`: the picture before the paste in that widened region (blockiness_grid), or the
    whole frame before it."""
    h, w = alpha.shape
    x0, y0 = origin
    gx0, gy0, gx1, gy1 = blockiness_grid(frame.shape, (h, w), origin)
    if gx1 - gx0 < 16 or gy1 - gy0 < 16:
        return
    a = np.zeros((gy1 - gy0, gx1 - gx0), np.float32)
    a[y0 - gy0 : y0 - gy0 + h, x0 - gx0 : x0 - gx0 + w] = alpha[: gy1 - y0, : gx1 - x0]
    region_mask = (a > 0.5).astype(np.uint8)
    if region_mask.sum() < 256:
        return
    if original.shape[:2] == frame.shape[:2]:
        original = original[gy0:gy1, gx0:gx1]
    before = cv2.cvtColor(original, cv2.COLOR_BGR2GRAY)
    ratio = blockiness(before, region_mask)
    if ratio < min_ratio:
        return
    region = frame[gy0:gy1, gx0:gx1]
    best, best_err = None, None
    for quality in (15, 25, 35, 50, 65, 80):
        ok, data = cv2.imencode(".jpg", region, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            continue
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
        err = abs(blockiness(cv2.cvtColor(decoded, cv2.COLOR_BGR2GRAY), region_mask) - ratio)
        if best_err is None or err < best_err:
            best, best_err = decoded, err
    if best is None:
        return
    blended = region.astype(np.float32) + a[..., None] * (best.astype(np.float32) - region)
    frame[gy0:gy1, gx0:gx1] = np.where(a[..., None] > 0, np.clip(np.rint(blended), 0, 255), region).astype(
        np.uint8
    )
