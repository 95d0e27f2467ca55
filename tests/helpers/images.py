"""Pictures as tests send them: pixels encoded into upload bytes, and photos carrying text."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def encode(rgb: np.ndarray, fmt: str = "PNG", **kwargs) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def banner(rgb: np.ndarray, text: str | None) -> np.ndarray:
    """The image with a white banner at the bottom, carrying `text` (None: banner only). BGR."""
    image = Image.fromarray(rgb).convert("RGB")
    draw = ImageDraw.Draw(image)
    width, height = image.size
    draw.rectangle([0, height - 90, width, height], fill="white")
    if text:
        draw.text((20, height - 75), text, fill="black", font=ImageFont.truetype(FONT, 44))
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])
