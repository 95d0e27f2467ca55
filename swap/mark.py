"""The visible "AI-generated" mark: a corner badge burnt into result pixels (images and every video frame).

Plain numpy/OpenCV so the video encoder can composite it per frame in its write-behind thread: the
badge (text mask and plate) is rendered once per frame size, and each frame only pays for reading
the corner's mean brightness and one alpha blend over the badge's rectangle.

Contrast-adaptive: over a light corner the plate is dark with light text, over a dark corner it is
light with dark text, so the mark reads on any background.

Text: ASCII in OpenCV's built-in Hershey font; anything else (e.g. GB 45438-2025's "AI生成") in Noto Sans
CJK SC from the `noto-cjk-sans-otc` package (SIL OFL 1.1), never a font of the host. `min_text_fraction`
sets a floor for the glyphs' height (their inked bounding box) as a fraction of the shorter side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import noto_cjk_sans_otc  # Noto Sans CJK as package data (SIL OFL 1.1): never a host font
import numpy as np
from PIL import Image, ImageDraw, ImageFont

POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left")
FONT = cv2.FONT_HERSHEY_DUPLEX
DARK = np.array([20, 20, 20], dtype=np.float32)
LIGHT = np.array([245, 245, 245], dtype=np.float32)
CJK_FAMILY = "Noto Sans CJK SC"  # the Simplified Chinese face of the bundled collection
INK_THRESHOLD = 128  # a pixel at least half inked counts towards the glyphs' measured height


@dataclass(frozen=True)
class MarkStyle:
    """What the badge says and where it goes.

    `height_fraction`: the badge's height as a fraction of the frame's shorter side (0.10 = 10 %);
    `min_height_px` keeps it legible on small frames; `plate_opacity` how much of the background the
    plate covers (the text itself is opaque); `min_text_fraction` the least height of the inked glyphs
    as a fraction of the shorter side (GB 45438-2025: 0.05), the badge grows to hold them.
    """

    text: str = "AI-generated"
    position: str = "bottom-right"
    height_fraction: float = 0.10
    min_height_px: int = 14
    margin_fraction: float = 0.02
    plate_opacity: float = 0.72
    min_text_fraction: float = 0.0

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise ValueError(f"mark position must be one of {', '.join(POSITIONS)}, not {self.position!r}")
        if not 0 < self.height_fraction <= 0.5:
            raise ValueError("mark height_fraction must be in (0, 0.5]")
        if not self.text.strip():
            raise ValueError("mark text must not be empty")
        if not 0 <= self.min_text_fraction <= 0.4:
            raise ValueError("mark min_text_fraction must be in [0, 0.4]")


@dataclass
class _Badge:
    x: int
    y: int
    text_alpha: np.ndarray  # (h, w, 1) float32 in [0, 1]: the glyphs
    plate_alpha: np.ndarray  # (h, w, 1) float32: the rounded plate behind them

    def __post_init__(self) -> None:
        # out = background·keep + offset, with keep = (1 - plate)(1 - text) and offset the plate and
        # ink colours weighted the same way (cv2 rounds and saturates), for either background.
        keep = (1 - self.plate_alpha) * (1 - self.text_alpha)
        self.keep = np.ascontiguousarray(np.repeat(keep, 3, axis=2), dtype=np.float32)

        def offset(plate: np.ndarray, ink: np.ndarray) -> np.ndarray:
            value = self.plate_alpha * (1 - self.text_alpha) * plate + self.text_alpha * ink
            return np.ascontiguousarray(value, dtype=np.float32)

        self.over_light, self.over_dark = offset(DARK, LIGHT), offset(LIGHT, DARK)


@dataclass
class VisibleMark:
    """Burns the badge into BGR uint8 frames. One instance per style; badges cached per frame size."""

    style: MarkStyle = field(default_factory=MarkStyle)
    _badges: dict[tuple[int, int], _Badge] = field(default_factory=dict, repr=False)

    def region(self, width: int, height: int) -> tuple[int, int, int, int]:
        """(x, y, w, h) of the badge in a frame of this size."""
        badge = self._badge(width, height)
        h, w = badge.text_alpha.shape[:2]
        return badge.x, badge.y, w, h

    def corner_radius(self, width: int, height: int) -> int:
        """The radius of the badge plate's rounded corners in a frame of this size."""
        return _corner_radius(self.region(width, height)[3])

    def apply(self, frame: np.ndarray) -> np.ndarray:
        """The frame with the badge burnt in (a new array; the input is left untouched)."""
        out = frame.copy()
        self.apply_inplace(out)
        return out

    def apply_inplace(self, frame: np.ndarray) -> None:
        height, width = frame.shape[:2]
        badge = self._badge(width, height)
        h, w = badge.text_alpha.shape[:2]
        roi = frame[badge.y : badge.y + h, badge.x : badge.x + w]
        # Rec. 601 luma of the corner decides the plate: dark over light backgrounds and vice versa.
        blue, green, red, _ = cv2.mean(roi)
        light_background = 0.114 * blue + 0.587 * green + 0.299 * red >= 128
        # plate over the background, then the text over that, folded into one multiply-add.
        offset = badge.over_light if light_background else badge.over_dark
        roi[...] = cv2.add(cv2.multiply(roi, badge.keep, dtype=cv2.CV_32F), offset, dtype=cv2.CV_8U)

    def _badge(self, width: int, height: int) -> _Badge:
        badge = self._badges.get((width, height))
        if badge is None:
            badge = self._badges[(width, height)] = self._render(width, height)
        return badge

    def _render(self, width: int, height: int) -> _Badge:
        if not self.style.text.isascii():
            return self._render_font(width, height)
        style = self.style
        shorter = min(width, height)
        badge_h = max(style.min_height_px, round(style.height_fraction * shorter))
        badge_h = min(badge_h, height)
        pad = max(2, badge_h // 5)
        text_h = max(badge_h - 2 * pad, math.ceil(style.min_text_fraction * shorter))
        badge_h = min(text_h + 2 * pad, height)
        (unit_w, unit_h), _ = cv2.getTextSize(style.text, FONT, 1.0, 1)
        scale = text_h / unit_h
        thickness = max(1, round(scale * 1.6))
        (text_w, text_hh), baseline = cv2.getTextSize(style.text, FONT, scale, thickness)
        badge_w = text_w + 2 * pad
        if badge_w > width:  # a very narrow frame: shrink the whole badge to fit
            factor = width / badge_w
            return self._render_scaled(width, height, max(1, round(badge_h * factor)))
        return self._compose(width, height, badge_w, badge_h, pad, scale, thickness, text_hh)

    def _render_scaled(self, width: int, height: int, badge_h: int) -> _Badge:
        shrunk = VisibleMark(
            MarkStyle(
                text=self.style.text,
                position=self.style.position,
                height_fraction=min(0.5, badge_h / min(width, height)),
                min_height_px=min(self.style.min_height_px, badge_h),
                margin_fraction=self.style.margin_fraction,
                plate_opacity=self.style.plate_opacity,
            )
        )
        return shrunk._render(width, height)

    def _compose(self, width, height, badge_w, badge_h, pad, scale, thickness, text_h) -> _Badge:
        text = np.zeros((badge_h, badge_w), dtype=np.uint8)
        cv2.putText(text, self.style.text, (pad, pad + text_h), FONT, scale, 255, thickness, cv2.LINE_AA)
        return self._place(width, height, text)

    def _render_font(self, width: int, height: int) -> _Badge:
        """The badge with the text set in the bundled CJK font, its glyphs at least as tall as the
        style asks (measured on the rendered pixels), shrunk only where the frame cannot hold it."""
        style = self.style
        shorter = min(width, height)
        badge_h = max(style.min_height_px, round(style.height_fraction * shorter))
        pad = max(2, badge_h // 5)
        ink_h = max(badge_h - 2 * pad, math.ceil(style.min_text_fraction * shorter), 4)
        glyphs = glyph_mask(style.text, ink_h)
        fits = min((width - 2 * pad) / glyphs.shape[1], (height - 2 * pad) / glyphs.shape[0])
        if fits < 1:  # a text too long for the frame: the whole badge shrinks to fit
            glyphs = glyph_mask(style.text, max(4, math.floor(glyphs.shape[0] * fits)))
        text = np.zeros((glyphs.shape[0] + 2 * pad, glyphs.shape[1] + 2 * pad), dtype=np.uint8)
        text[pad : pad + glyphs.shape[0], pad : pad + glyphs.shape[1]] = glyphs
        return self._place(width, height, text[:height, :width])

    def _place(self, width: int, height: int, text: np.ndarray) -> _Badge:
        """The plate behind a badge-sized text mask, the badge placed in the style's corner."""
        style = self.style
        badge_h, badge_w = text.shape
        plate = np.zeros((badge_h, badge_w), dtype=np.uint8)
        radius = _corner_radius(badge_h)
        cv2.rectangle(plate, (radius, 0), (badge_w - 1 - radius, badge_h - 1), 255, -1)
        cv2.rectangle(plate, (0, radius), (badge_w - 1, badge_h - 1 - radius), 255, -1)
        for cx in (radius, badge_w - 1 - radius):
            for cy in (radius, badge_h - 1 - radius):
                cv2.circle(plate, (cx, cy), radius, 255, -1, cv2.LINE_AA)
        margin = round(style.margin_fraction * min(width, height))
        right = style.position.endswith("right")
        bottom = style.position.startswith("bottom")
        x = max(0, width - badge_w - margin) if right else min(margin, width - badge_w)
        y = max(0, height - badge_h - margin) if bottom else min(margin, height - badge_h)
        return _Badge(
            x=x,
            y=y,
            text_alpha=(text.astype(np.float32) / 255)[:, :, None],
            plate_alpha=(plate.astype(np.float32) / 255 * style.plate_opacity)[:, :, None],
        )


@lru_cache(maxsize=1)
def _cjk_font_face() -> tuple[str, int]:
    """(path, index) of Noto Sans CJK SC in the bundled OpenType collection."""
    path = str(noto_cjk_sans_otc.FONT_PATH)
    for index in range(16):
        try:
            family = ImageFont.truetype(path, 12, index=index).getname()[0]
        except OSError:
            break
        if family == CJK_FAMILY:
            return path, index
    raise RuntimeError(f"{CJK_FAMILY} is not in {path}")


@lru_cache(maxsize=64)
def glyph_mask(text: str, ink_h: int) -> np.ndarray:
    """`text` in the bundled CJK font as a tight uint8 alpha mask whose inked rows (at least half
    covered) span at least `ink_h` pixels: the font size is searched on the rendered pixels, since
    a font's nominal size says little about how tall a given string's glyphs are."""
    path, index = _cjk_font_face()
    size = max(4, round(ink_h / 0.9))
    for _ in range(12):
        mask = _draw(text, ImageFont.truetype(path, size, index=index))
        measured = int(np.count_nonzero((mask >= INK_THRESHOLD).any(axis=1)))
        if measured >= ink_h:
            return mask
        size = max(size + 1, round(size * ink_h / max(measured, 1)))
    return mask


def _draw(text: str, font: ImageFont.FreeTypeFont) -> np.ndarray:
    left, top, right, bottom = font.getbbox(text)
    canvas = Image.new("L", (right - left + 4, bottom - top + 4))
    ImageDraw.Draw(canvas).text((2 - left, 2 - top), text, font=font, fill=255)
    mask = np.asarray(canvas)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return np.ascontiguousarray(mask[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1])


def _corner_radius(badge_h: int) -> int:
    return max(1, badge_h // 4)
