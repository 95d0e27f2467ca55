"""The visible "AI-generated" mark: a corner badge burnt into result pixels (images and every video frame).

Plain numpy/OpenCV so the video encoder can composite it per frame in its write-behind thread: the
badge (text mask and plate) is rendered once per frame size, and each frame only pays for reading
the corner's mean brightness and one alpha blend over the badge's rectangle.

Contrast-adaptive: over a light corner the plate is dark with light text, over a dark corner it is
light with dark text, so the mark reads on any background.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left")
FONT = cv2.FONT_HERSHEY_DUPLEX
DARK = np.array([20, 20, 20], dtype=np.float32)
LIGHT = np.array([245, 245, 245], dtype=np.float32)


@dataclass(frozen=True)
class MarkStyle:
    """What the badge says and where it goes.

    `height_fraction`: the badge's height as a fraction of the frame's shorter side (0.10 = 10 %);
    `min_height_px` keeps it legible on small frames; `plate_opacity` how much of the background the
    plate covers (the text itself is opaque).
    """

    text: str = "AI-generated"
    position: str = "bottom-right"
    height_fraction: float = 0.10
    min_height_px: int = 14
    margin_fraction: float = 0.02
    plate_opacity: float = 0.72

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise ValueError(f"mark position must be one of {', '.join(POSITIONS)}, not {self.position!r}")
        if not 0 < self.height_fraction <= 0.5:
            raise ValueError("mark height_fraction must be in (0, 0.5]")
        if not self.text.strip():
            raise ValueError("mark text must not be empty")


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
        style = self.style
        shorter = min(width, height)
        badge_h = max(style.min_height_px, round(style.height_fraction * shorter))
        badge_h = min(badge_h, height)
        pad = max(2, badge_h // 5)
        text_h = badge_h - 2 * pad
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
        style = self.style
        text = np.zeros((badge_h, badge_w), dtype=np.uint8)
        cv2.putText(text, style.text, (pad, pad + text_h), FONT, scale, 255, thickness, cv2.LINE_AA)
        plate = np.zeros((badge_h, badge_w), dtype=np.uint8)
        radius = max(1, badge_h // 4)
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
