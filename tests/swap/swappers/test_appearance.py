"""Matching a warped face to its picture: detail spectrum per octave band."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from swap.swappers.appearance import masked_blur, masked_blur_pair, match_detail, sharpness, transfer_shading


def _texture(seed: int, size: int = 160) -> np.ndarray:
    """Skin-like grey texture around mid grey, as BGR uint8."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 18, (size, size)).astype(np.float32), (0, 0), 0.7)
    grey = np.clip(128 + noise, 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def _high_pass(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return (grey - cv2.GaussianBlur(grey, (0, 0), 2.0)).ravel()


MASK = np.full((160, 160), 255, np.uint8)


def test_a_soft_face_gets_as_crisp_as_its_picture_and_keeps_its_own_structure():
    picture = _texture(1)
    soft_face = cv2.GaussianBlur(_texture(2), (0, 0), 0.8)  # an upscaled source: another texture, soft
    out = match_detail(soft_face, picture, MASK)

    before = abs(np.log(sharpness(soft_face, MASK) / sharpness(picture, MASK)))
    after = abs(np.log(sharpness(out, MASK) / sharpness(picture, MASK)))
    assert before > 0.5 and after < before / 3 and after < 0.3
    # Its own detail, amplified; nothing of the picture's texture is copied in.
    assert np.corrcoef(_high_pass(out), _high_pass(soft_face))[0, 1] > 0.9
    assert abs(np.corrcoef(_high_pass(out), _high_pass(picture))[0, 1]) < 0.1


def test_a_crisp_face_is_softened_in_a_soft_picture():
    picture = cv2.GaussianBlur(_texture(1), (0, 0), 1.0)
    crisp_face = _texture(2)
    out = match_detail(crisp_face, picture, MASK)

    before = abs(np.log(sharpness(crisp_face, MASK) / sharpness(picture, MASK)))
    after = abs(np.log(sharpness(out, MASK) / sharpness(picture, MASK)))
    assert before > 1.0 and after < before / 3


def test_a_face_already_matching_its_picture_is_left_nearly_as_it_is():
    face = _texture(2)
    out = match_detail(face, _texture(1), MASK)
    assert np.abs(out.astype(int) - face).mean() < 2.0


def test_octaves_finer_than_an_upscaled_source_are_boosted_no_more_than_max_invented():
    picture = _texture(1)
    soft_face = cv2.GaussianBlur(_texture(2), (0, 0), 0.8)

    def boost(upscale: float) -> float:
        out = match_detail(soft_face, picture, MASK, upscale=upscale, max_invented=1.2)
        return float(np.std(_high_pass(out)) / np.std(_high_pass(soft_face)))

    assert boost(0.5) > 1.5  # a reduced source has detail in every octave: matched to the picture
    assert boost(3.0) < 1.25  # an enlarged one has none in these: interpolation texture, barely boosted


@pytest.mark.parametrize(
    ("height", "width", "sigma", "blob", "max_error", "mean_error"),
    [
        (150, 130, 12.0, 20, 2.0, 0.5),
        (400, 350, 30.0, 20, 2.0, 0.5),
        (701, 603, 60.0, 20, 2.0, 0.5),
        # From sigma 4 a copy halved once (the colour's low-pass of a video-size face, sigma ~5.6):
        # measured within 2.6 levels, mean 0.55, here.
        (200, 193, 5.2, 10, 3.0, 0.6),
    ],
)
def test_a_wide_masked_blur_on_a_reduced_copy_matches_the_full_size_one(
    height, width, sigma, blob, max_error, mean_error
):
    # The reduced copy must line up with the picture (an offset of a reduced pixel would shift the
    # lighting by several full-size pixels) and stay within a fraction of a level of the exact
    # normalised convolution, inside the mask and just outside it (where the face is filled in).
    rng = np.random.default_rng(7)
    base = cv2.resize(rng.uniform(0, 255, (height // blob, width // blob, 3)), (width, height), interpolation=cv2.INTER_CUBIC)
    values = (base + rng.normal(0, 6, base.shape)).astype(np.float32)
    mask = np.zeros((height, width), np.uint8)
    cv2.ellipse(mask, (width // 2, height // 2), (width // 3, height // 3), 0, 0, 360, 255, -1)
    weight = (mask > 0).astype(np.float32)
    exact = cv2.GaussianBlur(values * weight[..., None], (0, 0), sigma) / np.maximum(
        cv2.GaussianBlur(weight, (0, 0), sigma), 1e-4
    )[..., None]
    near = cv2.dilate(mask, np.ones((9, 9), np.uint8)) > 0
    error = np.abs(masked_blur(values, weight, sigma) - exact)[near]
    assert error.max() < max_error and error.mean() < mean_error


@pytest.mark.parametrize(("channels", "sigma"), [((3, 3), 5.0), ((2, 2), 5.0), ((3, 3), 30.0), ((2, 2), 30.0)])
def test_two_masked_blurs_at_once_are_the_two_masked_blurs(channels, sigma):
    # Each picture with its own weight (the warped face's skin and the target's differ by their
    # brows), the weights and (up to four channels) the pictures blurred together.
    rng = np.random.default_rng(3)
    first, second = (rng.uniform(0, 255, (180, 170, c)).astype(np.float32) for c in channels)
    first_weight, second_weight = ((rng.random((180, 170)) > p).astype(np.float32) for p in (0.3, 0.6))
    low_first, low_second = masked_blur_pair(first, first_weight, second, second_weight, sigma)
    assert np.abs(low_first - masked_blur(first, first_weight, sigma)).max() < 1e-3
    assert np.abs(low_second - masked_blur(second, second_weight, sigma)).max() < 1e-3


def _lab(image: np.ndarray, y: int, x: int) -> np.ndarray:
    return cv2.cvtColor(image[y : y + 1, x : x + 1], cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32)


def _bgr(lab: tuple[int, int, int]) -> list[int]:
    """An 8-bit Lab colour as BGR."""
    return cv2.cvtColor(np.full((1, 1, 3), lab, np.uint8), cv2.COLOR_LAB2BGR)[0, 0].tolist()


def _soft_eye(size: int, radius: int) -> np.ndarray:
    """`eyes` weights: a disc at the picture's centre (80, 80), its edge softened."""
    eyes = np.zeros((size, size), np.float32)
    cv2.circle(eyes, (80, 80), radius, 1.0, -1)
    return cv2.GaussianBlur(eyes, (0, 0), 2)


def test_an_eye_keeps_its_colour_and_is_not_crushed_to_black_in_a_shadowed_socket():
    """A source's grey-blue iris on lit skin, onto a target whose eye lies in shadow: added as
    detail to the dark socket the iris went below black and took the skin's hue (one eye brown,
    the other blue); as `eyes` it stays as much darker than the skin round it as in the source,
    in its own colour."""
    size = 160
    skin_lit = cv2.cvtColor(np.full((1, 1, 3), (175, 150, 145), np.uint8), cv2.COLOR_LAB2BGR)[0, 0]
    iris = cv2.cvtColor(np.full((1, 1, 3), (75, 124, 112), np.uint8), cv2.COLOR_LAB2BGR)[0, 0]  # blue-grey
    socket = cv2.cvtColor(np.full((1, 1, 3), (60, 140, 142), np.uint8), cv2.COLOR_LAB2BGR)[0, 0]
    warped = np.full((size, size, 3), skin_lit, np.uint8)
    cv2.circle(warped, (80, 80), 9, iris.tolist(), -1)
    target = np.full((size, size, 3), socket, np.uint8)
    target += np.random.default_rng(0).integers(0, 3, target.shape, dtype=np.uint8)  # a soft, flat picture
    skin = np.full((size, size), 255, np.uint8)
    eyes = _soft_eye(size, radius=14)

    plain = transfer_shading(warped, target, skin, sigma=20)
    kept = transfer_shading(warped, target, skin, sigma=20, eyes=eyes)

    source_ratio = 75 / 175
    around, centre_plain, centre_kept = _lab(kept, 80, 140), _lab(plain, 80, 80), _lab(kept, 80, 80)
    assert centre_plain[0] < 0.3 * around[0]  # the failure: crushed to near black
    assert centre_kept[0] == pytest.approx(around[0] * source_ratio ** 0.5, rel=0.35)
    assert centre_kept[0] > 2 * centre_plain[0]
    # Its hue is the iris's (blue: b below a), not the socket's warm brown.
    assert centre_kept[2] - 128 < centre_kept[1] - 128 - 4
    # Away from the eye the two are the same.
    assert np.abs(kept[:, :40].astype(int) - plain[:, :40]).max() <= 1


def test_the_targets_iris_colour_does_not_show_through_the_sources_iris():
    """Source and target irises at the same place, blue and green: the colour's low-pass (at about
    an iris's size) is the skin's, filled in over the eyes, so the result's iris is the source's
    blue (a, b = -4, -18). With the target's iris in the low-pass it came out (-11, -9), halfway to
    the target's green (-16, +12): one eye's colour moved and not the other's."""

    size = 160
    warped = np.full((size, size, 3), _bgr((170, 145, 140)), np.uint8)
    target = warped.copy()
    cv2.circle(warped, (80, 80), 8, _bgr((80, 124, 110)), -1)  # blue
    cv2.circle(target, (80, 80), 8, _bgr((80, 112, 140)), -1)  # green
    target += np.random.default_rng(0).integers(0, 3, target.shape, dtype=np.uint8)
    eyes = _soft_eye(size, radius=12)
    skin = np.full((size, size), 255, np.uint8)

    out = transfer_shading(warped, target, skin, sigma=20, eyes=eyes, colour_sigma=6)
    a, b = cv2.cvtColor(out[78:83, 78:83], cv2.COLOR_BGR2LAB).reshape(-1, 3).mean(0)[1:] - 128
    assert abs(a - -4) < 3 and abs(b - -18) < 3


def test_a_brown_iris_stays_brown_on_a_target_whose_skin_has_another_hue():
    """A dark brown iris in an orange-brown face, onto a pink face: inside the eye the colour is the
    source's own, not the target's skin colour plus the iris's difference from the source's skin
    (which is the skin tones' difference: the brown iris came out blue, a, b = 132 / 111 here,
    as obama_1's eyes did on paul_rudd_2)."""

    size = 160
    warped = np.full((size, size, 3), _bgr((150, 150, 168)), np.uint8)  # orange-brown skin
    cv2.circle(warped, (80, 80), 8, _bgr((60, 136, 142)), -1)  # dark brown iris
    target = np.full((size, size, 3), _bgr((175, 146, 138)), np.uint8)  # pink skin
    cv2.circle(target, (80, 80), 8, _bgr((80, 124, 110)), -1)  # a blue iris
    target += np.random.default_rng(0).integers(0, 3, target.shape, dtype=np.uint8)
    eyes = _soft_eye(size, radius=12)
    skin = np.full((size, size), 255, np.uint8)

    out = transfer_shading(warped, target, skin, sigma=20, eyes=eyes, colour_sigma=6)
    a, b = cv2.cvtColor(out[78:83, 78:83], cv2.COLOR_BGR2LAB).reshape(-1, 3).mean(0)[1:]
    assert abs(a - 136) < 3 and abs(b - 142) < 3


def test_a_dark_brow_stays_nearly_grey_on_a_target_whose_skin_has_another_hue():
    """A dark, nearly grey brow in an olive face, onto a pink face in dim light: the colour is the
    source's turned and scaled as its skin's colour is to the target's, so a pixel with little colour
    keeps little. Added as a difference from the olive skin (filled in under the brow) it came out
    blue, a, b = 1 / -11 here (obama_1's brows on a dimmed paul_rudd_2 were dark blue)."""

    size = 160
    warped = np.full((size, size, 3), _bgr((160, 150, 170)), np.uint8)  # olive-orange skin
    brow = np.zeros((size, size), np.uint8)
    brow[60:72, 30:130] = 255
    warped[brow > 0] = _bgr((50, 131, 133))  # a dark brow, nearly grey
    target = np.full((size, size, 3), _bgr((90, 140, 136)), np.uint8)  # dim, pink skin
    target += np.random.default_rng(0).integers(0, 3, target.shape, dtype=np.uint8)
    skin = np.full((size, size), 255, np.uint8)

    out = transfer_shading(warped, target, skin, sigma=20, colour_sigma=6, brows=(brow, np.zeros_like(brow)))
    a, b = cv2.cvtColor(out[63:69, 40:120], cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(float).mean(0)[1:] - 128
    assert np.hypot(a, b) < 10 and b > -3  # (6, 5): halfway to the flat target's pink by the detail's gain


def test_the_targets_brows_leave_no_grey_shadow_where_the_source_shows_skin():
    """A target with thick dark brows, a source with none (skin where they were): the target's
    brows are left out of its own low-pass (filled from the skin round them), so the skin under and
    over them keeps the target's skin lightness and colour. In the low-pass they darkened and greyed
    it: at the colour's scale (about a brow's height) a band of the brows' grey over the source's
    lids (the pale grey band of a fair source on a dark-browed target); here L* 26 below the skin's and
    chroma 10 instead of 29 round the brows."""

    size = 160
    skin_colour = (170, 145, 152)
    warped = np.full((size, size, 3), _bgr(skin_colour), np.uint8)
    target = warped.copy()
    brow = np.zeros((size, size), np.uint8)
    brow[50:62, 30:130] = 255
    target[brow > 0] = _bgr((60, 129, 130))  # dark, nearly grey hair
    skin = np.full((size, size), 255, np.uint8)

    out = transfer_shading(
        warped, target, skin, sigma=20, colour_sigma=6, brows=(np.zeros_like(brow), brow)
    )
    near = cv2.cvtColor(out[40:72, 30:130], cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(float)
    chroma = np.hypot(near[:, 1] - 128, near[:, 2] - 128)
    assert np.abs(near[:, 0] - skin_colour[0]).max() <= 3
    assert chroma.min() >= np.hypot(skin_colour[1] - 128, skin_colour[2] - 128) - 3


def _dim(image: np.ndarray) -> np.ndarray:
    """A dim photo of `image`: a camera's tone curve darkens its dark parts more than in proportion."""
    return np.clip(255.0 * (image.astype(np.float32) / 255.0) ** 1.8 * 0.55, 0, 255).astype(np.uint8)


def test_an_eye_in_a_dim_picture_is_as_dark_as_the_picture_makes_it():
    """The same face, lit, onto a dim photo of itself: the eye comes out about as dark as the dim
    photo has it. Its lightness follows the skin round it by a ratio whose power was the detail's
    gain in lightness units (small: a dim picture's detail is small in them) where it is the
    picture's contrast for its lightness (larger: the tone curve darkens an eye more than the skin):
    the eye stayed as light as the lit source's against the skin and glowed in the dim face."""
    size = 160
    rng = np.random.default_rng(3)
    grain = cv2.GaussianBlur(rng.normal(0, 8, (size, size)).astype(np.float32), (0, 0), 1.0)
    lab = np.zeros((size, size, 3), np.float32)
    lab[..., 0] = 175 + grain
    lab[..., 1:] = (150, 145)
    cv2.circle(lab, (80, 80), 9, (100, 124, 112), -1)  # a blue-grey iris
    lit = cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)
    dim = _dim(lit)
    eyes = _soft_eye(size, radius=14)

    out = transfer_shading(lit, dim, MASK, sigma=20, eyes=eyes)

    def centre(image: np.ndarray) -> float:
        return float(cv2.cvtColor(image, cv2.COLOR_BGR2LAB)[76:85, 76:85, 0].astype(np.float32).mean())

    # 1.5x the dim photo's eye (the ratio's power is a local slope; the tone curve bends more over an
    # iris's range); 2.35x before. Never crushed below the dim photo's.
    assert 0.8 * centre(dim) < centre(out) < 1.7 * centre(dim)


def test_a_flushed_cheek_of_the_source_takes_the_targets_even_colour():
    """A red patch on the source's cheek (a fifth of the face wide: detail at the lightness scale)
    onto a target of even skin: split at the finer colour scale, the patch takes the target's
    colour; its lightness texture is the source's either way. And the iris is still the source's
    colour (the eye weights keep the whole colour detail)."""
    size = 200
    skin_colour = cv2.cvtColor(np.full((1, 1, 3), (160, 142, 140), np.uint8), cv2.COLOR_LAB2BGR)[0, 0]
    warped_lab = cv2.cvtColor(np.full((size, size, 3), skin_colour, np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)
    yy, xx = np.mgrid[0:size, 0:size]
    patch = np.exp(-(((xx - 60) ** 2 + (yy - 110) ** 2) / (2 * 14.0**2)))  # ~40 px across
    warped_lab[..., 1] += 18 * patch  # redder
    warped_lab[..., 0] += _texture(3, size)[..., 0].astype(np.float32) - 128  # the source's pores
    warped = cv2.cvtColor(np.clip(warped_lab, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)
    cv2.circle(warped, (140, 70), 8, cv2.cvtColor(np.full((1, 1, 3), (80, 124, 110), np.uint8), cv2.COLOR_LAB2BGR)[0, 0].tolist(), -1)
    target = np.full((size, size, 3), skin_colour, np.uint8)
    skin = np.full((size, size), 255, np.uint8)
    cv2.circle(skin, (140, 70), 12, 0, -1)  # the eye opening is not skin (the swapper leaves it out)
    eyes = np.zeros((size, size), np.float32)
    cv2.circle(eyes, (140, 70), 12, 1.0, -1)
    face_size = 200
    sigma, colour_sigma = 0.12 * face_size, 0.04 * face_size

    before = transfer_shading(warped, target, skin, sigma, eyes=eyes)
    after = transfer_shading(warped, target, skin, sigma, eyes=eyes, colour_sigma=colour_sigma)

    def redness(image):
        return float(cv2.cvtColor(image, cv2.COLOR_BGR2LAB)[100:121, 50:71, 1].astype(np.float32).mean()) - 142

    assert redness(before) > 3  # the failure: the patch passed as detail (4.8 of the 18 put in)
    assert redness(after) < 0.4 * redness(before)  # 1.1
    lightness = cv2.cvtColor(after, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
    assert np.corrcoef(lightness[20:60, 20:180].ravel(), warped_lab[20:60, 20:180, 0].ravel())[0, 1] > 0.9
    iris_before, iris_after = _lab(before, 70, 140), _lab(after, 70, 140)
    assert np.abs(iris_after[1:] - iris_before[1:]).max() <= 1
